"""Concurrency: the database is in WAL mode; readers (`tpindex which`, `versions`, `check`, Datasette)
during a build see only complete versions and are never locked out; a second build on the same
database is refused with a clear message and never corrupts it."""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest
from fixtures.crash import (
    SPEC,
    assert_same,
    assert_user_error,
    check_ok,
    dump,
    paused_tpindex,
    tpindex_exe,
    vllm_history,
)
from fixtures.helpers import make_repo, rows, tpindex
from fixtures.loopback import wait_until

N = len(vllm_history())


def build_cmd(repo: Path, db: Path, jobs: int = 2, spec: str = SPEC) -> list[str]:
    return [
        *tpindex_exe(),
        "build",
        "--repo",
        str(repo),
        "--tags",
        spec,
        "--pre",
        "-j",
        str(jobs),
        "--db",
        str(db),
        "-q",
    ]


@pytest.fixture(scope="module")
def reference(fixture_repo, tmp_path_factory):  # noqa: F811
    """A clean build: its rows, and per version what a reader must see of it (file and parser counts)."""
    db = tmp_path_factory.mktemp("reference") / "ref.db"
    subprocess.run(build_cmd(fixture_repo, db), check=True, capture_output=True, timeout=120)
    return dump(db), per_version(db)


def per_version(db: Path, conn: sqlite3.Connection | None = None) -> dict[str, tuple]:
    sql = """select v.label, v.status, v.file_count,
                    (select count(*) from version_files f where f.version = v.label),
                    (select count(*) from parser_map_v p where p.version = v.label),
                    (select count(*) from markers_v m where m.version = v.label)
             from versions v order by v.ord"""
    if conn is not None:
        return {r[0]: tuple(r[1:]) for r in conn.execute(sql)}
    return {r[0]: tuple(r[1:]) for r in rows(db, sql)}


def test_database_is_in_wal_mode(fixture_repo, reference, tmp_path):  # noqa: F811
    db = tmp_path / "w.db"
    tpindex("build", "--repo", fixture_repo, "--tags", "v0.6.3", "--db", db, "-q")
    assert rows(db, "pragma journal_mode") == [("wal",)]


# -- readers inside a version's open write transaction (deterministic) -------------------------------------------


def test_readers_inside_an_open_write_see_only_complete_versions(
    fixture_repo,
    reference,
    tmp_path,  # noqa: F811
    monkeypatch,
):
    """Each version's transaction is held open (its rows written, its status still 'building') while
    `which`, `versions`, `check`, `diff`, a plain read-only connection and Datasette read: they answer
    at once from the versions committed before it, complete and in order."""
    import indexer.resolve.chains
    from indexer.serve.app import DB_NAME, make_datasette

    _, want = reference
    labels = list(want)
    db = tmp_path / "r.db"
    real = indexer.resolve.chains.resolve_version
    seen: list[list[str]] = []

    def resolve_then_read(*args, **kwargs):
        out = real(*args, **kwargs)
        done = labels[: len(seen)]
        # a plain read-only connection
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.1)  # fail fast if ever locked
        try:
            got = per_version(db, conn)
        finally:
            conn.close()
        assert got == {v: want[v] for v in done}
        if done:
            # the query commands, in-process (each opens its own read-only connection)
            listing = tpindex("versions", "--db", db).output
            assert [line.split()[0] for line in listing.splitlines()[1:]] == done
            which = json.loads(tpindex("which", "p1", "--all", "--format", "json", "--db", db).output)
            assert which["kinds"][0]["ranges"][-1]["last"] == done[-1]
            assert done[-1] in tpindex("which", "p1", "--db", db).output
            assert tpindex("check", "--db", db).output.startswith(("ok: ", "note: "))
            if len(done) > 1:
                r = tpindex("diff", done[0], done[-1], "--db", db, ok=False)
                assert r.exit_code in (0, 1), r.output
            # Datasette, as tpindex serve configures it
            ds = make_datasette(db)
            resp = asyncio.run(ds.client.get(f"/{DB_NAME}/versions.json?_shape=array&_sort=ord"))
            assert resp.status_code == 200, resp.text
            assert [(r["label"], r["status"]) for r in resp.json()] == [(v, "complete") for v in done]
        seen.append(done)
        return out

    monkeypatch.setattr(indexer.resolve.chains, "resolve_version", resolve_then_read)
    tpindex("build", "--repo", fixture_repo, "--tags", SPEC, "--pre", "-j", "2", "--db", db, "-q")
    assert len(seen) == N
    assert per_version(db) == want


def test_a_reader_process_inside_an_open_write(fixture_repo, reference, tmp_path, monkeypatch):  # noqa: F811
    """The same for `tpindex which` as a separate process (its own SQLite library state)."""
    import indexer.resolve.chains

    db = tmp_path / "p.db"
    real = indexer.resolve.chains.resolve_version
    outputs = []

    def resolve_then_read(*args, **kwargs):
        out = real(*args, **kwargs)
        if len(outputs) in (1, N - 1):
            r = subprocess.run(
                [*tpindex_exe(), "which", "p1", "--all", "--db", str(db)],
                capture_output=True,
                text=True,
                timeout=60,
            )
            outputs.append((r.returncode, r.stdout, r.stderr))
        else:
            outputs.append(None)
        return out

    monkeypatch.setattr(indexer.resolve.chains, "resolve_version", resolve_then_read)
    tpindex("build", "--repo", fixture_repo, "--tags", SPEC, "--pre", "--db", db, "-q")
    labels = list(reference[1])
    for i in (1, N - 1):
        code, out, err = outputs[i]
        assert code == 0 and "locked" not in err, err
        assert labels[i - 1] in out and labels[i] not in out, out


# -- real concurrency: readers polling a build running in another process ----------------------------------------


@pytest.mark.slow
def test_readers_polling_a_running_build(fixture_repo, reference, tmp_path):  # noqa: F811
    """Readers poll as fast as they can while a build runs: every version they see is complete with all
    its rows (the counts of the clean build), versions appear in order, and no read is ever refused."""
    from indexer.serve.app import DB_NAME, make_datasette

    want_rows, want = reference
    db = tmp_path / "live.db"
    subprocess.run(build_cmd(fixture_repo, db, spec="v0.6.3"), check=True, capture_output=True, timeout=120)
    ds = make_datasette(db)
    # the build pauses after its first version until the readers have read once (a build faster than the
    # first read made this test read nothing): then it resumes, and they read on while it runs
    paused, env = paused_tpindex(1, tmp_path / "paused")
    proc = subprocess.Popen(
        [*paused, *build_cmd(fixture_repo, db)[len(tpindex_exe()) :]],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    reads = datasette_reads = 0
    seen_counts = []
    try:
        wait_until(lambda: (tmp_path / "paused").exists() or proc.poll() is not None, "the build paused")
        while proc.poll() is None:
            conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
            try:
                got = per_version(db, conn)
            finally:
                conn.close()
            assert got == {v: want[v] for v in list(want)[: len(got)]}, got
            seen_counts.append(len(got))
            reads += 1
            resp = asyncio.run(ds.client.get(f"/{DB_NAME}/parser_map_v.json?_shape=array&_size=max"))
            assert resp.status_code == 200, resp.text
            assert {r["version"] for r in resp.json()} <= set(want)
            datasette_reads += 1
            if reads == 1:
                proc.send_signal(signal.SIGUSR1)  # read once while it was paused: let it go on
    finally:
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert seen_counts == sorted(seen_counts)
    assert reads > 0 and datasette_reads > 0
    assert_same(dump(db), want_rows, "built while read")


# -- two builds -------------------------------------------------------------------------------------------------


def test_second_build_is_refused_while_one_holds_the_lock(fixture_repo, reference, tmp_path):  # noqa: F811
    from indexer.build.pipeline import BuildLock

    db = tmp_path / "l.db"
    tpindex("build", "--repo", fixture_repo, "--tags", "v0.6.3", "--db", db, "-q")
    before = dump(db)
    with BuildLock(db):
        result = tpindex("build", "--repo", fixture_repo, "--tags", SPEC, "--pre", "--db", db, ok=False)
        assert_user_error(result, "another tpindex build is writing", "wait for it")
        # readers are not blocked by a build
        assert tpindex("which", "p1", "--db", db).exit_code == 0
        check_ok(db)
    assert_same(dump(db), before, "after a refused build")
    tpindex("build", "--repo", fixture_repo, "--tags", SPEC, "--pre", "--db", db, "-q")
    assert_same(dump(db), reference[0], "after the lock was released")


def test_a_build_through_a_link_to_a_database_being_built_is_refused(fixture_repo, reference, tmp_path):  # noqa: F811
    """The lock is the real file's: a second build reaching the database through a symbolic link is
    refused with the same message, not failed later on a busy database."""
    from indexer.build.pipeline import BuildLock

    db = tmp_path / "real.db"
    tpindex("build", "--repo", fixture_repo, "--tags", "v0.6.3", "--db", db, "-q")
    (tmp_path / "elsewhere").mkdir()
    link = tmp_path / "elsewhere" / "link.db"
    link.symlink_to(db)
    before = dump(db)
    with BuildLock(db):
        result = tpindex("build", "--repo", fixture_repo, "--tags", SPEC, "--pre", "--db", link, ok=False)
        assert_user_error(result, "another tpindex build is writing", "wait for it")
    with BuildLock(link):
        result = tpindex("build", "--repo", fixture_repo, "--tags", SPEC, "--pre", "--db", db, ok=False)
        assert_user_error(result, "another tpindex build is writing", "wait for it")
    assert_same(dump(db), before, "after refused builds")
    assert not (tmp_path / "elsewhere" / "link.db.lock").exists()


@pytest.mark.slow
@pytest.mark.parametrize("trial", range(3))
def test_two_builds_started_together(fixture_repo, reference, tmp_path, trial):  # noqa: F811
    """Two `tpindex build` processes on one database at once: each finishes or is refused with the
    message; at least one finishes; the database holds exactly the rows of a clean build."""
    db = tmp_path / "two.db"
    if trial == 2:  # one of them resumes a database that already holds a version
        subprocess.run(
            build_cmd(fixture_repo, db, spec="v0.6.3"), check=True, capture_output=True, timeout=120
        )
    specs = [SPEC, SPEC] if trial == 0 else [SPEC, "v0.7.1.."]
    procs = [
        subprocess.Popen(
            build_cmd(fixture_repo, db, jobs=1 + i, spec=s),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i, s in enumerate(specs)
    ]
    results = [(p.wait(timeout=120), *p.communicate()) for p in procs]
    for code, _, err in results:
        assert "Traceback" not in err, err
        assert code == 0 or (code == 2 and "another tpindex build is writing" in err and "Hint:" in err), err
    assert 0 in [r[0] for r in results]
    refused = [i for i, r in enumerate(results) if r[0] == 2]
    if refused and specs[1 - refused[0]] != SPEC:  # the build that ran did not cover every version
        subprocess.run(build_cmd(fixture_repo, db), check=True, capture_output=True, timeout=120)
    assert_same(dump(db), reference[0], f"two builds, trial {trial}")
    check_ok(db)


def test_build_on_a_database_another_process_is_reading(fixture_repo, tmp_path):  # noqa: F811
    """A long read transaction (a reader holding a snapshot) neither blocks the build nor sees it."""
    repo = make_repo(tmp_path / "repo", dict(list(vllm_history().items())[:2]))
    db = tmp_path / "h.db"
    tpindex("build", "--repo", repo, "--tags", "v0.6.3", "--db", db, "-q")
    reader = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    reader.execute("begin")
    assert reader.execute("select label from versions").fetchall() == [("v0.6.3",)]
    try:
        tpindex("build", "--repo", repo, "--tags", "v0.6.3..", "--db", db, "-q")
        assert reader.execute("select label from versions").fetchall() == [("v0.6.3",)]  # its snapshot
    finally:
        reader.rollback()
        reader.close()
    assert rows(db, "select label from versions order by ord") == [("v0.6.3",), ("v0.7.1",)]
    check_ok(db)
