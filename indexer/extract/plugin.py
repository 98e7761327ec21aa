"""A plugin file, read as the index reads vLLM's own files (tree-sitter, never executed): the raw facts of
every kind (imports, classes, registrations, signatures, parser calls), located at the plugin's own path,
plus what only a plugin check needs:

- import alternatives: imports in a `try:` whose handler catches ImportError (or ModuleNotFoundError,
  Exception, or everything) and the imports in those handlers are alternatives of one group, so a plugin
  that imports from the new package and falls back to the old one is checked as Python runs it;
- registration calls: the shape of each `Manager.register_module(...)` / `register_lazy_module(...)` call
  (decorator or statement), to check against the manager's signature at each version;
- spans, for the lines a check suggests to change: each import statement's first and last line, and each
  function's header (its `def` line, the line its `:` ends, the text after its parameters, its indentation)
  and its whole span, decorators included.
"""

from __future__ import annotations

from tree_sitter import Node

from .parser_calls import arguments
from .ts import line, parser, text

CATCHES_IMPORT = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}
REGISTER = ("register_module", "register_lazy_module")


def read(data: bytes) -> dict:
    """-> {status, error, facts (raw, as extract.parse gives them), alternatives: {import line: [group,
    alternative]}, manager_calls: [{manager, method, line, shape...}]}."""
    from . import parse

    out = parse(data)
    if b"\0" in data:
        return {**out, "alternatives": {}, "manager_calls": [], "spans": {"imports": {}, "defs": {}}}
    root = parser().parse(data.decode("utf-8", errors="replace").encode("utf-8")).root_node
    return {
        **out,
        "alternatives": alternatives(root),
        "manager_calls": manager_calls(root),
        "spans": spans(root),
    }


def spans(root: Node) -> dict:
    """{imports: {first line: last line} of every import statement, defs: {qualname: {line (of `def`),
    start (its first decorator's line), end_line, header_end (the line of the header's `:`), tail (the text
    from the parameters' `)` to that `:`, exclusive), indent}}}."""
    imports, defs = {}, {}
    for node in _walk(root):
        if node.type in ("import_statement", "import_from_statement"):
            imports[line(node)] = node.end_point.row + 1
        elif node.type == "function_definition":
            from .ts import qualname

            params = node.child_by_field_name("parameters")
            colon = next((c for c in node.children if c.type == ":"), None)
            if params is None or colon is None:
                continue
            outer = (
                node.parent
                if node.parent is not None and node.parent.type == "decorated_definition"
                else node
            )
            defs[qualname(node)] = {
                "line": line(node),
                "start": line(outer),
                "end_line": node.end_point.row + 1,
                "header_end": colon.end_point.row + 1,
                "tail": root.text[params.end_byte : colon.start_byte].decode("utf-8", "replace"),
                "indent": node.start_point.column,
            }
    return {"imports": imports, "defs": defs}


def _walk(node: Node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.named_children))


def _catches_import(clause: Node) -> bool:
    value = clause.child_by_field_name("value")
    if value is None:
        kids = [c for c in clause.named_children if c.type != "block" and c.type != "comment"]
        value = kids[0] if kids else None
    if value is None:
        return True  # a bare `except:`
    if value.type == "as_pattern":
        value = value.named_children[0]
    names = [text(c) for c in value.named_children] if value.type == "tuple" else [text(value)]
    return any(n.rpartition(".")[2] in CATCHES_IMPORT for n in names)


def alternatives(root: Node) -> dict[int, list[int]]:
    """Import statement line -> [group, alternative]: group numbers the try statements that guard imports,
    alternative 0 is the try body, 1.. its handlers that catch ImportError, in order."""
    out: dict[int, list[int]] = {}
    group = 0
    for node in _walk(root):
        if node.type != "try_statement":
            continue
        handlers = [c for c in node.named_children if c.type == "except_clause" and _catches_import(c)]
        if not handlers:
            continue
        branches = [node.child_by_field_name("body")] + handlers
        found = False
        for alt, branch in enumerate(branches):
            for n in _walk(branch) if branch is not None else ():
                if n.type in ("import_statement", "import_from_statement") and line(n) not in out:
                    out[line(n)] = [group, alt]
                    found = True
                elif n.type in ("function_definition", "class_definition"):
                    break
        group += found
    return out


def manager_calls(root: Node) -> list[dict]:
    """Every `X.register_module(...)` / `X.register_lazy_module(...)` call: manager as written, method, line
    and the shape of its arguments (parser_calls.arguments)."""
    out = []
    for node in _walk(root):
        if node.type != "call":
            continue
        fn = node.child_by_field_name("function")
        if fn is None or fn.type != "attribute":
            continue
        method = text(fn.child_by_field_name("attribute"))
        if method not in REGISTER:
            continue
        args = node.child_by_field_name("arguments")
        if args is None or args.type != "argument_list":
            continue
        decorated = node.parent is not None and node.parent.type == "decorator"
        out.append(
            {
                "manager": text(fn.child_by_field_name("object")),
                "method": method,
                "line": line(node),
                "decorator": decorated,
                **arguments(args),
            }
        )
    return out
