"""Path recognition, one function per intent (each asks a different question of a string, so each has its
own rule; they were three functions of one name in three modules):

- `names_a_path`: does a `where` query or a document's claim name a path (`vllm/x.py`, `docs/`,
  `AGENTS.md`, `vllm/x.py:Name`) rather than a symbol (`Foo.bar`, `vllm.x.f`)?
- `is_path_argument`: is the argument of `show` / `diff --code` (and their MCP tools) a path rather than a
  parser name?
- `parse_location`: the `PATH[:LINE[-END]]` argument of `show`, split.
- `is_linkable_file`: is a stored cell value a repository file path a page may link (not a URL, not an
  absolute path, no spaces)?
- `text_path`: a path as the database stores it: a name that is not UTF-8 with its bytes escaped.
"""

from __future__ import annotations

import re

FILE_SUFFIXES = frozenset(
    """py pyi md rst txt jinja j2 json yaml yml toml cfg ini sh cu cuh cpp cc c h hpp rs js
ts html css lock in png svg jpg""".split()
)


def has_file_suffix(path: str) -> bool:
    """Its last part ends with a known file suffix (`x.py`, `a/b.md`), not an image name or a directory."""
    last = path.rstrip("/").rsplit("/", 1)[-1]
    return "." in last and last.rsplit(".", 1)[1].lower() in FILE_SUFFIXES


def names_a_path(text: str) -> bool:
    """A path (`vllm/x.py`, `docs/`, `AGENTS.md`, `vllm/x.py:Name`), not a symbol (`Foo.bar`, `vllm.x.f`)."""
    head = text.split(":", 1)[0]
    return "/" in head or has_file_suffix(head)


def is_path_argument(text: str) -> bool:
    """`vllm/x.py`, `x.py:10-20`, `chat.jinja`: a path; `hermes`: a parser name."""
    return "/" in text or text.endswith((".py", ".jinja")) or ":" in text


def is_linkable_file(value) -> bool:
    """`vllm/x.py`, `docs/a.md`: a file a cell links; not a URL, an absolute path, text with spaces."""
    return (
        isinstance(value, str)
        and 0 < len(value) < 500
        and "://" not in value
        and not value.startswith("/")
        and "." in value.rsplit("/", 1)[-1]
        and not any(c.isspace() for c in value)
    )


_SPAN = re.compile(r"^(?P<path>.+?):(?P<start>\d+)(?:-(?P<end>\d*))?$")


def parse_location(text: str) -> tuple[str, int | None, int | None]:
    """PATH, PATH:LINE, PATH:LINE-END or PATH:LINE- -> (path, start, end)."""
    m = _SPAN.match(text)
    if not m:
        return text, None, None
    start = int(m.group("start"))
    end = m.group("end")
    if end is None:
        return m.group("path"), start, start
    return m.group("path"), start, int(end) if end else None


def text_path(path: str) -> str:
    """A repository path as text the database can hold: the sources read names with surrogateescape, so a
    name that is not UTF-8 (`bad\\xff_tool_parser.py`) arrives with lone surrogates, which SQLite's UTF-8
    cannot store; its bytes are then written as \\xNN escapes (what git shows of them, quoted)."""
    try:
        path.encode("utf-8")
        return path
    except UnicodeEncodeError:
        return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
