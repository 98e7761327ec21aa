"""Work with a wall-clock limit that really stops it: run a function in a child process and kill it when the
limit passes. What a visitor, an MCP client, a model's files or a repository controls runs so: grep's
search (a pattern), fit (vLLM's regular expressions on a given text, a given chat template), the chat
templates a build renders (a repository's) and the card renders from an older database.

A backtracking regular expression can take exponential time inside one C call of Python's `re`, holding the
GIL: no signal handler, thread or SQL time limit gets a word in, and in a server every other request waits.
A child process can always be killed, and while it works the parent only waits on a pipe (other threads,
the event loop, signal handlers all run). The child also gets a memory limit (RLIMIT_AS), so a pattern
that needs gigabytes fails there with a message instead of exhausting the machine.

A single-threaded process (the command line) forks the child directly (os.fork and a pipe: a few
milliseconds, and no multiprocessing to import).
A process with threads (the server, the MCP server) must not fork itself (another thread may hold a lock
the child then waits on forever, SQLite's allocator mutex for one), so its children are forked by the
`forkserver` process multiprocessing keeps, single-threaded, started once per process (`warm()`).
"""

from __future__ import annotations

import os
import threading

from .problems import Problem

MEMORY_LIMIT = 2 << 30  # bytes of address space a child may add to what it starts with


class TooSlow(Problem):
    """The work took longer than its time limit and was stopped."""

    transient = True


class TooLarge(Problem):
    """The work needed more memory than the limit, or its process died."""

    transient = True


class Cancelled(Problem):
    """The work was stopped because what asked for it went away (a browser closed the page)."""

    transient = True


# what the fork server imports once, so that a child forked from it does not (warm() adds the modules of the
# work a process will send)
_PRELOAD = ["indexer.store.database"]
_running: set = set()  # the children at work, for stop_all
_lock = threading.Lock()


_HOME = (
    os.getpid()
)  # the process that imported this module; a process forked from it forks its children itself


_stopping = threading.Event()  # stop_all was called: a child that dies now was stopped, not broken


def stop_all() -> None:
    """Kill every child at work (a server shutting down): the threads waiting for them return at once."""
    _stopping.set()
    with _lock:
        procs = list(_running)
    for proc in procs:
        if proc.is_alive():
            proc.kill()


def _context():
    import multiprocessing

    if threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(_PRELOAD)
    return ctx


def warm(preload: list[str] | tuple[str, ...] = ()) -> None:
    """Start the fork server now (a process with threads forks its children through it), so that the first
    search does not wait for it; `preload`: the modules of the work it will run, imported there once."""
    import multiprocessing

    _PRELOAD.extend(m for m in preload if m not in _PRELOAD)
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(_PRELOAD)
    from multiprocessing import forkserver

    forkserver.ensure_running()


def _child(conn, fn, args, memory: int, nice: int, seconds: float | None = None) -> None:
    try:
        import _signal as signal  # the C module: `signal` makes its enums on import (2.5 ms of every search)
    except ImportError:  # pragma: no cover - CPython has it
        import signal

    if nice:
        os.nice(nice)  # a server's search gives the CPU to the server's other requests first
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C reaches the parent too, which stops us
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if seconds:  # a second after the limit we end ourselves (SIGALRM's default action), should the parent
        signal.signal(signal.SIGALRM, signal.SIG_DFL)  # that stops us be gone (killed, or never waiting)
        signal.setitimer(signal.ITIMER_REAL, seconds + 1)
    try:
        import resource

        with open("/proc/self/statm") as f:
            size = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (size + memory, resource.RLIM_INFINITY))
    except (OSError, ValueError, ImportError):  # no /proc, or limits not allowed: run without
        pass
    try:
        out = ("ok", fn(*args))
    except Problem as e:
        out = ("raised", e)
    except MemoryError:
        out = ("memory",)
    except RecursionError:
        out = ("problem", "the work nests too deeply", "simplify what was asked")
    try:
        conn.send(out)
    except MemoryError:
        conn.send(("memory",))
    except Exception:  # noqa: BLE001 - a problem whose attributes do not pickle: its words still do
        conn.send(("problem", out[1].message, out[1].hint) if out[0] == "raised" else ("died",))
    conn.close()


def _forked(fn, args, seconds: float, memory: int) -> tuple:
    """The single-threaded case with os.fork and a pipe: no multiprocessing to import (a tenth of a
    second of a short command's start) and nothing to start."""
    import pickle
    import select
    import time

    deadline = time.monotonic() + seconds
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 1
        try:
            os.close(r)

            class _Conn:
                def send(self, out):
                    data = pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)
                    view = memoryview(data)
                    while view:
                        view = view[os.write(w, view) :]

                def close(self):
                    os.close(w)

            _child(_Conn(), fn, args, memory, 0, seconds)
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    chunks, out = [], None
    try:
        poller = select.poll()
        poller.register(r, select.POLLIN | select.POLLHUP)
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not poller.poll(max(1, int(left * 1000))):
                if time.monotonic() >= deadline:
                    return ("slow",)
                continue
            chunk = os.read(r, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        try:
            out = pickle.loads(b"".join(chunks)) if chunks else ("died",)
        except Exception:  # noqa: BLE001 - a child killed while it wrote
            out = ("died",)
        return out
    finally:
        os.close(r)
        try:
            if out is None:
                os.kill(pid, 9)
            _, status = os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass


SEARCH_HINT = (
    "narrow it (a literal in the pattern, fewer versions, a --path), avoid nested repetition such as (a|aa)*"
    " or (.*)*, or give it more time (--time-limit)"
)


def run(
    fn,
    args: tuple,
    seconds: float,
    what: str = "the search",
    memory: int = MEMORY_LIMIT,
    hint: str = SEARCH_HINT,
    cancel: threading.Event | None = None,
):
    """fn(*args) in a child process, its result (picklable) returned; a Problem it raises is raised again
    here. Stopped after `seconds` (TooSlow), or when it needs more than `memory` more bytes (TooLarge), or
    when `cancel` is set (Cancelled: what asked for it went away); `hint` says what to do then. A process
    forked from the one that imported this module (a build's worker, whose other thread only watches its
    parent) forks itself too: the fork server multiprocessing keeps is its parent's, whose bookkeeping fails
    there (ECHILD)."""
    if threading.active_count() == 1 or os.getpid() != _HOME:
        return _answer(_forked(fn, args, seconds, memory), seconds, what, memory, None, hint)
    import time

    ctx = _context()
    receive, send = ctx.Pipe(duplex=False)
    nice = 0 if ctx.get_start_method() == "fork" else 5  # threads: a server, whose other requests come first
    proc = ctx.Process(target=_child, args=(send, fn, args, memory, nice, seconds), daemon=True)
    deadline = time.monotonic() + seconds
    with _lock:
        proc.start()
        _running.add(proc)
    send.close()
    try:
        while True:
            left = deadline - time.monotonic()
            if receive.poll(max(0.0, min(left, 0.25) if cancel is not None else left)):
                try:
                    out = receive.recv()
                except (EOFError, OSError):
                    out = ("died",)
                break
            if cancel is not None and cancel.is_set():
                out = ("cancelled",)
                break
            if time.monotonic() >= deadline:
                out = ("slow",)
                break
    finally:
        receive.close()
        if proc.is_alive():
            proc.kill()
        proc.join()
        with _lock:
            _running.discard(proc)
    return _answer(out, seconds, what, memory, proc.exitcode, hint)


def _answer(out: tuple, seconds: float, what: str, memory: int, exitcode, hint: str = SEARCH_HINT):
    if out[0] == "slow":
        raise TooSlow(f"{what} took longer than its time limit ({seconds:g} s) and was stopped", hint)
    if out[0] == "ok":
        return out[1]
    if out[0] == "raised":  # the problem the work raised, as it was
        raise out[1]
    if out[0] == "problem":
        raise Problem(out[1], out[2])
    if out[0] == "cancelled" or (out[0] == "died" and _stopping.is_set()):
        raise Cancelled(f"{what} was stopped: its request went away, or the server is stopping", "ask again")
    raise TooLarge(
        f"{what} needed more than {memory >> 30} GiB of memory and was stopped"
        if out[0] == "memory"
        else f"{what} ended without an answer (its process died{f': exit status {exitcode}' if exitcode else ''})",
        hint,
    )
