"""`export`: the parser index of one version, for other tools. Sorted by kind and name; stable.

Chat templates and tests are matched to names by file name, where the scope holds them:
examples/tool_chat_template_<name>[_*].jinja, and test_<name>_{tool,reasoning}_parser.py or
test_<registered file>.py under the parser test directories.
"""

from __future__ import annotations

import csv
import io
import json
import re

from .versions import newest, require

COLUMNS = ("kind", "name", "impl", "registry_file", "registry_line", "registered_file", "registered_line",
           "registered_class", "real_file", "real_line", "real_class", "adapter", "alias_of", "stub", "reexport", "parent_class", "chat_templates", "tests",
           "reason")


def _norm(s: str) -> str:
    return re.sub(r"[^a-z0-9]", "", s.lower())


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].rsplit(".", 1)[0]


def _template_owners(templates: list[str], names: list[str]) -> dict[str, set[str]]:
    """Each chat template to the tool-parser name(s) it is for: the names equal to its suffix (ignoring
    case and punctuation), else the longest name it starts with followed by `_` (mistral_parallel)."""
    owners = {}
    for t in templates:
        suffix = _stem(t)[len("tool_chat_template_"):]
        exact = {n for n in names if _norm(n) == _norm(suffix)}
        prefixed = sorted((n for n in names if suffix.startswith(n + "_")), key=len)
        owners[t] = exact or set(prefixed[-1:])
    return owners


def export_rows(db, at: str | None = None) -> tuple[str, list[dict]]:
    version = require(db, at) if at else newest(db)
    paths = [r[0] for r in db.execute("select file from version_files where version = ?", [version])]
    templates = [p for p in paths if p.startswith("examples/tool_chat_template_")]
    tests = [p for p in paths if p.startswith("tests/") and _stem(p).startswith("test_")]
    parsers = list(db.query("select * from parser_map_v where version = ? order by kind, name", [version]))
    owners = _template_owners(templates, sorted({r["name"] for r in parsers if r["kind"] == "tool"}))
    rows = []
    for r in parsers:
        name = r["name"]
        mine_t = [t for t in templates if name in owners.get(t, ())] if r["kind"] == "tool" else []
        wanted = {f"test_{name}_{r['kind']}_parser", f"test_{name}"}
        if r["reg_file"]:
            wanted.add(f"test_{_stem(r['reg_file'])}")
        mine_s = [t for t in tests if _stem(t) in wanted]
        rows.append({
            "kind": r["kind"], "name": name, "impl": r["impl"], "registry_file": r["registry_file"],
            "registry_line": r["registry_line"], "registered_file": r["reg_file"],
            "registered_line": r["reg_line"], "registered_class": r["reg_class"], "real_file": r["real_file"],
            "real_line": r["real_line"],
            "real_class": r["real_class"], "adapter": r["adapter"], "alias_of": r["alias_of"],
            "stub": bool(r["stub"]) if r["stub"] is not None else None, "reexport": bool(r["reexport"]),
            "parent_class": r["parent_class"], "chat_templates": sorted(mine_t), "tests": sorted(mine_s),
            "reason": r["reason"],
        })
    return version, rows


def render(version: str, rows: list[dict], fmt: str) -> str:
    if fmt == "json":
        return json.dumps({"version": version, "columns": list(COLUMNS), "parsers": rows}, indent=2,
                          sort_keys=False) + "\n"
    flat = [{k: (" ".join(v) if isinstance(v, list) else ("" if v is None else v)) for k, v in r.items()}
            for r in rows]
    if fmt == "csv":
        out = io.StringIO()
        w = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(flat)
        return out.getvalue()
    cols = ("kind", "name", "impl", "registered_file", "real_file", "adapter", "alias_of", "stub",
            "chat_templates", "tests")
    lines = [f"# Parser index of vLLM {version}", "", "| " + " | ".join(cols) + " |",
             "|" + "---|" * len(cols)]
    for r in flat:
        lines.append("| " + " | ".join(str(r[c]).replace("|", "\\|") for c in cols) + " |")
    return "\n".join(lines) + "\n"
