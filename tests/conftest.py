"""Shared fixtures: tiny git repositories imitating vLLM's layouts, the CLI, and database queries.

Fixture files are written by the tests themselves (never copied from vLLM).
"""

from __future__ import annotations

import contextlib
import gc
import os
import sqlite3
import subprocess
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1", "HOME": os.devnull,
    "GIT_OPTIONAL_LOCKS": "0",  # `git status` in a test must not refresh the index it checks
    # one date for every fixture commit (commit(date=...) sets another): a fixture repository is the same
    # commits every run, so answers naming commits (diff's, log's) can be compared with golden files
    "GIT_AUTHOR_DATE": "2025-01-01T00:00:00+00:00", "GIT_COMMITTER_DATE": "2025-01-01T00:00:00+00:00",
}


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    env = {**os.environ, **GIT_ENV, **(env or {})}
    out = subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env)
    return out.stdout.strip()


def commit(repo: Path, files: dict[str, str | bytes | None], tag: str | None = None,
           annotated: bool = False, force: bool = False, message: str | None = None,
           date: str | None = None) -> str:
    """Apply changes on top of the current tree (text, bytes, or None to delete), commit, tag; -> sha.
    `message` is the commit message (default "state for TAG"), `date` its author and committer date."""
    for path, content in files.items():
        p = repo / path
        if content is None:
            git(repo, "rm", "-q", "--ignore-unmatch", "--", path)
            continue
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(textwrap.dedent(content).lstrip("\n"))
        git(repo, "add", "--", path)
    dates = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date} if date else None
    git(repo, "commit", "-q", "--allow-empty", "-m", message or f"state for {tag or 'commit'}", env=dates)
    sha = git(repo, "rev-parse", "HEAD")
    if tag:
        flags = ["-f"] if force else []
        if annotated:
            git(repo, "tag", *flags, "-a", "-m", f"release {tag}", tag)
        else:
            git(repo, "tag", *flags, tag)
    return sha


def make_repo(path: Path, history: dict[str, dict[str, str | bytes | None]],
              annotated: tuple[str, ...] = ()) -> Path:
    """A repository with one commit per key of `history`, in order, each tagged with its key.

    Each value is a change set on top of the previous tree. A key starting with "_" is committed
    untagged."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    for tag, files in history.items():
        commit(path, files, None if tag.startswith("_") else tag, annotated=tag in annotated)
    return path


def line_of(text: str, needle: str, nth: int = 1) -> int:
    """1-based line of the nth line containing needle, in a fixture text as `commit` writes it."""
    lines = textwrap.dedent(text).lstrip("\n").splitlines()
    hits = [i + 1 for i, s in enumerate(lines) if needle in s]
    assert len(hits) >= nth, f"{needle!r} not in fixture"
    return hits[nth - 1]


def rows(db_path: Path, sql: str, params=()) -> list[tuple]:
    conn = sqlite3.connect(db_path)
    try:
        return [tuple(r) for r in conn.execute(sql, params)]
    finally:
        conn.close()


def build_tags(repo: Path, db_path: Path, spec: str, pre: bool = False, scope=None, jobs: int = 1):
    """Select versions by spec in a git repository and build them; -> BuildStats."""
    from indexer.build.pipeline import build
    from indexer.core.scope import Scope
    from indexer.core.specs import select
    from indexer.sources.git import GitSource

    source = GitSource(repo)
    chosen = select(spec, source.names(), pre=pre, is_ref=source.is_ref)
    refs = [source.ref(n) for n in chosen.names + chosen.refs]
    return build(db_path, source, refs, scope or Scope.named("default"), jobs=jobs)


def tpindex(*args: str, ok: bool = True):
    """Run the CLI in-process; asserts exit code 0 unless ok=False."""
    from indexer.cli.main import main

    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output
    return result


@contextlib.contextmanager
def tmpfs(path: Path, options: str, needs_root: str = "needs root to mount a tmpfs"):
    """A tmpfs mounted with `options` (e.g. "size=1m") on the new directory `path` for the block; skips
    with `needs_root` when not root, or when it cannot mount. Unmounted after, once the garbage collector
    has closed the connections the in-process CLI left."""
    if os.geteuid() != 0:
        pytest.skip(needs_root)
    path.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True).returncode:
        pytest.skip(f"cannot mount a tmpfs ({options})")
    try:
        yield path
    finally:
        gc.collect()
        subprocess.run(["umount", "-l", str(path)], check=True)


def remount(path: Path, options: str) -> None:
    """Change a mounted tmpfs's options (e.g. "ro", "size=32m")."""
    subprocess.run(["mount", "-o", f"remount,{options}", str(path)], check=True)


@pytest.fixture
def db(tmp_path) -> Path:
    return tmp_path / "index.db"


@pytest.fixture(scope="session")
def pypi():
    """The package index as the real-release tests read it (archives cached in the user cache): a session
    fixture shared by every test_real_* module; skips loudly when the index cannot be reached."""
    from indexer.sources.pypi import PackageIndexError, PypiSource

    source = PypiSource(progress=None)
    try:
        source.names()
    except PackageIndexError as e:
        pytest.skip(f"SKIPPED LOUDLY: the package index cannot be reached, real-release tests not run: {e}")
    return source
