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
    return [(_label(r, [v.version for v in vs]), cells, vs) for _, cells, vs in rows]


def _label(r: Replay, versions: list[str]) -> str:
    """Versions as asked: a range where they are consecutive in the index, else the list itself."""
    if len(versions) == 1:
        return versions[0]
    if r.listed:
        return ",".join(versions)
    return f"{versions[0]}..{versions[-1]}"


WIDTH = 160  # a legend line's length in text unless --full


def _head(r: Replay) -> str:
    first, last = r.versions[0].version, r.versions[-1].version
    if len(r.versions) == 1:
        span = first
    elif r.listed:
        span = f"{len(r.versions)} versions {', '.join(v.version for v in r.versions)}"
    else:
        span = f"{len(r.versions)} versions {first}..{last}"
    what = "reasoning parser " if r.kind == "reasoning" else ""
    pair = f" with reasoning parser {r.reasoning_parser}" if r.reasoning_parser else ""
    out = f"replay {what}{r.name}{pair}: {span}; input {r.input}; splits tried {', '.join(r.splits)}"
    if r.api != "chat":
        out += f"; API {r.api}"
    if r.request:
        out += f"\nrequest: {json.dumps(r.request, ensure_ascii=False)}"
    if r.server_args:
        out += f"\nserver arguments: {' '.join(r.server_args)}"
    tokenizers = list(dict.fromkeys(v.tokenizer for v in r.versions if v.tokenizer))
    for t in tokenizers:
        out += f"\ntokenizer: {t}"
    return out


def _cut(text: str, full: bool) -> str:
    return text if full or len(text) <= WIDTH else text[: WIDTH - 1] + "…"


def format_text(r: Replay, full: bool = False) -> str:
    """`full`: every outcome whole (default: legend lines cut at WIDTH characters; JSON always has them
    whole)."""
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
        out.append(f"{letter:>2}  {_cut(outcome, full)}")
    if not full and any(len(o) > WIDTH for o in letters):
        out.append("    (outcomes cut at the line's end: --full shows them whole)")
    out += _footer(r, letters)
    return "\n".join(out)


def _groups(r: Replay, key) -> list[tuple[str, list[str]]]:
    """(value, versions) for the versions that ran, consecutive versions with one value grouped."""
    out: list[tuple[str, list[str]]] = []
    for v in r.versions:
        if v.status != "ok":
            continue
        value = key(v)
        if out and out[-1][0] == value:
            out[-1][1].append(v.version)
        else:
            out.append((value, [v.version]))
    return out


def _log_line(x) -> str:
    exc = (
        f" ({x.exception}{' at ' + x.where if x.where else ''})"
        if x.exception
        else (f" (at {x.where})" if x.where else "")
    )
    times = f" x{x.count}" if x.count > 1 else ""
    return f"{x.level} {x.logger}: {x.message}{exc}{times}"


def _footer(r: Replay, letters: dict[str, str]) -> list[str]:
    out = []
    if r.changes:
        out += ["", "changes (first version with the new outcome):"]
        wm = max([16] + [len(c.mode) for c in r.changes])
        for c in r.changes:
            out.append(
                f"  {c.mode:<{wm}} {c.version:<12} {letters.get(c.before, c.before)} -> "
                f"{letters.get(c.after, c.after)}"
                + (f"   {c.code_diff}" if c.code_diff else "")
                + _owner(r, c)
            )
            for commit in (c.commits or [])[:5]:
                out.append(f"  {'':<{wm}} {'':<12}   {commit}")
            if c.commits and len(c.commits) > 5:
                out.append(f"  {'':<{wm}} {'':<12}   ... {len(c.commits) - 5} more (tpindex log)")
    prompts = _groups(r, lambda v: v.prompt or "")
    if any(p for p, _ in prompts):
        out += ["", "prompt (--prompt, its token ids handed to the version's code):"]
        out += [f"  {_label(r, vs) if not r.listed else ', '.join(vs)}: {p or '-'}" for p, vs in prompts]
    starts = _groups(r, lambda v: v.startup or "")
    if any(s for s, _ in starts):
        out += ["", "startup (would that version's server start with this parser and tokenizer):"]
        out += [f"  {_label(r, vs) if not r.listed else ', '.join(vs)}: {s or '-'}" for s, vs in starts]
    for mode in r.modes:
        logged = _groups(
            r,
            lambda v, mode=mode: "\n".join(_log_line(x) for m in v.modes if m.mode == mode for x in m.logged),
        )
        if any(lines for lines, _ in logged):
            out += ["", f"logged by vLLM while replaying {mode}:"]
            for lines, vs in logged:
                if lines:
                    out.append(f"  {_label(r, vs)}:")
                    out += [f"    {line}" for line in lines.splitlines()]
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
    failed = [v for v in r.versions if v.status not in ("ok", "not-registered", "no-responses-api")]
    for v in failed:
        out.append(f"{v.version}: {v.status}: {v.error}")
    return out


def _owner(r: Replay, c) -> str:
    """Whose code changed between the two versions, where NAME's own did not (or the reasoning parser's did)."""
    notes = []
    if c.code_changed is False:
        notes.append(f"{r.name}'s code unchanged")
    if r.reasoning_parser and c.reasoning_code_changed:
        notes.append(f"{r.reasoning_parser}'s code changed")
    elif c.code_changed is False and r.reasoning_parser and c.reasoning_code_changed is False:
        notes.append(f"{r.reasoning_parser}'s too")
    if c.code_changed is False and not (r.reasoning_parser and c.reasoning_code_changed):
        notes.append("the change is in other code that version runs")
    return f"   ({'; '.join(notes)})" if notes else ""


def _span(versions: list[str]) -> str:
    return versions[0] if len(versions) == 1 else f"{len(versions)} versions, {versions[0]}..{versions[-1]}"


def _detail(v: ReplayVersion) -> list[str]:
    out = []
    if v.status != "ok":
        return [f"{v.version}: {v.status}" + (f": {v.error}" if v.error else "")]
    out.append(f"{v.version}: {v.tokens} tokens; special tokens {' '.join(v.specials) or 'none'}")
    if v.startup:
        out.append(f"startup: {v.startup}")
    if v.prompt:
        out.append(f"prompt: {v.prompt}")
    for m in v.modes:
        out += ["", f"{m.mode}: {m.outcome}", f"  entry: {m.entry}"]
        if m.unsupported:
            out.append(f"  unsupported: {m.unsupported}")
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
        for x in m.logged[:10]:
            out.append(f"  logged: {_log_line(x)}")
        if len(m.logged) > 10:
            out.append(f"  logged: ... {len(m.logged) - 10} more records (--format json has them all)")
    if v.split_sensitive:
        out += ["", "split-sensitive: the stream splits give different results"]
    for n in v.notes:
        out.append(f"note: {n}")
    return out


def format_markdown(r: Replay, full: bool = True) -> str:
    letters = _letters(r)
    rows = _rows(r, letters)
    head = _head(r).splitlines()
    out = [
        f"**{head[0]}**",
        "",
        "| versions | " + " | ".join(r.modes) + " |",
        "|---|" + "---|" * len(r.modes),
    ]
    for label, cells, _ in rows:
        out.append(f"| {label} | " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    out.append("")
    out += [f"- {h}" for h in head[1:]]
    for outcome, letter in letters.items():
        out.append(f"- **{letter}**: `{outcome.replace('`', chr(39))}`")
    footer = _footer(r, letters)
    if footer:
        out += ["", "```", *[line for line in footer if line], "```"]
    return "\n".join(out)
