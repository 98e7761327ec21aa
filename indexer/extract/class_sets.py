"""Class sets: what runs when a class is created and assigns its attributes, read without running it.

queries/patterns/class_sets.scm picks `OBJ.X = value` and `setattr(OBJ, "X", value)`; this module keeps
those that set an attribute of a class while it is being created:

- `init_subclass`: in `__init_subclass__` of a class (on the new subclass, OBJ its first parameter):
  owner = the class defining the hook.
- `decorator`: in a module-level function, or a function nested in one, whose first parameter is OBJ and
  that returns it (a class decorator, or the function a decorator factory returns): owner = the
  module-level function;
  `params` = its parameters, so a factory's arguments (`@with_choice(False)`) can stand for them.
- `after_body`: at module level (`Cls.X = value` after the class body): owner = OBJ as written.

Each row carries the conditions of the `if` / `elif` / `else` around it, inside its function (for
`after_body`, at module level), as a condition tree (extract/expr.py; references to OBJ's own attributes
become `{"attr": "X"}`) and as written (`guard_text`). Assignments in methods (`self.x`, `request.x`)
are left out.
"""

from __future__ import annotations

import json

from tree_sitter import Node

from . import expr
from .ts import line, matches, qualname, query, text

HOOK = "__init_subclass__"
# For each pattern of class_sets.scm, the words one of which a blob holds where it matches (None: any blob)
WORDS = (None, (b"setattr",))


def extract(root: Node) -> list[dict]:
    rows = []
    for caps in matches(query("class_sets.scm"), root):
        node, obj, value = caps["set"][0], text(caps["object"][0]), caps["value"][0]
        if "name" in caps:
            attribute = expr.literal(caps["name"][0])
            if not isinstance(attribute, str) or not attribute.isidentifier():
                continue
        else:
            attribute = text(caps["attribute"][0])
        context = _context(node, obj)
        if context is None:
            continue
        via, owner, params, stop = context
        guard, written = _guards(node, stop, obj)
        kind = (
            "literal"
            if expr.literal(value) is not expr.UNKNOWN
            else ("name" if value.type in ("identifier", "attribute") else "other")
        )
        rows.append(
            {
                "via": via,
                "owner": owner,
                "object": obj,
                "attribute": attribute,
                "value": expr.short(text(value)),
                "value_kind": kind,
                "guard": json.dumps(guard, ensure_ascii=False) if guard else None,
                "guard_text": written,
                "params": json.dumps(params) if params is not None else None,
                "line": line(node),
            }
        )
    rows.sort(key=lambda r: r["line"])
    return rows


def params(fn: Node) -> list[str]:
    """The names of a function's plain parameters, in order (`*args`, `**kwargs` and `*` left out)."""
    out = []
    for p in fn.child_by_field_name("parameters").named_children:
        if p.type == "identifier":
            out.append(text(p))
        elif p.type in ("typed_parameter",):
            first = p.named_children[0] if p.named_children else None
            if first is not None and first.type == "identifier":
                out.append(text(first))
        elif p.type in ("default_parameter", "typed_default_parameter"):
            out.append(text(p.child_by_field_name("name")))
    return out


def _context(node: Node, obj: str) -> tuple[str, str, list[str] | None, Node] | None:
    """(via, owner, params, the node whose conditions count) for a set at `node`, or None."""
    inner = outer = None
    n = node.parent
    while n is not None:
        if n.type == "class_definition":
            if inner is None:
                return None  # a statement of a class body
            if outer is inner and text(inner.child_by_field_name("name")) == HOOK and _in_body(inner, n):
                first = params(inner)[:1]
                return ("init_subclass", qualname(n), None, inner) if first == [obj] else None
            return None  # inside a method
        if n.type == "function_definition":
            inner = inner or n
            outer = n
        n = n.parent
    if inner is None:
        return "after_body", obj, None, _root(node)
    if params(inner)[:1] != [obj] or not _returns(inner, obj):
        return None
    return (
        "decorator",
        text(outer.child_by_field_name("name")),
        params(outer) if outer is not inner else None,
        inner,
    )


def _root(node: Node) -> Node:
    while node.parent is not None:
        node = node.parent
    return node


def _returns(fn: Node, obj: str) -> bool:
    """Whether a function returns its parameter `obj` (as a class decorator returns the class)."""
    stack = list(fn.child_by_field_name("body").named_children)
    while stack:
        n = stack.pop()
        if n.type == "return_statement":
            if (
                n.named_child_count == 1
                and n.named_children[0].type == "identifier"
                and text(n.named_children[0]) == obj
            ):
                return True
        elif n.type not in ("function_definition", "class_definition", "lambda"):
            stack.extend(n.named_children)
    return False


def _in_body(fn: Node, cls: Node) -> bool:
    """Whether a function is defined directly in a class's body (decorated or not)."""
    p = fn.parent
    if p is not None and p.type == "decorated_definition":
        p = p.parent
    return p is not None and p.parent == cls


def _guards(node: Node, stop: Node, obj: str) -> tuple[dict | None, str | None]:
    """The conditions under which a statement runs, inside `stop`: a tree and its text."""
    parts: list[tuple[dict, str]] = []
    child, n = node, node.parent
    while n is not None and n != stop:
        if n.type in ("if_statement", "elif_clause") and child == n.child_by_field_name("consequence"):
            cond = n.child_by_field_name("condition")
            parts.append((_own(expr.tree(cond), obj), expr.guard_text(cond)))
        if n.type == "if_statement" and child.type in ("elif_clause", "else_clause"):
            prior = [n.child_by_field_name("condition")] + [
                e.child_by_field_name("condition")
                for e in n.children_by_field_name("alternative")
                if e.type == "elif_clause" and e.start_byte < child.start_byte
            ]
            parts.extend(
                ({"op": "not", "arg": _own(expr.tree(c), obj)}, f"not ({expr.guard_text(c)})") for c in prior
            )
        child, n = n, n.parent
    if not parts:
        return None, None
    parts.reverse()  # outermost first
    trees = [t for t, _ in parts]
    return (trees[0] if len(trees) == 1 else {"op": "and", "args": trees}), " and ".join(
        w
        if len(parts) == 1 or not any(k in w for k in (" or ", " and ")) or w.startswith("not (")
        else f"({w})"
        for _, w in parts
    )


def _own(t: dict, obj: str) -> dict:
    """References to OBJ's attributes (`cls.grammar_tag`) as {"attr": "grammar_tag"}."""
    if "ref" in t:
        head, _, rest = t["ref"].partition(".")
        return {"attr": rest} if head == obj and rest and "." not in rest else t
    out = dict(t)
    if "args" in t:
        out["args"] = [_own(a, obj) for a in t["args"]]
    for k in ("arg", "left", "right"):
        if k in t:
            out[k] = _own(t[k], obj)
    return out
