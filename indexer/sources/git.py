"""Version trees from a git repository (clone or bare), read through gitpython's object database.

No checkout: the work tree and the index are never touched. Only the scope's subtrees are walked, and a
subtree already listed (same tree id, in any version) is not read again.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from . import FileEntry, VersionRef


class NotARepository(ValueError):
    pass


class GitSource:
    kind = "git"

    def __init__(self, path: str | Path):
        import git  # imported here: commands that only read the database never load gitpython

        try:
            self.repo = git.Repo(str(path), search_parent_directories=False)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError) as e:
            raise NotARepository(f"{path} is not a git repository") from e
        self._tags: dict[str, str] | None = None
        self._listing: dict[str, list[tuple[str, str]]] = {}

    # -- version names -------------------------------------------------------------------------
    def tags(self) -> dict[str, str]:
        """tag name -> commit id (annotated tags peeled); tags of trees or blobs are not versions."""
        if self._tags is None:
            out = {}
            for line in self.repo.git.for_each_ref(
                "refs/tags", format="%(refname:strip=2) %(objecttype) %(objectname) %(*objecttype) %(*objectname)"
            ).splitlines():
                name, kind, obj, peeled_kind, peeled = (line.split(" ") + [""] * 4)[:5]
                if kind == "commit":
                    out[name] = obj
                elif peeled_kind == "commit":
                    out[name] = peeled
                elif peeled_kind == "tag":  # a tag of a tag: peel all the way
                    commit = self._peel(name)
                    if commit:
                        out[name] = commit
            self._tags = out
        return self._tags

    def _peel(self, name: str) -> str | None:
        try:
            return self.repo.commit(f"refs/tags/{name}").hexsha
        except Exception:
            return None

    def names(self) -> list[str]:
        return list(self.tags())

    def is_ref(self, name: str) -> bool:
        try:
            self.repo.commit(name)
            return True
        except Exception:
            return False

    def ref(self, name: str) -> VersionRef:
        from ..specs import sort_key

        commit = self.tags().get(name)
        if commit is None:
            try:
                commit = self.repo.commit(name).hexsha
            except Exception as e:  # gitpython raises several kinds for a name that is not a commit
                raise ValueError(f"{name!r} is not a tag, branch or commit of {self.repo.git_dir}") from e
        return VersionRef(label=name, ref=name, commit=commit, source="git", sort_key=sort_key(name))

    # -- files ---------------------------------------------------------------------------------
    def files(self, version: VersionRef, scope) -> Iterator[FileEntry]:
        tree = self.repo.commit(version.commit).tree
        odb = self.repo.odb
        for root in scope.roots():
            try:
                sub = tree / root if root else tree
            except KeyError:
                continue
            if sub.type == "blob":
                entries = [(root, sub.hexsha)]
            else:
                prefix = root + "/" if root else ""
                entries = [(prefix + rel, sha) for rel, sha in self._list(sub)]
            for path, sha in entries:
                if scope.matches(path):
                    yield FileEntry(path, sha, _reader(odb, sha))

    def _list(self, tree) -> list[tuple[str, str]]:
        """(relative path, blob id) of every blob under a tree, memoised by tree id."""
        cached = self._listing.get(tree.hexsha)
        if cached is not None:
            return cached
        out: list[tuple[str, str]] = []
        for item in tree:
            if item.type == "blob":
                out.append((item.name, item.hexsha))
            elif item.type == "tree":
                out.extend((f"{item.name}/{rel}", sha) for rel, sha in self._list(item))
        self._listing[tree.hexsha] = out
        return out


def _reader(odb, hexsha: str):
    def read() -> bytes:
        return odb.stream(bytes.fromhex(hexsha)).read()

    return read
