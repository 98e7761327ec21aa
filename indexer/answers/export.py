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

from .model import Parser
from .versions import newest, require

COLUMNS = ("kind", "name", "impl", "form", "registry_file", "registry_line", "registered_module", "registered_class",
           "registered_file", "registered_line", "real_class", "real_module", "real_file", "real_line", "adapter",
           "wrapper_class", "wrapper_file", "wrapper_line", "aliases", "stub", "reexport", "parent_class",
           "parent_file", "streaming", "notes", "reason", "chat_templates", "tests")


def _cell(column: str, value) -> str:
    """A flat cell (CSV, Markdown): lists joined (notes by "; "), booleans written as in JSON."""
    if isinstance(value, list):
        return ("; " if column == "notes" else " ").join(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else value


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
    parsers = [Parser.from_row(dict(r)) for r in db.query(
        "select * from parser_map_v where version = ? order by kind, name", [version])]
    owners = _template_owners(templates, sorted({p.name for p in parsers if p.kind == "tool"}))
    rows = []
    for p in parsers:
        mine_t = [t for t in templates if p.name in owners.get(t, ())] if p.kind == "tool" else []
        wanted = {f"test_{p.name}_{p.kind}_parser", f"test_{p.name}"}
        if p.registered_file:
            wanted.add(f"test_{_stem(p.registered_file)}")
        row = {k: v for k, v in p.to_json().items() if k in COLUMNS}
        row.update(chat_templates=sorted(mine_t), tests=sorted(t for t in tests if _stem(t) in wanted))
        rows.append({c: row[c] for c in COLUMNS})
    return version, rows


def render(version: str, rows: list[dict], fmt: str) -> str:
    if fmt == "json":
        return json.dumps({"version": version, "columns": list(COLUMNS), "parsers": rows}, indent=2,
                          sort_keys=False) + "\n"
    flat = [{k: _cell(k, v) for k, v in r.items()} for r in rows]
    if fmt == "csv":
        out = io.StringIO()
        w = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(flat)
        return out.getvalue()
    cols = ("kind", "name", "impl", "registered_file", "real_file", "adapter", "aliases", "stub",
            "chat_templates", "tests")
    lines = [f"# Parser index of vLLM {version}", "", "| " + " | ".join(cols) + " |",
             "|" + "---|" * len(cols)]
    for r in flat:
        lines.append("| " + " | ".join(str(r[c]).replace("|", "\\|") for c in cols) + " |")
    return "\n".join(lines) + "\n"
