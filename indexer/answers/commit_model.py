"""A commit of the clone a database was built from (answers/history.py): what `diff` lists under a name whose
code changed, and what `log` and `contains` answer with."""

from __future__ import annotations

from dataclasses import dataclass

from .plain import Model


@dataclass
class CommitFile(Model):
    file: str
    added: int | None  # lines, against the first parent (null: a binary file)
    removed: int | None


@dataclass
class Commit(Model):
    """A commit of the clone the database was built from; `files` are the files of the question it touched."""

    sha: str
    date: str  # author date, ISO 8601
    author: str
    subject: str
    pr: int | None  # the pull request its subject names ("... (#N)", "Merge pull request #N ...")
    merge: bool
    url: str | None  # upstream
    pr_url: str | None
    files: list[CommitFile]
