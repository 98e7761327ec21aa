"""The text and Markdown of `check-plugin`."""

from __future__ import annotations

from ..answers.contract_model import (
    PluginReport,
    PluginVersion,
)
from ..core.ranges import runs, span


def _key(pv: PluginVersion) -> tuple:
    import re

    return pv.compatible, tuple(
        (f.what, f.subject, f.status, re.sub(r"(:\d+|v\d[\w.]*)", "", f.message))
        for f in pv.findings
        if f.status != "ok"
    )


def format_text(r: PluginReport, width: int | None = None) -> str:
    """The compatible versions, then each range of versions with the same findings, one finding a line
    (wrapped under itself on a terminal of `width` columns)."""
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
    groups: list[list[PluginVersion]] = []
    for pv in r.versions:
        if groups and _key(groups[-1][-1]) == _key(pv):
            groups[-1].append(pv)
        else:
            groups.append([pv])
    for g in groups:
        last = g[-1]
        ok = sum(f.status == "ok" for f in last.findings)
        lines.append("")
        lines.append(
            f"{span([x.version for x in g])}: {'compatible' if last.compatible else 'BROKEN'} ({ok} check(s) ok"
            + (", lines as at " + last.version if len(g) > 1 else "")
            + ")"
        )
        for f in last.findings:
            if f.status == "ok":
                continue
            at_line = f" (plugin line {f.plugin_line})" if f.plugin_line else ""
            lines += hanging(f"  {f.status:<9} {f.what:<12} ", f"{f.subject}{at_line}: {f.message}", width)
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
