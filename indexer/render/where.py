"""The text of `where` (answers/where.py's `Where`): definitions, mentions, a path's ranges and moves, long
lists capped at SHOW lines (the JSON lists everything)."""

from __future__ import annotations

from ..answers.plain import given
from ..answers.where import SHOW
from ..answers.where_model import Definition, Move, PathRange, Where


def move_text(m: Move) -> str:
    """`A (by: detail), then at vY to B (by: detail), now at B` (or `..., then removed at vZ`)."""

    def one(x) -> str:
        return f"{x.to} ({x.by}{': ' + x.detail if x.detail else ''})"

    text = one(m) + "".join(f", then at {h.at} to {one(h)}" for h in m.then)
    if m.removed_at:
        return text + f", then removed at {m.removed_at}"
    return text + (f", now at {m.final}" if m.then else "")


def _def_line(d: Definition) -> str:
    span = f"{d.line}-{d.end_line}" if d.end_line != d.line else str(d.line)
    return f"{d.file}:{d.line}  {d.kind} {d.qualname} (lines {span})"


def _capped(lines: list[str], indent: str, what: str = "more") -> list[str]:
    if len(lines) <= SHOW:
        return [indent + s for s in lines]
    return [indent + s for s in lines[:SHOW]] + [
        f"{indent}... and {len(lines) - SHOW} {what} (--format json lists all)"
    ]


def _defs_block(defs: list[Definition], indent: str) -> list[str]:
    """One line per definition; past SHOW of them, one line per file (its count and first few)."""
    ordered = sorted(defs, key=lambda d: (d.file, d.line))
    if len(ordered) <= SHOW:
        return [indent + _def_line(d) for d in ordered]
    by_file: dict[str, list[Definition]] = {}
    for d in ordered:
        by_file.setdefault(d.file, []).append(d)
    lines = []
    for f, ds in by_file.items():
        shown = ", ".join(f"{d.qualname}:{d.line}" for d in ds[:4]) + (", ..." if len(ds) > 4 else "")
        lines.append(
            f"{f}  {len(ds)}: {shown}" if len(ds) > 1 else f"{f}:{ds[0].line}  {ds[0].kind} {ds[0].qualname}"
        )
    return _capped(lines, indent, "more files")


def format_text(ans: Where) -> list[str]:
    if ans.kind == "path":
        return _format_path(ans)
    name = ans.query
    if given(ans.version):
        defs = ans.definitions
        if defs:
            nfiles = len({d.file for d in defs})
            head = f"{name} at {ans.version}: defined {len(defs)} time(s) in {nfiles} file(s)"
            return [head] + _defs_block(defs, "  ")
        out = [
            f"{name} at {ans.version}: not defined"
            + (f" (defined in {ans.elsewhere})" if ans.elsewhere else " in any indexed version")
        ]
        out += _mention_lines(ans.mentions, ans.version)
        return out
    out = [f"{name}, over the --tree versions {ans.tree_versions[0]} - {ans.tree_versions[-1]}:"]
    if not ans.history:
        out = [
            f"{name}: not defined in any --tree version ({ans.tree_versions[0]} - {ans.tree_versions[-1]})"
        ]
        return out + _mention_lines(ans.mentions, ans.mentions_version)
    for s in ans.history:
        span = s.first if s.first == s.last else f"{s.first} - {s.last}"
        if not s.definitions:
            out.append(f"  {span:<20} not defined")
            continue
        lines = [
            f"{d.file}:{d.line}  {d.kind} {d.qualname}"
            for d in sorted(s.definitions, key=lambda d: (d.file, d.line))
        ]
        capped = _capped(lines, " " * 23)
        out.append(f"  {span:<20} {capped[0].strip()}")
        out += capped[1:]
    if ans.removed_in:
        out.append(f"  removed at {ans.removed_in}")
    return out


def _mention_lines(files: list[str], version: str) -> list[str]:
    if not files:
        return [f"  not mentioned in any file at {version} either"]
    return [f"  mentioned in {len(files)} file(s) at {version}:"] + _capped(files, "    ")


def _format_path(ans: Where) -> list[str]:
    path = ans.query
    if given(ans.version):
        v = ans.version
        if given(ans.matches):
            if not ans.matches:
                return [f"{path} at {v}: no matching path"]
            return [f"{path} at {v}: {len(ans.matches)} matching path(s)"] + _capped(ans.matches, "  ")
        if ans.exists:
            extra = f" (a directory of {ans.directory_files} files)" if ans.directory_files else ""
            return [f"{path} exists at {v}{extra}"]
        return [f"{path}: not at {v}"] + _history_lines(ans.history, "  ")
    if given(ans.histories):
        if not ans.histories:
            return [f"{path}: no matching path in any --tree version"]
        out = []
        for p, h in ans.histories.items():
            out.append(p)
            out += _history_lines(h, "  ")
        if ans.more:
            out.append(f"... and {ans.more} more paths (--format json lists the first {SHOW})")
        return out
    return [path] + _history_lines(ans.history, "  ")


def _history_lines(history: list[PathRange], indent: str) -> list[str]:
    if not history:
        return [f"{indent}in no indexed version"]
    if not any(s.present for s in history):
        return [f"{indent}in no indexed version ({history[0].first} - {history[-1].last})"]
    out = []
    for s in history:
        span = s.first if s.first == s.last else f"{s.first} - {s.last}"
        if s.present:
            out.append(f"{indent}{span:<20} present")
        elif s.moves:
            moves = "; ".join(move_text(m) for m in s.moves)
            out.append(f"{indent}{span:<20} moved at {s.first} to {moves}")
        else:
            out.append(f"{indent}{span:<20} absent" + (f" (removed at {s.first})" if out else ""))
    return out
