"""tree-sitter plumbing: the Python language, one parser per process, and the pattern files.

Pattern files live in the top-level `queries/` directory of the project; an installed wheel carries
them as `indexer/queries/`.
"""

from __future__ import annotations

import functools
from pathlib import Path

import tree_sitter_python
from tree_sitter import Language, Node, Parser, Query, QueryCursor

LANGUAGE = Language(tree_sitter_python.language())


def queries_dir() -> Path:
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "queries", here.parent / "queries"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("tpindex's queries/ directory is missing from the installation")


@functools.cache
def parser() -> Parser:
    return Parser(LANGUAGE)


@functools.cache
def query(name: str) -> Query:
    """A pattern file under queries/patterns/ (or a path relative to queries/)."""
    rel = name if "/" in name else f"patterns/{name}"
    return Query(LANGUAGE, (queries_dir() / rel).read_text())


def matches(q: Query, node: Node) -> list[dict[str, list[Node]]]:
    return [caps for _, caps in QueryCursor(q).matches(node)]


def captures(q: Query, node: Node) -> dict[str, list[Node]]:
    return QueryCursor(q).captures(node)


def text(node: Node | None) -> str:
    if node is None:
        return ""
    return node.text.decode("utf-8", errors="replace")


def line(node: Node) -> int:
    return node.start_point.row + 1


def string_value(node: Node | None) -> str | None:
    """The value of a plain string literal ('x', "x", no f-string interpolation), else None."""
    if node is None or node.type != "string":
        return None
    parts = []
    for child in node.named_children:
        if child.type == "interpolation":
            return None
        if child.type == "string_content":
            parts.append(text(child))
        elif child.type == "escape_sequence":
            parts.append(text(child))
    return "".join(parts)


def enclosing(node: Node) -> tuple[str | None, str | None]:
    """Qualified names of the innermost enclosing class and function ("A.B", "f.<locals>.g")."""
    cls = fn = None
    n = node.parent
    while n is not None:
        if n.type == "class_definition" and cls is None:
            cls = qualname(n)
        elif n.type == "function_definition" and fn is None:
            fn = qualname(n)
        n = n.parent
    return cls, fn


def qualname(defn: Node) -> str:
    """Python's __qualname__ for a class or function definition node."""
    parts = [text(defn.child_by_field_name("name"))]
    n = defn.parent
    while n is not None:
        if n.type == "class_definition":
            parts.append(text(n.child_by_field_name("name")))
        elif n.type == "function_definition":
            parts.append("<locals>")
            parts.append(text(n.child_by_field_name("name")))
        n = n.parent
    return ".".join(reversed(parts))
