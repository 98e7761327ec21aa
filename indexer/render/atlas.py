"""The behaviour atlas (issue 44) as text and Markdown: per name, a table of version ranges (consecutive versions
with the same cells collapsed) by case, each case summed up over the modes, then the changes; and the
behaviour ranges the card, the parser page and `diff` show."""

from __future__ import annotations

from ..answers.atlas_model import Atlas, AtlasChange, AtlasRow, BehaviourRange

LETTER = {
    "nonstream": "n",
    "stream:token": "t",
    "stream:char": "c",
    "serving-full": "f",
    "serving-stream": "s",
}
LEGEND = (
    "ok: every mode ok; n/a: not applicable (see the sources); W:/E: wrong / error in the modes n nonstream, "
    "t stream:token, c stream:char, f serving-full, s serving-stream"
)


def summary(cells) -> str:
    """One case's cells over the modes, in a word: ok, n/a, or W:modes E:modes."""
    if not cells:
        return "-"
    statuses = {c.status for c in cells}
    if statuses == {"ok"}:
        return "ok"
    if statuses == {"not-applicable"}:
        return "n/a"
    parts = []
    for status, mark in (("wrong", "W"), ("error", "E")):
        modes = "".join(LETTER.get(c.mode, "?") for c in cells if c.status == status)
        if modes:
            parts.append(f"{mark}:{modes}")
    return " ".join(parts) or "ok"


def _table(a: Atlas, rows: list[AtlasRow]) -> list[tuple[str, list[str]]]:
    cases = [d.id for d in a.cases]
    out: list[tuple[list[str], list[str]]] = []
    for r in rows:
        cells = [summary([c for c in r.cells if c.case == case]) for case in cases]
        if out and out[-1][1] == cells:
            out[-1][0].append(r.version)
        else:
            out.append(([r.version], cells))
    return [(vs[0] if len(vs) == 1 else f"{vs[0]}..{vs[-1]}", cells) for vs, cells in out]


def _by_name(a: Atlas) -> dict[str, list[AtlasRow]]:
    out: dict[str, list[AtlasRow]] = {}
    for r in a.rows:
        out.setdefault(r.name, []).append(r)
    return out


def _head(a: Atlas) -> str:
    versions = list(dict.fromkeys(r.version for r in a.rows))
    span = (versions[0] if len(versions) == 1 else f"{versions[0]}..{versions[-1]}") if versions else "none"
    sources: dict[str, int] = {}
    for r in a.rows:
        for s in r.sources:
            sources[s.source] = sources.get(s.source, 0) + 1
    made = ", ".join(f"{n} from {k}" for k, n in sorted(sources.items()))
    return (
        f"behaviour atlas of {a.kind} parsers: {len(_by_name(a))} names, {len(versions)} versions ({span});"
        f" cases: {made or 'none'}"
    )


def _changes(mine: list[AtlasChange]) -> list[str]:
    """A name's changes, the cells that changed alike at one version on one line."""
    out = []
    for (_, version, before, after, _), cs in _grouped(mine):
        detail = f" ({cs[0].detail})" if cs[0].detail and after != "ok" else ""
        out.append(f"{version}  {_cells(cs)}: {before} -> {after}{detail}")
    return out


def _run(a: Atlas) -> list[str]:
    if not a.run:
        return []
    r = a.run
    return [
        "",
        f"run: {r.cells_run} cells run, {r.cells_reused} read from the store; {r.jobs} jobs,"
        f" {r.seconds:g} s ({r.cpu_seconds:g} CPU s)",
    ]


def format_text(a: Atlas) -> str:
    out = [_head(a), LEGEND]
    cases = [d.id for d in a.cases]
    for name, rows in _by_name(a).items():
        table = _table(a, rows)
        w0 = max([len("versions")] + [len(label) for label, _ in table])
        widths = [max([len(c)] + [len(cells[i]) for _, cells in table]) for i, c in enumerate(cases)]
        out += ["", name]
        out.append(
            "  "
            + "  ".join(
                [f"{'versions':<{w0}}"] + [f"{c:<{w}}" for c, w in zip(cases, widths, strict=True)]
            ).rstrip()
        )
        for label, cells in table:
            out.append(
                "  "
                + "  ".join(
                    [f"{label:<{w0}}"] + [f"{c:<{w}}" for c, w in zip(cells, widths, strict=True)]
                ).rstrip()
            )
        mine = [c for c in a.changes if c.name == name]
        if mine:
            out.append("  changes (first version with the new behaviour):")
            out += [f"    {x}" for x in _changes(mine)]
    if a.not_run:
        out += [
            "",
            f"not run yet ({len(a.not_run)}): {', '.join(a.not_run[:20])}{' ...' if len(a.not_run) > 20 else ''}",
        ]
    out += _run(a)
    return "\n".join(out)


def _md(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def format_markdown(a: Atlas) -> str:
    cases = [d.id for d in a.cases]
    out = [f"# Behaviour atlas of {a.kind} parsers", "", _head(a), "", f"_{LEGEND}_"]
    for name, rows in _by_name(a).items():
        out += [
            "",
            f"## {name}",
            "",
            "| versions | " + " | ".join(cases) + " |",
            "|---" * (len(cases) + 1) + "|",
        ]
        for label, cells in _table(a, rows):
            out.append(f"| {label} | " + " | ".join(cells) + " |")
        mine = [c for c in a.changes if c.name == name]
        if mine:
            out += ["", "Changes (first version with the new behaviour):", ""]
            out += [f"- {_md(x)}" for x in _changes(mine)]
    if a.not_run:
        out += ["", f"Not run yet: {', '.join(a.not_run)}"]
    out += _run(a)
    return "\n".join(out) + "\n"


def behaviour_line(b: BehaviourRange) -> str:
    """`stream:token, stream:char (single, nested): arguments not valid JSON v0.6.5 - v0.10.2; fixed in v0.11.0`"""
    span = b.first if b.first == b.last else f"{b.first} - {b.last}"
    fixed = f"; fixed in {b.fixed_in}" if b.fixed_in else ""
    modes = list(dict.fromkeys(c.split(" ", 1)[1] for c in b.cells))
    cases = list(dict.fromkeys(c.split(" ", 1)[0] for c in b.cells))
    return f"{', '.join(modes)} ({', '.join(cases)}): {b.what} {span}{fixed}"


def _grouped(changes: list[AtlasChange]) -> list[tuple[tuple, list[AtlasChange]]]:
    """Changes grouped by (name, version, before, after, reason): one line for the cells that changed alike."""
    from ..answers.atlas_verdict import what

    groups: dict[tuple, list[AtlasChange]] = {}
    for c in changes:
        groups.setdefault((c.name, c.version, c.before, c.after, what(c.detail)), []).append(c)
    return list(groups.items())


def _cells(cs: list[AtlasChange]) -> str:
    """`single, nested in stream:token, stream:char` (or each case's modes when they differ)."""
    modes: dict[str, list[str]] = {}
    for c in cs:
        modes.setdefault(c.case, []).append(c.mode)
    shapes = {tuple(m) for m in modes.values()}
    if len(shapes) == 1:
        return f"{', '.join(modes)} in {', '.join(next(iter(shapes)))}"
    return "; ".join(f"{case} in {', '.join(ms)}" for case, ms in modes.items())


def behaviour_changes_lines(changes: list[AtlasChange]) -> list[str]:
    """`diff A B`'s behaviour section: per name, the cells that changed alike on one line."""
    out = []
    for (name, _, before, after, _), cs in _grouped(changes):
        detail = f": {cs[0].detail}" if cs[0].detail and after != "ok" else ""
        out.append(f"{name} {_cells(cs)}: {before} -> {after}{detail}")
    return out
