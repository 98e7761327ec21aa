"""Registrations: which name maps to which module and class, in every registry form vLLM has used.

Forms: `decorator` (@Manager.register_module(...)), `call` (Manager.register_module(..., module=C)),
`lazy-call` (Manager.register_lazy_module(name, module_path, class_name)), `lazy-dict`
(_X_TO_REGISTER = {"name": ("file", "Class")}), and the hard-coded era's `cli-choices` (from
`dispatch.py`). Kind: tool, reasoning or engine (the parser engine's own registry, vllm/parser/, v0.16.0 on).
"""

from __future__ import annotations

from tree_sitter import Node

from . import dispatch
from .ts import line, matches, query, string_value, text

# For each pattern of registry.scm (decorator, call, lazy dict, the lazy dicts' package template), the words one
# of which a blob holds where its matches give a row: the first three by their predicates; a template is
# read only for a lazy dict's rows
WORDS = (
    (b"register_module",),
    (b"register_module", b"register_lazy_module"),
    (b"_TO_REGISTER",),
    (b"_TO_REGISTER",),
)


def kind_of(registry: str) -> str:
    low = registry.lower()
    if "reasoning" in low:
        return "reasoning"
    if "tool" in low:
        return "tool"
    return "engine"


def extract(root: Node) -> list[dict]:
    rows: list[dict] = []
    dicts, templates = [], []
    for caps in matches(query("registry.scm"), root):
        if "decorated" in caps:
            rows.extend(_decorator(caps))
        elif "call" in caps:
            rows.extend(_call(caps))
        elif "dict" in caps:
            dicts.append(caps)
        elif "template" in caps:
            templates.append(text(caps["prefix"][0]).rstrip("."))
    package = templates[0] if len(set(templates)) == 1 else None
    for caps in dicts:
        rows.extend(_lazy_dict(caps, package))
    rows.extend(dispatch.extract(root))
    rows.sort(key=lambda r: (r["line"], r["name"]))
    return rows


def _names(node: Node | None) -> list[str] | None:
    """A string or a list/tuple of strings; None if it is anything else."""
    if node is None:
        return None
    if node.type == "string":
        value = string_value(node)
        return None if value is None else [value]
    if node.type in ("list", "tuple"):
        out = [string_value(c) for c in node.named_children if c.type != "comment"]
        return None if any(v is None for v in out) else out
    return None


def _args(args: Node) -> tuple[list[Node], dict[str, Node]]:
    pos, kw = [], {}
    for a in args.named_children:
        if a.type == "keyword_argument":
            kw[text(a.child_by_field_name("name"))] = a.child_by_field_name("value")
        elif a.type != "comment":
            pos.append(a)
    return pos, kw


def _decorator(caps) -> list[dict]:
    manager, cls = text(caps["manager"][0]), text(caps["class"][0])
    pos, kw = _args(caps["args"][0])
    name_node = kw.get("name") or (pos[0] if pos else None)
    names = [cls] if name_node is None else _names(name_node)
    if names is None:
        return []
    return [
        {
            "kind": kind_of(manager),
            "name": n,
            "module": None,
            "class": cls,
            "form": "decorator",
            "line": line(caps["decorator"][0]),
            "registry": manager,
        }
        for n in names
    ]


def _call(caps) -> list[dict]:
    manager, method = text(caps["manager"][0]), text(caps["method"][0])
    pos, kw = _args(caps["args"][0])
    call_line = line(caps["call"][0])
    if method == "register_lazy_module":
        fields = dict(zip(("name", "module_path", "class_name"), pos, strict=False))
        fields.update({k: v for k, v in kw.items() if k in ("name", "module_path", "class_name")})
        name, module, cls = (string_value(fields.get(k)) for k in ("name", "module_path", "class_name"))
        if name is None or module is None:
            return []  # a loop over a lazy dict: the dict's rows say it
        return [
            {
                "kind": kind_of(manager),
                "name": name,
                "module": module,
                "class": cls,
                "form": "lazy-call",
                "line": call_line,
                "registry": manager,
            }
        ]
    # register_module(name=None, force=True, module=None): the class is the third positional argument
    target = kw.get("module") or (pos[2] if len(pos) > 2 else None)
    if target is None or target.type not in ("identifier", "attribute"):
        return []
    name_node = kw.get("name") or (pos[0] if pos else None)
    cls = text(target).split(".")[-1]
    names = [cls] if name_node is None else _names(name_node)
    return [
        {
            "kind": kind_of(manager),
            "name": n,
            "module": None,
            "class": cls,
            "form": "call",
            "line": call_line,
            "registry": manager,
        }
        for n in names or []
    ]


def _lazy_dict(caps, package: str | None) -> list[dict]:
    dict_name = text(caps["dict_name"][0])
    rows = []
    for pair in caps["dict"][0].named_children:
        if pair.type != "pair":
            continue
        name = string_value(pair.child_by_field_name("key"))
        value = pair.child_by_field_name("value")
        parts = [c for c in value.named_children if c.type != "comment"] if value is not None else []
        if name is None or value is None or value.type not in ("tuple", "list") or len(parts) < 2:
            continue
        file_name, cls = string_value(parts[0]), string_value(parts[1])
        if file_name is None:
            continue
        row = {
            "kind": kind_of(dict_name),
            "name": name,
            "class": cls,
            "form": "lazy-dict",
            "line": line(pair),
            "registry": dict_name,
        }
        if "." in file_name:
            row["module"] = file_name
        elif package:
            row["module"] = f"{package}.{file_name}"
        else:
            row["module"], row["module_in_package"] = None, file_name
        rows.append(row)
    return rows
