"""The child process that runs vLLM code, with limits: tpindex never imports vLLM itself.

One child (the replay interpreter running child/main.py by its path) forks a worker per job; each worker
sets its own resource limits (address space, CPU seconds) in its own process group. Here: a wall-clock
timeout per worker (its group is killed) and for the whole run (the child's group is killed).
"""

from __future__ import annotations

import json
import os
import select
import signal
import tempfile
import threading
import time
from pathlib import Path

from . import server

PRELOAD = (
    "pydantic",
    "openai",
    "fastapi",
    "starlette",
    "partial_json_parser",
    "regex",
    "msgspec",
    "jinja2",
    "yaml",
    "json",
    "asyncio",
    "typing",
    "inspect",
    "dataclasses",
    "email_validator",
    "prometheus_client",
    "psutil",
    "aiohttp",
    "numpy",
    "openai.types.chat",
    "pydantic_core",
    "importlib.metadata",
)
MEMORY = 4 << 30  # bytes of address space per worker


def run(
    python: Path,
    jobs: list[dict],
    parallel: int = 2,
    timeout: float = 60.0,
    memory: int = MEMORY,
    progress=None,
    preload_file: Path | None = None,
    stats: dict | None = None,
    dataclass_file: Path | None = None,
    root: Path | None = None,
    cancel=None,
) -> dict[str, dict]:
    """job id -> the worker's result (drive.run's output), or {"status": "timeout"|"killed"|"crashed", ...}.
    `preload_file` keeps the installed modules earlier workers imported, for the server to import first;
    `dataclass_file` the texts of dataclass methods they generated, for it to compile first (child/speed.py);
    `root` the cache whose warm server runs the jobs (server.py; none: a server of this run alone)."""
    if not jobs:
        return {}
    stats = {} if stats is None else stats
    # the protocol's lines are words separated by spaces: a job is named by its place, not by its id (a
    # version label may hold a space)
    ids = {f"j{i}": j["id"] for i, j in enumerate(jobs)}
    jobs = [{**j, "id": key} for key, j in zip(ids, jobs, strict=True)]
    if progress is not None:
        told = progress
        progress = lambda jid, done, n: told(ids[jid], done, n)  # noqa: E731
    work = Path(tempfile.mkdtemp(prefix="tpindex-replay-"))
    for j in jobs:
        j["out"] = str(work / f"{j['id']}.json")
        j["limits"] = {"memory": memory, "cpu": int(timeout) + 1}
    restore = _terminate_as_exit()  # before the child exists: no moment where SIGTERM would leave it behind
    try:
        results = _serve(
            python, root, jobs, parallel, timeout, progress, preload_file, stats, work, dataclass_file, cancel
        )
    finally:
        restore()
        _cleanup(work)  # whatever ended the run
    return {ids[key]: r for key, r in results.items()}


START_WAIT = 120.0  # seconds for a session's first answer (the server imports what the header adds first)


def _open(
    python, root, work, jobs, parallel, preload, dataclass_file, one_run, stats, cancel=None
) -> server.Session:
    """A session that answered `ready` (a stale or vanishing warm server is replaced, twice at most)."""
    t0 = time.monotonic()
    line = None
    for _ in range(3):
        s = server.open_session(python, root, work, preload, dataclass_file, one_run)
        header = {
            "parallel": parallel,
            "preload": [] if s.proc else preload,
            "dataclass_file": str(dataclass_file) if dataclass_file and (one_run or not s.proc) else None,
        }
        try:
            s.sock.sendall(
                (
                    json.dumps(header)
                    + "\n"
                    + "".join(json.dumps(j) + "\n" for j in jobs)
                    + '{"end": true}\n'
                ).encode()
            )
            line = _line(s, START_WAIT, cancel)
        except OSError:
            line = None
        if line and line.startswith("ready "):
            s.session_pid = int(line.split()[3])
            stats["server"] = "started" if s.started else "warm"
            stats["preload_cpu_seconds"] = float(line.split()[1]) if s.started else 0.0
            stats["preload_seconds"] = round(time.monotonic() - t0, 3)
            return s
        s.sock.close()
        if s.proc is not None:
            server.kill_group(s.proc.pid)
            s.proc.wait()
            break
        server.wait_gone(s.pid)  # a stale server leaves; the next attempt starts a fresh one
    raise server.ServerFailed(f"no replay server would take the run ({line or 'no answer'})")


def _line(s: server.Session, seconds: float, cancel=None) -> str | None:
    deadline = time.monotonic() + seconds
    while b"\n" not in s.buf:
        left = deadline - time.monotonic()
        if left <= 0 or (cancel is not None and cancel.is_set()):
            return None
        ready, _, _ = select.select([s.sock], [], [], min(left, 0.5))
        if ready:
            chunk = s.sock.recv(65536)
            if not chunk:
                return None
            s.buf += chunk
    line, s.buf = s.buf.split(b"\n", 1)
    return line.decode()


def _serve(
    python, root, jobs, parallel, timeout, progress, preload_file, stats, work, dataclass_file, cancel
) -> dict[str, dict]:
    learnt = _read_preload(preload_file)
    # A warm server imports everything earlier runs' workers imported, once for many runs. A server of one
    # run does so only when several rounds of workers share it; with no more jobs than workers at once, each
    # worker imports (only) what it needs, side by side.
    preload = list(dict.fromkeys(list(PRELOAD) + learnt))
    one_run = preload if len(jobs) > parallel else []
    results: dict[str, dict] = {}
    started: dict[str, tuple[int, float]] = {}
    killed: set[str] = set()
    overall = time.monotonic() + timeout * (len(jobs) / max(1, parallel) + 2) + 30
    session = None
    try:
        try:
            session = _open(
                python, root, work, jobs, parallel, preload, dataclass_file, one_run, stats, cancel
            )
        except server.ServerFailed as e:
            for j in jobs:
                results[j["id"]] = {
                    "status": "crashed",
                    "seconds": 0.0,
                    "error": {"type": "Crashed", "message": str(e)[:2000], "where": None},
                }
        while session is not None and len(results) < len(jobs):
            now = time.monotonic()
            for jid, (pid, t0) in list(started.items()):
                if jid not in results and jid not in killed and now - t0 > timeout:
                    server.kill_group(pid)
                    killed.add(jid)
            if now > overall or (cancel is not None and cancel.is_set()):
                break
            if b"\n" not in session.buf:
                ready, _, _ = select.select([session.sock], [], [], 0.2)
                if not ready:
                    continue
                chunk = session.sock.recv(65536)
                if not chunk:
                    break
                session.buf += chunk
            while b"\n" in session.buf:
                line, session.buf = session.buf.split(b"\n", 1)
                parts = line.decode().split(" ")
                if parts[0] == "start":
                    started[parts[1]] = (int(parts[2]), time.monotonic())
                elif parts[0] == "done":
                    jid, status = parts[1], int(parts[2])
                    seconds = time.monotonic() - started.get(jid, (0, time.monotonic()))[1]
                    results[jid] = _collect(
                        next(j for j in jobs if j["id"] == jid), status, jid in killed, seconds, timeout
                    )
                    if progress:
                        progress(jid, len(results), len(jobs))
    finally:
        for jid, (pid, _) in started.items():  # workers have process groups of their own
            if jid not in results:
                server.kill_group(pid)
        if session is not None:
            if session.session_pid and len(results) < len(jobs):
                server.kill_group(session.session_pid)  # its workers die with it
            session.sock.close()  # and a session whose client is gone ends its workers and itself
            if session.proc is not None:
                server.kill_group(session.proc.pid)
                session.proc.wait()
    for j in jobs:
        if j["id"] not in results:
            results[j["id"]] = {
                "status": "killed",
                "error": {
                    "type": "Killed",
                    "message": "stopped: what asked for it went away, or the server is stopping"
                    if cancel is not None and cancel.is_set()
                    else "the replay run's overall time limit ended it",
                    "where": None,
                },
            }
    seen = sorted({m for r in results.values() for m in r.pop("preload", None) or []})
    if preload_file and set(seen) - set(learnt):
        _write_preload(preload_file, sorted(set(seen) | set(learnt)))
    met = [t for r in results.values() for t in r.pop("dataclass_code", None) or []]
    if dataclass_file and met:
        known = _read_preload(dataclass_file)
        have = set(known)
        new = [t for t in dict.fromkeys(met) if t not in have]
        if new:
            _write_preload(dataclass_file, known + new)
    log = work / "child.log"
    if any(r.get("status") == "crashed" for r in results.values()) and log.is_file():
        for r in results.values():
            r.setdefault("child_log", log.read_text(errors="replace")[-2000:])
    return results


def _collect(job: dict, status: int, killed: bool, seconds: float, timeout: float) -> dict:
    out = Path(job["out"])
    if killed:
        return {
            "status": "timeout",
            "seconds": round(seconds, 3),
            "error": {
                "type": "Timeout",
                "message": f"no result within {timeout:g} s: the worker was killed",
                "where": None,
            },
        }
    if out.is_file():
        try:
            result = json.loads(out.read_text())
        except ValueError:
            result = None
        if isinstance(result, dict):
            result.setdefault("status", "error" if result.get("error") else "ok")
            result["seconds"] = round(seconds, 3)
            return result
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    if sig == signal.SIGXCPU or sig == signal.SIGKILL:
        why = f"the worker hit its CPU-time limit ({timeout:g} s)" if sig == signal.SIGXCPU else "killed"
        return {
            "status": "timeout",
            "seconds": round(seconds, 3),
            "error": {"type": "Timeout", "message": why, "where": None},
        }
    tail = ""
    log = Path(job["out"] + ".log")
    if log.is_file():
        tail = log.read_text(errors="replace")[-600:]
    return {
        "status": "crashed",
        "seconds": round(seconds, 3),
        "error": {
            "type": "Crashed",
            "message": f"the worker ended without a result (wait status {status}) {tail}".strip(),
            "where": None,
        },
    }


def _terminate_as_exit():
    """While the child runs, SIGTERM ends tpindex through `finally` (which kills the child's process group)
    rather than at once, leaving it behind; -> what restores the previous handler."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    old = signal.signal(signal.SIGTERM, handler)
    return lambda: signal.signal(signal.SIGTERM, old)


def _read_preload(path: Path | None) -> list[str]:
    try:
        data = json.loads(path.read_text()) if path else []
    except (OSError, ValueError):
        return []
    return [m for m in data if isinstance(m, str)] if isinstance(data, list) else []


def _write_preload(path: Path, modules: list[str]) -> None:
    try:
        tmp = path.with_name(path.name + f".{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps(modules))
        os.replace(tmp, path)
    except OSError:
        pass


def _cleanup(work: Path) -> None:
    import shutil

    shutil.rmtree(work, ignore_errors=True)
