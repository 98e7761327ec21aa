"""Run one command as a child process and measure it: wall time, CPU time, peak memory.

- wall: perf_counter around spawn .. reap.
- cpu: user + sys from os.wait4's rusage, which on Linux covers the child and every descendant it
  reaped (the build's worker processes), the same as a getrusage(RUSAGE_CHILDREN) delta.
- maxrss: ru_maxrss from os.wait4: the largest resident set of any single process in the tree (the
  kernel keeps a maximum, not a sum).
- tree_pss: the largest sum, over the child and its live descendants, of their proportional set size
  (PSS, shared pages split between processes), sampled every 0.1 s from /proc. A sampled figure (it
  can miss a short peak), shown because forked workers share pages that summing RSS would count twice.
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
    tree_pss_mb: float | None
    rc: int
    stdout: str
    stderr: str

    def row(self) -> dict:
        d = asdict(self)
        d["stdout"], d["stderr"] = d["stdout"][-2000:], d["stderr"][-2000:]
        return d


class CommandFailed(RuntimeError):
    pass


def run(cmd: list[str], ok: tuple[int, ...] = (0,), env: dict | None = None) -> Sample:
    """Run and measure `cmd`; an exit status outside `ok` raises CommandFailed."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
        sampler = _PssSampler(proc.pid)
        sampler.start()
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        sampler.stop()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        sample = Sample(wall=wall, cpu=ru.ru_utime + ru.ru_stime, user=ru.ru_utime, sys=ru.ru_stime,
                        maxrss_mb=ru.ru_maxrss / 1024, tree_pss_mb=sampler.peak_mb, rc=proc.returncode,
                        stdout=out.read().decode(errors="replace"), stderr=err.read().decode(errors="replace"))
    if sample.rc not in ok:
        raise CommandFailed(f"{' '.join(cmd)} exited with {sample.rc}:\n{sample.stderr[-3000:]}")
    return sample


class _PssSampler(threading.Thread):
    def __init__(self, pid: int, interval: float = 0.1):
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak_kb = 0
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
            total = sum(_pss_kb(p) for p in _tree(self.pid))
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


def _pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0
