"""The text and Markdown of `diff`."""

from __future__ import annotations

from ..answers.diff_model import Diff
from ..answers.plain import given


def format_text(d: Diff, width: int | None = None) -> str:
    from . import text as textfmt

    if not d.changes:
        return "\n".join([f"no changes between {d.a} and {d.b}", *_behaviour(d)])
    lines = [f"{len(d.changes)} change(s) from {d.a} to {d.b}:"]
    pad = max(len(c.type) for c in d.changes) + 2
    for c in d.changes:
        lines += textfmt.table([(c.type.ljust(pad - 2), f"{c.subject}: {c.detail}")], width, indent="")
        for k in c.commits or ():
            lines += textfmt.hanging(" " * pad + f"commit {k.sha[:10]} ", k.subject, width)
    return "\n".join(lines + _behaviour(d))


def _behaviour(d: Diff, md: bool = False) -> list[str]:
    """The behaviour atlas's cells that changed from A to B (grouped by name and change)."""
    if not given(d.behaviour):
        return []
    from ..answers.atlas_model import AtlasChange
    from .atlas import behaviour_changes_lines

    lines = behaviour_changes_lines([AtlasChange(**c) for c in d.behaviour])
    head = f"behaviour changes from {d.a} to {d.b} (the atlas's cells):"
    if md:
        return ["", "## Behaviour changes (the atlas's cells)", "", *[f"- {x}" for x in lines]]
    return ["", head, *[f"  {x}" for x in lines]]


def format_markdown(d: Diff, source_url=None) -> str:
    """A table for issues and pull requests; `source_url(version, file, line)` links files upstream."""
    lines = [f"# Changes from {d.a} to {d.b}", ""]
    if not d.changes:
        return "\n".join(lines + ["No changes.", *_behaviour(d, md=True)])
    lines += ["| change | kind | name | before | after | where | detail |", "|---|---|---|---|---|---|---|"]

    def esc(s):
        return "" if s is None else str(s).replace("|", "\\|").replace("\n", " ")

    for c in d.changes:
        where = ""
        if c.file:
            at = d.a if c.type.endswith("-removed") else d.b
            label = f"{c.file}:{c.line}" if c.line else c.file
            url = source_url(at, c.file, c.line) if source_url else None
            where = f"[{esc(label)}]({url})" if url else esc(label)
        if c.compare:
            where += f" ([compare]({c.compare}))"
        detail = esc(c.detail)
        if c.commits:
            from .history import md_commit

            detail += "<br>" + "<br>".join(md_commit(k) for k in c.commits)
        lines.append(
            f"| {c.type} | {esc(c.kind)} | {esc(c.name)} | {esc(c.before)} | {esc(c.after)} | {where} |"
            f" {detail} |"
        )
    return "\n".join(lines + _behaviour(d, md=True))
