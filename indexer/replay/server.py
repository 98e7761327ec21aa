"""The replay server, tpindex's side: found, started, asked to stop (the server itself: child/main.py).

A server is the replay interpreter running child/main.py: it imports the third-party packages once (about
1.5-3 CPU seconds: openai, pydantic, fastapi, ...) and forks a session per run, which forks a worker per
version. Kept warm between tpindex runs, a later run pays only its trees' imports:

- one warm server per replay interpreter and child code (its key: a digest of both), reached through a
  Unix socket in the cache (`replay/servers/<key>.sock`; under the temporary directory when that path is
  too long for a socket), owner-only;
- it ends after `TPINDEX_REPLAY_IDLE` seconds (default 300) without a run, on `tpindex replay --stop`, when
  its socket is taken away, or when a file it watches changed (its own code, the interpreter's installed
  packages): the client that finds it stale starts a fresh one;
- starting is serialized by a lock file, so concurrent tpindex processes start one server and share it;
  a socket left by a server that died is removed and a new server started;
- `TPINDEX_REPLAY_IDLE=0`: no warm server, a server of one run in the run's own directory, ended with it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import select
import signal
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from .trees import ReplayError

CHILD_DIR = Path(__file__).resolve().parent / "child"
MAIN = CHILD_DIR / "main.py"
IDLE = 300.0  # seconds a warm server waits for its next run
START_TIMEOUT = 300.0  # seconds a server may take to import its packages and listen (a loaded machine)
ENV = {
    "PYTHONDONTWRITEBYTECODE": "",
    "VLLM_LOGGING_LEVEL": "ERROR",
    "VLLM_CONFIGURE_LOGGING": "0",
    "TOKENIZERS_PARALLELISM": "false",
    "VLLM_NO_USAGE_STATS": "1",
    "DO_NOT_TRACK": "1",
    "HF_HUB_OFFLINE": "1",
}


def idle_seconds() -> float:
    given = os.environ.get("TPINDEX_REPLAY_IDLE")
    if given is None or not given.strip():
        return IDLE
    try:
        value = float(given)
    except ValueError:
        raise ReplayError(
            f"TPINDEX_REPLAY_IDLE={given} is not a number of seconds",
            "e.g. TPINDEX_REPLAY_IDLE=300, or 0 for no warm replay server",
        ) from None
    return max(0.0, value)


def key(python: Path) -> str:
    """The interpreter (by its path: a virtualenv's python links to the base one) and the child code."""
    h = hashlib.sha256(str(Path(python).absolute()).encode())
    for f in sorted(CHILD_DIR.glob("*.py")):
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


def servers_dir(root: Path) -> Path:
    d = Path(root) / "servers"
    d.mkdir(parents=True, exist_ok=True)
    return d


def socket_path(root: Path, k: str) -> str:
    return short_socket(str(servers_dir(root) / f"{k}.sock"))


def short_socket(path: str) -> str:
    """`path`, or, when it is too long for a Unix socket (sun_path holds 108 bytes), a path named by its hash
    in a directory of this user's alone under the temporary directory (or /tmp, when that is long too)."""
    if len(path.encode()) < 100:
        return path
    name = f"{hashlib.sha256(path.encode()).hexdigest()[:16]}.sock"
    base = Path(tempfile.gettempdir())
    if len(str(base / f"tpindex-{os.getuid()}" / name).encode()) >= 100:
        base = Path("/tmp")
    d = base / f"tpindex-{os.getuid()}"
    d.mkdir(mode=0o700, exist_ok=True)
    st = d.lstat()
    if st.st_uid != os.getuid() or st.st_mode & 0o077 or not d.is_dir() or d.is_symlink():
        raise ReplayError(
            f"{d} is not a directory of yours alone, so the replay server's socket cannot go there",
            "remove it, or set TPINDEX_REPLAY_CACHE to a shorter path",
        )
    return str(d / name)


class Session:
    """A connection to a server for one run: `sock`, the server's `pid`, whether this run `started` it,
    and the process to end with the run (a server of one run), if any."""

    def __init__(self, sock: socket.socket, pid: int, started: bool, proc: subprocess.Popen | None = None):
        self.sock, self.pid, self.started, self.proc = sock, pid, started, proc
        self.buf = b""  # what was read from the socket and not yet used
        self.session_pid: int | None = None


def _connect(path: str) -> socket.socket | None:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
    except (FileNotFoundError, ConnectionRefusedError, OSError):
        s.close()
        return None
    return s


@contextmanager
def _lock(path: Path):
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _start(python: Path, config: dict, cwd: Path, log: Path) -> tuple[subprocess.Popen, int]:
    """Start a server; -> its process (the server itself, or the starter of a detached one) and its pid, once
    it listens."""
    with open(log, "w") as err:
        proc = subprocess.Popen(
            [str(python), "-X", "utf8", str(MAIN)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            start_new_session=True,
            cwd=cwd,
            env={**os.environ, **ENV},
        )
    try:
        proc.stdin.write((json.dumps(config) + "\n").encode())
        proc.stdin.close()
    except BrokenPipeError:
        pass
    buf, deadline = b"", time.monotonic() + START_TIMEOUT
    fd = proc.stdout.fileno()
    while b"\n" not in buf and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            buf += chunk
    proc.stdout.close()
    line = buf.split(b"\n", 1)[0].decode(errors="replace").split()
    if config.get("detach"):
        try:
            proc.wait(timeout=10)  # the starter, gone once the server forked away
        except subprocess.TimeoutExpired:
            pass
    if len(line) < 2 or line[0] != "listening":
        if proc.poll() is None:
            kill_group(proc.pid)
            proc.wait()
        tail = log.read_text(errors="replace")[-1500:] if log.is_file() else ""
        raise ServerFailed(f"the replay server did not start: {tail.strip() or 'no output'}")
    return proc, int(line[1])


class ServerFailed(Exception):
    pass


def open_session(
    python: Path,
    root: Path | None,
    work: Path,
    preload: list[str],
    dataclass_file: Path | None,
    one_run_preload: list[str],
) -> Session:
    """A connection to the warm server of `root` (started when there is none, or none fit), or to a server of
    this run alone (no root, or TPINDEX_REPLAY_IDLE=0; it imports `one_run_preload`)."""
    idle = idle_seconds() if root else 0.0
    config = {
        "dataclass_file": str(dataclass_file) if dataclass_file else None,
        "watch": [str(p) for p in sorted(CHILD_DIR.glob("*.py"))],
    }
    if idle <= 0:
        path = short_socket(str(work / "server.sock"))
        proc, pid = _start(
            python,
            {
                **config,
                "socket": path,
                "idle": 0,
                "preload": one_run_preload,
                "detach": False,
                "dataclass_file": config["dataclass_file"] if one_run_preload else None,
            },
            work,
            work / "child.log",
        )
        sock = _connect(path)
        if sock is None:
            kill_group(proc.pid)
            proc.wait()
            raise ServerFailed("the replay server of this run did not accept its connection")
        return Session(sock, pid, True, proc)
    k = key(python)
    d = servers_dir(root)
    path = socket_path(root, k)
    sock = _connect(path)
    if sock is not None:
        return Session(sock, _meta(d / f"{k}.json").get("pid", 0), False)
    with _lock(d / f"{k}.lock"):
        sock = _connect(path)
        if sock is not None:
            return Session(sock, _meta(d / f"{k}.json").get("pid", 0), False)
        if os.path.exists(path):
            os.unlink(path)  # left by a server that died
        meta = d / f"{k}.json"
        _, pid = _start(
            python,
            {**config, "socket": path, "idle": idle, "preload": preload, "detach": True, "meta": str(meta)},
            d,
            d / f"{k}.log",
        )
        tmp = meta.with_name(meta.name + f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"pid": pid, "socket": path, "python": str(python), "main": str(MAIN)}))
        os.replace(tmp, meta)
        sock = _connect(path)
        if sock is None:
            raise ServerFailed("the replay server started but does not accept connections")
        return Session(sock, pid, True)


def _meta(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def stop(root: Path) -> list[int]:
    """Stop every warm server of this cache; -> the pids of those that were running."""
    d = Path(root) / "servers"
    stopped = []
    for meta in sorted(d.glob("*.json")) if d.is_dir() else []:
        info = _meta(meta)
        sock = _connect(info["socket"]) if info.get("socket") else None
        if sock is not None:
            try:
                sock.settimeout(10)
                sock.sendall(b'{"stop": true}\n')
                if sock.makefile("rb").readline().strip() == b"stopped":
                    stopped.append(int(info.get("pid") or 0))
            except OSError:
                pass
            finally:
                sock.close()
        wait_gone(int(info.get("pid") or 0))
        meta.unlink(missing_ok=True)
    return stopped


def running(pid: int) -> bool:
    """Whether pid is a live replay server (its command line names child/main.py; a zombie is not live)."""
    if pid <= 0:
        return False
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return str(MAIN) in cmd and state != "Z"


def wait_gone(pid: int, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)


def kill_group(pid: int) -> None:
    """SIGKILL to the process group pid leads (gone already, or not ours: nothing)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
