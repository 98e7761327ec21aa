"""The data classes of `where` (answers/where.py): apart from model.py so that `where`, which answers from the
tree tables, starts without building every answer's classes; model.py re-exports them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .plain import Model, omittable

# -- where ------------------------------------------------------------------------------------------------------


@dataclass
class Definition(Model):
    """A definition (class, function, method, module-level name) in a file, lines `line`..`end_line`."""

    file: str
    line: int | None
    end_line: int | None
    kind: str | None
    qualname: str | None


@dataclass
class MoveHop(Model):
    """A later move of a moved path: at version `at` to `to`."""

    at: str
    to: str
    by: Literal["content", "package", "definitions", "file name"]
    detail: str | None


@dataclass
class Move(Model):
    """Where the path went when it disappeared, followed to the end of its range: `then` the later moves of the
    new path, `final` where the file is at the range's last version (null when the chain ends in a removal, at
    `removed_at`)."""

    to: str
    by: Literal["content", "package", "definitions", "file name"]
    detail: str | None
    then: list[MoveHop]
    final: str | None
    removed_at: str | None


@dataclass
class SymbolRange(Model):
    """Consecutive versions (`first`..`last`) with the same definitions of a symbol (none: not defined)."""

    first: str
    last: str
    definitions: list[Definition]


@dataclass
class PathRange(Model):
    """Consecutive versions (`first`..`last`) where a path is present, or absent (with the moves that took it
    away, at `first`)."""

    first: str
    last: str
    present: bool
    moves: list[Move]


@dataclass
class Where(Model):
    """A symbol (kind symbol, or mention when no file defines it) or a path (kind path): at one version
    (`version`, `definitions` or `mentions` / `exists`, `matches`) or, with --all, as `history` ranges of
    versions with the same answer (`histories`: one per path a pattern or bare file name matches, the first
    `SHOW`, `more` the rest). Keys the answer does not have are left out."""

    query: str
    kind: Literal["symbol", "mention", "path"]
    name: str | None = omittable()
    file: str | None = omittable()
    path: str = omittable()
    version: str = omittable()
    matches: list[str] = omittable()
    exists: bool = omittable()
    directory_files: int = omittable()
    definitions: list[Definition] = omittable()
    histories: dict[str, list[PathRange]] = omittable()
    more: int = omittable()
    history: list[SymbolRange] | list[PathRange] = omittable()
    removed_in: str | None = omittable()
    tree_versions: list[str] = omittable()
    mentions: list[str] = omittable()
    elsewhere: str | None = omittable()
    mentions_version: str = omittable()
