"""The JSON, CSV and Markdown of `export` (answers/export.py's rows, in COLUMNS order); the same rows give the
same bytes."""

from __future__ import annotations

import csv
import io
import json

from ..answers.export import COLUMNS


def _cell(column: str, value) -> str:
    """A flat cell (CSV, Markdown): lists joined (notes by "; "), booleans written as in JSON."""
    if isinstance(value, list):
        return ("; " if column == "notes" else " ").join(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else value


def render(version: str, rows: list[dict], fmt: str) -> str:
    if fmt == "json":
        return (
            json.dumps(
                {"version": version, "columns": list(COLUMNS), "parsers": rows}, indent=2, sort_keys=False
            )
            + "\n"
        )
    flat = [{k: _cell(k, v) for k, v in r.items()} for r in rows]
    if fmt == "csv":
        out = io.StringIO()
        w = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(flat)
        return out.getvalue()
    cols = (
        "kind",
        "name",
        "impl",
        "registered_file",
        "real_file",
        "adapter",
        "aliases",
        "stub",
        "chat_templates",
        "tests",
    )
    lines = [
        f"# Parser index of vLLM {version}",
        "",
        "| " + " | ".join(cols) + " |",
        "|" + "---|" * len(cols),
    ]
    for r in flat:
        lines.append("| " + " | ".join(str(r[c]).replace("|", "\\|") for c in cols) + " |")
    return "\n".join(lines) + "\n"
