"""Version trees from a git repository (clone or bare), read with git itself.

No checkout: the work tree and the index are never touched. One persistent, pipelined `git cat-file
--batch` reads everything during a build: a version's tree objects (only under the scope's directories,
a level of the tree per request; nothing is cached between versions) and the blobs. Every git command
gets the repository's git directory explicitly, so the current directory and the environment's GIT_DIR
play no part.

Discovering the repository, its tags and commits is done with git itself, not gitpython's `Repo` (issue 24,
measured): importing gitpython costs 0.11 CPU-s, and a build with nothing to do (every version indexed)
took 0.19-0.21 CPU-s with these few git commands against 0.26-0.29 with `Repo` listing the tags. gitpython
reads the history (sources/history.py), which only a build with new versions walks.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from functools import partial
from itertools import repeat
from pathlib import Path

from ..core.problems import Problem
from . import FileEntry, SourceError, VersionRef

TREE, SUBMODULE, SYMLINK = b"40000", b"160000", b"120000"
_TREE_ENTRY = re.compile(rb"(\d+) ([^\0]*)\0(.{20})", re.S)  # an entry of a raw tree object
SYNC_REQUEST_BYTES = 1 << 15  # requests this small are written at once (they fit in the pipe's buffer)


NOT_A_REPOSITORY_HINT = "pass --repo PATH to a vLLM clone, or use --from-pypi for released versions"
REF_HINT = "see tpindex build --help for --repo, --tags and --path"


class NotARepository(Problem, ValueError):
    """The path given as a repository is none (nor its .git directory, nor a bare repository)."""


class NotARef(Problem, ValueError):
    """A name that is no tag, branch or commit of the repository."""


class GitError(SourceError):
    """git failed, or answered what cat-file should not (the repository is damaged or changed meanwhile)."""


class GitSource:
    kind = "git"

    def __init__(self, path: str | Path):
        self.git_dir, self.work_tree = _discover(Path(path))
        self._tags: dict[str, str] | None = None
        self._catfile: CatFile | None = None

    def _git(self, *args: str, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess:
        """Run git on this repository; an exit status outside `ok` raises GitError (an OSError) with git's message."""
        r = subprocess.run(
            ["git", "--git-dir", self.git_dir, "--literal-pathspecs", *args],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            cwd=self.git_dir,
        )
        if r.returncode not in ok:
            message = r.stderr.decode(errors="replace").strip().splitlines()
            raise GitError(
                f"git {args[0]} failed in {self.git_dir}: {message[-1] if message else r.returncode}"
            )
        return r

    # -- version names -------------------------------------------------------------------------
    def tags(self) -> dict[str, str]:
        """tag name -> commit id (annotated tags peeled); tags of trees or blobs are not versions."""
        if self._tags is None:
            out = {}
            listing = self._git(
                "for-each-ref",
                "refs/tags",
                "--format=%(refname:strip=2) %(objecttype) %(objectname) %(*objecttype) %(*objectname)",
            ).stdout.decode("utf-8", "replace")
            for line in listing.splitlines():
                name, kind, obj, peeled_kind, peeled = (line.split(" ") + [""] * 4)[:5]
                if kind == "commit":
                    out[name] = obj
                elif peeled_kind == "commit":
                    out[name] = peeled
                elif peeled_kind == "tag":  # a tag of a tag: peel all the way
                    commit = self._commit_of(f"refs/tags/{name}")
                    if commit:
                        out[name] = commit
            self._tags = out
        return self._tags

    def _commit_of(self, name: str) -> str | None:
        r = self._git(
            "rev-parse", "--verify", "--quiet", "--end-of-options", f"{name}^{{commit}}", ok=(0, 1, 128)
        )
        return r.stdout.decode().strip() or None if r.returncode == 0 else None

    def names(self) -> list[str]:
        return list(self.tags())

    def is_ref(self, name: str) -> bool:
        return self._commit_of(name) is not None

    def ref(self, name: str) -> VersionRef:
        from ..core.specs import sort_key

        commit = self.tags().get(name) or self._commit_of(name)
        if commit is None:
            raise NotARef(f"{name!r} is not a tag, branch or commit of {self.git_dir}", REF_HINT)
        return VersionRef(
            label=name,
            ref=name,
            commit=commit,
            source="git",
            sort_key=sort_key(name),
            origin=str(Path(self.work_tree or self.git_dir).resolve()),
        )

    # -- files ---------------------------------------------------------------------------------
    def files(self, version: VersionRef, scope) -> Iterator[FileEntry]:
        for path, sha in self._ls(version.commit, scope.roots()):
            if scope.matches(path):
                yield FileEntry(path, sha, partial(self._read, sha))

    def tree(self, version: VersionRef) -> list[FileEntry]:
        """Every file of the version's tree."""
        return [
            FileEntry(path, sha, partial(self._read, sha)) for path, sha in self._ls(version.commit, [""])
        ]

    def _ls(self, commit: str, roots: list[str]) -> list[tuple[str, str]]:
        """(path, blob id) of every file of a commit under `roots` ("" is the whole tree), sorted by path.
        Symbolic links (their blob is a path, not code) and submodules are left out. Tree objects are read
        through the cat-file process, a level of the tree at a time in one pipelined request: no process is
        started per version (a fork of a large build process is costly), nothing is cached."""
        cat = self._cat()
        commit_obj = next(cat.objects([commit]))
        if commit_obj is None or commit_obj[0] != "commit":
            raise GitError(f"git cat-file cannot read commit {commit} in {self.git_dir}")
        top = commit_obj[1][5:45].decode()  # "tree <sha>\n..."
        files: list[tuple[str, str]] = []
        subtrees: list[tuple[str, str]] = []  # (path prefix, tree id) left to list
        # the roots: down their directories from the top, one level of every root per request
        walking = [(root, root.split("/") if root else [], top) for root in roots]
        while walking:
            trees = dict(zip({sha for _, _, sha in walking}, repeat(None)))
            for sha, obj in zip(trees, cat.objects(list(trees)), strict=True):
                trees[sha] = _tree_entries(obj[1]) if obj is not None and obj[0] == "tree" else []
            deeper = []
            for root, parts, sha in walking:
                if not parts:  # the whole tree
                    subtrees.append(("", sha))
                    continue
                hit = next(((m, s) for m, n, s in trees[sha] if n == parts[0]), None)
                if hit is None:
                    continue
                mode, entry = hit
                if len(parts) > 1:
                    if mode == TREE:
                        deeper.append((root, parts[1:], entry))
                elif mode == TREE:
                    subtrees.append((root + "/", entry))
                elif mode not in (SYMLINK, SUBMODULE):
                    files.append((root, entry))
            walking = deeper
        while subtrees:  # every tree under the roots, a level at a time
            shas = [sha for _, sha in subtrees]
            level, subtrees = subtrees, []
            for (prefix, _), obj in zip(level, self._cat().objects(shas), strict=True):
                for mode, name, sha in _tree_entries(obj[1]) if obj is not None and obj[0] == "tree" else []:
                    if mode == TREE:
                        subtrees.append((f"{prefix}{name}/", sha))
                    elif mode not in (SYMLINK, SUBMODULE):
                        files.append((prefix + name, sha))
        files.sort()
        return files

    def read_many(self, entries) -> Iterator[bytes]:
        """The bytes of many files, in order, in one pipelined pass."""
        return self._cat().read_many([e.blob_id for e in entries])

    def _read(self, sha: str) -> bytes:
        return next(self._cat().read_many([sha]))

    def _cat(self) -> CatFile:
        if self._catfile is None:
            self._catfile = CatFile(self.git_dir)
        return self._catfile

    def close(self) -> None:
        """End the cat-file process (a long-lived reader, a server's replay, must not keep one per read)."""
        if self._catfile is not None:
            self._catfile.close()
            self._catfile = None


def _discover(path: Path) -> tuple[str, str | None]:
    """(git directory, work tree or None when bare) of the repository at `path` itself: its work tree's root,
    its .git directory, or a bare repository; a directory inside a repository is not one."""
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(path.absolute().parent)}  # never look above `path`
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE"):
        env.pop(var, None)
    if not path.is_dir():
        raise NotARepository(f"{path} is not a git repository", NOT_A_REPOSITORY_HINT)
    r = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--absolute-git-dir", "--is-bare-repository"],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    if r.returncode != 0:
        raise NotARepository(f"{path} is not a git repository", NOT_A_REPOSITORY_HINT)
    git_dir, bare = r.stdout.decode("utf-8", "surrogateescape").splitlines()[:2]
    if bare == "true":
        return git_dir, None
    top = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--show-toplevel"],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    if top.returncode == 0 and top.stdout.strip():
        return git_dir, top.stdout.decode("utf-8", "surrogateescape").strip()
    return git_dir, str(Path(git_dir).parent)  # `path` is the .git directory of a work tree


def _tree_entries(data: bytes) -> list[tuple[bytes, str, str]]:
    """(mode, name, id) of the entries of a raw tree object."""
    return [
        (mode, name.decode("utf-8", "surrogateescape"), sha.hex())
        for mode, name, sha in _TREE_ENTRY.findall(data)
    ]


class CatFile:
    """One `git cat-file --batch` whose requests are written by a thread while answers are read here, so
    reading N blobs costs one round trip instead of N (a persistent cat-file answers one at a time)."""

    def __init__(self, git_dir: str):
        # its own session: Ctrl-C is the build's to handle (it stops reading); it exits when its input
        # closes, with the build
        # its cache of delta bases is kept small (16 MB; git's default is 96 MB): reading the 64 releases'
        # whole packages takes as long with it
        self.proc = subprocess.Popen(
            ["git", "-c", "core.deltaBaseCacheLimit=16m", "--git-dir", git_dir, "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=1 << 16,
            start_new_session=True,
            cwd=git_dir,
        )
        self.out = self.proc.stdout

    def read_many(self, shas: list[str]) -> Iterator[bytes]:
        """The contents of objects that must exist, in order."""
        for sha, obj in zip(shas, self.objects(shas), strict=True):
            if obj is None:
                raise GitError(f"git cat-file cannot read object {sha}")
            yield obj[1]

    def objects(self, names: list[str]) -> Iterator[tuple[str, bytes] | None]:
        """(type, contents) of each object named (None: not in the repository), in order, in one request."""
        import threading

        request = b"".join(s.encode() + b"\n" for s in names)

        def send():
            self.proc.stdin.write(request)
            self.proc.stdin.flush()

        writer = None
        if len(request) <= SYNC_REQUEST_BYTES:
            send()  # it fits in the pipe: written at once, whatever git is doing
        else:
            writer = threading.Thread(target=send, daemon=True)
            writer.start()
        for _ in names:
            header = self.out.readline().split()
            if len(header) != 3:
                if len(header) == 2 and header[1] == b"missing":
                    yield None
                    continue
                raise GitError(
                    f"git cat-file: unexpected answer {b' '.join(header).decode(errors='replace')!r}"
                )
            size = int(header[2])
            data = self.out.read(size)
            if len(data) != size or self.out.read(1) != b"\n":  # a newline after each object
                raise GitError("git cat-file ended early")
            yield header[1].decode(), data
        if writer is not None:
            writer.join()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait()
