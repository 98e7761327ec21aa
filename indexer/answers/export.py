"""`export`: the parser index of one version, for other tools. Sorted by kind and name; stable.

Chat templates and tests are matched to names by file name, where the scope holds them, by the rule of
indexer/answers/matching.py (the same as `card`'s).
"""

from __future__ import annotations

import csv
import io
import json

from .matching import for_version
from .versions import newest, require

COLUMNS = ("kind", "name", "impl", "registry_file", "registry_line", "registered_file", "registered_line",
           "registered_class", "real_file", "real_line", "real_class", "adapter", "alias_of", "stub", "reexport", "parent_class", "chat_templates", "tests",
           "reason")


def export_rows(db, at: str | None = None) -> tuple[str, list[dict]]:
    version = require(db, at) if at else newest(db)
    parsers = list(db.query("select * from parser_map_v where version = ? order by kind, name", [version]))
    matched = for_version(db, version)
    rows = []
    for r in parsers:
        name = r["name"]
        mine = matched.get((r["kind"], name), {"chat_templates": [], "tests": []})
        rows.append({
            "kind": r["kind"], "name": name, "impl": r["impl"], "registry_file": r["registry_file"],
            "registry_line": r["registry_line"], "registered_file": r["reg_file"],
            "registered_line": r["reg_line"], "registered_class": r["reg_class"], "real_file": r["real_file"],
            "real_line": r["real_line"],
            "real_class": r["real_class"], "adapter": r["adapter"], "alias_of": r["alias_of"],
            "stub": bool(r["stub"]) if r["stub"] is not None else None, "reexport": bool(r["reexport"]),
            "parent_class": r["parent_class"], "chat_templates": [m.file for m in mine["chat_templates"]],
            "tests": [m.file for m in mine["tests"]],
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
