"""Text for people: full width in a pipe (one fact per line, for grep and scripts), fitted to the terminal
on a terminal (long lines wrapped under their first column, paths too long for a line shortened in the
middle, where the file name stays readable)."""

from __future__ import annotations

import re
import sys

ELLIPSIS = "…"

# a control character (tab and newline aside), or a colour (SGR) sequence
_CONTROL = re.compile(r"\x1b\[[0-9;]*m|[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# the colours tpindex writes itself (style(), the diff's and the source's dim line numbers): all it keeps
_OWN_STYLES = frozenset(f"\x1b[{n}m" for n in (0, 1, 2, *range(30, 38)))


def printable(text: str, styles: bool = True) -> str:
    """`text` with every control character (C0 but tab and newline, DEL, C1) written as a \\uXXXX escape, so
    that what a repository holds (a commit subject, a path, a line of code) cannot move the cursor, set the
    terminal's title or clipboard (OSC), or hide a line; the colours tpindex writes itself are kept (unless
    `styles` is False: a field that came from a repository keeps none). In JSON the escape stands for the
    same character, so JSON output stays the same data."""
    if _CONTROL.search(text) is None:
        return text
    return _CONTROL.sub(lambda m: m[0] if styles and m[0] in _OWN_STYLES else _escaped(m[0]), text)


def _escaped(s: str) -> str:
    return "".join(f"\\u{ord(c):04x}" if c < " " or "\x7f" <= c <= "\x9f" else c for c in s)


def output_width() -> int | None:
    """The terminal's width when standard output is a terminal; None in a pipe (no limit)."""
    try:
        if not sys.stdout.isatty():
            return None
    except (AttributeError, ValueError):
        return None
    import shutil  # here, as textwrap below: text in a pipe needs neither

    return max(40, shutil.get_terminal_size((100, 24)).columns)


def shorten_middle(text: str, width: int) -> str:
    """`vllm/entrypoints/…/serving_chat.py`: the end (the file name) keeps the larger share."""
    if len(text) <= width:
        return text
    if width <= 8:
        return text[:width]
    tail = (width - 1) * 2 // 3
    head = width - 1 - tail
    return text[:head] + ELLIPSIS + text[-tail:]


def hanging(first: str, rest: str, width: int | None, indent: int | None = None) -> list[str]:
    """`first` followed by `rest` on one line; on a terminal too narrow for it, `rest` wraps under its own
    start (or at `indent`) and a word longer than a line is shortened in the middle."""
    line = first + rest
    if width is None or len(line) <= width:
        return [line]
    pad = len(first) if indent is None else indent
    if pad > width // 2:
        pad = 4
    avail = max(20, width - pad)
    import textwrap

    words = [shorten_middle(w, avail) for w in rest.split(" ")]
    wrapped = textwrap.wrap(" ".join(words), width=avail, break_long_words=False, break_on_hyphens=False) or [
        ""
    ]
    if len(first) + len(wrapped[0]) <= width and indent is None:
        return [first + wrapped[0]] + [" " * pad + w for w in wrapped[1:]]
    return [shorten_middle(first.rstrip(), width)] + [" " * pad + w for w in wrapped]


def table(rows: list[tuple[str, ...]], width: int | None, indent: str = "  ") -> list[str]:
    """Rows whose last column is free text: the other columns are padded to their widest value; on a
    terminal the last column wraps under itself, or under the row's second column when that leaves it too
    little room."""
    if not rows:
        return []
    n = len(rows[0]) - 1
    widths = [max(len(r[i]) for r in rows) for i in range(n)]
    out = []
    for r in rows:
        first = indent + " ".join(r[i].ljust(widths[i]) for i in range(n)) + "  "
        if width is not None and len(first) > width * 0.6:
            first = indent + " ".join(r[i].ljust(widths[i]) if i < n - 1 else r[i] for i in range(n)) + "  "
            out.extend(hanging(first, r[-1], width, indent=len(indent) + widths[0] + 1))
        else:
            out.extend(hanging(first, r[-1], width))
    return out


_ANSI = {
    "black": 30,
    "red": 31,
    "green": 32,
    "yellow": 33,
    "blue": 34,
    "magenta": 35,
    "cyan": 36,
    "white": 37,
}


def style(text: str, fg: str, bold: bool = False) -> str:
    """`text` in colour `fg` (and bold) for a terminal: the escape sequences click.style writes."""
    return f"\x1b[{_ANSI[fg]}m" + ("\x1b[1m" if bold else "") + text + "\x1b[0m"
