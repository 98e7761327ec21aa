"""Child side: the replay server tpindex starts with the replay environment's interpreter (by file path).

Start: one JSON line on standard input {"socket", "idle", "preload": [modules], "dataclass_file", "watch",
"detach"}. The server imports the third-party packages (pydantic, openai, fastapi, ...; never vLLM), listens
on the Unix socket and says `listening PID CPU` on standard output. A client connects and sends a header line
{"parallel": N, "preload": [...], "dataclass_file"} (or {"stop": true}), its jobs (drive.run's input plus
"id", "out", "limits"), one a line, and {"end": true}. The server forks a session for it, which says
`ready CPU WARM PID` and forks one worker per job, at most N at a time, saying `start ID PID` and `done ID
STATUS` (the wait status). A worker moves into its own process group, sets its limits (resource.setrlimit:
address space, CPU seconds), replays the job and writes its result to job["out"]. tpindex enforces each
job's wall-clock timeout by killing the worker's process group, and its own overall timeout by killing the
session's; a session dies with its server, a worker with its session (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import resource
import sys
import time

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
    os.chdir(os.path.dirname(job["out"]) or ".")  # the client's work directory, wherever the server runs
    log = os.open(job["out"] + ".log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    gc.disable()  # a worker lives for one replay: cyclic garbage is left to its exit
    if (
        job.get("items") is not None
    ):  # the atlas's job: many (name, case) replays of one tree (atlas_batch.py)
        import atlas_batch as drive
    else:
        import drive

    try:
        result = drive.run(job)
    except BaseException as e:  # noqa: B036 - the worker reports whatever ended it
        result = {
            "version": job.get("version"),
            "error": {"type": type(e).__name__, "message": str(e)[:400], "where": None},
            "modes": {},
        }
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
        if (
            not f
            or name.startswith(("vllm", "__main__"))
            or name in ("drive", "standins", "tokenizer", "main", "speed", "atlas_batch", "tpindex_templates")
        ):
            continue
        if f.startswith(roots) and "tpindex/replay/trees" not in f:
            out.append(name)
    return out


def _learn(header: dict) -> None:
    """The dataclass code earlier workers met, compiled here once for every worker (or loaded as an earlier
    server kept it: child/speed.py)."""
    path = header.get("dataclass_file")
    if path:
        speed.DATACLASS.learn_file(path)


def _import(names: list[str]) -> None:
    for name in names:
        if name in sys.modules:
            continue
        try:
            importlib.import_module(name)
        except Exception:  # noqa: S110 - a package that fails here fails again, visibly, in the job
            pass
    # What the server imported is never garbage: frozen, the workers' collections skip it (copy-on-write
    # pages stay shared, and a worker's imports do not pay for traversing it again and again).
    gc.collect()
    gc.freeze()


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _mtimes(paths: list[str]) -> dict[str, int | None]:
    out = {}
    for p in paths:
        try:
            out[p] = os.stat(p).st_mtime_ns
        except OSError:
            out[p] = None
    return out


def _send(conn, line: str) -> None:
    conn.sendall((line + "\n").encode())


def _read_line(f) -> dict | None:
    line = f.readline()
    if not line.strip():
        return None
    return json.loads(line)


def session(conn, f, header: dict, server: dict) -> None:
    """One client's run (a process forked from the server, in its own process group, ended with the server):
    the jobs, one worker each, at most `parallel` at a time; `start ID PID` and `done ID STATUS` lines. The
    client going away (its end of the socket closed) ends the workers and the session."""
    import select
    import signal

    os.setpgid(0, 0)
    _die_with(server["pid"])
    jobs = []
    while True:
        job = _read_line(f)
        if job is None or job.get("end"):
            break
        jobs.append(job)
    parallel = max(1, int(header.get("parallel") or 1))
    _send(conn, f"ready {server['cpu']:.3f} {1 if server['sessions'] else 0} {os.getpid()}")
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w)
    running: dict[int, str] = {}
    queue = list(jobs)

    def end_all() -> None:
        for pid in running:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        os._exit(0)

    while queue or running:
        while queue and len(running) < parallel:
            job = queue.pop(0)
            me = os.getpid()
            pid = os.fork()
            if pid == 0:
                try:
                    signal.set_wakeup_fd(-1)
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    f.close()
                    conn.close()
                    worker(job, me)
                finally:
                    os._exit(0)
            try:
                os.setpgid(pid, pid)  # as the worker does itself: whichever runs first
            except OSError:
                pass
            running[pid] = job["id"]
            try:
                _send(conn, f"start {job['id']} {pid}")
            except OSError:
                end_all()
        while True:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid:
                break
            ready, _, _ = select.select([conn, wake_r], [], [], 1.0)
            if wake_r in ready:
                os.read(wake_r, 512)
            if conn in ready:
                try:
                    gone = conn.recv(1) == b""
                except OSError:
                    gone = True
                if gone:
                    end_all()
        if pid in running:
            try:
                _send(conn, f"done {running.pop(pid)} {status}")
            except OSError:
                end_all()


def serve(config: dict) -> None:
    """The replay server: imports the third-party packages once, then forks a session per client connecting
    to its socket. `idle` seconds without a session end it (0: after its first session, a server of one run);
    so does a stop request, its socket taken away, or a watched file changed (its code, the packages
    installed: the next client then starts a fresh server)."""
    import socket

    if config.get("detach") and os.fork():
        os._exit(0)  # the starter returns at once; the server is nobody's child but init's
    speed.install()
    import drive  # noqa: F401 - the child's own modules too, once here rather than in every worker

    _learn({"dataclass_file": config.get("dataclass_file")})
    _import(config.get("preload") or [])
    watch = list(config.get("watch") or [])
    try:
        import sysconfig

        watch += sorted({sysconfig.get_paths()[k] for k in ("purelib", "platlib")})
    except (KeyError, OSError):
        pass
    seen = _mtimes(watch)
    path = config["socket"]
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    tmp = os.path.join(os.path.dirname(path), f".s{os.getpid()}")  # renamed into place once listening
    if os.path.exists(tmp):
        os.unlink(tmp)
    listener.bind(tmp)
    os.chmod(tmp, 0o600)
    listener.listen(16)
    os.replace(tmp, path)
    inode = os.stat(path).st_ino
    info = {"pid": os.getpid(), "cpu": _cpu(), "sessions": 0}
    sys.stdout.write(f"listening {os.getpid()} {info['cpu']:.3f}\n")
    sys.stdout.flush()
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    idle = float(config.get("idle") or 0)
    learnt_dc = _mtimes([config["dataclass_file"]]) if config.get("dataclass_file") else {}
    sessions: set[int] = set()
    last = time.monotonic()
    listener.settimeout(1.0)

    def mine() -> bool:
        try:
            return os.stat(path).st_ino == inode
        except OSError:
            return False

    def leave() -> None:
        if mine():
            try:
                os.unlink(path)
            except OSError:
                pass
        try:
            with open(config["meta"], encoding="utf-8") as f:
                if json.load(f).get("pid") == os.getpid():
                    os.unlink(config["meta"])
        except (KeyError, TypeError, OSError, ValueError, AttributeError):
            pass
        listener.close()
        os._exit(0)

    while True:
        while sessions:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                sessions.clear()
                break
            if not pid:
                break
            sessions.discard(pid)
            last = time.monotonic()
        if (
            not sessions
            and ((idle <= 0 and info["sessions"]) or time.monotonic() - last > idle > 0)
            or not mine()
        ):
            leave()
        try:
            conn, _ = listener.accept()
        except OSError:  # the 1 s timeout (TimeoutError) included: look at the idle time and the socket again
            continue
        conn.settimeout(30)
        f = conn.makefile("r", encoding="utf-8")
        try:
            header = _read_line(f) or {}
        except (OSError, ValueError):
            f.close()
            conn.close()
            continue
        if header.get("stop") or _mtimes(watch) != seen:
            _send(conn, "stopped" if header.get("stop") else "stale")
            f.close()
            conn.close()
            leave()
        _import(header.get("preload") or [])
        if header.get("dataclass_file"):
            now = _mtimes([header["dataclass_file"]])
            if now != learnt_dc:
                _learn(header)
                learnt_dc = now
        info["cpu"] = _cpu()
        pid = os.fork()
        if pid == 0:
            listener.close()
            conn.settimeout(None)
            try:
                session(conn, f, header, info)
            finally:
                os._exit(0)
        sessions.add(pid)
        info["sessions"] += 1
        f.close()  # the socket itself closes only once its file is closed too
        conn.close()
        last = time.monotonic()


def main() -> None:
    serve(json.loads(sys.stdin.readline()))


if __name__ == "__main__":
    main()
