"""Child side: the replay process tpindex starts with the replay environment's interpreter (by file path).

Protocol: the first line on standard input is a header {"preload": [modules], "parallel": N}; each following
line a job (drive.run's input, plus "id", "out", "limits"). This process imports the third-party packages
once (pydantic, openai, fastapi, ...; never vLLM), then forks one worker per job, at most N at a time. A
worker moves into its own process group, sets its limits (resource.setrlimit: address space, CPU seconds),
replays the job and writes its result to job["out"]. This process reports on standard output one line per
event: `start ID PID` and `done ID STATUS` (the wait status). tpindex enforces each job's wall-clock
timeout by killing the worker's process group, and its own overall timeout by killing this one's.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import resource
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import speed  # noqa: E402 - the child's own modules are found beside this file


def _die_with(parent: int) -> None:
    """The worker is killed when this process ends (Linux prctl PR_SET_PDEATHSIG): killing the fork server
    ends its workers too, even one tpindex had not yet heard of."""
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(1)


def worker(job: dict, parent: int) -> None:
    _die_with(parent)
    os.setpgid(0, 0)
    limits = job.get("limits") or {}
    if limits.get("memory"):
        resource.setrlimit(resource.RLIMIT_AS, (limits["memory"], limits["memory"]))
    if limits.get("cpu"):
        resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu"], limits["cpu"] + 1))
    log = os.open(job["out"] + ".log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    gc.disable()  # a worker lives for one replay: cyclic garbage is left to its exit
    import drive

    try:
        result = drive.run(job)
    except BaseException as e:  # noqa: B036 - the worker reports whatever ended it
        result = {"version": job.get("version"), "error": {"type": type(e).__name__, "message": str(e)[:400],
                                                            "where": None}, "modes": {}}
    result["preload"] = _third_party()
    result["dataclass_code"] = speed.DATACLASS.new()
    ru = resource.getrusage(resource.RUSAGE_SELF)  # a forked worker's own usage starts at zero
    result["cpu_seconds"] = round(ru.ru_utime + ru.ru_stime, 3)
    tmp = job["out"] + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, default=str)
    os.replace(tmp, job["out"])


def _third_party() -> list[str]:
    """The installed (non-vLLM, non-stand-in) modules this worker imported: what the next run's fork server
    imports before forking, so that each worker pays only for its own tree."""
    roots = tuple({sys.prefix, sys.base_prefix})
    out = []
    for name, mod in list(sys.modules.items()):
        f = getattr(mod, "__file__", None)
        if not f or name.startswith(("vllm", "__main__")) or name in ("drive", "standins", "tokenizer", "main", "speed"):
            continue
        if f.startswith(roots) and "tpindex/replay/trees" not in f:
            out.append(name)
    return out


def _learn(header: dict) -> None:
    """The dataclass code earlier workers met, compiled here once for every worker (child/speed.py)."""
    path = header.get("dataclass_file")
    if not path:
        return
    try:
        with open(path, encoding="utf-8") as f:
            texts = json.load(f)
    except (OSError, ValueError):
        return
    if isinstance(texts, list):
        speed.DATACLASS.learn(texts)


def main() -> None:
    header = json.loads(sys.stdin.readline())
    speed.install()
    _learn(header)
    for name in header.get("preload", []):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: S110 - a package that fails here fails again, visibly, in the job
            pass
    # What the fork server imported is never garbage: frozen, the workers' collections skip it (copy-on-write
    # pages stay shared, and a worker's imports do not pay for traversing it again and again).
    gc.collect()
    gc.freeze()
    ru = resource.getrusage(resource.RUSAGE_SELF)
    sys.stdout.write(f"ready {ru.ru_utime + ru.ru_stime:.3f}\n")
    sys.stdout.flush()
    parallel = max(1, int(header.get("parallel") or 1))
    jobs = [json.loads(line) for line in sys.stdin if line.strip()]
    running: dict[int, str] = {}
    queue = list(jobs)

    def emit(*parts) -> None:
        sys.stdout.write(" ".join(str(p) for p in parts) + "\n")
        sys.stdout.flush()

    while queue or running:
        while queue and len(running) < parallel:
            job = queue.pop(0)
            me = os.getpid()
            pid = os.fork()
            if pid == 0:
                try:
                    worker(job, me)
                finally:
                    os._exit(0)
            try:
                os.setpgid(pid, pid)  # as the worker does itself: whichever runs first
            except OSError:
                pass
            running[pid] = job["id"]
            emit("start", job["id"], pid)
        pid, status = os.wait()
        if pid in running:
            emit("done", running.pop(pid), status)


if __name__ == "__main__":
    main()
