"""The text of `grep`: "VERSIONS  path:line:text" lines, coloured on a terminal."""

from __future__ import annotations

from ..answers.grep import Match, Result
from .text import style


def format_text(res: Result, color: bool = False) -> list[str]:
    spans = [res.ranges(m) for m in res.matches]
    width = min(max(map(len, spans), default=0), 34)  # a long list of ranges pushes its own line only
    out = []
    for m, span in zip(res.matches, spans, strict=True):
        where = span.ljust(width)
        if m.binary:
            line = f"Binary file {_c(m.path, 'magenta', color)} matches"
        else:
            sep = _c(":", "cyan", color)
            line = f"{_c(m.path, 'magenta', color)}{sep}{_c(str(m.line), 'green', color)}{sep}{_marked(m, color)}"
        out.append(f"{style(where, 'yellow') if color else where}  {line}")
    return out


def _c(s: str, fg: str, color: bool) -> str:
    return style(s, fg) if color else s


def _marked(m: Match, color: bool) -> str:
    if not color or m.marks is None:
        return m.text
    return "".join(style(piece, "red", bold=True) if hit else piece for piece, hit in m.marks)
