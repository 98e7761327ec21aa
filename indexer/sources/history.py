"""Commits of a git repository, read with git itself through sources/git.py's runner (the one module that
talks to git: this one says which commands the history needs and reads their output).

What the build stores of a clone's history (indexer/build/commits.py) is read here; blob bytes still come
from the pipelined `git cat-file --batch` of sources/git.py. Each read is one streaming git process,
whatever the number of commits:

- the commit graph of a range (`commits`): `git log` printing each commit's id, parents, author date,
  author and message;
- the in-scope paths each commit of a range touched, with the lines added and removed against its first
  parent (`touched`): `git log --numstat`, limited to the scope's directories;
- commits at and below the indexed tags' common base (`listed`): the same as `commits`, parents left out.

Not one read per commit (80 us a commit on an idle machine and 0.6 ms at a load of 10, measured on a
20,000-commit repository: 1.2 s for 5,000 commits against 0.12 s streamed), nor one `git diff` per commit for
the line counts (8 ms each). gitpython did this before (issue 42: one module talks to git); importing it cost a
build with new versions 0.11-0.15 CPU-s, for commands that are git's own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from . import SourceError

# A squashed pull request: "[Bugfix] fix the parser (#12345)"; a merged one: "Merge pull request #123 from ..."
_PR_SQUASHED = re.compile(r"\(#([0-9]+)\)\s*$")
_PR_MERGED = re.compile(r"^Merge pull request #([0-9]+)\b")


MAX_PR_DIGITS = 18  # a larger number is no pull request, and no SQLite INTEGER (at most 2**63 - 1) holds it


def pr_of(subject: str) -> int | None:
    """The pull request a commit subject names, else None (a number of more than MAX_PR_DIGITS digits names
    none: `(#99999999999999999999999)` in a subject must not stop the build from storing the history)."""
    m = _PR_SQUASHED.search(subject) or _PR_MERGED.match(subject)
    return int(m.group(1)) if m and len(m.group(1)) <= MAX_PR_DIGITS else None


def subject_of(message: str) -> str:
    """The subject git prints for `%s`: the message's first paragraph, its lines joined by spaces."""
    lines = []
    for line in message.strip("\n").splitlines():
        if not line.strip():
            break
        lines.append(line.strip())
    return " ".join(lines)


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    parents: tuple[str, ...] | None  # None: not read (a commit below the base)
    date: str  # author date, ISO 8601 with its offset
    author: str
    subject: str

    @property
    def pr(self) -> int | None:
        return pr_of(self.subject)


class HistoryError(SourceError):
    """git failed while the history was read (the versions already indexed are kept)."""


class GitHistory:
    def __init__(self, git_dir: str):
        self.git_dir = git_dir

    def close(self) -> None:
        pass

    def _git(self, what: str, *args: str, ok: tuple[int, ...] = (0,), input: bytes | None = None):
        from .git import run_git

        return run_git(
            self.git_dir, *args, ok=ok, error=HistoryError, what=f"reading the history ({what})", input=input
        )

    def _text(self, what: str, *args: str) -> str:
        """git's output as text; bytes that are not UTF-8 kept (surrogateescape) for _clean to replace."""
        return self._git(what, *args).stdout.decode("utf-8", "surrogateescape")

    def commits_here(self, shas: list[str]) -> set[str]:
        """Those of `shas` that are commits of this repository, in one git process (`cat-file --batch-check`)."""
        if not shas:
            return set()
        request = "".join(f"{sha}^{{commit}}\n" for sha in shas).encode()
        out = self._git("cat-file --batch-check", "cat-file", "--batch-check", input=request).stdout
        return {
            sha
            for sha, line in zip(shas, out.decode().splitlines(), strict=True)
            if not line.endswith(" missing")
        }

    def base(self, tips: list[str]) -> str | None:
        """The commit every tip descends from, nearest the tips (a tip itself when there is one); None when
        the tips have no common ancestor."""
        if len(tips) == 1:
            return tips[0]
        r = self._git("merge-base", "merge-base", "--octopus", *tips, ok=(0, 1))
        found = r.stdout.decode().split()
        return found[0] if r.returncode == 0 and found else None

    def is_ancestor(self, ancestor: str, commit: str) -> bool:
        r = self._git("merge-base --is-ancestor", "merge-base", "--is-ancestor", ancestor, commit, ok=(0, 1))
        return r.returncode == 0

    def commits(self, tips: list[str], stop: list[str]) -> Iterator[CommitInfo]:
        """Every commit reachable from `tips` and not from `stop`, with its parents."""
        if tips:
            yield from self._log([*tips, *(f"^{s}" for s in stop)], parents=True)

    def listed(self, tip: str) -> Iterator[CommitInfo]:
        """Every commit reachable from `tip` (itself included), without parents."""
        yield from self._log([tip], parents=False)

    def _log(self, revs: list[str], parents: bool) -> Iterator[CommitInfo]:
        out = self._text("log", "log", "--format=%x1e%H%x00%P%x00%aI%x00%an%x00%B", *revs, "--")
        for record in out.split("\x1e")[1:]:
            sha, ps, date, author, message = record.split("\x00", 4)
            yield CommitInfo(
                sha, tuple(ps.split()) if parents else None, date, _clean(author), _clean(subject_of(message))
            )

    def touched(self, tips: list[str], stop: list[str], roots: list[str]) -> dict[str, list[tuple]]:
        """sha -> [(path, added, removed)] for the commits reachable from `tips` and not from `stop` that
        touched a path under `roots`, against their first parent (a merge too: what it brought to the first
        parent's line); added/removed None for a binary file. Renames are a deletion and an addition."""
        if not tips or not roots:
            return {}
        revs = [*tips, *(f"^{s}" for s in stop)]
        out = self._text(
            "log --numstat",
            "log",
            "--numstat",
            "--no-renames",
            "--full-history",
            "--diff-merges=first-parent",
            "--format=%x00%H",
            *revs,
            "--",
            *roots,
        )
        found: dict[str, list[tuple]] = {}
        rows: list[tuple] | None = None
        for line in out.splitlines():
            if line.startswith("\x00"):
                rows = found.setdefault(line[1:], [])
            elif line and rows is not None:
                added, removed, path = line.split("\t", 2)
                rows.append(
                    (
                        _clean(_unquote(path)),
                        None if added == "-" else int(added),
                        None if removed == "-" else int(removed),
                    )
                )
        return {sha: r for sha, r in found.items() if r}

    def own_paths(self, sha: str, paths: list[str]) -> set[str]:
        """Of the paths a merge commit changed against its first parent, those that also differ from every
        other parent: the merge's own change (a conflict resolved), not one brought from a side."""
        parents = self._text("rev-list", "rev-list", "--parents", "-n", "1", sha).split()[1:]
        mine = self._blobs(sha, paths)
        others = [self._blobs(p, paths) for p in parents[1:]]
        return {path for path in paths if all(o.get(path) != mine.get(path) for o in others)}

    def _blobs(self, commit: str, paths: list[str]) -> dict[str, str]:
        """path -> blob id in a commit's tree, for those of `paths` it holds."""
        out = self._git("ls-tree", "ls-tree", "-r", "-z", "--full-tree", commit, "--", *paths).stdout
        found = {}
        for entry in out.split(b"\0"):
            if entry:
                meta, _, path = entry.partition(b"\t")
                found[path.decode("utf-8", "surrogateescape")] = meta.split()[2].decode()
        return found


def _clean(text: str) -> str:
    """Text decoded with surrogateescape (a message or name that is not UTF-8): its invalid bytes as
    U+FFFD, so that it can be stored."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _unquote(path: str) -> str:
    """A path as git --numstat prints it: C-quoted when it holds unusual bytes."""
    if not (path.startswith('"') and path.endswith('"')):
        return path
    raw = path[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape").encode("latin-1")
    return raw.decode("utf-8", "surrogateescape")
