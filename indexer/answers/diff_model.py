"""The data classes of `diff` (answers/diff.py): typed changes between two versions. Apart from model.py so
that `diff` starts without building every answer's classes; model.py re-exports them."""

from __future__ import annotations

from dataclasses import dataclass

from .commit_model import Commit
from .plain import Model, omittable


@dataclass
class CodePart(Model):
    """One part of a name's code that changed (README, "What runs for a name"): `extraction` (its extraction
    and streaming methods), `methods` (its classes' other methods and own statements), `functions`
    (module-level functions, constants and helper classes it runs, in its files or imported), `imports`
    (the imports binding names it uses), with the definitions that changed and the lines added and removed
    in them."""

    part: str
    names: list[str]  # qualified names; a class's own statements are `Cls (class body)`
    added: int | None  # lines, None when the code of a side is not stored
    removed: int | None
    pieces: list[dict]  # [{file, what, qualname, change: changed | added | removed}]


@dataclass
class Change(Model):
    """One typed change between two versions. Name-level changes carry `kind` and `name`; file-level ones
    (adapter imports, classes, markers, plants, framework code) carry `file` (and `line` at B, or at A for
    a removal)."""

    type: str
    subject: str
    detail: str
    kind: str | None = None
    name: str | None = None
    before: str | None = None
    after: str | None = None
    file: str | None = None
    line: int | None = None
    files: list[dict] | None = None  # code-changed: [{file, blob_a, blob_b, added, removed, file_added,
    # file_removed, compare}], added / removed: the lines of the name's code in the file
    parts: list[CodePart] | None = None  # code-changed: what changed, by part (imports only, functions, ...)
    names: list[str] | None = None  # framework-changed: the names it affects
    compare: str | None = None  # upstream compare link
    # name-renamed, name-removed: the names that took over its class, real file or family at B, and how
    # (registered class, real class, real file, family; answers/successors.py); None when nothing did
    successors: list[str] | None = None
    successors_by: str | None = None
    commits: list[Commit] | None = (
        None  # a name whose code changed: the commits (`log NAME A B`), from a clone
    )


@dataclass
class Diff(Model):
    a: str
    b: str
    changes: list[Change]
    # the behaviour atlas's cells whose status differs from A to B (answers/atlas.py behaviour_changes: name,
    # kind, case, mode, before, after, detail), when the atlas ran both
    behaviour: list[dict] = omittable()
