"""Version trees from a git repository (clone or bare), read through gitpython.

No checkout: the work tree and the index are never touched. gitpython's persistent `git cat-file --batch`
(`Git.get_object_data`) reads everything during a build: a version's tree objects (only under the scope's
directories; nothing is cached between versions) and the blobs. Every git command gets the repository's git
directory explicitly, so the current directory and the environment's GIT_DIR play no part.

This is the one module that talks to git (issue 42), through gitpython's `Git` command object, the library the
project's stack names: `run_git` for single commands (here, and for the history that sources/history.py reads)
and the persistent cat-file. gitpython is imported only by builds that read a git repository (its import, about
0.04 CPU-s here, measured against a build's; `Repo` is not used: listing tags and trees through it reads and
parses every object in Python).
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


NOT_A_REPOSITORY_HINT = "pass --repo PATH to a vLLM clone, or use --from-pypi for released versions"
REF_HINT = "see tpindex build --help for --repo, --tags and --path"


class NotARepository(Problem, ValueError):
    """The path given as a repository is none (nor its .git directory, nor a bare repository)."""


class NotARef(Problem, ValueError):
    """A name that is no tag, branch or commit of the repository."""


class GitError(SourceError):
    """git failed, or answered what cat-file should not (the repository is damaged or changed meanwhile)."""


def command(git_dir: str):
    """gitpython's command object for a repository: its commands run in the git directory, with it explicit
    (`--git-dir`, also for the persistent cat-file), and with a small cache of delta bases for cat-file (16 MB;
    git's default is 96 MB: reading the 64 releases' whole packages takes as long with it)."""
    from git.cmd import Git  # here: only builds that read a repository pay its import

    g = Git(git_dir)
    g.set_persistent_git_options(git_dir=git_dir)
    g.update_environment(
        GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0="core.deltaBaseCacheLimit", GIT_CONFIG_VALUE_0="16m"
    )
    return g


def run_git(
    git_dir: str,
    *args: str,
    ok: tuple[int, ...] = (0,),
    error: type[OSError] = GitError,
    what: str = "",
    input: bytes | None = None,
    git=None,
) -> subprocess.CompletedProcess:
    """Run git on a repository through gitpython (its git directory explicit, pathspecs literal, `input` or
    nothing on its standard input); an exit status outside `ok` raises `error` (an OSError: GitError, or the
    history's HistoryError) with git's message. Every git command of tpindex but the persistent cat-file goes
    through here. `git`: the repository's command object, if one is at hand."""
    git = git or command(git_dir)
    stdin = subprocess.DEVNULL
    if input is not None:  # gitpython hands its standard input a file
        import tempfile

        stdin = tempfile.TemporaryFile()
        stdin.write(input)
        stdin.seek(0)
    try:
        argv = ["git", "--git-dir", git_dir, "--literal-pathspecs", *args]
        status, out, err = git.execute(
            argv,
            istream=stdin,
            with_extended_output=True,
            with_exceptions=False,
            stdout_as_string=False,
            strip_newline_in_stdout=False,
        )
    finally:
        if input is not None:
            stdin.close()
    if status not in ok:
        message = (err if isinstance(err, str) else err.decode(errors="replace")).strip().splitlines()
        doing = f" {what}" if what else ""
        raise error(f"git {args[0]} failed{doing} in {git_dir}: {message[-1] if message else status}")
    return subprocess.CompletedProcess(argv, status, out, err)


class GitSource:
    kind = "git"

    def __init__(self, path: str | Path):
        self.git_dir, self.work_tree = _discover(Path(path))
        self._tags: dict[str, str] | None = None
        self._catfile: CatFile | None = None
        self._command = None

    def _git(self, *args: str, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess:
        if self._command is None:
            self._command = command(self.git_dir)
        return run_git(self.git_dir, *args, ok=ok, git=self._command)

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

    def listing(self) -> dict | None:
        """The repository's tags, for the hints of later questions (stored by the build)."""
        return {
            "source": "git",
            "origin": str(Path(self.work_tree or self.git_dir).resolve()),
            "names": self.names(),
        }

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
        """The bytes of many files, in order, through the one cat-file process."""
        return self._cat().read_many([e.blob_id for e in entries])

    def _read(self, sha: str) -> bytes:
        return next(self._cat().read_many([sha]))

    def _cat(self) -> CatFile:
        if self._catfile is None:
            if self._command is None:
                self._command = command(self.git_dir)
            self._catfile = CatFile(self._command)
        return self._catfile

    def close(self) -> None:
        """End the cat-file process (a long-lived reader, a server's replay, must not keep one per read)."""
        if self._catfile is not None:
            self._catfile.close()
            self._catfile = None


def _discover(path: Path) -> tuple[str, str | None]:
    """(git directory, work tree or None when bare) of the repository at `path` itself: its work tree's root,
    its .git directory, or a bare repository; a directory inside a repository is not one. Asked of git with
    GIT_DIR, GIT_WORK_TREE and the like left out of its environment: gitpython's commands and `Repo` take them
    from the process's environment (they can add to it, not take from it), so this one runs git itself."""
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
    """gitpython's persistent `git cat-file --batch` (`Git.get_object_data`): one process for the build, an
    object per request. A pipelined reader (every request of a version written by a thread while the answers
    are read) was measured against it: reading the default scope's 1,754 blobs of the 64 releases took 0.03
    CPU-s of Python and 0.33 of git that way, 0.05 and 0.36 through gitpython."""

    def __init__(self, git):
        self.git = git

    def read_many(self, shas: list[str]) -> Iterator[bytes]:
        """The contents of objects that must exist, in order."""
        for sha, obj in zip(shas, self.objects(shas), strict=True):
            if obj is None:
                raise GitError(f"git cat-file cannot read object {sha}")
            yield obj[1]

    def objects(self, names: list[str]) -> Iterator[tuple[str, bytes] | None]:
        """(type, contents) of each object named (None: not in the repository), in order."""
        for name in names:
            try:
                _, kind, _, data = self.git.get_object_data(name)
            except ValueError as e:  # gitpython: the object is missing
                if "missing" in str(e):
                    yield None
                    continue
                raise GitError(f"git cat-file: {e}") from None
            except (OSError, AttributeError) as e:  # the process is gone (killed, or the disk failed)
                raise GitError(f"git cat-file ended early ({type(e).__name__})") from None
            yield kind.decode(), data

    def close(self) -> None:
        self.git.clear_cache()
