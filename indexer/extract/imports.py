"""Imports: one row per imported name, with the relative level kept raw (resolved per path later)."""

from __future__ import annotations

from tree_sitter import Node

from .ts import captures, enclosing, line, query, text


def extract(root: Node) -> list[dict]:
    caps = captures(query("imports.scm"), root)
    rows: list[dict] = []
    for kind in ("import", "import_from", "import_future"):
        for node in caps.get(kind, []):
            rows.extend(_rows(node, kind))
    rows.sort(key=lambda r: (r["line"], r["name"] or ""))
    return rows


def _rows(node: Node, kind: str) -> list[dict]:
    cls, fn = enclosing(node)
    base = {
        "line": line(node),
        "end_line": node.end_point.row + 1,
        "in_function": fn,
        "in_class": cls,
        "type_checking": _under_type_checking(node),
    }
    if kind == "import":
        out = []
        for child in node.children_by_field_name("name"):
            dotted, alias = _name_alias(child)
            out.append({**base, "module": dotted, "name": None, "alias": alias, "level": 0, "star": False})
        return out
    if kind == "import_future":
        module, level = "__future__", 0
    else:
        module, level = _from_module(node.child_by_field_name("module_name"))
    if any(c.type == "wildcard_import" for c in node.named_children):
        return [{**base, "module": module, "name": "*", "alias": None, "level": level, "star": True}]
    out = []
    for child in node.children_by_field_name("name"):
        name, alias = _name_alias(child)
        out.append({**base, "module": module, "name": name, "alias": alias, "level": level, "star": False})
    return out


def _name_alias(node: Node) -> tuple[str, str | None]:
    if node.type == "aliased_import":
        return text(node.child_by_field_name("name")), text(node.child_by_field_name("alias"))
    return text(node), None


def _from_module(node: Node | None) -> tuple[str, int]:
    if node is None:
        return "", 0
    if node.type == "relative_import":
        prefix = next((c for c in node.children if c.type == "import_prefix"), None)
        dotted = next((c for c in node.children if c.type == "dotted_name"), None)
        return text(dotted), len(text(prefix))
    return text(node), 0


def _under_type_checking(node: Node) -> bool:
    n = node.parent
    while n is not None:
        if n.type == "if_statement":
            cond = n.child_by_field_name("condition")
            # `if TYPE_CHECKING:` or `if typing.TYPE_CHECKING:`; not `if not TYPE_CHECKING:`
            if (
                cond is not None
                and cond.type in ("identifier", "attribute")
                and text(cond).split(".")[-1] == "TYPE_CHECKING"
                and _in_consequence(n, node)
            ):
                return True
        n = n.parent
    return False


def _in_consequence(if_node: Node, node: Node) -> bool:
    body = if_node.child_by_field_name("consequence")
    return body is not None and body.start_byte <= node.start_byte and node.end_byte <= body.end_byte
