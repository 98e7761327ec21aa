"""Locate: raw facts of a blob + the path it sits at -> rows for the fact tables.

The path decides the module, how relative imports resolve, and so what every name a class or binding
refers to means. This is cheap (no parsing), so a blob seen at a new path is located again, not parsed.
"""

from __future__ import annotations

import json

from ..core.scope import FLAGS, FULL, depth_needed, module_of, package_of

# The tables only the parser packages get rows in (scope.FULL; extract/facts.py PARSER_KINDS)
PARSER_TABLES = frozenset({"sentinels", "request_settings", "regexes", "self_attrs", "plants", "uses"})
# The tables a framework module gets rows in (scope.FLAGS; extract/facts.py FLAG_KINDS)
FLAG_TABLES = frozenset({"env_defaults", "markers"})


def absolute(module: str, level: int, path: str) -> str:
    """`from ..x import y` in vllm/a/b/c.py -> vllm.a.x."""
    if not level:
        return module
    parts = package_of(path).split(".") if package_of(path) else []
    if level - 1:
        parts = parts[: len(parts) - (level - 1)]
    return ".".join(p for p in parts + ([module] if module else []) if p)


class Names:
    """What a bare or dotted name means in a file: through its imports, else a class of its own."""

    def __init__(self, imports: list[dict], module: str, local: set[str]):
        self.module = module
        self.local = local
        self.bound: dict[str, str] = {}
        # function-level imports first, so module-level ones win on a clash
        for imp in sorted(imports, key=lambda i: i["in_function"] is None):
            if imp["star"]:
                continue
            if imp["name"] is None:  # import a.b [as c]
                if imp["alias"]:
                    self.bound[imp["alias"]] = imp["abs_module"]
                else:
                    head = imp["abs_module"].split(".")[0]
                    self.bound[head] = head
            else:
                self.bound[imp["alias"] or imp["name"]] = f"{imp['abs_module']}.{imp['name']}"

    def resolve(self, dotted: str | None) -> str | None:
        if not dotted:
            return None
        head, _, rest = dotted.partition(".")
        if head in self.bound:
            return self.bound[head] + ("." + rest if rest else "")
        if head in self.local:
            return f"{self.module}.{dotted}"
        return None

    def module_of_name(self, dotted: str | None) -> str | None:
        """The module part of what a name resolves to (for `from m import C`: m)."""
        full = self.resolve(dotted)
        return full.rpartition(".")[0] if full else None


def needed(rows: dict[str, list[dict]], path: str) -> dict[str, list[dict]]:
    """Of located rows, those the path's depth needs (a blob stored with every fact kind, met at a path
    outside the parser packages, gets the rows it would get had it been extracted there)."""
    depth = depth_needed(path)
    if depth >= FULL:
        return rows
    if depth <= FLAGS:
        return {t: r for t, r in rows.items() if t in FLAG_TABLES}
    return {t: r for t, r in rows.items() if t not in PARSER_TABLES}


def locate(raw_facts: dict, path: str) -> dict[str, list[dict]]:
    module = module_of(path)
    imports = []
    for imp in raw_facts.get("imports", []):
        imports.append({**imp, "abs_module": absolute(imp["module"], imp["level"], path)})
    classes = raw_facts.get("classes", [])
    local = {c["qualname"] for c in classes if c["nested_in"] == "module"}
    names = Names(imports, module, local)
    rows: dict[str, list[dict]] = {
        k: []
        for k in (
            "imports",
            "classes",
            "bases",
            "methods",
            "class_attrs",
            "markers",
            "plants",
            "adapter_bindings",
            "aliases",
            "registrations",
            "name_checks",
            "sentinels",
            "request_settings",
            "regexes",
            "self_attrs",
            "class_sets",
            "env_defaults",
            "signatures",
            "parser_calls",
            "uses",
        )
    }
    for imp in imports:
        rows["imports"].append(
            {
                "line": imp["line"],
                "module": imp["abs_module"],
                "name": imp["name"],
                "alias": imp["alias"],
                "level": imp["level"],
                "star": int(imp["star"]),
                "type_checking": int(imp["type_checking"]),
                "in_function": imp["in_function"],
                "in_class": imp["in_class"],
            }
        )
    for c in classes:
        q = c["qualname"]
        rows["classes"].append(
            {
                "qualname": q,
                "name": c["name"],
                "module": module,
                "line": c["line"],
                "end_line": c["end_line"],
                "decorators": json.dumps(c["decorators"]),
                "nested_in": c["nested_in"],
                "no_methods": int(c["no_methods"]),
                "streaming": c["streaming"],
            }
        )
        for pos, b in enumerate(c["bases"]):
            resolved = names.resolve(b["head"])
            rows["bases"].append(
                {
                    "class": q,
                    "pos": pos,
                    "written": b["written"],
                    "resolved": resolved,
                    "base_module": resolved.rpartition(".")[0] if resolved else None,
                    "keyword": None,
                }
            )
        for k in c["keywords"]:
            resolved = names.resolve(k["written"])
            rows["bases"].append(
                {
                    "class": q,
                    "pos": None,
                    "written": k["written"],
                    "resolved": resolved,
                    "base_module": resolved.rpartition(".")[0] if resolved else None,
                    "keyword": k["name"],
                }
            )
        for m in c["methods"]:
            rows["methods"].append({"class": q, **m})
        for a in c["attrs"]:
            ref = a.get("value_kind") == "name"
            rows["class_attrs"].append(
                {
                    "class": q,
                    "name": a["name"],
                    "value": a["value"],
                    "line": a["line"],
                    "value_kind": a.get("value_kind", "literal"),
                    "resolved": names.resolve(a["value"]) if ref else None,
                }
            )
    rows["markers"] = list(raw_facts.get("markers", []))
    rows["plants"] = list(raw_facts.get("plants", []))
    rows["sentinels"] = list(raw_facts.get("sentinels", []))
    rows["request_settings"] = list(raw_facts.get("request_settings", []))
    rows["regexes"] = list(raw_facts.get("regexes", []))
    rows["self_attrs"] = list(raw_facts.get("self_attrs", []))
    rows["signatures"] = [
        {
            **s,
            "params": _json(s["params"]),
            "decorators": _json(s["decorators"] or None),
            "is_async": int(s["is_async"]),
        }
        for s in raw_facts.get("signatures", [])
    ]
    rows["parser_calls"] = [
        {
            **c,
            "keywords": _json(c["keywords"]),
            "star": int(c["star"]),
            "dstar": int(c["dstar"]),
            "args": _json(c["args"]),
        }
        for c in raw_facts.get("parser_calls", [])
    ]
    rows["uses"] = list(raw_facts.get("uses", []))
    for b in raw_facts.get("adapter_bindings", []):
        rows["adapter_bindings"].append({**b, "parser": names.resolve(b["parser_written"])})
    for a in raw_facts.get("aliases", []):
        rows["aliases"].append({**a, "resolved": names.resolve(a["written"])})
    for r in raw_facts.get("registrations", []):
        rows["registrations"].append(_registration(r, path, module))
    for n in raw_facts.get("name_checks", []):
        rows["name_checks"].append(_name_check(n, path, names))
    for c in raw_facts.get("class_sets", []):
        guard = _resolved_refs(json.loads(c["guard"]), names) if c["guard"] else None
        rows["class_sets"].append(
            {
                **c,
                "guard": _ENCODE(guard) if guard else None,
                "target": names.resolve(c["object"]) if c["via"] == "after_body" else None,
            }
        )
    rows["env_defaults"] = list(raw_facts.get("env_defaults", []))
    return rows


def _resolved_refs(t: dict, names: Names) -> dict:
    """A condition tree (extract/expr.py) with each reference's full dotted name where the file's imports
    or classes give one (`envs.VLLM_X` -> `vllm.envs.VLLM_X`)."""
    out = dict(t)
    if "ref" in t:
        out["resolved"] = names.resolve(t["ref"])
    if "args" in t:
        out["args"] = [_resolved_refs(a, names) for a in t["args"]]
    for k in ("arg", "left", "right"):
        if k in t:
            out[k] = _resolved_refs(t[k], names)
    return out


_ENCODE = json.JSONEncoder(
    ensure_ascii=False
).encode  # json.dumps(x, ensure_ascii=False), its encoder made once


def _json(value) -> str | None:
    return None if value is None else _ENCODE(value)


def _registration(r: dict, path: str, module: str) -> dict:
    """A registration names its module as the file itself, a module path, or a file of its package."""
    target = r.get("module")
    if r["form"] == "cli-choices":
        target = None  # the hard-coded era names no module; name checks in the serving code do
    elif r.get("module_in_package"):
        pkg = package_of(path)
        target = f"{pkg}.{r['module_in_package']}" if pkg else r["module_in_package"]
    elif target is None:
        target = module
    elif target.startswith("."):
        level = len(target) - len(target.lstrip("."))
        target = absolute(target.lstrip("."), level, path)
    return {
        "kind": r["kind"],
        "name": r["name"],
        "module": target,
        "class": r.get("class"),
        "form": r["form"],
        "line": r["line"],
        "registry": r.get("registry"),
    }


def _name_check(n: dict, path: str, names: Names) -> dict:
    module = n.get("module")
    if module is not None and n.get("level"):
        module = absolute(module, n["level"], path)
    if module is None and n.get("class"):
        module = names.module_of_name(n["class"])
    return {
        "kind": n["kind"],
        "name": n["name"],
        "class": n.get("class"),
        "module": module,
        "line": n["line"],
        "via": n.get("via"),
        "owner": n.get("owner"),
        "tested": n.get("tested"),
    }
