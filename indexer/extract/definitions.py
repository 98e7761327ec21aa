"""Definitions: every class (at any depth, with Python's qualified name: `C.D`, `f.<locals>.C`), every
method (a function written directly in a class body), every module-level function, and every name a
module assigns at its top level, each with its first line (its first decorator, as in `classes`) and
its end line.

One row is `[kind, qualname, line, end_line]`, kind being class, function, method or name. Top-level
statements that hold other statements (`if TYPE_CHECKING:`, `try:` import fallbacks, `with`, loops)
are entered; functions nested in functions are left out (closures are not reachable by name). A
(kind, qualname) defined twice keeps its first definition.

Two ways to the same rows:
- `walk(tree)`: the whole-tree tier (`build --tree`) on every module under vllm/ outside the parser
  scope. A walk over statements that never descends into expressions; the same facts as a pattern
  query cost 3-4x more (README, "The whole tree").
- `from_facts(facts)`: a fully parsed blob's definitions from its `classes` facts and the small
  `module_defs` fact kind (`module_level(tree)`, top-level statements only), so a parsed blob never
  needs a second parse. tests/test_tree.py checks both agree.
"""

from __future__ import annotations

from tree_sitter import Node

CONTAINERS = frozenset(
    {
        "if_statement",
        "elif_clause",
        "else_clause",
        "try_statement",
        "except_clause",
        "except_group_clause",
        "finally_clause",
        "with_statement",
        "for_statement",
        "while_statement",
        "match_statement",
        "case_clause",
        "block",
    }
)
TARGETS = frozenset(
    {"pattern_list", "tuple_pattern", "list_pattern", "list_splat_pattern", "parenthesized_expression"}
)
KIND_ORDER = {"class": 0, "function": 1, "method": 2, "name": 3}


def walk(root: Node) -> list[list]:
    out: list[list] = []
    _visit(root, "", "module", out, deep=True)
    return _finish(out)


def module_level(root: Node) -> list[list]:
    """Module-level functions and names only (the full extraction has every class and method already)."""
    out: list[list] = []
    _visit(root, "", "module", out, deep=False)
    return [r for r in out if r[0] in ("function", "name")]


def from_facts(facts: dict) -> list[list]:
    out = [list(r) for r in facts.get("module_defs", [])]
    for c in facts.get("classes", []):
        out.append(["class", c["qualname"], c["line"], c["end_line"]])
        out.extend(["method", f"{c['qualname']}.{m['name']}", m["line"], m["end_line"]] for m in c["methods"])
    return _finish(out)


def _finish(rows: list[list]) -> list[list]:
    rows.sort(key=lambda r: (r[2], KIND_ORDER[r[0]], r[1]))
    seen: set[tuple[str, str]] = set()
    out = []
    for r in rows:
        if (r[0], r[1]) not in seen:
            seen.add((r[0], r[1]))
            out.append(r)
    return out


def _visit(root: Node, prefix: str, where: str, out: list, deep: bool) -> None:
    """Statements under `root`, with an explicit stack (absurdly nested files cannot exhaust Python's).
    `where`: module, class (a class body) or function (a function body, where only classes count);
    `direct`: the statements are the body's own, not inside an `if` / `try` of it."""
    stack = [(root, prefix, where, True)]
    while stack:
        node, prefix, where, direct = stack.pop()
        for stmt in node.named_children:
            child, kind = stmt, stmt.type
            if kind == "decorated_definition":
                child = stmt.child_by_field_name("definition")
                if child is None:
                    continue
                kind = child.type
            if kind == "class_definition" or kind == "function_definition":
                name = child.child_by_field_name("name")
                if name is None:
                    continue
                qual = prefix + name.text.decode("utf-8", "replace")
                line, end = stmt.start_point.row + 1, child.end_point.row + 1
                if kind == "class_definition":
                    out.append(["class", qual, line, end])
                    sub, inner = qual + ".", "class"
                else:
                    if where == "module":
                        out.append(["function", qual, line, end])
                    elif where == "class" and direct:
                        out.append(["method", qual, line, end])
                    sub, inner = qual + ".<locals>.", "function"
                body = child.child_by_field_name("body")
                if deep and body is not None:
                    stack.append((body, sub, inner, True))
            elif kind in CONTAINERS:  # without `deep` only module-level statements are ever stacked
                stack.append((stmt, prefix, where, False))
            elif where == "module" and kind == "expression_statement" and stmt.named_child_count:
                assign = stmt.named_children[0]
                if assign.type == "assignment":
                    for target in _targets(assign.child_by_field_name("left")):
                        out.append(
                            [
                                "name",
                                target.text.decode("utf-8", "replace"),
                                assign.start_point.row + 1,
                                assign.end_point.row + 1,
                            ]
                        )


def _targets(node: Node | None) -> list[Node]:
    """The identifiers an assignment target binds: `X`, `A, B`, `(A, B)`, `[A, *B]` (attributes and
    subscripts bind no module name)."""
    if node is None:
        return []
    if node.type == "identifier":
        return [node]
    if node.type in TARGETS:
        return [n for child in node.named_children for n in _targets(child)]
    return []
