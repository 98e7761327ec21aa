"""Expressions read without running them: a condition as a small tree the resolver evaluates later (it
needs other files: the attributes of a class, the defaults of `vllm/envs.py`), and the value an expression
that reads the environment has in the default configuration (every variable unset).

A condition tree is JSON-able:

    {"op": "and" | "or", "args": [...]}     {"op": "not", "arg": ...}
    {"op": "cmp", "cmp": "is not", "left": ..., "right": ...}   (one comparison operator)
    {"lit": "None"}                          a literal, as written (ast.literal_eval reads it)
    {"ref": "envs.VLLM_X"}                   a name or dotted name (locate adds "resolved")
    {"env": "VLLM_X", "value": "True", "text": ...}  an expression reading one environment variable
                                             directly, with its value when the variable is unset
    {"text": "..."}                          anything else (undecided when evaluated)
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from .ts import text

if TYPE_CHECKING:
    from tree_sitter import Node

LITERALS = {
    "string",
    "concatenated_string",
    "integer",
    "float",
    "true",
    "false",
    "none",
    "tuple",
    "list",
    "set",
    "unary_operator",
}
GETENV = {"os.getenv", "os.environ.get", "getenv", "environ.get"}
ENVIRON = {"os.environ", "environ"}
CONVERT = {"bool": bool, "int": int, "float": float, "str": str}
STR_METHODS = {"lower", "upper", "strip", "casefold"}
MAX_TEXT = 160
UNKNOWN = object()


def short(s: str) -> str:
    s = re.sub(r"\s+", " ", s).strip()
    return s if len(s) <= MAX_TEXT else s[: MAX_TEXT - 1] + "…"


_CONSTANTS = {"true": True, "false": False, "none": None}
_SIMPLE_STRING = re.compile(r"""(?:[uU]?)("[^"\\\n]*"|'[^'\\\n]*')""")


def literal(node: Node):
    """The value of a literal expression (UNKNOWN: not a literal, or an f-string)."""
    kind = node.type
    if kind in _CONSTANTS:
        return _CONSTANTS[kind]
    if kind not in LITERALS:
        return UNKNOWN
    written = text(node)
    if kind == "string" and _SIMPLE_STRING.fullmatch(written):
        return written[
            written.index(written[-1]) + 1 : -1
        ]  # no prefix but u, no escape: the text is the value
    if kind == "integer" and written.isdigit():
        return int(written)
    if "{" in written and any(c.type == "interpolation" for c in walk(node)):
        return UNKNOWN
    try:
        return ast.literal_eval(written)
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return UNKNOWN


def walk(node: Node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children)


def _unwrap(node: Node) -> Node:
    while node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    return node


def getenv(node: Node) -> tuple[str, Node | None] | None:
    """`os.getenv("NAME", default)` / `os.environ.get("NAME")`: (NAME, the default's node or None)."""
    if node.type != "call" or text(node.child_by_field_name("function")) not in GETENV:
        return None
    args = [a for a in node.child_by_field_name("arguments").named_children if a.type != "comment"]
    if not args or args[0].type != "string" or not isinstance(name := literal(args[0]), str):
        return None
    return name, args[1] if len(args) > 1 else None


def _comparison(node: Node) -> tuple[list[Node], list[str]]:
    """A comparison's operands and its operators (`is not`, `not in` as one operator each)."""
    ops = node.children_by_field_name("operators")
    spans = {(o.start_byte, o.end_byte) for o in ops}
    operands = [
        c for c in node.named_children if (c.start_byte, c.end_byte) not in spans and c.type != "comment"
    ]
    return operands, [" ".join(text(o).split()) for o in ops]


def tree(node: Node | None) -> dict:
    """A condition as a tree (see the module docstring)."""
    if node is None:
        return {"text": ""}
    node = _unwrap(node)
    if node.type == "boolean_operator":
        op = text(node.child_by_field_name("operator"))
        args = []
        for side in (node.child_by_field_name("left"), node.child_by_field_name("right")):
            sub = tree(side)
            args.extend(sub["args"] if sub.get("op") == op else [sub])
        return {"op": op, "args": args}
    if node.type == "not_operator":
        return {"op": "not", "arg": tree(node.child_by_field_name("argument"))}
    if node.type == "comparison_operator":
        operands, ops = _comparison(node)
        if len(operands) == 2 and len(ops) == 1:
            return {"op": "cmp", "cmp": ops[0], "left": tree(operands[0]), "right": tree(operands[1])}
        return {"text": short(text(node))}
    if node.type in ("identifier", "attribute") and all(p.isidentifier() for p in text(node).split(".")):
        return {"ref": text(node)}
    if (value := literal(node)) is not UNKNOWN:
        return {"lit": repr(value)}
    names = {e[0] for n in walk(node) if (e := getenv(n)) is not None}
    if len(names) == 1 and (value := env_value(node)) is not UNKNOWN:
        return {"env": names.pop(), "value": repr(value), "text": short(text(node))}
    return {"text": short(text(node))}


def guard_text(node: Node) -> str:
    return short(text(_unwrap(node)))


def env_value(node: Node | None, read: list[str] | None = None):
    """The value an expression has with every environment variable unset: os.getenv / os.environ.get with
    their defaults, `"X" in os.environ` (False), literals, str methods without arguments (`.lower()`), bool() / int() / float() / str(),
    comparisons, `not`, `and` / `or` and `x if c else y`. UNKNOWN for anything else."""
    if node is None:
        return UNKNOWN
    node = _unwrap(node)
    if (value := literal(node)) is not UNKNOWN:
        return value
    if node.type == "call":
        if (env := getenv(node)) is not None:
            if read is not None:
                read.append(env[0])
            return None if env[1] is None else env_value(env[1], read)
        fn = node.child_by_field_name("function")
        args = [a for a in node.child_by_field_name("arguments").named_children if a.type != "comment"]
        if fn.type == "identifier" and text(fn) in CONVERT and len(args) == 1:
            inner = env_value(args[0], read)
            try:
                return UNKNOWN if inner is UNKNOWN else CONVERT[text(fn)](inner)
            except (TypeError, ValueError):
                return UNKNOWN
        if fn.type == "attribute" and text(fn.child_by_field_name("attribute")) in STR_METHODS and not args:
            inner = env_value(fn.child_by_field_name("object"), read)
            return (
                getattr(inner, text(fn.child_by_field_name("attribute")))()
                if isinstance(inner, str)
                else UNKNOWN
            )
        return UNKNOWN
    if node.type == "comparison_operator":
        operands, ops = _comparison(node)
        if len(operands) != 2 or len(ops) != 1:
            return UNKNOWN
        if (
            ops[0] in ("in", "not in")
            and text(operands[1]) in ENVIRON
            and isinstance(literal(operands[0]), str)
        ):
            return ops[0] == "not in"  # no variable is set
        return compare(ops[0], env_value(operands[0], read), env_value(operands[1], read))
    if node.type == "not_operator":
        inner = env_value(node.child_by_field_name("argument"), read)
        return UNKNOWN if inner is UNKNOWN else not inner
    if node.type == "boolean_operator":
        left = env_value(node.child_by_field_name("left"), read)
        if left is UNKNOWN:
            return UNKNOWN
        op = text(node.child_by_field_name("operator"))
        if (op == "and" and not left) or (op == "or" and left):
            return left
        return env_value(node.child_by_field_name("right"), read)
    if node.type == "conditional_expression":
        body, cond, other = node.named_children[:3]
        c = env_value(cond, read)
        return UNKNOWN if c is UNKNOWN else env_value(body if c else other, read)
    return UNKNOWN


def compare(op: str, left, right):
    """`left OP right` for known values (UNKNOWN when either is unknown or the comparison fails)."""
    if left is UNKNOWN or right is UNKNOWN:
        return UNKNOWN
    try:
        return {
            "is": lambda: left is right,
            "is not": lambda: left is not right,
            "==": lambda: left == right,
            "!=": lambda: left != right,
            "in": lambda: left in right,
            "not in": lambda: left not in right,
            "<": lambda: left < right,
            "<=": lambda: left <= right,
            ">": lambda: left > right,
            ">=": lambda: left >= right,
        }[op]()
    except (KeyError, TypeError):
        return UNKNOWN
