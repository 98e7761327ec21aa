"""`export`: the parser index of one version, for other tools. Sorted by kind and name; stable.

Chat templates and tests are matched to names by file name, where the scope holds them, by the rule of
indexer/answers/matching.py (the same as `card`'s).
"""

from __future__ import annotations

from .matching import for_version
from .versions import newest, require
from .which_model import Parser

COLUMNS = (
    "kind",
    "name",
    "impl",
    "form",
    "registry_file",
    "registry_line",
    "registered_module",
    "registered_class",
    "registered_file",
    "registered_line",
    "real_class",
    "real_module",
    "real_file",
    "real_line",
    "adapter",
    "wrapper_class",
    "wrapper_file",
    "wrapper_line",
    "aliases",
    "stub",
    "reexport",
    "parent_class",
    "parent_file",
    "streaming",
    "notes",
    "reason",
    "chat_templates",
    "tests",
)


def export_rows(db, at: str | None = None) -> tuple[str, list[dict]]:
    version = require(db, at) if at else newest(db)
    parsers = [
        Parser.from_row(dict(r))
        for r in db.query("select * from parser_map_v where version = ? order by kind, name", [version])
    ]
    matched = for_version(db, version)
    rows = []
    for p in parsers:
        mine = matched.get((p.kind, p.name), {"chat_templates": [], "tests": []})
        row = {k: v for k, v in p.to_json().items() if k in COLUMNS}
        row.update(
            chat_templates=[m.file for m in mine["chat_templates"]], tests=[m.file for m in mine["tests"]]
        )
        rows.append({c: row[c] for c in COLUMNS})
    return version, rows
