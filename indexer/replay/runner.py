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
import subprocess
import tempfile
import time
from pathlib import Path

CHILD = Path(__file__).resolve().parent / "child" / "main.py"
PRELOAD = ("pydantic", "openai", "fastapi", "starlette", "partial_json_parser", "regex", "msgspec", "jinja2",
           "yaml", "json", "asyncio", "typing", "inspect", "dataclasses", "email_validator", "prometheus_client",
           "psutil", "aiohttp", "numpy", "openai.types.chat", "pydantic_core", "importlib.metadata")
MEMORY = 4 << 30  # bytes of address space per worker


def run(python: Path, jobs: list[dict], parallel: int = 2, timeout: float = 60.0, memory: int = MEMORY,
        progress=None, preload_file: Path | None = None, stats: dict | None = None,
        dataclass_file: Path | None = None) -> dict[str, dict]:
    """job id -> the worker's result (drive.run's output), or {"status": "timeout"|"killed"|"crashed", ...}.
    `preload_file` keeps the installed modules earlier workers imported, for the fork server to import first;
    `dataclass_file` the texts of dataclass methods they generated, for it to compile first (child/speed.py)."""
    if not jobs:
        return {}
    learnt = _read_preload(preload_file)
    stats = {} if stats is None else stats
    work = Path(tempfile.mkdtemp(prefix="tpindex-replay-"))
    for j in jobs:
        j["out"] = str(work / f"{len(j['id'])}-{abs(hash(j['id']))}.json")
        j["limits"] = {"memory": memory, "cpu": int(timeout) + 1}
    restore = _terminate_as_exit()  # before the child exists: no moment where SIGTERM would leave it behind
    try:
        proc = _start(python, work)
    except BaseException:
        restore()
        raise
    return _serve(proc, jobs, parallel, timeout, progress, preload_file, stats, learnt, restore, work, dataclass_file)


def _start(python: Path, work: Path) -> subprocess.Popen:
    return subprocess.Popen([str(python), "-X", "utf8", str(CHILD)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=open(work / "child.log", "w"), start_new_session=True, cwd=work,
                            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "", "VLLM_LOGGING_LEVEL": "ERROR",
                                 "VLLM_CONFIGURE_LOGGING": "0", "TOKENIZERS_PARALLELISM": "false",
                                 "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1", "HF_HUB_OFFLINE": "1"})


def _serve(proc, jobs, parallel, timeout, progress, preload_file, stats, learnt, restore, work,
           dataclass_file=None) -> dict[str, dict]:
    # Imports before forking pay off once several rounds of workers share them; with no more jobs than workers
    # at once, each worker imports (only) what it needs, side by side.
    preload = list(dict.fromkeys(list(PRELOAD) + learnt)) if len(jobs) > parallel else []
    header = {"preload": preload, "parallel": parallel,
              "dataclass_file": str(dataclass_file) if dataclass_file and preload else None}
    results: dict[str, dict] = {}
    t_start = time.monotonic()
    started: dict[str, tuple[int, float]] = {}
    killed: set[str] = set()
    overall = time.monotonic() + timeout * (len(jobs) / max(1, parallel) + 2) + 30
    buf = b""
    fd = proc.stdout.fileno()
    try:
        try:
            proc.stdin.write((json.dumps(header) + "\n" + "".join(json.dumps(j) + "\n" for j in jobs)).encode())
            proc.stdin.close()
        except BrokenPipeError:
            pass
        while True:
            now = time.monotonic()
            for jid, (pid, t0) in list(started.items()):
                if jid not in results and jid not in killed and now - t0 > timeout:
                    _killpg(pid)
                    killed.add(jid)
            if now > overall:
                _killpg(proc.pid)
                break
            ready, _, _ = select.select([fd], [], [], 0.2)
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                parts = line.decode().split(" ")
                if parts[0] == "ready":
                    stats["preload_cpu_seconds"] = float(parts[1])
                    stats["preload_seconds"] = round(time.monotonic() - t_start, 3)
                elif parts[0] == "start":
                    started[parts[1]] = (int(parts[2]), time.monotonic())
                elif parts[0] == "done":
                    jid, status = parts[1], int(parts[2])
                    seconds = time.monotonic() - started.get(jid, (0, time.monotonic()))[1]
                    results[jid] = _collect(next(j for j in jobs if j["id"] == jid), status, jid in killed, seconds,
                                            timeout)
                    if progress:
                        progress(jid, len(results), len(jobs))
    finally:
        for jid, (pid, _) in started.items():  # workers have process groups of their own
            if jid not in results:
                _killpg(pid)
        if proc.poll() is None:
            _killpg(proc.pid)
        proc.wait()
        restore()
    for j in jobs:
        if j["id"] not in results:
            results[j["id"]] = {"status": "killed", "error": {"type": "Killed", "message":
                                "the replay run's overall time limit ended it", "where": None}}
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
    _cleanup(work)
    return results


def _collect(job: dict, status: int, killed: bool, seconds: float, timeout: float) -> dict:
    out = Path(job["out"])
    if killed:
        return {"status": "timeout", "seconds": round(seconds, 3), "error": {
            "type": "Timeout", "message": f"no result within {timeout:g} s: the worker was killed", "where": None}}
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
        return {"status": "timeout", "seconds": round(seconds, 3), "error": {"type": "Timeout", "message": why,
                                                                            "where": None}}
    tail = ""
    log = Path(job["out"] + ".log")
    if log.is_file():
        tail = log.read_text(errors="replace")[-600:]
    return {"status": "crashed", "seconds": round(seconds, 3), "error": {
        "type": "Crashed", "message": f"the worker ended without a result (wait status {status}) {tail}".strip(),
        "where": None}}


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
        tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(modules))
        os.replace(tmp, path)
    except OSError:
        pass


def _killpg(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _cleanup(work: Path) -> None:
    import shutil

    shutil.rmtree(work, ignore_errors=True)
