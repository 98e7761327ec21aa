"""Run one command as a child process and measure it: wall time, CPU time, peak memory.

- wall: perf_counter around spawn .. reap.
- cpu: user + sys from os.wait4's rusage, which on Linux covers the child and every descendant it
  reaped (the build's worker processes), the same as a getrusage(RUSAGE_CHILDREN) delta.
- maxrss: ru_maxrss from os.wait4: the largest resident set of any single process in the tree (the
  kernel keeps a maximum, not a sum).
- tree_rss: the largest sum of anonymous resident memory (resident minus file-backed/shared pages,
  from /proc/PID/statm, cheap to read) over the child and its live descendants, sampled every 0.1 s.
  File-backed pages are left out because `git cat-file` maps whole pack files (page cache, not the
  build's own memory). Sampled, so it can miss a short peak; copy-on-write pages the forked workers
  still share with the main process are counted in each, so it is an upper bound on what the build
  holds. (Proportional set sizes would count them once, but reading smaps_rollup costs ~20 ms per
  large process, enough to disturb the measurement.)
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
import time
from dataclasses import asdict, dataclass


@dataclass
class Sample:
    wall: float
    cpu: float
    user: float
    sys: float
    maxrss_mb: float
    tree_rss_mb: float | None
    rss_by_process: dict  # sampled peak resident set (file-backed included), MB, per main/child process name
    anon_by_process: dict  # sampled peak anonymous resident memory, MB, per main/child process name
    rc: int
    stdout: str
    stderr: str

    def row(self) -> dict:
        d = asdict(self)
        d["stdout"], d["stderr"] = d["stdout"][-2000:], d["stderr"][-2000:]
        return d


class CommandFailed(RuntimeError):
    pass


def run(
    cmd: list[str], ok: tuple[int, ...] = (0,), env: dict | None = None, cwd: str | None = None
) -> Sample:
    """Run and measure `cmd` (in `cwd`); an exit status outside `ok` raises CommandFailed."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env, cwd=cwd)
        sampler = _RssSampler(proc.pid)
        sampler.start()
        try:
            _, status, ru = os.wait4(proc.pid, 0)
        except BaseException:  # interrupted: leave no build running behind
            proc.kill()
            proc.wait()
            sampler.stop()
            raise
        wall = time.perf_counter() - t0
        sampler.stop()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        sample = Sample(
            wall=wall,
            cpu=ru.ru_utime + ru.ru_stime,
            user=ru.ru_utime,
            sys=ru.ru_stime,
            maxrss_mb=ru.ru_maxrss / 1024,
            tree_rss_mb=sampler.peak_mb,
            rss_by_process={k: v / 1024 for k, v in sampler.by_name.items()},
            anon_by_process={k: v / 1024 for k, v in sampler.anon_by_name.items()},
            rc=proc.returncode,
            stdout=out.read().decode(errors="replace"),
            stderr=err.read().decode(errors="replace"),
        )
    if sample.rc not in ok:
        raise CommandFailed(f"{' '.join(cmd)} exited with {sample.rc}:\n{sample.stderr[-3000:]}")
    return sample


class _RssSampler(threading.Thread):
    def __init__(self, pid: int, interval: float = 0.1):
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak_kb = 0
        self.by_name: dict[str, int] = {}
        self.anon_by_name: dict[str, int] = {}
        self.seen = False
        self._done = threading.Event()

    @property
    def peak_mb(self) -> float | None:
        return self.peak_kb / 1024 if self.seen else None

    def stop(self) -> None:
        self._done.set()
        self.join()

    def run(self) -> None:
        while not self._done.wait(self.interval):
            total = 0
            for pid in _tree(self.pid):
                anon, resident, name = _rss_kb(pid)
                total += anon
                if name:
                    name = ("main " if pid == self.pid else "child ") + name
                    self.by_name[name] = max(self.by_name.get(name, 0), resident)
                    self.anon_by_name[name] = max(self.anon_by_name.get(name, 0), anon)
            if total:
                self.seen = True
                self.peak_kb = max(self.peak_kb, total)


def _tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return out


PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


def _rss_kb(pid: int) -> tuple[int, int, str]:
    """(anonymous resident kB, resident kB, command name) of a process; zeros once it is gone."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            fields = f.read().split()
        with open(f"/proc/{pid}/comm") as f:
            name = f.read().strip()
        resident, shared = int(fields[1]) * PAGE_KB, int(fields[2]) * PAGE_KB
        return resident - shared, resident, name
    except (OSError, ValueError, IndexError):
        return 0, 0, ""
