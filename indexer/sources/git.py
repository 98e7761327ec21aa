"""Version trees from a git repository (clone or bare), read through gitpython's object database.

No checkout: the work tree and the index are never touched. Only the scope's subtrees are walked, and a
subtree already listed (same tree id, in any version) is not read again.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from . import FileEntry, VersionRef

TREE, SUBMODULE, SYMLINK = b"40000", b"160000", b"120000"


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
        self._trees: dict[str, list[tuple[bytes, str, str]]] = {}
        self._catfile: CatFile | None = None

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
        return VersionRef(label=name, ref=name, commit=commit, source="git", sort_key=sort_key(name),
                          origin=str(Path(self.repo.working_tree_dir or self.repo.git_dir).resolve()))

    # -- files ---------------------------------------------------------------------------------
    def files(self, version: VersionRef, scope) -> Iterator[FileEntry]:
        odb = self.repo.odb
        root_tree = self._commit_tree(version.commit)
        for root in scope.roots():
            found = self._lookup(root_tree, root)
            if found is None:
                continue
            mode, sha = found
            if mode in (SUBMODULE, SYMLINK):
                continue
            if mode != TREE:
                entries = [(root, sha)]
            else:
                prefix = root + "/" if root else ""
                entries = [(prefix + rel, blob) for rel, blob in self._list(sha)]
            for path, sha in entries:
                if scope.matches(path):
                    yield FileEntry(path, sha, _reader(odb, sha))

    def tree(self, version: VersionRef) -> list[FileEntry]:
        """Every file of the version's tree, from tree objects listed once per tree id."""
        odb = self.repo.odb
        return [FileEntry(path, sha, _reader(odb, sha)) for path, sha in self._list(self._commit_tree(version.commit))]

    def read_many(self, entries) -> Iterator[bytes]:
        """The bytes of many files, in order, in one pipelined pass."""
        if self._catfile is None:
            self._catfile = CatFile(self.repo.git_dir)
        return self._catfile.read_many([e.blob_id for e in entries])

    def _commit_tree(self, commit: str) -> str:
        return self.repo.commit(commit).tree.hexsha

    def _entries(self, tree_sha: str) -> list[tuple[bytes, str, str]]:
        """(mode, name, sha) of a tree object, read raw (trees are cached: shared across versions)."""
        cached = self._trees.get(tree_sha)
        if cached is None:
            data = self.repo.odb.stream(bytes.fromhex(tree_sha)).read()
            cached, i = [], 0
            while i < len(data):
                sp = data.index(b" ", i)
                nul = data.index(b"\0", sp)
                cached.append((data[i:sp], data[sp + 1:nul].decode("utf-8", "surrogateescape"),
                               data[nul + 1:nul + 21].hex()))
                i = nul + 21
            self._trees[tree_sha] = cached
        return cached

    def _lookup(self, tree_sha: str, path: str) -> tuple[bytes, str] | None:
        """(mode, sha) of a path under a tree, or None."""
        mode, sha = TREE, tree_sha
        for part in path.split("/") if path else []:
            if mode != TREE:
                return None
            hit = next(((m, s) for m, n, s in self._entries(sha) if n == part), None)
            if hit is None:
                return None
            mode, sha = hit
        return mode, sha

    def _list(self, tree_sha: str) -> list[tuple[str, str]]:
        """(relative path, blob id) of every blob under a tree, memoised by tree id."""
        cached = self._listing.get(tree_sha)
        if cached is not None:
            return cached
        out: list[tuple[str, str]] = []
        for mode, name, sha in self._entries(tree_sha):
            if mode == TREE:
                out.extend((f"{name}/{rel}", blob) for rel, blob in self._list(sha))
            elif mode not in (SUBMODULE, SYMLINK):  # a symlink's blob is its target's path, not code
                out.append((name, sha))
        self._listing[tree_sha] = out
        return out


class CatFile:
    """One `git cat-file --batch` whose requests are written by a thread while answers are read here, so
    reading N blobs costs one round trip instead of N (a persistent cat-file answers one at a time)."""

    def __init__(self, git_dir: str):
        import subprocess

        # its own session: Ctrl-C is the build's to handle (it stops reading); it exits when its input
        # closes, with the build
        self.proc = subprocess.Popen(["git", "--git-dir", git_dir, "cat-file", "--batch"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0,
                                     start_new_session=True)
        self.out = self.proc.stdout

    def read_many(self, shas: list[str]) -> Iterator[bytes]:
        import threading

        def request():
            self.proc.stdin.write(b"".join(s.encode() + b"\n" for s in shas))
            self.proc.stdin.flush()

        writer = threading.Thread(target=request, daemon=True)
        writer.start()
        for sha in shas:
            header = self.out.readline().split()
            if len(header) != 3:
                raise OSError(f"git cat-file cannot read object {sha}: {b' '.join(header).decode(errors='replace')}")
            size = int(header[2])
            data = self._read(size)
            self._read(1)  # the newline after each object
            yield data
        writer.join()

    def _read(self, n: int) -> bytes:
        chunks, left = [], n
        while left:
            chunk = self.out.read(left)
            if not chunk:
                raise OSError("git cat-file ended early")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait()


def _reader(odb, hexsha: str):
    def read() -> bytes:
        return odb.stream(bytes.fromhex(hexsha)).read()

    return read
