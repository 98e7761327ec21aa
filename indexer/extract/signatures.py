"""Signatures: every module-level function and every method (a function written directly in a class body)
as written — each parameter's name, kind, annotation and default, the return annotation, the decorators —
and every attribute a class body declares (`name: annotation = value`, either part optional).

One row per definition: `{kind: function | method | attribute, class, name, line, end_line, params,
returns, decorators, is_async, annotation, value}`; `params` is a list of `[name, kind, annotation,
default]`, kind as Python's inspect names it (positional-only, positional-or-keyword, var-positional,
keyword-only, var-keyword). Closures (functions in functions) are left out: nothing outside can call them.
"""

from __future__ import annotations

from tree_sitter import Node

from .ts import line, matches, qualname, query, text

MAX_TEXT = 200  # an annotation, default or value longer than this is cut (and marked with …)

POS_ONLY, POS_OR_KW, VAR_POS, KW_ONLY, VAR_KW = (
    "positional-only",
    "positional-or-keyword",
    "var-positional",
    "keyword-only",
    "var-keyword",
)


def extract(root: Node) -> list[dict]:
    rows = []
    names: dict[int, str] = {}  # class node id -> its qualified name, computed once a class
    for caps in matches(query("signatures.scm"), root):
        if "function" in caps:
            row = _function(caps["function"][0], caps["name"][0], caps["params"][0], names)
        else:
            row = _attribute(caps["assign"][0], caps["attr"][0], names)
        if row is not None:
            rows.append(row)
    rows.sort(key=lambda r: (r["line"], r["kind"], r["name"]))
    return rows


def _owner(node: Node, names: dict[int, str]) -> tuple[str, str | None] | None:
    """('class', its qualified name) for a definition directly in a class body, ('module', None) at module
    level (or in an `if` / `try` there), None inside a function."""
    n = node.parent
    while n is not None:
        t = n.type
        if t == "function_definition":
            return None
        if t == "class_definition":
            if n.id not in names:
                names[n.id] = qualname(n)
            return "class", names[n.id]
        n = n.parent
    return "module", None


def _cut(value: str | None) -> str | None:
    if not value:
        return value
    if "\n" in value:
        value = " ".join(value.split())
    return value if len(value) <= MAX_TEXT else value[: MAX_TEXT - 1] + "…"


def _function(defn: Node, name: Node, params: Node, names: dict[int, str]) -> dict | None:
    owner = _owner(defn, names)
    if owner is None:
        return None
    parent = defn.parent
    stmt = parent if parent is not None and parent.type == "decorated_definition" else defn
    decorators = (
        [text(d.named_children[0]) for d in stmt.named_children if d.type == "decorator"]
        if stmt is not defn
        else []
    )
    cls = owner[1]
    return {
        "kind": "method" if cls else "function",
        "class": cls,
        "name": text(name),
        "line": line(stmt),
        "end_line": defn.end_point.row + 1,
        "params": parameters(params),
        "returns": _cut(text(defn.child_by_field_name("return_type")) or None),
        "decorators": decorators,
        "is_async": any(c.type == "async" for c in defn.children),
        "annotation": None,
        "value": None,
    }


def parameters(params: Node) -> list[list]:
    """[name, kind, annotation, default] for each parameter, in order."""
    out: list[list] = []
    keyword_only = False
    for p in params.named_children:
        t = p.type
        if t == "comment":
            continue
        if t == "positional_separator":  # `/`: everything before is positional-only
            for q in out:
                q[1] = POS_ONLY
            continue
        if t == "keyword_separator":  # a bare `*`
            keyword_only = True
            continue
        annotation = default = None
        if t in ("typed_parameter", "typed_default_parameter"):
            annotation = text(p.child_by_field_name("type"))
        if t in ("default_parameter", "typed_default_parameter"):
            default = text(p.child_by_field_name("value"))
        target = (
            p.child_by_field_name("name")
            if t in ("default_parameter", "typed_default_parameter")
            else (p.named_children[0] if t == "typed_parameter" and p.named_child_count else p)
        )
        if target is None:
            continue
        if target.type == "list_splat_pattern":
            kind, name, keyword_only = (
                VAR_POS,
                target.named_children[0] if target.named_child_count else None,
                True,
            )
        elif target.type == "dictionary_splat_pattern":
            kind, name = VAR_KW, target.named_children[0] if target.named_child_count else None
        else:
            kind, name = (KW_ONLY if keyword_only else POS_OR_KW), target
        out.append([text(name) if name is not None else "", kind, _cut(annotation), _cut(default)])
    return out


def _attribute(assign: Node, left: Node, names: dict[int, str]) -> dict | None:
    owner = _owner(assign, names)
    if owner is None or owner[0] != "class":
        return None
    right = assign.child_by_field_name("right")
    annotation = assign.child_by_field_name("type")
    return {
        "kind": "attribute",
        "class": owner[1],
        "name": text(left),
        "line": line(assign),
        "end_line": assign.end_point.row + 1,
        "params": None,
        "returns": None,
        "decorators": [],
        "is_async": False,
        "annotation": _cut(text(annotation) if annotation else None),
        "value": _cut(text(right) if right is not None else None),
    }
