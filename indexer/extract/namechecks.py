"""Name checks: code that composes a parser by comparing the requested name and importing (or picking)
the real class in that branch, and class-based dispatch through `unified_parser_cls()`.

Rows: kind (tool / reasoning / unified, from the compared variable), name, class, module (when the branch
imports the class; else resolved later through the file's imports), level (relative import), line, via.

A class check (`if is_mistral_tool_parser(tool_parser_cls):`, `issubclass(tool_parser_cls, X)`) picks a class
for every name whose registered class is (a subclass of) the tested class: its row has no name and
`tested` = the tested class (`MistralToolParser`; for `is_<x>_tool_parser`, spelled from the function name
as `<X>ToolParser`, matched ignoring case and underscores).
"""

from __future__ import annotations

import re

from tree_sitter import Node

from .registry import kind_of
from .ts import line, matches, qualname, query, string_value, text

NAME_VARS = ("parser_name", "tool_parser", "reasoning_parser", "parser")
# For each pattern of name_checks.scm (if, elif, constant, unified_parser_cls()), the words one of which a blob
# holds where its matches give a row: every row compares or tests a variable whose name holds "parser"
# (NAME_VARS, _class_check) or comes from unified_parser_cls(); a constant serves only such comparisons
WORDS = ((b"parser",),) * 4


def extract(root: Node) -> list[dict]:
    caps_list = matches(query("name_checks.scm"), root)
    constants = {}
    for caps in caps_list:
        if "const" in caps:
            values = _strings(caps["value"][0], {})
            if values:
                constants[text(caps["const"][0])] = values
    rows: list[dict] = []
    for caps in caps_list:
        if "branch" in caps:
            cond = caps["cond"][0]
            if b"parser" not in cond.text and not any(c.encode() in cond.text for c in constants):
                continue  # cheap test first: most branches compare nothing about parser names
            compared = _compared(cond, constants)
            tested = None if compared else _class_check(cond)
            if not compared and not tested:
                continue
            picks = _picks(caps["body"][0])
            if tested:
                rows.extend(
                    {
                        "kind": tested[0],
                        "name": None,
                        **pick,
                        "line": line(caps["branch"][0]),
                        "via": f"class check {tested[2]}",
                        "tested": tested[1],
                    }
                    for pick in picks[:1]
                )
                continue
            for var, names in compared:
                for name in names:
                    for pick in picks:
                        rows.append(
                            {
                                "kind": kind_of(var),
                                "name": name,
                                **pick,
                                "line": line(caps["branch"][0]),
                                "via": pick.get("via") or f"{var} check",
                            }
                        )
        elif "method" in caps:
            owner = caps["method"][0].parent
            while owner is not None and owner.type != "class_definition":
                owner = owner.parent
            for pick in _picks(caps["method_body"][0], returns=True):
                owner_name = qualname(owner) if owner else text(caps["owner"][0])
                rows.append(
                    {
                        "kind": "engine",
                        "name": None,
                        **pick,
                        "line": line(caps["method"][0]),
                        "via": "unified_parser_cls()",
                        "owner": owner_name,
                    }
                )
    rows.sort(key=lambda r: (r["line"], r["name"] or ""))  # stable: a branch's imports keep their order
    return rows


def _is_name_var(node: Node) -> str | None:
    if node.type not in ("identifier", "attribute"):
        return None
    written = text(node)
    last = written.split(".")[-1]
    return written if any(last.endswith(v) or last == v for v in NAME_VARS) else None


def _class_check(cond: Node) -> tuple[str, str, str] | None:
    """(kind, tested class, call as written) for `is_<x>_tool_parser(var)` / `issubclass(var, X)`, with
    var a parser-class variable (`tool_parser_cls`)."""
    stack = [cond]
    while stack:
        n = stack.pop()
        if n.type == "call":
            fn = text(n.child_by_field_name("function")).split(".")[-1]
            args = [a for a in n.child_by_field_name("arguments").named_children if a.type != "comment"]
            var = text(args[0]) if args else ""
            if "parser" not in var.split(".")[-1]:
                stack.extend(n.named_children)
                continue
            kind = "reasoning" if "reasoning" in var else "tool"
            if (
                fn in ("issubclass", "isinstance")
                and len(args) == 2
                and args[1].type in ("identifier", "attribute")
            ):
                return kind, text(args[1]).split(".")[-1], text(n)
            m = re.fullmatch(r"is_(\w+?)_(tool|reasoning)_parser", fn)
            if m and len(args) == 1:
                word = "".join(p.capitalize() for p in m.group(1).split("_"))
                return m.group(2), f"{word}{m.group(2).capitalize()}Parser", text(n)
        stack.extend(n.named_children)
    return None


def _strings(node: Node, constants: dict) -> list[str] | None:
    if node.type == "string":
        v = string_value(node)
        return None if v is None else [v]
    if node.type in ("tuple", "list", "set"):
        out = []
        for c in node.named_children:
            vals = _strings(c, constants)
            if vals is None:
                return None
            out.extend(vals)
        return out
    if node.type == "identifier" and text(node) in constants:
        return constants[text(node)]
    return None


def _compared(cond: Node, constants: dict) -> list[tuple[str, list[str]]]:
    """(variable, names) for each comparison of a name variable with literal names in a condition."""
    out = []
    stack = [cond]
    while stack:
        n = stack.pop()
        if n.type == "comparison_operator":
            ops = [text(c) for c in n.children if not c.is_named]
            left, right = n.named_children[0], n.named_children[-1]
            if len(n.named_children) == 2 and ops and ops[0] in ("==", "in"):
                for var_node, lit_node in ((left, right), (right, left)):
                    var = _is_name_var(var_node)
                    names = _strings(lit_node, constants) if var else None
                    if var and names:
                        out.append((var, names))
                        break
                else:
                    # "x" in (reasoning_parser_name, tool_parser_name) / HF_PARSER in {...}
                    names = _strings(left, constants)
                    if ops[0] == "in" and names and right.type in ("tuple", "set", "list"):
                        out.extend((v, names) for c in right.named_children if (v := _is_name_var(c)))
            continue
        if n.type == "binary_operator" and text(n.child_by_field_name("operator")) == "&":
            sides = [n.child_by_field_name("left"), n.child_by_field_name("right")]
            vars_ = [
                v
                for s in sides
                if s is not None and s.type == "set"
                for c in s.named_children
                if (v := _is_name_var(c))
            ]
            names = next((vals for s in sides if s is not None and (vals := _strings(s, constants))), None)
            if vars_ and names:
                out.extend((v, names) for v in vars_)
                continue
        stack.extend(n.named_children)
    return out


def _picks(body: Node, returns: bool = False) -> list[dict]:
    """Classes a branch picks: `from m import C` inside it, or `x = C` / `return C` of a class name."""
    imported, assigned = [], []
    stack = [body]
    while stack:
        n = stack.pop()
        if n.type == "import_from_statement":
            mod = n.child_by_field_name("module_name")
            module, level = text(mod), 0
            if mod is not None and mod.type == "relative_import":
                prefix = next((c for c in mod.children if c.type == "import_prefix"), None)
                dotted = next((c for c in mod.children if c.type == "dotted_name"), None)
                module, level = text(dotted), len(text(prefix))
            for name in n.children_by_field_name("name"):
                cls = text(name.child_by_field_name("name")) if name.type == "aliased_import" else text(name)
                if cls[:1].isupper():
                    imported.append({"class": cls, "module": module, "level": level, "import_line": line(n)})
            continue
        if n.type in ("class_definition", "function_definition"):
            continue  # a class defined in the branch subclasses the imported one; the import says it
        value = None
        if n.type == "assignment":
            value = n.child_by_field_name("right")
        elif returns and n.type == "return_statement" and n.named_children:
            value = n.named_children[0]
        if (
            value is not None
            and value.type in ("identifier", "attribute")
            and text(value).split(".")[-1][:1].isupper()
        ):
            assigned.append({"class": text(value), "module": None, "level": 0, "import_line": line(value)})
        stack.extend(reversed(n.named_children))
    if imported:
        return imported[:1] if returns else imported
    return assigned[:1]
