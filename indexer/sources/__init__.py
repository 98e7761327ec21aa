"""Where version trees come from.

A source lists candidate version names (tags, released versions), turns a chosen name into a
`VersionRef`, and yields the in-scope files of a version as `FileEntry`s whose bytes are read lazily.
Blob ids are git blob ids (sha1 of b"blob <len>\\0" + data), so one file is one blob whichever source.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from ..core.problems import Problem


class SourceError(Problem, OSError):
    """A source that cannot be read (git, the package index, an archive, the disk under them): a Problem
    (what is wrong, what to do) that is still an OSError for the code that reads files. Its text, str(),
    is the message alone, as an OSError's; the hint is `hint` (None: the build says what to do, since only
    it knows what was kept)."""

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class VersionRef:
    label: str  # what people call it: "v0.32.0", a branch name, a directory's version
    ref: str  # what was asked for: tag, ref, archive file name, directory
    commit: str  # identity of the content: git commit, archive sha256, directory digest
    source: str  # "git" | "pypi" | "dir"
    sort_key: tuple = field(compare=False, default=())
    origin: str = field(compare=False, default="")  # the repository path, package index or directory


@dataclass(frozen=True)
class FileEntry:
    path: str  # repository-relative, "/"-separated
    blob_id: str
    read: Callable[[], bytes] = field(compare=False, repr=False)


class Source(Protocol):
    kind: str

    def names(self) -> list[str]:
        """Candidate version names the tag-spec grammar selects from (tags, released versions)."""

    def ref(self, name: str) -> VersionRef:
        """The version for a name from names() or any other ref the source understands."""

    def files(self, version: VersionRef, scope) -> Iterator[FileEntry]:
        """In-scope files of a version, walking only the scope's subtrees."""

    def tree(self, version: VersionRef) -> list[FileEntry]:
        """Every file of a version (build --tree); its in-scope files are exactly what files() yields."""


def git_blob_id(data: bytes) -> str:
    """The id git gives these bytes as a blob."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
