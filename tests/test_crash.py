"""Crash safety: builds killed with SIGKILL at seeded moments, failed downloads and a full disk leave a
database that the next normal build completes into exactly the rows of a clean build.

Kill points:
- statement kills: a driver process counts every SQL statement SQLite runs for the build (BEGIN and
  COMMIT, and those inside executescript, included) and SIGKILLs itself just before the Nth one, N
  seeded (deterministic: the same seed kills at the same statement on every machine);
- external kills: `tpindex build` is started and killed from outside (SIGKILL to the main process only,
  as the kernel's OOM killer would) after it has written a seeded number of versions plus a seeded
  fraction of a moment, which lands inside SQLite's own writes (WAL appends, checkpoints) as well;
- schema kills: creating and migrating the schema is killed at every one of its statements (fork).

Rows are compared by content (`dump`): ids and rowids assigned in another order are replaced by what
they point to, and columns that legitimately differ between runs are left out (see DROP).
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fixtures.crash import (
    ABSTRACT,
    NEW,
    SPEC,
    assert_same,
    assert_user_error,
    check_ok,
    dump,
    lazy_init,
    parsers,
    tpindex_exe,
    vllm_history,
)
from fixtures.helpers import as_schema_11, make_repo, remount, tmpfs

pytestmark = pytest.mark.crash  # crash trials: make test and CI run them, make test-fast does not

ROOT = Path(__file__).resolve().parent.parent

# -- a multi-era fixture (hand-written imitations of vLLM's layouts) ------------------------------------


# -- comparing databases by content ------------------------------------------------------------------------


# -- the kill harness ------------------------------------------------------------------------------------------

# Runs one build and SIGKILLs itself just before SQLite runs statement number KILL_AT (0: never), counting
# every statement SQLite runs on the build's connections (those inside executescript, and the BEGINs and
# COMMITs, too); prints how many there were when it was not killed.
DRIVER = r"""
import os, signal, sqlite3, sys
kill_at, repo, db, spec, jobs = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
count = 0

def trace(_sql):
    global count
    count += 1
    if count == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)

def connect(*args, **kwargs):
    conn = sqlite3.connect(*args, **kwargs)
    conn.set_trace_callback(trace)
    return conn

import indexer.store.database
indexer.store.database.sqlite3 = type(sys)("sqlite3_traced")
indexer.store.database.sqlite3.__dict__.update(sqlite3.__dict__)
indexer.store.database.sqlite3.connect = connect

from indexer.build.pipeline import build
from indexer.core.scope import Scope
from indexer.sources.git import GitSource
from indexer.core.specs import select

source = GitSource(repo)
chosen = select(spec, source.names(), pre=True, is_ref=source.is_ref)
build(db, source, [source.ref(n) for n in chosen.names], Scope.named("default"), jobs=jobs)
print(count)
"""


def reap(proc: subprocess.Popen, what: str) -> tuple[str, str]:
    """Wait for a build's output to end; this happens only when every process of its session (its pool
    workers too) has exited. A session still alive after a generous bound fails the test, after
    SIGKILLing that session (only processes this test started)."""
    try:
        return proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"{what}: processes of the build outlived it (parser workers of a killed build?)")


def run_driver(repo: Path, db: Path, kill_at: int, jobs: int, spec: str = "v0.6.3..") -> tuple[int, str, str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(kill_at), str(repo), str(db), spec, str(jobs)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    out, err = reap(proc, f"statement kill at {kill_at}")
    return proc.returncode, out, err


# -- the trials ------------------------------------------------------------------------------------------------

SEED = 8


@pytest.fixture(scope="module")
def clean(fixture_repo, tmp_path_factory):
    """A clean build (-j 1) of every version: its rows, how many statements a fresh build sends, its path."""
    db = tmp_path_factory.mktemp("clean") / "clean.db"
    code, out, err = run_driver(fixture_repo, db, 0, 1)
    assert code == 0, err
    return dump(db), int(out), db


def test_parallel_build_writes_the_same_rows(fixture_repo, clean, tmp_path):
    want, statements, _ = clean
    code, out, err = run_driver(fixture_repo, tmp_path / "j2.db", 0, 2)
    assert code == 0, err
    assert int(out) == statements
    assert_same(dump(tmp_path / "j2.db"), want, "-j 2")


@pytest.mark.slow
@pytest.mark.parametrize("trial", range(16))
def test_killed_at_a_statement_then_rebuilt(fixture_repo, clean, tmp_path, trial):
    """Up to two SIGKILLs at seeded statements (fresh or resumed build, -j 1 or -j 2), then a normal
    build: same rows as a clean build, and `tpindex check` passes after each kill."""
    want, statements, _ = clean
    rng = random.Random(SEED * 1000 + trial)
    db = tmp_path / "t.db"
    for kill in range(1 + (trial % 4 == 3)):
        kill_at = (
            {0: 1, 1: statements}.get(trial, rng.randint(1, statements))
            if kill == 0
            else rng.randint(1, statements // 2)
        )
        code, _, err = run_driver(fixture_repo, db, kill_at, jobs=1 + trial % 2)
        assert code in (-signal.SIGKILL, 0), err
        if db.exists() and code == -signal.SIGKILL:
            check_ok(db, killed=True)
    code, _, err = run_driver(fixture_repo, db, 0, jobs=2 - trial % 2)
    assert code == 0, err
    assert_same(dump(db), want, f"trial {trial}")
    check_ok(db)


def complete_versions(db: Path) -> int:
    """How many versions a reader sees complete now (0 while the database or its schema is not there)."""
    if not db.exists():
        return 0
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return conn.execute("select count(*) from versions where status = 'complete'").fetchone()[0]
    except sqlite3.OperationalError as e:
        if "no such table" in str(e):
            return 0
        raise
    finally:
        conn.close()


@pytest.mark.slow
@pytest.mark.parametrize("trial", range(6))
def test_tpindex_build_killed_from_outside(fixture_repo, clean, tmp_path, trial):
    """`tpindex build` SIGKILLed (main process only) once it has written a seeded number of versions and
    a seeded moment more; then a normal build gives the rows of a clean build."""
    want, _, clean_db = clean
    rng = random.Random(SEED * 1000 + 100 + trial)
    after, delay, jobs = rng.randint(0, 4), rng.uniform(0, 0.1), 1 + trial % 2
    db = tmp_path / "t.db"
    cmd = [
        *tpindex_exe(),
        "build",
        "--repo",
        str(fixture_repo),
        "--tags",
        SPEC,
        "--pre",
        "-j",
        str(jobs),
        "--db",
        str(db),
        "-q",
    ]
    proc = subprocess.Popen(
        cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    while proc.poll() is None and complete_versions(db) < after:
        time.sleep(0.01)
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    _, err = reap(proc, f"external kill after {after} version(s) + {delay:.2f} s")
    assert proc.returncode in (-signal.SIGKILL, 0), err
    if proc.returncode == -signal.SIGKILL and db.exists():
        check_ok(db, killed=True)
    result = subprocess.run(
        cmd[:-1] + ["-j", str(3 - jobs)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert_same(dump(db), want, f"external trial {trial}")
    check_ok(db)


# -- a failed download, an archive unreadable during the build ---------------------------------------------------

INDEX = "http://index.invalid/simple"


def trees(history: dict[str, dict[str, str | None]]) -> dict[str, dict[str, bytes]]:
    """The full file tree at each tag of a history (what a release archive of that version holds)."""
    import textwrap

    out, files = {}, {}
    for tag, changes in history.items():
        for path, text in changes.items():
            if text is None:
                files.pop(path, None)
            else:
                files[path] = textwrap.dedent(text).lstrip("\n").encode()
        out[tag] = dict(files)
    return out


def sdist(version: str, files: dict[str, bytes]) -> bytes:
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path, data in {**files, "PKG-INFO": b"Name: vllm\n"}.items():
            info = tarfile.TarInfo(f"vllm-{version}/{path}")
            info.size, info.mtime = len(data), 1
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class Response:
    """What urllib's opener returns, enough for PypiSource; `reset_at` cuts the body like a dropped link."""

    def __init__(self, url: str, body: bytes, ctype: str, reset_at: int | None = None):
        import io

        self.url, self.body, self.reset_at = url, io.BytesIO(body), reset_at
        self.headers = {"Content-Type": ctype, "Content-Length": str(len(body))}

    def geturl(self):
        return self.url

    def read(self, n: int = -1) -> bytes:
        if self.reset_at is not None and self.body.tell() + (n if n > 0 else 1 << 30) > self.reset_at:
            raise ConnectionResetError(104, "Connection reset by peer")
        return self.body.read(n)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class FakeIndex:
    """A PEP 691 listing and the archives of every tag of `history`; `broken` names archives whose
    download is cut halfway."""

    def __init__(self, history):
        import hashlib

        self.archives = {
            f"vllm-{tag[1:]}.tar.gz": sdist(tag[1:], files) for tag, files in trees(history).items()
        }
        self.listing = json.dumps(
            {
                "meta": {"api-version": "1.0"},
                "name": "vllm",
                "files": [
                    {
                        "filename": name,
                        "url": f"../../files/{name}",
                        "hashes": {"sha256": hashlib.sha256(data).hexdigest()},
                    }
                    for name, data in self.archives.items()
                ],
            }
        ).encode()
        self.broken: set[str] = set()
        self.downloads: list[str] = []

    def open(self, request):
        url = request.full_url
        if url == f"{INDEX}/vllm/":
            return Response(url, self.listing, "application/vnd.pypi.simple.v1+json")
        name = url.rsplit("/", 1)[-1]
        self.downloads.append(name)
        data = self.archives[name]
        return Response(
            url, data, "application/octet-stream", len(data) // 2 if name in self.broken else None
        )


@pytest.fixture
def fake_index(monkeypatch):
    fake = FakeIndex(vllm_history())
    monkeypatch.setenv("PIP_INDEX_URL", INDEX)
    monkeypatch.setattr("indexer.sources.pypi._default_opener", lambda: fake.open)
    return fake


def pypi_build(tmp_path, db, tags, ok=True):
    from fixtures.helpers import tpindex

    return tpindex(
        "build",
        "--from-pypi",
        "--tags",
        tags,
        "--pre",
        "-j",
        "2",
        "--db",
        db,
        "-q",
        "--cache-dir",
        tmp_path / "cache",
        ok=ok,
    )


def test_failed_download_changes_nothing_and_a_rerun_completes(fake_index, tmp_path):
    clean_db = tmp_path / "clean.db"
    pypi_build(tmp_path / "c1", clean_db, "v0.6.3..")
    want = dump(clean_db)

    db = tmp_path / "t.db"
    pypi_build(tmp_path, db, "v0.6.3..v0.7.1")
    before = dump(db)
    fake_index.broken = {"vllm-0.13.0.tar.gz"}
    result = pypi_build(tmp_path, db, "v0.6.3..", ok=False)
    assert_user_error(result, "v0.13.0", "Connection reset")
    assert_same(dump(db), before, "after a failed download")
    assert not [p.name for p in (tmp_path / "cache").iterdir() if not p.name.endswith((".tar.gz", ".sha256"))]
    check_ok(db)

    fake_index.broken = set()
    pypi_build(tmp_path, db, "v0.6.3..")
    assert_same(dump(db), want, "rerun after a failed download")


def test_archive_unreadable_during_the_build_keeps_earlier_versions(fake_index, tmp_path, monkeypatch):
    """The archive of v0.13.0 is verified, then cannot be read when the build reaches it (a disk error):
    the versions before it are complete, nothing of it is written, and a rerun completes."""
    import errno

    import indexer.sources.pypi

    clean_db = tmp_path / "clean.db"
    pypi_build(tmp_path, clean_db, "v0.6.3..")
    want = dump(clean_db)

    real_read = indexer.sources.pypi.read_members

    def failing_read(path, *args, **kwargs):
        if str(path).endswith("vllm-0.13.0.tar.gz"):
            raise OSError(errno.EIO, "Input/output error")
        return real_read(path, *args, **kwargs)

    db = tmp_path / "t.db"
    monkeypatch.setattr(indexer.sources.pypi, "read_members", failing_read)
    result = pypi_build(tmp_path, db, "v0.6.3..", ok=False)
    monkeypatch.undo()
    assert_user_error(result, "v0.13.0")
    from fixtures.helpers import rows

    assert rows(db, "select label, status from versions order by ord") == [
        ("v0.6.3", "complete"),
        ("v0.7.1", "complete"),
        ("v0.11.1", "complete"),
    ]
    check_ok(db)
    monkeypatch.setenv("PIP_INDEX_URL", INDEX)
    monkeypatch.setattr("indexer.sources.pypi._default_opener", lambda: fake_index.open)
    pypi_build(tmp_path, db, "v0.6.3..")
    assert_same(dump(db), want, "rerun after an unreadable archive")


# -- a full disk -------------------------------------------------------------------------------------------------


def limit_pages(monkeypatch, pages: int) -> None:
    """Builds open their database with `pragma max_page_count`: past it SQLite fails every write with
    SQLITE_FULL ("database or disk is full"), exactly as on a full disk."""
    import indexer.store.database

    real = indexer.store.database.connect

    def connect(*args, **kwargs):
        db = real(*args, **kwargs)
        db.execute(f"pragma max_page_count = {pages}")
        return db

    monkeypatch.setattr(indexer.store.database, "connect", connect)


def git_build(repo, db, ok=True, jobs=2):
    from fixtures.helpers import tpindex

    return tpindex("build", "--repo", repo, "--tags", SPEC, "--pre", "-j", str(jobs), "--db", db, "-q", ok=ok)


def test_disk_full_during_a_build_keeps_complete_versions(fixture_repo, clean, tmp_path, monkeypatch):
    from fixtures.helpers import rows

    want, _, clean_db = clean
    full = rows(clean_db, "pragma page_count")[0][0]
    db = tmp_path / "t.db"
    limit_pages(monkeypatch, full * 6 // 10)
    result = git_build(fixture_repo, db, ok=False)
    monkeypatch.undo()
    assert_user_error(result, "full")
    n = rows(db, "select count(*) from versions where status = 'complete'")[0][0]
    assert 0 < n < len(vllm_history())
    check_ok(db)
    git_build(fixture_repo, db)
    assert_same(dump(db), want, "rebuilt after a full disk")
    check_ok(db)


# -- creating and migrating the schema ---------------------------------------------------------------------------


def traced_connect(kill_at: int, counter: list[int]):
    """store.connect with every SQL statement SQLite runs counted (executescript's too), and a SIGKILL
    just before statement number kill_at."""
    import indexer.store.database

    real = sqlite3.connect

    def connect(*args, **kwargs):
        conn = real(*args, **kwargs)

        def trace(_sql):
            counter[0] += 1
            if counter[0] == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)

        conn.set_trace_callback(trace)
        return conn

    shim = type(sys)("sqlite3_traced")
    shim.__dict__.update(sqlite3.__dict__)
    shim.connect = connect
    indexer.store.database.sqlite3 = shim
    return indexer.store.database.connect


def killed_in_child(fn) -> int:
    """Run fn in a forked child (which may SIGKILL itself); -> the child's wait status."""
    pid = os.fork()
    if pid == 0:
        try:
            fn()
        finally:
            os._exit(0)
    return os.waitpid(pid, 0)[1]


def setup_sweep(db: Path, prepare, migrate: dict | None = None) -> int:
    """Kill store.connect (with `migrate` as the schema version and migrations) at every statement it
    runs on the database `prepare` writes; after each, a normal connect works. -> number of kills."""
    import indexer.store.database
    import indexer.store.schema

    def child(path, kill_at, counter):
        if migrate:
            indexer.store.database.SCHEMA_VERSION = migrate["version"]
            indexer.store.schema.STEPS = migrate["steps"]
        traced_connect(kill_at, counter)(path, setup=indexer.store.schema.setup).conn.close()

    def count_statements():
        counter = [0]
        child(probe, 0, counter)
        probe.with_suffix(".n").write_text(str(counter[0]))

    probe = db.with_name("probe.db")
    prepare(probe)
    assert killed_in_child(count_statements) == 0
    total = int(probe.with_suffix(".n").read_text())
    assert total > 10
    for kill_at in range(1, total + 1):
        for f in db.parent.glob(db.name + "*"):
            f.unlink()
        prepare(db)
        status = killed_in_child(lambda k=kill_at: child(db, k, [0]))
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, (kill_at, status)
        if migrate:
            with pytest.MonkeyPatch.context() as m:
                m.setattr(indexer.store.database, "SCHEMA_VERSION", migrate["version"])
                m.setattr(indexer.store.schema, "STEPS", migrate["steps"])
                indexer.store.database.connect(db, setup=indexer.store.schema.setup).conn.close()
        else:
            indexer.store.database.connect(db, setup=indexer.store.schema.setup).conn.close()
    return total


@pytest.mark.slow
def test_killed_while_creating_the_schema(tmp_path):
    """At every statement of creating a database: afterwards it opens, and `check` passes."""
    from fixtures.helpers import tpindex

    n = setup_sweep(tmp_path / "new.db", lambda db: None)
    assert tpindex("check", "--db", tmp_path / "new.db").output.startswith("ok: 0 version(s)")
    assert n > 20


@pytest.mark.slow
def test_killed_while_migrating_the_schema(fixture_repo, clean, tmp_path):
    """At every statement of a (made-up) migration N -> N+1 (N the current schema): afterwards it migrates,
    exactly once."""
    from fixtures.helpers import rows

    from indexer.store.database import SCHEMA_VERSION
    from indexer.store.schema import STEPS

    def notes(db):  # a made-up step: a column, a table, an update
        db["versions"].add_column("note", str)
        db.execute("create table notes (version_id integer, note text)")
        db.execute("update versions set note = 'migrated'")

    _, _, clean_db = clean
    migrate = {"version": SCHEMA_VERSION + 1, "steps": {**STEPS, SCHEMA_VERSION: notes}}
    db = tmp_path / "old.db"
    setup_sweep(db, lambda p: p.write_bytes(clean_db.read_bytes()), migrate)
    assert rows(db, "select value from meta where key = 'schema_version'") == [(str(SCHEMA_VERSION + 1),)]
    assert set(rows(db, "select note from versions")) == {("migrated",)}
    assert rows(db, "select count(*) from versions")[0][0] == len(vllm_history())


@pytest.mark.slow
def test_killed_while_migrating_the_code_index_from_schema_11(fixture_repo, clean, tmp_path):
    """At every statement of the real migration 11 -> 12 (the index of blocks of line ids dropped, code_postings
    filled from the stored arrays in the same transaction): afterwards it migrates, and the code tables are
    those of a clean build, the index giving every line at its place."""
    want, _, clean_db = clean
    old = tmp_path / "v11-source.db"
    old.write_bytes(clean_db.read_bytes())
    as_schema_11(old)
    db = tmp_path / "v11.db"
    setup_sweep(db, lambda p: p.write_bytes(old.read_bytes()))
    assert_same(dump(db), want, "migrated from schema 11")


# -- a parser worker killed (the OOM killer picks a worker) -------------------------------------------------------

MAIN_PID = os.getpid()


def parse_or_die(data: bytes) -> dict:
    """indexer.extract.parse, except that a pool worker given parser 3 of v0.13.0 SIGKILLs itself."""
    from indexer.extract import parse

    if os.getpid() != MAIN_PID and data.startswith(b"# parser 3 as of v0.13.0"):
        os.kill(os.getpid(), signal.SIGKILL)
    return parse(data)


def test_parser_worker_killed(fixture_repo, clean, tmp_path, monkeypatch):
    from fixtures.helpers import rows

    want, _, _ = clean
    db = tmp_path / "t.db"
    monkeypatch.setattr("indexer.build.pipeline.parse", parse_or_die)
    result = git_build(fixture_repo, db, ok=False, jobs=2)
    monkeypatch.undo()
    assert_user_error(result, "worker")
    done = [r[0] for r in rows(db, "select label from versions where status = 'complete' order by ord")]
    assert done == list(vllm_history())[: len(done)] and len(done) < len(vllm_history())
    check_ok(db, killed=True)
    git_build(fixture_repo, db)
    assert_same(dump(db), want, "rebuilt after a worker was killed")


# Runs a -j 2 build in which one parser worker dies, seeded: "send": the worker sending the result for a
# chosen file writes only part of the message (cut anywhere, header included) and SIGKILLs itself, holding
# the result queue's lock; "kill": a worker is SIGKILLed from outside at a chosen moment.
WORKER_KILL_DRIVER = r"""
import multiprocessing, multiprocessing.connection as mc, os, random, signal, struct, sys, threading, time
repo, db, mode, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
rng = random.Random(seed)
MAIN = os.getpid()
if mode == "send":
    marker = f"/p{rng.randrange(26)}_tool_parser.py".encode()
    fraction = rng.random()
    real = mc.Connection._send_bytes

    def send_bytes(self, buf):
        if os.getpid() != MAIN and marker in bytes(buf):
            data = struct.pack("!i", len(buf)) + bytes(buf)
            os.write(self.fileno(), data[:max(1, int(len(data) * fraction))])
            os.kill(os.getpid(), signal.SIGKILL)
        return real(self, buf)

    mc.Connection._send_bytes = send_bytes
else:
    delay = rng.uniform(0, 1.0)

    def killer():
        time.sleep(delay)
        for _ in range(500):
            workers = multiprocessing.active_children()
            if workers:
                os.kill(rng.choice(workers).pid, signal.SIGKILL)
                return
            time.sleep(0.01)

    threading.Thread(target=killer, daemon=True).start()

from indexer.build.pipeline import build
from indexer.core.scope import Scope
from indexer.sources.git import GitSource
from indexer.core.specs import select

source = GitSource(repo)
chosen = select("v0.6.3..", source.names(), pre=True, is_ref=source.is_ref)
build(db, source, [source.ref(n) for n in chosen.names], Scope.named("default"), jobs=2)
"""


@pytest.mark.parametrize("trial", range(8))
def test_a_build_whose_worker_dies_always_ends(fixture_repo, clean, tmp_path, trial):
    """A parser worker dies at a seeded moment, mid-way through sending its result in half the trials
    (the pool's result reader then waits for the rest of the message forever): the build ends, with the
    worker message or complete, within a generous bound; then a normal build gives a clean build's rows."""
    want, _, _ = clean
    db = tmp_path / "t.db"
    mode = "send" if trial % 2 == 0 else "kill"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            WORKER_KILL_DRIVER,
            str(fixture_repo),
            str(db),
            mode,
            str(SEED * 1000 + 200 + trial),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        _, err = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"trial {trial} ({mode}): the build did not end after a parser worker died")
    if proc.returncode != 0:
        assert "a parser worker process died" in err, err
        assert "KeyboardInterrupt" not in err
    elif mode == "send":
        pytest.fail(f"trial {trial}: the worker was to die while sending, yet the build completed")
    if db.exists():
        check_ok(db, killed=True)
    if trial < 4:
        git_build(fixture_repo, db)
        assert_same(dump(db), want, f"rebuilt after worker trial {trial}")


# -- Ctrl-C ---------------------------------------------------------------------------------------------------------


def long_history(n_versions: int) -> dict[str, dict[str, str | None]]:
    """Many versions of the lazy-registry layout, each rewriting every parser file: a build long enough to
    be interrupted in the middle."""
    history = {
        "v1.0.0": {
            f"{NEW}/__init__.py": lazy_init("vllm.tool_parsers", "v1.0.0"),
            f"{NEW}/abstract_tool_parser.py": ABSTRACT,
            **parsers(NEW, "v1.0.0", False),
        }
    }
    for i in range(1, n_versions):
        history[f"v1.{i}.0"] = parsers(NEW, f"v1.{i}.0", False)
    return history


def test_ctrl_c_during_a_build(tmp_path):
    """Ctrl-C (SIGINT to the terminal's process group, workers included) once a version is complete: one
    line, exit 130, no traceback from any process; complete versions are kept, and the same build then
    gives a clean build's rows. The build pauses after its first version until the signal (PAUSED_BUILD):
    the signal always lands in the middle of the build, however fast or loaded the machine."""
    from fixtures.crash import paused_tpindex
    from fixtures.loopback import wait_until

    history = long_history(10)
    repo = make_repo(tmp_path / "repo", history)
    clean_db, db = tmp_path / "clean.db", tmp_path / "t.db"
    args = ["build", "--repo", str(repo), "--tags", "v1.0.0..", "-q", "--db"]
    cmd = [*tpindex_exe(), *args]
    subprocess.run([*cmd, str(clean_db), "-j", "1"], check=True, capture_output=True, timeout=300)
    paused, env = paused_tpindex(1, tmp_path / "paused")
    proc = subprocess.Popen(
        [*paused, *args, str(db), "-j", "2"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env=env,
    )
    wait_until(lambda: (tmp_path / "paused").exists() or proc.poll() is not None, "the build paused")
    assert proc.poll() is None and complete_versions(db) == 1
    os.killpg(proc.pid, signal.SIGINT)
    _, err = reap(proc, "a build interrupted with Ctrl-C")
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == [
        "interrupted: the versions indexed before are kept; run the same build again to index the rest"
    ], err
    done = [
        r[0]
        for r in sqlite3.connect(db).execute(
            "select label from versions where status = 'complete' order by ord"
        )
    ]
    assert 1 <= len(done) < len(history) and done == list(history)[: len(done)], done
    check_ok(db)
    subprocess.run([*cmd, str(db), "-j", "2"], check=True, capture_output=True, timeout=300)
    assert_same(dump(db), dump(clean_db), "completed after Ctrl-C")


@pytest.fixture
def small_fs(tmp_path):
    """A directory on a 1 MB tmpfs (root only), enlarged by calling the returned function."""
    with tmpfs(
        tmp_path / "small",
        "size=1m",
        "mounting a small tmpfs needs root; test_disk_full_during_a_build_keeps_complete_versions covers it",
    ) as d:
        yield d, lambda: remount(d, "size=32m")


def test_real_full_filesystem(fixture_repo, clean, small_fs):
    from fixtures.helpers import rows

    want, _, _ = clean
    d, grow = small_fs
    db = d / "t.db"
    result = git_build(fixture_repo, db, ok=False)
    assert_user_error(result)
    assert "full" in result.output or "No space" in result.output, result.output
    n = rows(db, "select count(*) from versions where status = 'complete'")[0][0]
    assert n < len(vllm_history())
    check_ok(db, killed=True)
    grow()
    git_build(fixture_repo, db)
    assert_same(dump(db), want, "rebuilt after the filesystem was enlarged")
    check_ok(db)
