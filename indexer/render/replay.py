"""Replay answers as text and Markdown: one version in detail, several as a matrix (versions with the same
outcomes collapsed into ranges, outcomes lettered with a legend) and the changes between versions."""

from __future__ import annotations

import json
import string

from ..answers.model import Replay, ReplayVersion
from ..replay.run import cell


def _letters(r: Replay) -> dict[str, str]:
    names = list(string.ascii_uppercase) + [
        a + b for a in string.ascii_uppercase for b in string.ascii_uppercase
    ]
    out: dict[str, str] = {}
    for v in r.versions:
        for mode in r.modes:
            c = cell(v, mode)
            if c not in out and v.status == "ok" and c != "-":
                out[c] = names[len(out)]
    return out


def _rows(r: Replay, letters: dict[str, str]) -> list[tuple[str, list[str], list[ReplayVersion]]]:
    rows: list[tuple[str, list[str], list[ReplayVersion]]] = []
    for v in r.versions:
        cells = []
        for mode in r.modes:
            c = cell(v, mode)
            mark = letters.get(c, c)
            if v.split_sensitive and mode.startswith("stream:"):
                mark += "~"
            cells.append(mark)
        if rows and rows[-1][1] == cells:
            rows[-1][2].append(v)
        else:
            rows.append(("", cells, [v]))
    return [
        (vs[0].version if len(vs) == 1 else f"{vs[0].version}..{vs[-1].version}", cells, vs)
        for _, cells, vs in rows
    ]


def _head(r: Replay) -> str:
    first, last = r.versions[0].version, r.versions[-1].version
    span = first if len(r.versions) == 1 else f"{len(r.versions)} versions {first}..{last}"
    pair = f" with reasoning parser {r.reasoning_parser}" if r.reasoning_parser else ""
    return f"replay {r.name}{pair}: {span}; input {r.input}; splits {', '.join(r.splits)}"


def format_text(r: Replay) -> str:
    if len(r.versions) == 1:
        return "\n".join([_head(r), *_detail(r.versions[0])])
    letters = _letters(r)
    rows = _rows(r, letters)
    w0 = max([len("versions")] + [len(label) for label, _, _ in rows])
    widths = [max([len(m)] + [len(cells[i]) for _, cells, _ in rows]) for i, m in enumerate(r.modes)]
    out = [
        _head(r),
        "",
        "  ".join([f"{'versions':<{w0}}"] + [f"{m:<{w}}" for m, w in zip(r.modes, widths, strict=True)]),
    ]
    for label, cells, _ in rows:
        out.append(
            "  ".join([f"{label:<{w0}}"] + [f"{c:<{w}}" for c, w in zip(cells, widths, strict=True)]).rstrip()
        )
    out.append("")
    for outcome, letter in letters.items():
        out.append(f"{letter:>2}  {outcome}")
    out += _footer(r, letters)
    return "\n".join(out)


def _footer(r: Replay, letters: dict[str, str]) -> list[str]:
    out = []
    if r.changes:
        out += ["", "changes (first version with the new outcome):"]
        for c in r.changes:
            out.append(
                f"  {c.mode:<16} {c.version:<12} {letters.get(c.before, c.before)} -> "
                f"{letters.get(c.after, c.after)}"
            )
    sensitive = [v.version for v in r.versions if v.split_sensitive]
    if sensitive:
        out += ["", f"split-sensitive (~: the stream splits disagree): {_span(sensitive)}"]
    touched: dict[str, list[str]] = {}
    for v in r.versions:
        for s in v.standins_touched:
            touched.setdefault(s, []).append(v.version)
    if touched:
        out += [
            "",
            "stand-ins used while replaying (results there may depend on them): "
            + "; ".join(f"{s} ({_span(vs)})" for s, vs in sorted(touched.items())),
        ]
    failed = [v for v in r.versions if v.status not in ("ok", "not-registered")]
    for v in failed:
        out.append(f"{v.version}: {v.status}: {v.error}")
    return out


def _span(versions: list[str]) -> str:
    return versions[0] if len(versions) == 1 else f"{len(versions)} versions, {versions[0]}..{versions[-1]}"


def _detail(v: ReplayVersion) -> list[str]:
    out = []
    if v.status != "ok":
        return [f"{v.version}: {v.status}" + (f": {v.error}" if v.error else "")]
    out.append(f"{v.version}: {v.tokens} tokens; special tokens {' '.join(v.specials) or 'none'}")
    for m in v.modes:
        out += ["", f"{m.mode}: {m.outcome}", f"  entry: {m.entry}"]
        for c in m.calls:
            args = (
                json.dumps(c.arguments, ensure_ascii=False)
                if not isinstance(c.arguments, str)
                else repr(c.arguments)
            )
            chunks = (
                f" ({c.chunks} argument chunk{'s' if c.chunks != 1 else ''})" if c.chunks is not None else ""
            )
            out.append(f"  call {c.name} {args}{chunks}")
        if m.content:
            out.append(f"  content: {m.content!r}")
        if m.reasoning:
            out.append(f"  reasoning: {m.reasoning!r}")
        if m.finish_reason:
            out.append(f"  finish_reason: {m.finish_reason}")
        if m.deltas is not None:
            out.append(f"  deltas fed: {m.deltas}; messages out: {m.messages}")
        for e in m.errors[:5]:
            out.append(f"  error: {e}")
    if v.split_sensitive:
        out += ["", "split-sensitive: the stream splits give different results"]
    for n in v.notes:
        out.append(f"note: {n}")
    return out


def format_markdown(r: Replay) -> str:
    letters = _letters(r)
    rows = _rows(r, letters)
    out = [
        f"**{_head(r)}**",
        "",
        "| versions | " + " | ".join(r.modes) + " |",
        "|---|" + "---|" * len(r.modes),
    ]
    for label, cells, _ in rows:
        out.append(f"| {label} | " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    out.append("")
    for outcome, letter in letters.items():
        out.append(f"- **{letter}**: `{outcome.replace('`', chr(39))}`")
    footer = _footer(r, letters)
    if footer:
        out += ["", "```", *[line for line in footer if line], "```"]
    return "\n".join(out)
