"""The text and Markdown of `check-plugin`: what to change first (the summary), then each finding once with
the versions it holds at."""

from __future__ import annotations

import re

from ..answers.contract_model import Change, Finding, PluginReport
from ..core.ranges import runs, runs_text, span

_VARIES = re.compile(r"(:\d+(-\d+)?|v\d[\w.]*)")  # what differs between versions in one finding's message


def findings_once(r: PluginReport) -> list[tuple[list[str], Finding]]:
    """Each finding that is not ok once: (the versions it holds at, the finding as at the last of them), in
    order of its first version and its line in the plugin; a message that differs only in versions and line
    numbers is one finding."""
    groups: dict[tuple, tuple[list[str], Finding]] = {}
    for pv in r.versions:
        for f in pv.findings:
            if f.status == "ok":
                continue
            key = (f.what, f.subject, f.status, _VARIES.sub("", f.message))
            if key in groups:
                groups[key][0].append(pv.version)
                groups[key] = (groups[key][0], f)
            else:
                groups[key] = ([pv.version], f)
    order = {v.version: i for i, v in enumerate(r.versions)}
    return sorted(groups.values(), key=lambda g: (order[g[0][0]], g[1].plugin_line or 0))


def _one_line(text: str) -> str:
    """Lines as written, as one line: `from m import (\n    A,\n    B,\n)` -> `from m import (A, B)`."""
    joined = " ".join(x.strip() for x in text.splitlines())
    return re.sub(r",?\s*\)", ")", re.sub(r"\(\s+", "(", joined))


def change_lines(path: str, c: Change, width: int | None = None) -> list[str]:
    from .text import hanging

    where = f"{path}:{c.line}" + (f"-{c.end_line}" if c.end_line != c.line else "")
    written = c.written.splitlines()
    shown = _one_line(c.written) if len(written) <= 12 else f"{written[0].strip()} ... ({len(written)} lines)"
    out = hanging(f"  {where}  ", shown, width)
    if c.instead is None:
        out += hanging("      -> ", f"no replacement known: {c.why}", width)
        return out
    if c.instead == "":
        out.append("      -> (delete these lines)")
    else:
        instead = c.instead.splitlines()
        pad = min(len(x) - len(x.lstrip()) for x in instead)
        out += [("      -> " if i == 0 else "         ") + x[pad:] for i, x in enumerate(instead)]
    if c.why:
        out += hanging("         because ", c.why, width)
    return out


def format_text(r: PluginReport, width: int | None = None) -> str:
    """The compatible versions; what to change for the plugin to work at the newest checked version, and
    where the changed file then works; then each finding once with its versions (wrapped under itself on a
    terminal of `width` columns)."""
    from .text import hanging

    p = r.plugin
    labels = [v.version for v in r.versions]
    classes = ", ".join(c.name for c in p.classes) or "no class"
    names = ", ".join(f"{g.name} ({g.kind})" for g in p.registrations) or "nothing"
    lines = [f"{p.path}: {classes}; registers {names}; checked at {len(labels)} version(s) {span(labels)}"]
    comp = "; ".join(span(g) for g in runs(r.compatible, labels)) or "none"
    lines.append(
        f"compatible: {comp}"
        + (
            f" (first compatible {r.first_compatible}, last compatible {r.last_compatible})"
            if r.compatible
            else ""
        )
    )
    if r.broken:
        lines.append(f"broken: {'; '.join(span(g) for g in runs(r.broken, labels))}")
    s = r.summary
    if s is not None and not s.works_as_written:
        lines.append("")
        lines.append(
            f"to work at {s.target}, change {len(s.changes)} place(s) (file:line -> what to write instead):"
        )
        for c in s.changes:
            lines += change_lines(p.path, c, width)
        works = runs_text(runs(s.works_after, labels), empty="no checked version")
        unknown = sum(c.instead is None for c in s.changes)
        lines.append(
            f"then it works at {works} (the changed file, checked again at every version"
            + (f"; {unknown} place(s) without a replacement left as written" if unknown else "")
            + ")"
        )
    once = findings_once(r)
    if once:
        lines.append("")
        lines.append("each finding once, with the versions it holds at (the message as at the last of them):")
        rows = [(runs_text(runs(vs, labels)), f) for vs, f in once]
        pad = max(len(v) for v, _ in rows)
        for v, f in rows:
            at_line = f" (plugin line {f.plugin_line})" if f.plugin_line else ""
            lines += hanging(
                f"  {v:<{pad}}  {f.status:<9} {f.what:<12} ", f"{f.subject}{at_line}: {f.message}", width
            )
    lines += [f"note: {n}" for n in r.notes]
    return "\n".join(lines)


def format_markdown(r: PluginReport) -> str:
    labels = [v.version for v in r.versions]
    out = [
        f"### `{r.plugin.path}` against the parser contract, {span(labels)}",
        "",
        f"Compatible: {'; '.join(span(g) for g in runs(r.compatible, labels)) or 'none'}"
        + (f" (first {r.first_compatible}, last {r.last_compatible})." if r.compatible else "."),
        "",
    ]
    s = r.summary
    if s is not None and not s.works_as_written:

        def cell(text: str | None) -> str:
            return "<br>".join(f"`{x.strip()}`" for x in (text or "").splitlines()).replace("|", "\\|")

        out += [
            f"To work at {s.target}, change {len(s.changes)} place(s):",
            "",
            "| lines | as written | write instead | why |",
            "|---|---|---|---|",
        ]
        for c in s.changes:
            instead = (
                "(delete)" if c.instead == "" else cell(c.instead) if c.instead else "no replacement known"
            )
            out.append(
                f"| {c.line}{'-' + str(c.end_line) if c.end_line != c.line else ''} | {cell(_one_line(c.written))}"
                f" | {instead} | {c.why.replace('|', '/')} |"
            )
        works = runs_text(runs(s.works_after, labels), empty="no checked version")
        out += ["", f"Then it works at {works} (the changed file, checked again at every version).", ""]
    out += [
        "| version | compatible | broken | warnings | unchecked |",
        "|---|---|---|---|---|",
    ]
    for pv in r.versions:
        counts = {s: sum(f.status == s for f in pv.findings) for s in ("broken", "warning", "unchecked")}
        out.append(
            f"| {pv.version} | {'yes' if pv.compatible else 'no'} | {counts['broken']} | {counts['warning']} | "
            f"{counts['unchecked']} |"
        )
    for pv in r.versions:
        bad = [f for f in pv.findings if f.status in ("broken", "warning")]
        if not bad:
            continue
        out += [
            "",
            f"#### {pv.version}",
            "",
            "| status | check | subject | plugin line | finding |",
            "|---|---|---|---|---|",
        ]
        for f in bad:
            out.append(
                f"| {f.status} | {f.what} | `{f.subject}` | {f.plugin_line or ''} | "
                f"{f.message.replace('|', '/')} |"
            )
    out += [""] + [f"- note: {n}" for n in r.notes] if r.notes else []
    return "\n".join(out)
