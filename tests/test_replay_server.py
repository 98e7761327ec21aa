"""The warm replay server (indexer/replay/server.py, child/main.py): reused across runs, replaced when stale
or dead, shared by concurrent runs, ended when idle or stopped, and never keeping a run's workers alive
after its tpindex is gone. On the fixture trees of tests/fixtures/replay_trees.py."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from fixtures.helpers import tpindex
from fixtures.replay_trees import CALL

from indexer.replay import server


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache of its own per test (its own server), the test interpreter as the replay interpreter; every
    server of the test stopped at its end."""
    root = tmp_path / "cache"
    monkeypatch.setenv("TPINDEX_REPLAY_CACHE", str(root))
    monkeypatch.setenv("TPINDEX_REPLAY_PYTHON", sys.executable)
    monkeypatch.delenv("TPINDEX_REPLAY_IDLE", raising=False)
    yield root
    server.stop(root)


def run(db, name="fixture_json", **kw):
    from indexer.api import Index

    kw.setdefault("text", CALL)
    kw.setdefault("modes", ["nonstream"])
    kw.setdefault("at", "v0.6.3")
    return Index(db).replay(name, **kw)


def server_pids(root: Path) -> list[int]:
    out = []
    for meta in sorted((root / "servers").glob("*.json")):
        pid = json.loads(meta.read_text())["pid"]
        if server.running(pid):
            out.append(pid)
    return out


def calls(r):
    (v,) = r.versions
    assert v.status == "ok", v.error
    (m,) = v.modes
    return [(c.name, c.arguments) for c in m.calls]


def test_a_warm_server_is_reused_across_runs(replay_db, cache):
    first = run(replay_db)
    assert first.timing.get("server") == "started", (first.timing, first.versions[0].error)
    (pid,) = server_pids(cache)
    second = run(replay_db)
    assert second.timing["server"] == "warm" and second.timing["preload_cpu_seconds"] == 0
    assert server_pids(cache) == [pid]
    assert calls(first) == calls(second) == [("get_weather", {"city": "Paris"})]
    sock = Path(json.loads(next((cache / "servers").glob("*.json")).read_text())["socket"])
    assert oct(sock.stat().st_mode & 0o777) == "0o600"


def test_a_server_whose_code_changed_is_replaced(replay_db, cache, tmp_path, monkeypatch):
    """The server watches its own files: one touched (a new tpindex, an edit) makes it answer `stale` and
    leave; the run starts a fresh server and still gets its result."""
    child = tmp_path / "child"
    shutil.copytree(server.CHILD_DIR, child, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(server, "CHILD_DIR", child)
    monkeypatch.setattr(server, "MAIN", child / "main.py")
    run(replay_db)
    (old,) = server_pids(cache)
    later = time.time() + 5
    os.utime(child / "drive.py", (later, later))
    r = run(replay_db)
    assert r.timing["server"] == "started"
    (new,) = server_pids(cache)
    assert new != old and not server.running(old)
    assert calls(r) == [("get_weather", {"city": "Paris"})]


def test_a_dead_server_is_replaced(replay_db, cache):
    run(replay_db)
    (old,) = server_pids(cache)
    os.kill(old, signal.SIGKILL)
    server.wait_gone(old)
    r = run(replay_db)  # its socket file is left behind: refused, removed, a new server started
    assert r.timing["server"] == "started"
    assert server_pids(cache) != [old] and len(server_pids(cache)) == 1
    assert calls(r) == [("get_weather", {"city": "Paris"})]


def test_concurrent_runs_start_one_server_and_share_it(replay_db, cache):
    results, errors = [], []

    def one():
        try:
            results.append(run(replay_db))
        except Exception:  # noqa: BLE001 - reported below
            import traceback

            errors.append(traceback.format_exc())

    threads = [threading.Thread(target=one) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert errors == []
    assert sorted(r.timing["server"] for r in results) == ["started", "warm", "warm"]
    assert len(server_pids(cache)) == 1
    assert all(calls(r) == [("get_weather", {"city": "Paris"})] for r in results)


def test_an_idle_server_ends_itself(replay_db, cache, monkeypatch):
    monkeypatch.setenv("TPINDEX_REPLAY_IDLE", "1")
    run(replay_db)
    (pid,) = server_pids(cache)
    sock = Path(json.loads(next((cache / "servers").glob("*.json")).read_text())["socket"])
    server.wait_gone(pid, 15)
    assert not server.running(pid)
    assert not sock.exists() and list((cache / "servers").glob("*.json")) == []


def test_no_warm_server_when_idle_is_zero(replay_db, cache, monkeypatch):
    monkeypatch.setenv("TPINDEX_REPLAY_IDLE", "0")
    r = run(replay_db)
    assert r.timing["server"] == "started" and calls(r) == [("get_weather", {"city": "Paris"})]
    assert not (cache / "servers").exists() or server_pids(cache) == []


def test_stop_server(replay_db, cache):
    run(replay_db)
    (pid,) = server_pids(cache)
    res = tpindex("replay", "--stop-server")
    assert f"stopped 1 replay server (pid {pid})" in res.output
    assert not server.running(pid)
    assert "stopped 0 replay servers" in tpindex("replay", "--stop-server").output


def test_a_bad_idle_setting_is_a_usage_error(replay_db, cache, monkeypatch, tmp_path):
    monkeypatch.setenv("TPINDEX_REPLAY_IDLE", "soon")
    out = tmp_path / "out.txt"
    out.write_text(CALL)
    res = tpindex("replay", "fixture_json", "--at", "v0.6.3", "--text", out, "--db", replay_db, ok=False)
    assert res.exit_code == 2 and "TPINDEX_REPLAY_IDLE" in res.output and "Hint:" in res.output


def descendants(root: int) -> list[int]:
    parent = {}
    for p in Path("/proc").iterdir():
        try:
            if p.name.isdigit():
                stat = (p / "stat").read_text().rsplit(")", 1)[1].split()
                if stat[0] != "Z":
                    parent[int(p.name)] = int(stat[1])
        except (OSError, ValueError, IndexError):
            pass
    out, frontier = [], {root}
    while frontier:
        frontier = {pid for pid, ppid in parent.items() if ppid in frontier}
        out += sorted(frontier)
    return out


def test_terminating_tpindex_ends_its_session_and_workers_not_the_server(replay_db, cache, tmp_path):
    """SIGTERM to a replaying tpindex (stuck on a parser that never returns): the session and the worker
    it forked from the warm server are gone; the server stays for the next run."""
    run(replay_db)
    (pid,) = server_pids(cache)
    out = tmp_path / "out.txt"
    out.write_text(CALL)
    exe = str(Path(sys.executable).parent / "tpindex")
    proc = subprocess.Popen(
        [
            exe,
            "replay",
            "spins",
            "--at",
            "v0.6.3",
            "--text",
            str(out),
            "--db",
            str(replay_db),
            "--mode",
            "nonstream",
            "-q",
        ],
        env=dict(os.environ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    from fixtures.loopback import HANG, wait_until

    wait_until(lambda: len(descendants(pid)) >= 2, "the session and its worker at work")
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=HANG)
    wait_until(lambda: not descendants(pid), "the session and its worker ended")
    assert server.running(pid)


def test_a_cache_path_too_long_for_a_socket_puts_it_in_a_private_temporary_directory(tmp_path):
    root = tmp_path / ("c" * 120)
    path = Path(server.socket_path(root, "0123456789abcdef"))
    assert len(str(path).encode()) < 108 and path.parent != root / "servers"
    assert path.parent.stat().st_uid == os.getuid() and path.parent.stat().st_mode & 0o077 == 0
    assert server.socket_path(root, "0123456789abcdef") == str(path)  # the same cache finds the same socket
