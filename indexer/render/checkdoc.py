"""The text and Markdown of `check-doc` (answers/checkdoc.py's `CheckDoc`): one line (or table row) per claim
at each version, after the version's counts."""

from __future__ import annotations

from ..answers.checkdoc import STATUSES
from ..answers.model import CheckDoc


def format_text(report: CheckDoc) -> list[str]:
    lines = []
    for v in report.versions:
        c = v.counts
        lines.append(
            f"{report.document} at {v.version}: {report.claims} claim(s): "
            + ", ".join(f"{c[s]} {s}" for s in STATUSES)
        )
        for r in v.results:
            lines.append(f"  {r.line:>4}  {r.status:<9}  {r.kind:<7}  {r.claim}: {r.message}")
        lines.append("")
    return lines[:-1] if lines else lines


def format_markdown(report: CheckDoc) -> str:
    out = []
    for v in report.versions:
        c = v.counts
        out.append(f"### {report.document} at {v.version}\n")
        out.append(", ".join(f"{c[s]} {s}" for s in STATUSES) + "\n")
        out.append("| line | status | kind | claim | finding |")
        out.append("|---:|---|---|---|---|")
        for r in v.results:
            out.append(f"| {r.line} | {r.status} | {r.kind} | {_cell(r.claim)} | {_cell(r.message)} |")
        out.append("")
    return "\n".join(out)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
