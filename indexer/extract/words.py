"""The light extraction of `build --tree`, from a file's bytes: its definitions (extract/definitions.py,
tree-sitter and a walk over statements, no pattern query) and its identifiers, written for the contentless
full-text table tree_words (enough to tell whether a file mentions a name, not a copy of the source).

The --tree tier runs `light` in the build's workers; the answers encode a word the same way to ask."""

from __future__ import annotations

import re

from ..core.scope import parsed

WORD_SUFFIXES = (
    ".py",
    ".pyi",
    ".md",
    ".rst",
    ".txt",
    ".jinja",
    ".j2",
    ".yaml",
    ".yml",
    ".toml",
    ".cfg",
    ".ini",
    ".sh",
)
WORDS_MAX = 1 << 20

_IDENT_CHARS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"
_RUNS = bytes(c if c in _IDENT_CHARS else 0x20 for c in range(256))  # every other byte a space
_DIGITS = b"0123456789"
_UPPER_STR = re.compile(r"[A-Z]")
_CASE = [(bytes([c]), b"$" + bytes([c + 32])) for c in range(ord("A"), ord("Z") + 1)]


def is_module(path: str) -> bool:
    return parsed(path)


def has_words(path: str) -> bool:
    return path.endswith(WORD_SUFFIXES)


def encode_words(data: bytes) -> str:
    """The distinct identifiers (2+ characters) in a file's bytes, comments and strings included (as grep
    sees them), each upper-case letter written $ + lower case so the full-text index stays case-sensitive."""
    # the runs of identifier characters, each once (translate, split and set run in C); a run's identifier
    # starts at its first letter or _ (what [A-Za-z_][A-Za-z0-9_]+ finds in it), kept at 2+ characters:
    # Python works per distinct run, not per occurrence
    words = {run.lstrip(_DIGITS) for run in set(data.translate(_RUNS).split())}
    joined = b" ".join(w for w in words if len(w) > 1)
    for upper, escaped in _CASE:  # 26 passes in C beat one regex substitution with a template
        if upper in joined:
            joined = joined.replace(upper, escaped)
    return joined.decode("ascii")


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]+")


def is_word(word: str) -> bool:
    """Whether the identifiers the index holds (encode_words) can hold `word`: 2+ ASCII name characters."""
    return _IDENTIFIER.fullmatch(word) is not None


def encode_word(word: str) -> str:
    """One identifier as a tree_words query term."""
    return '"' + _UPPER_STR.sub(r"$\g<0>", word).lower() + '"'


def light(data: bytes, defs: bool, words: bool) -> tuple[list | None, str | None]:
    """Worker: the definitions (when `defs`) and the identifiers (when `words`) of one file."""
    rows = None
    if defs:
        from .definitions import walk
        from .ts import parser

        try:
            rows = walk(parser().parse(data).root_node)
        except (RecursionError, ValueError, UnicodeError):  # absurd nesting; never stop the build
            rows = []
    return rows, encode_words(data) if words and len(data) <= WORDS_MAX else ("" if words else None)
