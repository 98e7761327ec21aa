"""Request settings: what a parser's `adjust_request` does to the request where it is readable, as the
assignments `request.FIELD = VALUE` in its body (`request.skip_special_tokens = False`), each with the
condition of the innermost `if` / `elif` around it (`not (...)` in an `else`), whitespace collapsed.

Only a parameter named `request` is followed; calls (`super().adjust_request(request)`, a hand-off to
another parser) are told by the method's own facts (calls_super, delegates), not here.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from .ts import enclosing, line, matches, query, text

METHOD = "adjust_request"
MAX_TEXT = 160


def _short(s: str) -> str:
    s = re.sub(r"\s+", " ", s).strip()
    return s if len(s) <= MAX_TEXT else s[: MAX_TEXT - 1] + "…"


def _guard(node: Node) -> str | None:
    """The condition of the innermost if / elif around a statement, inside its function."""
    child, n = node, node.parent
    while n is not None and n.type != "function_definition":
        if n.type in ("if_statement", "elif_clause") and n.child_by_field_name("condition") != child:
            cond = _short(text(n.child_by_field_name("condition")))
            return cond
        if n.type == "else_clause" and n.parent is not None and n.parent.type == "if_statement":
            return f"not ({_short(text(n.parent.child_by_field_name('condition')))})"
        child, n = n, n.parent
    return None


def extract(root: Node) -> list[dict]:
    rows = []
    for caps in matches(query("request_settings.scm"), root):
        node = caps["setting"][0]
        cls, fn = enclosing(node)
        if fn is None or fn.rsplit(".", 1)[-1] != METHOD:
            continue
        rows.append(
            {
                "class": cls,
                "function": fn,
                "field": text(caps["field"][0]),
                "value": _short(text(caps["value"][0])),
                "line": line(node),
                "guard": _guard(node),
            }
        )
    return rows
