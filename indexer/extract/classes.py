"""Classes: qualified name, span, decorators, bases (positional and keyword kept apart), methods with the
shape of their body, and class attributes assigned literal values."""

from __future__ import annotations

import re

from tree_sitter import Node

from .ts import captures, line, qualname, query, text

LITERALS = {"string", "concatenated_string", "integer", "float", "true", "false", "none"}
CONTAINERS = {"list", "tuple", "dictionary", "set"}
STREAMING = "extract_tool_calls_streaming"


def extract(root: Node) -> list[dict]:
    return [_class(node) for node in captures(query("classes.scm"), root).get("class", [])]


def _class(node: Node) -> dict:
    body = node.child_by_field_name("body")
    methods, attrs = [], []
    for stmt in body.named_children if body is not None else []:
        defn = stmt.child_by_field_name("definition") if stmt.type == "decorated_definition" else stmt
        if defn is not None and defn.type == "function_definition":
            methods.append(_method(defn, stmt))
        elif stmt.type == "expression_statement" and stmt.named_child_count == 1:
            attr = _literal_attr(stmt.named_children[0])
            if attr:
                attrs.append(attr)
    bases, keywords = [], []
    supers = node.child_by_field_name("superclasses")
    for arg in supers.named_children if supers is not None else []:
        if arg.type == "keyword_argument":
            keywords.append(
                {
                    "name": text(arg.child_by_field_name("name")),
                    "written": text(arg.child_by_field_name("value")),
                }
            )
        elif arg.type not in ("comment",):
            bases.append({"written": text(arg), "head": _head(arg)})
    decorated = (
        node.parent if node.parent is not None and node.parent.type == "decorated_definition" else None
    )
    decorators = (
        [text(d.named_children[0]) for d in decorated.named_children if d.type == "decorator"]
        if decorated
        else []
    )
    streaming = next((m["body"] for m in methods if m["name"] == STREAMING), None)
    return {
        "qualname": qualname(node),
        "name": text(node.child_by_field_name("name")),
        "line": line(decorated or node),
        "end_line": node.end_point.row + 1,
        "decorators": decorators,
        "bases": bases,
        "keywords": keywords,
        "methods": methods,
        "attrs": attrs,
        "no_methods": not methods,
        "streaming": streaming,
        "nested_in": _nesting(node),
    }


def _head(expr: Node) -> str | None:
    """The dotted name a base expression refers to: `a.B` -> a.B, `Generic[T]` -> Generic, else None."""
    if expr.type == "subscript":
        return _head(expr.child_by_field_name("value"))
    if expr.type == "call":
        return None
    if expr.type in ("identifier", "attribute"):
        written = text(expr)
        return written if all(p.isidentifier() for p in written.split(".")) else None
    return None


# `self._tool_parser.extract_tool_calls(`, `self._parser_engine.parse(`: a call handed to another parser object
_DELEGATION = re.compile(rb"\bself\.(_?[A-Za-z_]*parser[A-Za-z_]*)\.([A-Za-z_]\w*)\s*\(")
_SUPER_CALL = re.compile(rb"\bsuper\([^)]*\)\s*\.\s*([A-Za-z_]\w*)\s*\(")


def _method(defn: Node, stmt: Node) -> dict:
    name = text(defn.child_by_field_name("name"))
    body = defn.child_by_field_name("body")
    decorators = (
        [text(d.named_children[0]) for d in stmt.named_children if d.type == "decorator"]
        if stmt.type == "decorated_definition"
        else []
    )
    abstract = any(d.split(".")[-1] == "abstractmethod" for d in decorators)
    code = body.text if body is not None else b""
    delegated = _DELEGATION.search(code) if b"parser" in code else None
    supers = {m.decode() for m in _SUPER_CALL.findall(code)} if b"super(" in code else ()
    return {
        "name": name,
        "line": line(stmt),
        "end_line": defn.end_point.row + 1,
        "body": "abstract" if abstract else _body_kind(body),
        "calls_super": int(name in supers),
        "delegates": f"{delegated.group(1).decode()}.{delegated.group(2).decode()}" if delegated else None,
    }


def _body_kind(body: Node | None) -> str:
    """'returns-none' (only returns None / pass), 'raises-not-implemented', or 'code'. Statements are read
    one at a time, as far as the answer needs (most bodies are code from their first statement on)."""
    stmts = _statements(body)
    first = next(stmts, None)
    if (
        first is not None
        and first.type == "expression_statement"
        and first.named_child_count
        and first.named_child(0).type == "string"
    ):
        first = next(stmts, None)  # docstring
    if first is None:
        return "returns-none"
    if _returns_none(first):
        return "returns-none" if all(_returns_none(s) for s in stmts) else "code"
    if first.type == "raise_statement" and next(stmts, None) is None:
        raised = first.named_child(0) if first.named_child_count else None
        if raised is not None and text(raised).split("(")[0].strip() == "NotImplementedError":
            return "raises-not-implemented"
    return "code"


def _statements(body: Node | None):
    """The statements of a block, comments left out, lazily."""
    if body is None:
        return
    cursor = body.walk()
    if not cursor.goto_first_child():
        return
    while True:
        node = cursor.node
        if node.is_named and node.type != "comment":
            yield node
        if not cursor.goto_next_sibling():
            return


def _returns_none(stmt: Node) -> bool:
    if stmt.type == "pass_statement":
        return True
    if stmt.type == "return_statement":
        vals = stmt.named_children
        return not vals or (len(vals) == 1 and vals[0].type == "none")
    if stmt.type == "expression_statement" and stmt.named_child_count == 1:
        return stmt.named_children[0].type == "ellipsis"
    return False


def _literal_attr(node: Node) -> dict | None:
    if node.type != "assignment":
        return None
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if left is None or right is None or left.type != "identifier":
        return None
    if _is_literal(right):
        return {"name": text(left), "value": text(right), "line": line(node), "value_kind": "literal"}
    if right.type in ("identifier", "attribute"):  # `_parser_engine_cls = MiniCPMVParser`
        return {"name": text(left), "value": text(right), "line": line(node), "value_kind": "name"}
    return None


def _is_literal(node: Node) -> bool:
    if node.type in LITERALS:
        return not (node.type == "string" and any(c.type == "interpolation" for c in node.named_children))
    if node.type == "unary_operator":
        return _is_literal(node.named_children[-1])
    if node.type in CONTAINERS:
        return all(
            _is_literal(c.child_by_field_name("key")) and _is_literal(c.child_by_field_name("value"))
            if c.type == "pair"
            else _is_literal(c)
            for c in node.named_children
        )
    return False


def _nesting(node: Node) -> str:
    n = node.parent
    while n is not None:
        if n.type == "function_definition":
            return "function"
        if n.type == "class_definition":
            return "class"
        n = n.parent
    return "module"
