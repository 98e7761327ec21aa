"""Side by side: the same tpindex command run by two versions of the code, alternating, on the same corpus.

The base is a git revision of this repository: its `indexer/` and `queries/` (and pyproject.toml, for its
command's entry point) are exported once to the user cache dir (`tpindex/bench/base-<commit>/`), compiled to
bytecode, and run with this venv's Python from there (PYTHONPATH and the working directory point at the
export, so `import indexer` is the base's). The other side is the working tree's `tpindex`. Both sides use
the same installed packages: a base needing a package this venv lacks fails loudly.

Each run measures both sides, the order alternating from run to run (base first, then the working tree
first, ...): what the machine does meanwhile falls on both. The report is each side's median (wall and CPU
of the process and its workers) and the ratio of the medians, working tree / base.

    python tests/bench/ab.py --base 3bf2c40 --runs 7 -- build --repo R --tags v0.6.0..v0.33.0 --db {db} -q

`{db}` is a fresh database path for each side and run (removed before the run); `{db:NAME}` one kept across
runs and sides apart (e.g. built once by an earlier command). bench.py's A/B mode (`make bench
BENCH_BASE=REF`) runs its build and query figures this way.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import measure

ROOT = Path(__file__).resolve().parents[2]


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


@dataclass
class Side:
    """One version of the code: how to run its `tpindex`."""

    name: str  # "base" or "new"
    argv: list[str]  # the command's start: argv[1:] of a `tpindex` invocation follow
    env: dict = field(default_factory=lambda: dict(os.environ))
    cwd: str | None = None
    commit: str | None = None

    def key(self, figure: str) -> str:
        """The key of a figure's samples measured with this side: the working tree's as they are, `base:KEY`."""
        return figure if self.name == "new" else f"{self.name}:{figure}"

    def cmd(self, args: list[str]) -> list[str]:
        return [*self.argv, *args]

    def run(self, args: list[str], ok=(0,)) -> measure.Sample:
        return measure.run(self.cmd(args), ok=ok, env=self.env, cwd=self.cwd)


def new_side(exe: str) -> Side:
    return Side("new", [exe], commit=_git("rev-parse", "HEAD"))


def export(ref: str, cache: Path) -> Side:
    """The base revision exported (once per commit) and ready to run."""
    commit = _git("rev-parse", "--verify", f"{ref}^{{commit}}")
    where = cache / f"base-{commit[:12]}"
    if not (where / ".complete").exists():
        shutil.rmtree(where, ignore_errors=True)
        where.mkdir(parents=True)
        paths = [p for p in ("indexer", "queries", "pyproject.toml") if _git("ls-tree", commit, p)]
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", commit, *paths], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(where)], input=archive, check=True)
        import compileall

        compileall.compile_dir(where / "indexer", quiet=1)
        (where / ".complete").write_text(commit)
    scripts = tomllib.loads((where / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, func = scripts["tpindex"].partition(":")
    code = f"import sys; from {module} import {func} as m; sys.argv[0] = 'tpindex'; sys.exit(m())"
    env = {**os.environ, "PYTHONPATH": str(where)}
    return Side("base", [sys.executable, "-c", code], env=env, cwd=str(where), commit=commit)


def order(run: int, sides: list[Side]) -> list[Side]:
    """Run 0: base first; run 1: the other first; ..."""
    return sides if run % 2 == 0 else list(reversed(sides))


def medians(rows: list[dict]) -> dict:
    return {k: statistics.median(r[k] for r in rows) for k in ("wall", "cpu")}


def ratio(new: dict, base: dict) -> dict:
    return {k: new[k] / base[k] for k in ("wall", "cpu") if base.get(k)}


def _expand(args: list[str], side: Side, work: Path) -> list[str]:
    out = []
    for a in args:
        if a == "{db}":
            db = work / f"{side.name}.db"
            for p in work.glob(db.name + "*"):
                p.unlink()
            a = str(db)
        elif a.startswith("{db:") and a.endswith("}"):
            a = str(work / f"{side.name}-{a[4:-1]}.db")
        out.append(a)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__)
    ap.add_argument("--base", required=True, help="a git revision of this repository")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--ok", default="0", help="exit statuses that are not failures (default 0), e.g. 0,1")
    ap.add_argument("args", nargs="+", help="the tpindex command line (after --)")
    args = ap.parse_args(argv)
    import signal

    signal.signal(signal.SIGTERM, lambda *_: sys.exit("ab: terminated"))  # so the running child is ended
    from bench import cache_dir, tpindex_exe

    sides = [export(args.base, cache_dir()), new_side(tpindex_exe())]
    ok = tuple(int(x) for x in args.ok.split(","))
    got: dict[str, list[dict]] = {s.name: [] for s in sides}
    with tempfile.TemporaryDirectory(prefix="tpindex-ab-") as tmp:
        for i in range(args.runs):
            for side in order(i, sides):
                s = side.run(_expand(args.args, side, Path(tmp)), ok=ok)
                got[side.name].append({"wall": s.wall, "cpu": s.cpu})
                print(f"  run {i + 1} {side.name:<4} {s.wall:7.3f} s  {s.cpu:7.3f} CPU-s", file=sys.stderr)
    m = {k: medians(v) for k, v in got.items()}
    r = ratio(m["new"], m["base"])
    print(
        f"base {sides[0].commit[:10]}: {m['base']['wall']:.3f} s, {m['base']['cpu']:.3f} CPU-s;"
        f" working tree: {m['new']['wall']:.3f} s, {m['new']['cpu']:.3f} CPU-s;"
        f" ratio {r['wall']:.2f}x wall, {r['cpu']:.2f}x CPU (medians of {args.runs})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
