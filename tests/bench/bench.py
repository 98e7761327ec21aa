"""tpindex's benchmark (`make bench`): build speed and memory on vllm's real release trees.

Prepares once, cached under the user cache dir (tpindex/bench/), a git repository with one tagged
commit per vllm release since v0.6.0 (see releases.py), then measures whole `tpindex` processes, each
several times (--runs, default 3), and reports medians against the targets:

    (a) cold build of every tag, default scope            <= 3 s
    (b) no-op re-run on the same database                   <= 0.5 s
    (c) adding the newest tag to a database of the others  <= 1 s
    (d) cold build with --scope all                         <= 75 s, peak RSS <= 400 MB
    (e) (a) with --no-dedup (every file of every version)   (e)/(a) >= 3
    (f) tree-sitter parse of the unique blobs alone, the floor, for (a) and (d)   (a)/(f) <= 2
    (g) `tpindex which NAME` and `tpindex diff A B` on (a)'s database            <= 0.3 s each
    (h) `tpindex grep` on (a)'s database, three patterns, beside `git grep -n -E` over the same tags and
        paths; on (d)'s database too (beside git grep ... -- 'vllm/*.py')  <= 0.2 s; (d): git grep / grep >= 5
    (i) the database size of (a) and (d), and (a) (and, once, (d)) built without the code (--no-code)

See tests/bench/README.md. Run from the project root: .venv/bin/python tests/bench/bench.py [options]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import measure
import releases

# (h): a literal, a regular expression, a case-insensitive pattern: (tpindex grep options, git grep options)
GREP_PATTERNS = {
    "lit": ["extract_tool_calls_streaming"],
    "re": ["def \\w+_streaming"],
    "i": ["-i", "tool_choice"],
}

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


def cache_dir() -> Path:
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("tpindex")) / "bench"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def tpindex_exe() -> str:
    exe = Path(sys.executable).parent / "tpindex"
    found = str(exe) if exe.exists() else shutil.which("tpindex")
    if not found:
        sys.exit("bench: no tpindex executable next to this Python or on PATH; run `make install` first")
    return found


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="bench.py", description="Benchmark tpindex on vllm's real release trees.",
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--runs", type=int, default=3, help="measure each figure N times and report medians (default 3)")
    ap.add_argument("--tags", default=releases.SINCE,
                    help=f"tag spec to benchmark (default {releases.SINCE}: every release since v0.6.0)")
    ap.add_argument("--skip-all-scope", action="store_true", help="skip (d) and its floor (the slowest part)")
    ap.add_argument("--json", type=Path, help="write the results here (default: under the cache dir)")
    ap.add_argument("--repo", type=Path,
                    help="use this git repository of release tags instead of preparing the cached one")
    ap.add_argument("--name", default="hermes", help="the parser name for (g) `tpindex which` (default hermes)")
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    return args


class Bench:
    def __init__(self, args, repo: Path, labels: list[str], work: Path):
        self.args, self.repo, self.labels, self.work = args, repo, labels, work
        self.exe = tpindex_exe()
        self.samples: dict[str, list[dict]] = {}

    def build(self, db: Path, *extra: str, tags: str | None = None, fresh: bool = True) -> measure.Sample:
        if fresh:
            for p in db.parent.glob(db.name + "*"):
                p.unlink()
        return measure.run([self.exe, "build", "--repo", str(self.repo), "--tags", tags or self.args.tags,
                            "--db", str(db), "-q", *extra])

    def record(self, key: str, sample: measure.Sample | dict) -> None:
        row = sample.row() if isinstance(sample, measure.Sample) else sample
        row["loadavg"] = os.getloadavg()[0]  # after the run: how busy the machine was meanwhile
        self.samples.setdefault(key, []).append(row)
        wall = row.get("wall", row.get("parse_s"))
        log(f"    {key:<10} {wall:8.3f} s")

    def floor(self, scope: str, extract: bool) -> dict:
        cmd = [sys.executable, str(HERE / "floor.py"), "--repo", str(self.repo), "--tags", self.args.tags,
               "--scope", scope] + (["--extract"] if extract else [])
        return json.loads(measure.run(cmd).stdout)

    def size(self, key: str, db: Path) -> None:
        mb = sum(p.stat().st_size for p in db.parent.glob(db.name + "*") if p.suffix != ".lock") / 1e6
        self.samples.setdefault(key, []).append({"size_mb": mb})
        log(f"    {key:<10} {mb:8.1f} MB")

    def grep(self, scope: str, db: Path) -> None:
        """(h): each pattern through tpindex grep, and through git grep over the same tags and paths."""
        from indexer.scope import Scope, parsed

        specs = ["vllm/*.py"] if scope == "all" else [p for p in Scope.named(scope).patterns if parsed(p)]
        suffix = "" if scope == "default" else "_d"
        for key, args in GREP_PATTERNS.items():
            self.record(f"h_{key}{suffix}", measure.run([self.exe, "grep", *args, "--db", str(db)], ok=(0, 1)))
            git = ["git", "--git-dir", str(self.repo), "grep", "-n", "-E", *args[:-1], "-e", args[-1], *self.labels,
                   "--", *specs]
            self.record(f"h_git_{key}{suffix}", measure.run(git, ok=(0, 1)))

    def run(self) -> None:
        newest, others = self.labels[-1], self.labels[:-1]
        a_db, c_base, c_db = self.work / "a.db", self.work / "c-base.db", self.work / "c.db"
        if others:
            log(f"preparing (c): a database of {len(others)} tag(s) without {newest} (untimed, once; copied per run)")
            self.build(c_base, tags=",".join(others))
        for i in range(1, self.args.runs + 1):
            log(f"run {i}/{self.args.runs}")
            self.record("a", self.build(a_db))
            self.size("i_a", a_db)
            self.grep("default", a_db)
            self.record("b", self.build(a_db, fresh=False))
            self.record("g_which", measure.run([self.exe, "which", self.args.name, "--db", str(a_db)]))
            if others:
                diff = [self.exe, "diff", others[-1], newest, "--db", str(a_db)]
                self.record("g_diff", measure.run(diff, ok=(0, 1)))  # 1: something changed, like diff(1)
                for p in self.work.glob("c.db*"):
                    p.unlink()
                shutil.copyfile(c_base, c_db)
                self.record("c", self.build(c_db, tags=newest, fresh=False))
            self.record("e", self.build(self.work / "e.db", "--no-dedup"))
            self.record("i_a0", self.build(self.work / "a0.db", "--no-code"))
            self.size("i_a0_size", self.work / "a0.db")
            self.record("f_a", self.floor("default", extract=i == 1))
            if not self.args.skip_all_scope:
                d_db = self.work / "d.db"
                self.record("d", self.build(d_db, "--scope", "all"))
                self.size("i_d", d_db)
                self.grep("all", d_db)
                self.record("f_d", self.floor("all", extract=i == 1))
                if i == 1:  # once: the code's cost in the slowest build
                    self.record("i_d0", self.build(self.work / "d0.db", "--scope", "all", "--no-code"))
                    self.size("i_d0_size", self.work / "d0.db")


# -- results -----------------------------------------------------------------------------------------------

FIELDS = ("wall", "cpu", "maxrss_mb", "tree_rss_mb", "loadavg", "parse_s", "parse_cpu_s", "extract_s", "extract_cpu_s",
          "collect_s", "unique_blobs", "bytes", "files", "versions", "size_mb")


def medians(samples: dict[str, list[dict]]) -> dict[str, dict]:
    out = {}
    for key, rows in samples.items():
        out[key] = {f: statistics.median(vals) for f in FIELDS
                    if (vals := [r[f] for r in rows if r.get(f) is not None])}
    return out


def assess(m: dict[str, dict], jobs: int) -> list[dict]:
    """One row per figure: what, the numbers, the target and whether it is met."""
    rows = []

    def add(key, what, target=None, met=None, **numbers):
        rows.append({"key": key, "what": what, "target": target, "met": met, **numbers})

    def proc(key, what, limit, rss_limit=None):
        if key not in m:
            return
        x = m[key]
        met = x["wall"] <= limit and (rss_limit is None or x["maxrss_mb"] <= rss_limit)
        target = f"<= {limit:g} s" + (f", RSS <= {rss_limit} MB" if rss_limit else "")
        add(key, what, target, met, wall=x["wall"], cpu=x["cpu"], maxrss_mb=x["maxrss_mb"],
            tree_rss_mb=x.get("tree_rss_mb"))

    def floor(key, what, of):
        if key not in m:
            return
        x = m[key]
        add(key, f"{what} ({x['unique_blobs']:.0f} unique blobs, {x['bytes'] / 1e6:.1f} MB)", None, None,
            wall=x["parse_s"], cpu=x["parse_cpu_s"])
        add(key + "/par", f"(f/{jobs}) {jobs}-core parse floor of {of}", None, None, wall=x["parse_s"] / jobs)
        if "extract_s" in x:
            add(key + "+x", f"(f+x) parse + extract of {of}'s blobs, 1 core (the build's per-blob work)", None, None,
                wall=x["extract_s"], cpu=x["extract_cpu_s"])

    def size(key, what):
        if key in m:
            add(key, what, None, None, size_mb=m[key]["size_mb"])

    def ratio(key, what, num, den, target, ok, den_field="parse_s", divide=1):
        if num in m and den in m:
            value = m[num]["wall"] / (m[den][den_field] / divide)
            add(key, what, target, ok(value) if ok else None, ratio=value)

    proc("a", "(a) cold build, default scope", 3)
    proc("b", "(b) no-op re-run", 0.5)
    proc("c", "(c) add the newest tag", 1)
    proc("d", "(d) cold build, --scope all", 75, 400)
    proc("e", "(e) cold build, --no-dedup", float("inf"))
    floor("f_a", "(f) parse floor of (a)", "(a)")
    floor("f_d", "(f) parse floor of (d)", "(d)")
    proc("g_which", "(g) which NAME", 0.3)
    proc("g_diff", "(g) diff A B", 0.3)
    for key, args in GREP_PATTERNS.items():
        shown = " ".join(args)
        proc(f"h_{key}", f"(h) grep {shown}, default scope", 0.2)
        proc(f"h_git_{key}", f"(h) git grep {shown}, same tags and paths", float("inf"))
    for key, args in GREP_PATTERNS.items():
        shown = " ".join(args)
        proc(f"h_{key}_d", f"(h) grep {shown}, --scope all", float("inf"))
        proc(f"h_git_{key}_d", f"(h) git grep {shown} -- 'vllm/*.py'", float("inf"))
        if f"h_{key}_d" in m and f"h_git_{key}_d" in m:
            value = m[f"h_git_{key}_d"]["wall"] / m[f"h_{key}_d"]["wall"]
            add(f"h_{key}_d/git", f"(h) git grep / grep, {shown}, --scope all", ">= 5", value >= 5, ratio=value)
    size("i_a", "(i) database size of (a), with the code")
    proc("i_a0", "(i) (a) without the code (--no-code)", float("inf"))
    size("i_a0_size", "(i) database size of (a) without the code")
    size("i_d", "(i) database size of (d), with the code")
    proc("i_d0", "(i) (d) without the code (--no-code), first run", float("inf"))
    size("i_d0_size", "(i) database size of (d) without the code")
    ratio("a/f", "(a)/(f), 1-core floor", "a", "f_a", "<= 2", lambda v: v <= 2)
    ratio("a/f_par", f"(a)/(f/{jobs}), {jobs}-core floor", "a", "f_a", None, None, divide=jobs)
    if "a" in m and "f_a" in m:
        add("a/f_cpu", "(a)/(f) in CPU time (all work done; less sensitive to load)", None, None,
            ratio=m["a"]["cpu"] / m["f_a"]["parse_cpu_s"])
    ratio("d/f", "(d)/(f), 1-core floor", "d", "f_d", None, None)
    ratio("d/f_par", f"(d)/(f/{jobs}), {jobs}-core floor", "d", "f_d", None, None, divide=jobs)
    if "d" in m and "f_d" in m:
        add("d/f_cpu", "(d)/(f) in CPU time", None, None, ratio=m["d"]["cpu"] / m["f_d"]["parse_cpu_s"])
    ratio("e/a", "(e)/(a)", "e", "a", ">= 3", lambda v: v >= 3, den_field="wall")
    for r in rows:  # (e), (i) and the git grep rows have no time target of their own
        if r["key"] == "e" or r["key"].startswith(("h_git_", "i_")) or (r["key"].startswith("h_")
                                                                         and r["key"].endswith("_d")):
            r["target"], r["met"] = None, None
    return rows


def _n(x, fmt="{:.2f}") -> str:
    return "" if x is None else fmt.format(x)


def table(rows: list[dict]) -> str:
    head = ["figure", "wall s", "CPU s", "peak RSS MB", "tree RSS MB", "target", "result"]
    lines = []
    for r in rows:
        verdict = "" if r["met"] is None else ("met" if r["met"] else "MISSED")
        if "ratio" in r:
            cells = [r["what"], _n(r["ratio"], "{:.2f}x"), "", "", "", r["target"] or "", verdict]
        elif "size_mb" in r:
            cells = [r["what"], _n(r["size_mb"], "{:.1f} MB"), "", "", "", "", ""]
        else:
            cells = [r["what"], _n(r["wall"]), _n(r.get("cpu")), _n(r.get("maxrss_mb"), "{:.0f}"),
                     _n(r.get("tree_rss_mb"), "{:.0f}"), r["target"] or "", verdict]
        lines.append(cells)
    widths = [max(len(str(c)) for c in col) for col in zip(head, *lines, strict=True)]
    left = (0, 5, 6)
    fmt = "| " + " | ".join(f"{{:{'<' if i in left else '>'}{w}}}" for i, w in enumerate(widths)) + " |"
    out = [fmt.format(*head), "|" + "|".join(("-" * (w + 2)) if i in left else ("-" * (w + 1) + ":")
                                             for i, w in enumerate(widths)) + "|"]
    out += [fmt.format(*cells) for cells in lines]
    return "\n".join(out)


def environment(repo: Path, labels: list[str]) -> dict:
    def out(*cmd):
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        return r.stdout.strip() if r.returncode == 0 else None

    from importlib.metadata import version

    return {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "host": platform.node(), "platform": platform.platform(), "python": platform.python_version(),
        "cpus": os.cpu_count(), "loadavg_start": os.getloadavg(),
        "tree_sitter": version("tree-sitter"), "tree_sitter_python": version("tree-sitter-python"),
        "project_commit": out("git", "rev-parse", "HEAD"),
        "project_dirty": bool(out("git", "status", "--porcelain", "--", "indexer", "queries")),
        "repo": str(repo), "tags": labels,
    }


def main(argv=None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("bench: terminated"))  # so the running child is ended
    from indexer.sources.git import GitSource
    from indexer.specs import SpecError, select

    repo = args.repo or releases.prepare(cache_dir() / "vllm-releases.git", args.tags, log=log)
    try:
        labels = select(args.tags, GitSource(repo).names()).names
    except SpecError as e:
        sys.exit(f"bench: {e}")
    if not labels:
        sys.exit(f"bench: {args.tags!r} selects no version tag in {repo}")
    log(f"benchmarking {len(labels)} tag(s) {labels[0]} .. {labels[-1]} of {repo}, {args.runs} run(s)")
    env = environment(repo, labels)
    jobs = os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="tpindex-bench-") as work:
        bench = Bench(args, repo, labels, Path(work))
        try:
            bench.run()
        except measure.CommandFailed as e:
            sys.exit(f"bench: {e}")
    env["loadavg_end"] = os.getloadavg()
    m = medians(bench.samples)
    rows = assess(m, jobs)
    text = table(rows)
    print(f"\ntpindex benchmark: {len(labels)} tags {labels[0]}..{labels[-1]}, median of {args.runs} run(s), "
          f"{jobs} CPU(s), load average {env['loadavg_start'][0]:.1f} at start, {env['loadavg_end'][0]:.1f} at end\n")
    print(text)
    print(f"\nRatios against the floor use the 1-core floor (f), the serial parse time; the build parses in "
          f"{jobs} worker processes, so (f/{jobs}) is the {jobs}-core floor it could reach at best.")
    path = args.json or cache_dir() / "results" / time.strftime("bench-%Y%m%d-%H%M%S.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"environment": env, "runs": args.runs, "medians": m, "figures": rows,
                                "samples": bench.samples, "table": text}, indent=1, default=str))
    print(f"\nresults: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
