"""The data classes of `log` and `contains` (answers/history.py), from the history a build from a clone stored."""

from __future__ import annotations

from dataclasses import dataclass

from .commit_model import Commit
from .plain import Model


@dataclass
class KindLog(Model):
    """The commits from A to B that touched a name's code files at A or at B, oldest first."""

    kind: str
    files_a: list[str]
    files_b: list[str]
    registered_a: bool  # the name is registered (as this kind) at A
    registered_b: bool
    commits: list[Commit]


@dataclass
class Log(Model):
    """`log NAME A B`: first_parent (the default) follows B's first parents down to A's history; otherwise
    every commit of B's history not in A's (a merge only for a file it changed itself). `note` says when A is
    not an ancestor of B."""

    name: str
    a: str
    b: str
    first_parent: bool
    framework: bool
    kinds: list[KindLog]
    note: str | None


@dataclass
class ContainsCommit(Model):
    commit: Commit
    first: str | None  # the first indexed version (in version order) whose history holds it
    versions: list[str]


@dataclass
class Contains(Model):
    """`contains COMMIT|#PR`: the commits found (one for a commit id; every commit whose subject names the
    PR), the first indexed version holding any, every one that does, the indexed versions with history that
    do not, and those without history (package index, directory) that cannot be asked."""

    query: str
    commits: list[ContainsCommit]
    first: str | None
    versions: list[str]
    not_containing: list[str]
    without_history: list[str]
