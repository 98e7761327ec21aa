"""The text and Markdown of `diff --contract`."""

from __future__ import annotations

from ..answers.contract_model import (
    ContractChange,
    ContractDiff,
)


def format_text(d: ContractDiff, width: int | None = None) -> str:
    """One line per change (wrapped under itself on a terminal of `width` columns): a `!` for a change that
    breaks plugins, its type, subject and explanation, and its file:line at A -> at B."""
    from .text import hanging

    if not d.changes:
        lines = [f"contract {d.a} -> {d.b}: no contract change"]
    else:
        lines = [
            f"contract {d.a} -> {d.b}: {len(d.changes)} change(s), {d.breaking} breaking"
            " (! marks a change that breaks plugins)"
        ]
        w = max(len(c.type) for c in d.changes)
        for c in d.changes:
            first = f"{'!' if c.breaking else ' '} {c.type:<{w}}  "
            lines += hanging(first, f"{c.subject}: {c.explanation} [{_sides(c)}]", width)
    lines += [f"note: {n}" for n in d.notes]
    return "\n".join(lines)


def _sides(c: ContractChange) -> str:
    a = f"{c.file_a}:{c.line_a}" if c.file_a else "(absent)"
    b = f"{c.file_b}:{c.line_b}" if c.file_b else "(absent)"
    if c.file_a and c.file_b and c.file_a == c.file_b:
        b = f":{c.line_b}"
    return f"{a} -> {b}"


def format_markdown(d: ContractDiff, link=None) -> str:
    """A table; `link(version, file, line)` gives an upstream URL for a side (or None)."""

    def cell(text: str | None) -> str:
        return "" if text is None else f"`{text}`".replace("|", "\\|")

    def side(version, file, line):
        if not file:
            return ""
        url = link(version, file, line) if link else None
        label = f"{file}:{line}"
        return f"[{label}]({url})" if url else f"`{label}`"

    out = [f"### Parser contract from {d.a} to {d.b}", ""]
    if not d.changes:
        out.append("No contract change.")
    else:
        out += [
            f"{len(d.changes)} change(s), **{d.breaking} breaking**.",
            "",
            "| breaking | change | subject | before | after | explanation | " + d.a + " | " + d.b + " |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for c in d.changes:
            out.append(
                f"| {'yes' if c.breaking else ''} | {c.type} | {cell(c.subject)} | {cell(c.before)} | "
                f"{cell(c.after)} | {c.explanation.replace('|', '/')} | {side(d.a, c.file_a, c.line_a)} | "
                f"{side(d.b, c.file_b, c.line_b)} |"
            )
    out += [""] + [f"- note: {n}" for n in d.notes] if d.notes else []
    return "\n".join(out)
