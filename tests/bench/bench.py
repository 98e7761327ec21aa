"""tpindex's benchmark (`make bench`): build speed, memory and query speed on vllm's real release trees.

Prepares once, cached under the user cache dir (tpindex/bench/), a git repository with one tagged
commit per vllm release since v0.6.0 (see releases.py), then measures whole `tpindex` processes, each
several times (--runs, default 3), and reports medians against the targets (issue 30's, then issue 18's
and 25's still measured; TARGETS below):

    (a) cold build of every tag, default scope          <= 1.3 x (f+w)/N, the build's per-blob work on N cores
    (b) no-op re-run on the same database                 <= 0.3 s
    (c) adding the newest tag to a database of the others  <= 0.7 s
    (d) cold build with --scope all                       <= 40 s, tree RSS (every process of the build) <= 400 MB
    (k) cold build with --tree, every tag                 <= 60 s
    (j) `make index` on a warm cache: build --from-pypi --tree --tags v0.30.0..v0.32.0, fresh database  <= 15 s
    (h) `tpindex grep` beside `git grep -n -E` over the same tags and paths, five patterns (a literal, a
        regular expression, -i, a broad alternation of marker words, a selective name): identical results;
        default scope <= 0.2 s each; --scope all: git grep / tpindex grep >= 5 (broad), >= 10 (selective)
    (g) `which`, `diff`, `card` on (a)'s database and `where` on (j)'s, as whole processes  <= 0.1 s each
    (s) `tpindex serve` on (a)'s database, 20 concurrent loopback clients for 60 s on the parser, version,
        matrix, source, diff and grep pages (load.py)   p95 <= 250 ms, 0 errors, memory flat
    (e) (a) with --no-dedup (every file of every version)   (e)/(a) >= 3
    (f) tree-sitter parse of the unique blobs alone, the floor, for (a) and (d); (f+x) with the extraction,
        (f+w) the build's whole per-blob function
    (i) the database size of (a) and (d), and (a) (and, once, (d)) built without the code (--no-code)
    (r) `tpindex replay hermes` on (a)'s database over every version from v0.6.3 (all modes): cold (a fresh
        replay cache: the environment and the trees made, first run only), warm (trees made, the warm
        replay server running)  <= 15 s; one version (the newest) warm  <= 2 s, and with no warm server
    (m) `tpindex atlas` on a copy of (a)'s database, every tool parser at every version from v0.6.3: cold
        <= 600 s; after adding the newest tag to (c)'s database (its cells as the cold run stored them)
        <= 60 s; CPU time beside wall time; the share of pairs whose `single` case ran >= 0.95

`--markdown RESULTS.json` prints the tables of a results file; `--readme RESULTS.json` writes them into the
README's generated block (never edited by hand; tests/test_bench_report.py fails when it differs from what
the committed results give). See tests/bench/README.md.
Run from the project root: .venv/bin/python tests/bench/bench.py [options]
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
import threading
import time
from pathlib import Path

import ab
import measure
import releases

# (h): a literal, a regular expression, a case-insensitive pattern: (tpindex grep options, git grep options)
GREP_PATTERNS = {
    "lit": ["extract_tool_calls_streaming"],
    "re": ["def \\w+_streaming"],
    "i": ["-i", "tool_choice"],
    "broad": ["(HACK|FIXME|TODO)"],  # issue 30: a broad search, the cost is the matches
    "sel": ["structural_tag_model"],  # issue 30: a selective one, the cost is the lookup
}
# (s): the pages the served database is asked for under load ({newest}, {older}: the newest tag and the one
# before; {name}: --name); each client goes round them
LOAD_PAGES = [
    "/-/parser/tool/{name}",
    "/-/version/{newest}",
    "/-/parser-matrix",
    "/-/source/{newest}/{source}",
    "/-/diff?a={older}&b={newest}&name={name}",
    "/-/grep?q=extract_tool_calls_streaming",
]
GIT_ENV = {**os.environ, "LC_ALL": "C.UTF-8"}  # the locale tpindex grep's translation assumes (README)
INDEX_TAGS = "v0.30.0..v0.32.0"  # (j): what `make index` builds (Makefile TAGS)
HEADLINE_TAGS = INDEX_TAGS  # (a3): the headline build, default scope, from the repository

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
    ap = argparse.ArgumentParser(
        prog="bench.py",
        description="Benchmark tpindex on vllm's real release trees.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__,
    )
    ap.add_argument(
        "--runs", type=int, default=3, help="measure each figure N times and report medians (default 3)"
    )
    ap.add_argument(
        "--tags",
        default=releases.SINCE,
        help=f"tag spec to benchmark (default {releases.SINCE}: the 64 releases of issue 45)",
    )
    ap.add_argument("--skip-all-scope", action="store_true", help="skip (d) and its floor (the slowest part)")
    ap.add_argument(
        "--skip-index", action="store_true", help="skip (j), `make index` from the cached archives"
    )
    ap.add_argument("--index-tags", default=INDEX_TAGS, help=f"the tags (j) builds (default {INDEX_TAGS})")
    ap.add_argument("--json", type=Path, help="write the results here (default: under the cache dir)")
    ap.add_argument(
        "--repo",
        type=Path,
        help="use this git repository of release tags instead of preparing the cached one",
    )
    ap.add_argument(
        "--name", default="hermes", help="the parser name for (g) `which` and `card` (default hermes)"
    )
    ap.add_argument(
        "--symbol", default="make_arg_parser", help="the symbol for (g) `where` (default make_arg_parser)"
    )
    ap.add_argument("--skip-replay", action="store_true", help="skip (r), tpindex replay")
    ap.add_argument("--skip-atlas", action="store_true", help="skip (m), tpindex atlas")
    ap.add_argument(
        "--skip-replay-cold",
        action="store_true",
        help="skip (r)'s cold run (it creates a replay environment from the package index)",
    )
    ap.add_argument(
        "--skip-extras",
        action="store_true",
        help="skip what no target of issue 30 needs: (e), the --no-code builds of (i), and the extraction"
        " rows (f+x), (f+w) of (d)'s floor",
    )
    ap.add_argument("--skip-tree", action="store_true", help="skip (k), the --tree build of every tag")
    ap.add_argument("--skip-serve", action="store_true", help="skip (s), tpindex serve under load")
    ap.add_argument("--load-clients", type=int, default=20, help="(s): concurrent clients (default 20)")
    ap.add_argument(
        "--load-seconds", type=float, default=60.0, help="(s): how long the load lasts (default 60)"
    )
    ap.add_argument(
        "--base",
        metavar="REF",
        help="A/B mode: measure the build and query figures with this git revision of tpindex too, side by"
        " side (alternating runs, the same corpus), and report the ratios (make bench BENCH_BASE=REF)",
    )
    ap.add_argument(
        "--headline-tags",
        default=HEADLINE_TAGS,
        help=f"the tags of (a3), the headline build (default {HEADLINE_TAGS})",
    )
    ap.add_argument(
        "--skip-tests",
        action="store_true",
        help="skip (t), the test suite's wall time (make test, make test-fast; first run only)",
    )
    ap.add_argument(
        "--markdown",
        type=Path,
        metavar="RESULTS",
        help="print the tables of a results JSON file as Markdown and exit",
    )
    ap.add_argument(
        "--readme",
        type=Path,
        metavar="RESULTS",
        help="write the tables of a results JSON file (committed under tests/bench/results/) into the"
        " README's generated block and exit",
    )
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    return args


class Bench:
    def __init__(
        self,
        args,
        repo: Path,
        labels: list[str],
        work: Path,
        path: Path | None = None,
        env=None,
        base: ab.Side | None = None,
    ):
        self.args, self.repo, self.labels, self.work = args, repo, labels, work
        self.path, self.env = path, env or {}
        self.new = ab.new_side(tpindex_exe())
        self.exe = self.new.argv[0]
        self.sides = [base, self.new] if base is not None else [self.new]
        for side in self.sides:
            (work / side.name).mkdir(exist_ok=True)
        self.samples: dict[str, list[dict]] = {}
        self.checks: dict[str, list[dict]] = {}  # (h): tpindex grep's results beside git grep's, per run

    def db(self, side: ab.Side, name: str) -> Path:
        """A database of one side (each side builds and reads its own: their schemas differ)."""
        return self.work / side.name / f"{name}.db"

    def each(self, run: int, fn) -> None:
        """fn(side) for every side, base first in even runs, the working tree first in odd ones."""
        for side in ab.order(run, self.sides):
            fn(side)

    def measure(self, side: ab.Side, key: str, args: list[str], ok=(0,)) -> measure.Sample | None:
        """Run `tpindex ARGS` as one side and record it under its key (the base's prefixed `base:`); a base
        that cannot run it (a command or option it lacks) is left out of that figure, said in the log."""
        try:
            sample = side.run(args, ok=ok)
        except measure.CommandFailed as e:
            if side is self.new:
                raise
            log(f"    base:{key} left out: {str(e).splitlines()[0][:200]}")
            return None
        self.record(side.key(key), sample)
        return sample

    def build_args(self, db: Path, *extra: str, tags: str | None = None, fresh: bool = True) -> list[str]:
        """`tpindex build` of the corpus into `db` (removed first unless not `fresh`)."""
        if fresh:
            for p in db.parent.glob(db.name + "*"):
                p.unlink()
        return [
            "build",
            "--repo",
            str(self.repo),
            "--tags",
            tags or self.args.tags,
            "--db",
            str(db),
            "-q",
            *extra,
        ]

    def build(self, db: Path, *extra: str, tags: str | None = None, fresh: bool = True) -> measure.Sample:
        return self.new.run(self.build_args(db, *extra, tags=tags, fresh=fresh))

    def record(self, key: str, sample: measure.Sample | dict) -> None:
        row = sample.row() if isinstance(sample, measure.Sample) else sample
        row["loadavg"] = os.getloadavg()[0]  # after the run: how busy the machine was meanwhile
        self.samples.setdefault(key, []).append(row)
        wall = row.get("wall", row.get("parse_s"))
        log(f"    {key:<10} {wall:8.3f} s")
        self.save()

    def save(self) -> None:
        """The samples so far into the results file (`partial`): a run cut short keeps what it measured."""
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(
                json.dumps(
                    {
                        "environment": {**self.env, "loadavg_end": os.getloadavg()},
                        "runs": self.args.runs,
                        "partial": True,
                        "checks": self.checks,
                        "samples": self.samples,
                    },
                    indent=1,
                    default=str,
                )
            )

    def floor(self, scope: str, extract: bool) -> dict:
        cmd = [
            sys.executable,
            str(HERE / "floor.py"),
            "--repo",
            str(self.repo),
            "--tags",
            self.args.tags,
            "--scope",
            scope,
        ] + (["--extract"] if extract else [])
        return json.loads(measure.run(cmd).stdout)

    def size(self, key: str, db: Path) -> None:
        mb = sum(p.stat().st_size for p in db.parent.glob(db.name + "*") if p.suffix != ".lock") / 1e6
        self.samples.setdefault(key, []).append({"size_mb": mb})
        log(f"    {key:<10} {mb:8.1f} MB")

    def grep(self, scope: str, name: str, run: int) -> None:
        """(h): each pattern through tpindex grep (each side, on its own database `name`), and through git grep
        over the same tags and paths; then the two result sets, (version, path, line, text) each, compared
        (the working tree's tpindex grep through --format json, untimed)."""
        from indexer.core.scope import Scope

        specs = list(Scope.named(scope).patterns)  # every file in scope is stored: templates and tests too
        suffix = "" if scope == "default" else "_d"
        db = self.db(self.new, name)
        for key, args in GREP_PATTERNS.items():
            self.each(
                run,
                lambda side, args=args, key=key: self.measure(
                    side, f"h_{key}{suffix}", ["grep", *args, "--db", str(self.db(side, name))], ok=(0, 1)
                ),
            )
            git = [
                "git",
                "--git-dir",
                str(self.repo),
                "grep",
                "-n",
                "-E",
                *args[:-1],
                "-e",
                args[-1],
                *self.labels,
                "--",
                *specs,
            ]
            sample = measure.run(git, ok=(0, 1), env=GIT_ENV)
            self.record(f"h_git_{key}{suffix}", sample)
            ours = grep_results(
                measure.run([self.exe, "grep", "--format", "json", *args, "--db", str(db)], ok=(0, 1)).stdout
            )
            theirs = git_grep_results(self.repo, sample.stdout)
            self.checks.setdefault(f"h_same_{key}{suffix}", []).append(
                {
                    "same": ours == theirs,
                    "lines": len(theirs),
                    "tpindex_lines": len(ours),
                    "only_tpindex": sorted(map(str, ours - theirs))[:5],
                    "only_git": sorted(map(str, theirs - ours))[:5],
                }
            )
            log(
                f"    h_same_{key}{suffix:<3} {'identical' if ours == theirs else 'DIFFERENT'} ({len(theirs)} lines)"
            )

    REPLAY_TEXT = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    REPLAY_SINCE = "v0.6.3.."

    def replay(self, db: Path, first: bool) -> None:
        """(r): one name over every version from v0.6.3, cold (first run: a fresh replay cache, so the
        environment and the trees are made, and its server started) and warm (the user cache, its trees
        made and its warm server started untimed before the first warm run); one version (the newest) warm,
        and with no warm server (TPINDEX_REPLAY_IDLE=0: the run imports every package itself). CPU: tpindex's
        own plus its workers' (a warm server's workers are not tpindex's children)."""
        text = self.work / "replay.txt"
        text.write_text(self.REPLAY_TEXT)
        cmd = [self.exe, "replay", "hermes", "--text", str(text), "--db", str(db), "-q", "--format", "json"]
        if first and not self.args.skip_replay_cold:
            cold = self.work / "replay-cold-cache"
            shutil.rmtree(cold, ignore_errors=True)
            cold_env = {**os.environ, "TPINDEX_REPLAY_CACHE": str(cold)}
            self.record("r_cold", self.replay_sample(cmd + ["--tags", self.REPLAY_SINCE], cold_env))
            measure.run([self.exe, "replay", "--stop-server"], env=cold_env)
            shutil.rmtree(cold, ignore_errors=True)
        if first:
            measure.run(
                cmd + ["--tags", self.REPLAY_SINCE]
            )  # untimed: the user cache's trees, its warm server
        self.record("r_warm", self.replay_sample(cmd + ["--tags", self.REPLAY_SINCE]))
        self.record("r_one", self.replay_sample(cmd + ["--at", self.labels[-1]]))
        self.record(
            "r_one_idle0",
            self.replay_sample(cmd + ["--at", self.labels[-1]], {**os.environ, "TPINDEX_REPLAY_IDLE": "0"}),
        )

    @staticmethod
    def replay_sample(cmd: list[str], env: dict | None = None) -> measure.Sample:
        sample = measure.run(cmd, env=env)
        answer = json.loads(sample.stdout)
        if answer["timing"].get("server") == "warm":  # the workers ran under the warm server, not tpindex
            sample.cpu += sum(v.get("cpu_seconds") or 0 for v in answer["versions"])
        return sample

    # -- (m): the behaviour atlas (issue 44), self-contained: atlas(), atlas_sample(), atlas_share() and the
    # rows of assess_atlas() ---------------------------------------------------------------------------------

    ATLAS_SINCE = "v0.6.3.."

    def atlas(self, a_db: Path, c_base: Path | None, newest: str) -> None:
        """(m): `tpindex atlas` over every version from v0.6.3, every tool parser: cold (a copy of (a)'s
        database, no cell stored; the replay trees and environment already made, by (r) when it ran) and
        with one new release (a copy of (c)'s database of every tag but the newest, its cells read from the
        cold run's tables for the other tags (cells are keyed by what determines them, not by database; the
        newest tag's own cells left out), mapped untimed; the
        newest tag built in, untimed; then the run timed: only what the new release changed runs). Wall
        and CPU: tpindex's own plus its replay workers' (the warm replay server's children). `m_single`:
        the share of (tool parser, version) pairs from v0.6.3 whose `single` case ran (not not-applicable)."""
        t_db = self.work / "m.db"
        for p in self.work.glob("m.db*"):
            p.unlink()
        shutil.copyfile(a_db, t_db)
        args = [
            "--tags",
            self.ATLAS_SINCE,
            "-q",
            "--format",
            "json",
            "--case",
            "single",
            "--mode",
            "nonstream",
        ]
        self.record("m_cold", self.atlas_sample([self.exe, "atlas", "--db", str(t_db), *args]))
        self.record("m_single", {"wall": 0.0, "share": self.atlas_share(t_db)})
        if c_base is None:
            return
        u_db = self.work / "m-add.db"
        for p in self.work.glob("m-add.db*"):
            p.unlink()
        shutil.copyfile(c_base, u_db)
        measure.run([self.exe, "atlas", "--db", str(u_db), *args[:2], "-q", "--no-run"], ok=(0, 2))
        import sqlite3

        conn = sqlite3.connect(
            u_db
        )  # what the cold run stored for the other tags only (not the newest's cells)
        conn.execute("attach database ? as cold", [str(t_db)])
        older = (
            "select {col} from cold.atlas_map m join cold.versions v on v.id = m.version_id"
            " where v.label != ?"
        )
        keys = f"({older.format(col='m.core_key')} union {older.format(col='m.serving_key')})"
        conn.execute(
            f"insert or ignore into atlas_cells select * from cold.atlas_cells where key in {keys}",
            [newest, newest],
        )
        conn.execute(
            "insert or ignore into atlas_cases select * from cold.atlas_cases where key in"
            f" ({older.format(col='m.case_key')})",
            [newest],
        )
        blobs = "(select blob_id from main.version_files)"
        for table in ("atlas_literals", "atlas_read"):
            conn.execute(f"insert or ignore into {table} select * from cold.{table} where blob_id in {blobs}")
        conn.commit()
        conn.close()
        measure.run([self.exe, "atlas", "--db", str(u_db), *args])  # untimed: maps the stored cells
        self.build(u_db, tags=newest, fresh=False)  # untimed: the new release indexed
        self.record("m_add", self.atlas_sample([self.exe, "atlas", "--db", str(u_db), *args]))

    @staticmethod
    def atlas_sample(cmd: list[str]) -> dict:
        sample = measure.run(cmd)
        run = json.loads(sample.stdout)["run"]
        sample.cpu += run["worker_cpu_seconds"]  # the workers ran under the warm server, not tpindex
        row = sample.row()
        row.update(cells_run=run["cells_run"], cells_reused=run["cells_reused"], jobs=run["jobs"])
        return row

    def atlas_share(self, db: Path) -> float:
        import sqlite3

        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        since = conn.execute("select ord from versions where label = 'v0.6.3'").fetchone()
        pairs, ran = conn.execute(
            "select count(*), sum(m.case_key is not null and exists (select 1 from atlas_cells c"
            " where c.key = m.core_key and c.mode = 'nonstream' and c.status != 'not-applicable'))"
            " from atlas_map m join versions v on v.id = m.version_id"
            " where m.kind = 'tool' and m.case_id = 'single' and v.ord >= ?",
            [since[0] if since else 0],
        ).fetchone()
        conn.close()
        return (ran or 0) / pairs if pairs else 0.0

    def serve(self, db: Path) -> None:
        """(s): `tpindex serve` on (a)'s database, `--load-clients` clients on loopback for `--load-seconds`
        (load.py) going round LOAD_PAGES; latencies, errors, and the server's memory (anonymous resident, its
        whole process tree: the search children too) after a warm-up round, at its peak, and at the end."""
        import socket
        import sqlite3

        import load

        newest, older = self.labels[-1], self.labels[-2] if len(self.labels) > 1 else self.labels[-1]
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        row = conn.execute(
            "select coalesce(real_file, registry_file) from parser_map_v where version = ?"
            " and name = ? and kind = 'tool'",
            [newest, self.args.name],
        ).fetchone()
        conn.close()
        pages = [
            p.format(name=self.args.name, newest=newest, older=older, source=row[0] if row else "")
            for p in LOAD_PAGES
            if row or "{source}" not in p
        ]
        with socket.socket() as sock:  # a free port on loopback
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        proc = subprocess.Popen(
            [self.exe, "serve", "--db", str(db), "--port", str(port)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + 60
            while True:  # up: every page answers once (the warm-up round)
                warm = load.run(port, pages, clients=1, seconds=60, max_requests=len(pages))
                if warm["errors"] == 0 or time.monotonic() > deadline or proc.poll() is not None:
                    break
                time.sleep(0.5)
            if warm["errors"]:
                raise measure.CommandFailed(f"serve did not answer every page: {warm['error_kinds']}")
            start = _tree_anon_mb(proc.pid)
            peak = [start]
            done = threading.Event()

            def sample():
                while not done.wait(0.5):
                    peak.append(_tree_anon_mb(proc.pid))

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            out = load.run(port, pages, clients=self.args.load_clients, seconds=self.args.load_seconds)
            done.set()
            sampler.join()
            time.sleep(1.0)  # a search child still exiting is not the server's memory
            end = _tree_anon_mb(proc.pid)
        finally:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        out.update(mem_start_mb=start, mem_peak_mb=max(peak), mem_end_mb=end, pages=pages)
        self.record("s", {"wall": out["p95_ms"] / 1000, **out})

    def prepare_index(self) -> list[str] | None:
        """(j)'s archives in the archive cache (untimed): a download now would be timed otherwise."""
        from indexer.core.specs import SpecError, select
        from indexer.sources.pypi import PypiSource

        source = PypiSource()
        try:
            labels = select(self.args.index_tags, source.names()).names
            for label in labels:
                source.archive(label)
        except (OSError, SpecError) as e:
            log(f"(j) left out: its archives cannot be cached ({e})")
            return None
        log(f"(j): {len(labels)} archive(s) in {source.cache_dir}")
        return labels

    def index_args(self, db: Path) -> list[str]:
        for p in db.parent.glob(db.name + "*"):
            p.unlink()
        return ["build", "--from-pypi", "--tree", "--tags", self.args.index_tags, "--db", str(db), "-q"]

    def tests(self) -> None:
        """(t): the test suite's wall time, `make test` (complete: network, browser, crash trials) and `make
        test-fast`, once; a failing suite is recorded with its exit status (the row says so)."""
        for key, target in (("t_fast", "test-fast"), ("t", "test")):
            sample = measure.run(["make", "-C", str(ROOT), target], ok=tuple(range(256)))
            row = sample.row()
            row["stdout"], row["failed"] = row["stdout"][-600:], int(sample.rc != 0)
            self.record(key, row)

    def run(self) -> None:
        """Issue 45's figures first (a run cut short keeps them: see save). With a base (A/B mode), each
        build and query figure is measured for both sides in turn, the order alternating from run to run."""
        newest, others = self.labels[-1], self.labels[:-1]
        new = self.new
        if others:
            log(
                f"preparing (c): a database of {len(others)} tag(s) without {newest} (untimed, once; copied per run)"
            )
            for side in self.sides:
                try:
                    side.run(self.build_args(self.db(side, "c-base"), tags=",".join(others)))
                except measure.CommandFailed as e:
                    if side is new:
                        raise
                    log(f"    base (c) left out: {str(e).splitlines()[0][:200]}")
        index_labels = None if self.args.skip_index else self.prepare_index()

        def build(key, name, *extra, tags=None):
            return lambda side: self.measure(
                side, key, self.build_args(self.db(side, name), *extra, tags=tags)
            )

        def ask(key, name, *args, ok=(0,)):
            return lambda side: self.measure(side, key, [*args, "--db", str(self.db(side, name))], ok=ok)

        def add_newest(side):
            c_base, c_db = self.db(side, "c-base"), self.db(side, "c")
            if not c_base.exists():
                return
            for p in c_db.parent.glob(c_db.name + "*"):
                p.unlink()
            shutil.copyfile(c_base, c_db)
            self.measure(side, "c", self.build_args(c_db, tags=newest, fresh=False))

        for i in range(1, self.args.runs + 1):
            log(f"run {i}/{self.args.runs}")
            self.each(i, build("a", "a"))
            self.size("i_a", self.db(new, "a"))
            self.each(i, build("a3", "a3", tags=self.args.headline_tags))
            if others:
                self.each(i, add_newest)
            self.each(
                i, lambda side: self.measure(side, "b", self.build_args(self.db(side, "a"), fresh=False))
            )
            self.record("f_a", self.floor("default", extract=i == 1))
            self.each(i, ask("g_which", "a", "which", self.args.name))
            self.each(i, ask("g_card", "a", "card", self.args.name))
            if others:  # 1: something changed, like diff(1)
                self.each(i, ask("g_diff", "a", "diff", others[-1], newest, ok=(0, 1)))
            self.grep("default", "a", i)
            if not self.args.skip_all_scope:
                self.each(i, build("d", "d", "--scope", "all"))
                self.size("i_d", self.db(new, "d"))
                self.grep("all", "d", i)
            if not self.args.skip_tree:
                self.each(i, build("k", "k", "--tree"))
            if not (self.args.skip_all_scope and self.args.skip_tree):
                # the parse floor of (d) and (k): every module under vllm/ (--tree parses the same blobs)
                extra = i == 1 and not self.args.skip_extras and not self.args.skip_all_scope
                self.record("f_d", self.floor("all", extract=extra))
            if index_labels:
                self.each(i, lambda side: self.measure(side, "j", self.index_args(self.db(side, "j"))))
                self.each(i, ask("g_where", "j", "where", self.args.symbol, ok=(0, 1)))
            if not self.args.skip_serve:
                self.serve(self.db(new, "a"))
            if not self.args.skip_replay:
                self.replay(self.db(new, "a"), first=i == 1)
            if not self.args.skip_atlas:
                c_base = self.db(new, "c-base")
                self.atlas(self.db(new, "a"), c_base if others and c_base.exists() else None, newest)
            if not self.args.skip_extras:
                self.record("e", self.build(self.work / "e.db", "--no-dedup"))
                self.record("i_a0", self.build(self.work / "a0.db", "--no-code"))
                self.size("i_a0_size", self.work / "a0.db")
                if i == 1 and not self.args.skip_all_scope:  # once: the code's cost in the slowest build
                    self.record("i_d0", self.build(self.work / "d0.db", "--scope", "all", "--no-code"))
                    self.size("i_d0_size", self.work / "d0.db")
            if i == 1 and not self.args.skip_tests:
                self.tests()


def _tree_anon_mb(pid: int) -> float:
    """Anonymous resident memory of a process and its descendants, MB (measure.py's reading)."""
    return sum(measure._rss_kb(p)[0] for p in measure._tree(pid)) / 1024


def grep_results(out: str) -> set[tuple]:
    """(version, path, line, text) of each line `tpindex grep --format json` prints."""
    return {(v, r["path"], r["line"], r["text"]) for r in json.loads(out or "[]") for v in r["versions"]}


def git_grep_results(repo: Path, out: str) -> set[tuple]:
    """(tag, path, line, text) of each line `git grep -n` prints over tags (binary files: line and text None).
    git grep's phantom line past the end of a file (a pattern matching an empty line, see tests/test_code.py)
    is left out, as tpindex does not report it."""
    found = set()
    for raw in out.split("\n"):
        if not raw:
            continue
        if raw.startswith("Binary file ") and raw.endswith(" matches"):
            tag, _, path = raw[len("Binary file ") : -len(" matches")].partition(":")
            found.add((tag, path, None, None))
            continue
        tag, path, line, text = raw.split(":", 3)
        found.add((tag, path, int(line), text))
    return {f for f in found if f[3] != "" or not _past_the_end(repo, *f[:3])}


def _past_the_end(repo: Path, tag: str, path: str, line: int) -> bool:
    data = releases.git(repo, "cat-file", "blob", f"{tag}:{path}").stdout
    return line > data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


# -- results -----------------------------------------------------------------------------------------------

FIELDS = (
    "share",  # (m): the share of pairs whose single case ran
    "cells_run",
    "cells_reused",
    "wall",
    "cpu",
    "maxrss_mb",
    "tree_rss_mb",
    "loadavg",
    "parse_s",
    "parse_cpu_s",
    "extract_s",
    "extract_cpu_s",
    "worker_s",
    "worker_cpu_s",
    "collect_s",
    "unique_blobs",
    "bytes",
    "files",
    "versions",
    "size_mb",
    "p50_ms",
    "p95_ms",
    "max_ms",
    "errors",
    "requests",
    "rps",
    "clients",
    "seconds",
    "mem_start_mb",
    "mem_peak_mb",
    "mem_end_mb",
    "failed",
)


def medians(samples: dict[str, list[dict]]) -> dict[str, dict]:
    out = {}
    for key, rows in samples.items():
        out[key] = {
            f: statistics.median(vals)
            for f in FIELDS
            if (vals := [r[f] for r in rows if r.get(f) is not None])
        }
    return out


# The targets, issue 30's table first, then those of issues 18 and 25 still measured: (number, what, key of the
# row or rows whose verdict answers it)
TARGETS = [
    (1, "cold build, default scope, every tag, side by side with the base (issue 45)", "a/base"),
    (2, "headline build (3 tags, default scope), side by side with the base (issue 45)", "a3/base"),
    (3, "add the newest tag to a database of the others, default scope (issues 18, 45)", "c"),
    (4, "cold build, --scope all, against its parse floor on N cores (issues 30, 45)", "d"),
    (5, "cold build with --tree, every tag, against its parse floor on N cores (issue 45)", "k"),
    (6, "`make test`: the whole suite (issue 45)", "t"),
    (7, "`make test-fast`: no network, no browser, no crash trials (issue 45)", "t_fast"),
    (
        8,
        "`grep '(HACK|FIXME|TODO)'`, --scope all, whole process, vs `git grep -n -E` (issue 30)",
        "h_broad_d/git",
    ),
    (9, "`grep structural_tag_model`, --scope all, vs `git grep` (issue 30)", "h_sel_d/git"),
    (10, "cold build, default scope, against the build's per-blob work on N cores (issue 30)", "a/f_w_par"),
    (11, "`which`, `card`, `diff`, `where` as whole processes (issue 30)", "g"),
    (12, "`serve` under load: concurrent clients on six kinds of page, loopback (issue 30)", "s"),
    (13, "no-op re-run (issue 18)", "b"),
    (14, "`make index` on a warm cache (3 tags, --tree, fresh database) (issue 18)", "j"),
    (15, "`tpindex grep`, default scope, and the lines git grep finds (issue 18)", "h"),
    (16, "no-dedup / dedup, default scope (issue 18)", "e/a"),
    (17, "`tpindex replay` one name over every version from v0.6.3, and one version (issue 25)", "r"),
    (
        18,
        "`tpindex atlas` every tool parser at every version from v0.6.3, cold and one new release (issue 44)",
        "m",
    ),
]
SERVE_P95_MS = 250
AB_TARGETS = {"a": 1.0, "a3": 1.0}  # issue 45: working tree / base, wall and CPU, side by side
FLOOR_RATIO = 1.3  # issue 45: (d) and (k) against the parse floor of their modules on N cores
TREE_RSS_MB = 400  # issue 30: the --scope all build's memory, every process of it
TEST_S, TEST_FAST_S = 8 * 60, 3 * 60  # issue 45: make test, make test-fast
FLAT_MB = (
    10.0  # (s): "memory flat": the server's memory at the end within this many MB, or 10 %, of its start
)


def assess_atlas(m: dict[str, dict], proc, ratio) -> None:
    """(m)'s rows (issue 44): the atlas cold and with one new release (wall; CPU beside it), and the share of
    (tool parser, version) pairs whose `single` case ran."""
    proc("m_cold", "(m) atlas, every tool parser at every version from v0.6.3, cold (no cell stored)", 600)
    proc("m_add", "(m) atlas after adding the newest release (only what it changed runs)", 60)
    if "m_single" in m:
        share = m["m_single"]["share"]
        ratio(
            "m_single",
            "(m) (tool parser, version) pairs whose `single` case ran",
            share,
            ">= 0.95",
            share >= 0.95,
        )


def atlas_summary(by: dict[str, dict], verdict):
    """(m)'s line of the summary: (result, target, met), or None when not measured."""
    keys = [k for k in ("m_cold", "m_add", "m_single") if k in by]
    if not keys:
        return None
    parts = [
        f"{label} {by[k]['wall']:.0f} s (CPU {by[k]['cpu']:.0f} s)"
        for k, label in (("m_cold", "cold"), ("m_add", "one new release"))
        if k in by
    ]
    if "m_single" in by:
        parts.append(f"`single` ran for {by['m_single']['ratio']:.1%} of the pairs")
    return ", ".join(parts), "cold <= 600 s; one new release <= 60 s; `single` >= 95 %", verdict(keys)


def assess(m: dict[str, dict], jobs: int, checks: dict[str, list[dict]] | None = None) -> list[dict]:
    """One row per figure: what, the numbers, the target and whether it is met."""
    rows = []
    checks = checks or {}

    def add(key, what, target=None, met=None, **numbers):
        rows.append({"key": key, "what": what, "target": target, "met": met, **numbers})

    def proc(key, what, limit=None, tree_rss_limit=None):
        if key not in m:
            return
        x = m[key]
        met = target = None
        if limit is not None:
            met = x["wall"] <= limit and (
                tree_rss_limit is None or (x.get("tree_rss_mb") or 0) <= tree_rss_limit
            )
            target = f"<= {limit:g} s" + (f", tree RSS <= {tree_rss_limit} MB" if tree_rss_limit else "")
        add(
            key,
            what,
            target,
            met,
            wall=x["wall"],
            cpu=x["cpu"],
            maxrss_mb=x["maxrss_mb"],
            tree_rss_mb=x.get("tree_rss_mb"),
        )

    def floor(key, what, of):
        if key not in m:
            return
        x = m[key]
        add(
            key,
            f"{what} ({x['unique_blobs']:.0f} unique blobs, {x['bytes'] / 1e6:.1f} MB)",
            None,
            None,
            wall=x["parse_s"],
            cpu=x["parse_cpu_s"],
        )
        add(key + "/par", f"(f/{jobs}) {jobs}-core parse floor of {of}", None, None, wall=x["parse_s"] / jobs)
        if "extract_s" in x:
            add(
                key + "+x",
                f"(f+x) parse + extract of {of}'s blobs, 1 core",
                None,
                None,
                wall=x["extract_s"],
                cpu=x["extract_cpu_s"],
            )
        if "worker_s" in x:
            add(
                key + "+w",
                f"(f+w) the build's whole per-blob work for {of} (parse, extract, locate, code), 1 core",
                None,
                None,
                wall=x["worker_s"],
                cpu=x["worker_cpu_s"],
            )

    def size(key, what):
        if key in m:
            add(key, what, None, None, size_mb=m[key]["size_mb"])

    def ratio(key, what, value, target=None, met=None):
        add(key, what, target, met, ratio=value)

    # 1. (a) against the 2-core floor of its blobs, measured in the same run
    if "a" in m and "f_a" in m and "worker_s" in m["f_a"]:  # issue 30: against the per-blob work on N cores
        work = m["f_a"]["worker_s"] / jobs
        proc("a", "(a) cold build, default scope")
        rows[-1]["target"] = f"<= 1.3 x ((f+w)/{jobs}) = {1.3 * work:.2f} s"
        rows[-1]["met"] = m["a"]["wall"] <= 1.3 * work
    elif "a" in m and "f_a" in m:
        par = m["f_a"]["parse_s"] / jobs
        proc("a", "(a) cold build, default scope")
        rows[-1]["target"] = f"<= 1.5 x (f/{jobs}) = {1.5 * par:.2f} s"
        rows[-1]["met"] = m["a"]["wall"] <= 1.5 * par
    else:
        proc("a", "(a) cold build, default scope")
    proc("a3", f"(a3) headline build: --tags {HEADLINE_TAGS}, default scope, fresh database")
    proc("b", "(b) no-op re-run", 0.3)
    proc("c", "(c) add the newest tag", 0.7)
    proc("d", "(d) cold build, --scope all")
    proc("k", "(k) cold build with --tree, every tag")
    if "f_d" in m:  # issue 45: (d) and (k) against the parse floor of their modules on N cores
        limit = FLOOR_RATIO * m["f_d"]["parse_s"] / jobs
        for r in rows:
            if r["key"] in ("d", "k"):
                r["target"] = f"<= {FLOOR_RATIO} x (f_d/{jobs}) = {limit:.1f} s" + (
                    f", tree RSS <= {TREE_RSS_MB} MB" if r["key"] == "d" else ""
                )
                r["met"] = r["wall"] <= limit and (
                    r["key"] == "k" or (r.get("tree_rss_mb") or 0) <= TREE_RSS_MB
                )
    for key, label, limit in (("t", "make test", TEST_S), ("t_fast", "make test-fast", TEST_FAST_S)):
        if key in m:
            x = m[key]
            passed = not x.get("failed")
            add(
                key,
                f"(t) {label}: the test suite, wall time" + ("" if passed else " (FAILED: a non-zero exit)"),
                f"<= {limit / 60:g} min",
                x["wall"] <= limit and passed,
                wall=x["wall"],
                cpu=x["cpu"],
                maxrss_mb=x.get("maxrss_mb"),
                tree_rss_mb=None,
            )
    proc(
        "j",
        f"(j) make index: build --from-pypi --tree --tags {INDEX_TAGS}, cached archives, fresh database",
        15,
    )
    proc("e", "(e) cold build, --no-dedup")
    floor("f_a", "(f) parse floor of (a)", "(a)")
    floor("f_d", "(f) parse floor of (d) and (k)", "(d)")
    proc("g_which", "(g) which NAME", 0.1)
    proc("g_diff", "(g) diff A B", 0.1)
    proc("g_card", "(g) card NAME", 0.1)
    proc("g_where", "(g) where SYMBOL, on (j)'s database", 0.1)
    if "s" in m:
        x = m["s"]
        flat = x["mem_end_mb"] - x["mem_start_mb"] <= max(FLAT_MB, 0.1 * x["mem_start_mb"])
        add(
            "s",
            f"(s) serve under load: {x['clients']:.0f} clients, {x['seconds']:.0f} s, {x['requests']:.0f}"
            f" requests ({x['rps']:.0f}/s), p50 {x['p50_ms']:.0f} ms, max {x['max_ms']:.0f} ms; server memory"
            f" {x['mem_start_mb']:.0f} MB after warm-up, peak {x['mem_peak_mb']:.0f}, end {x['mem_end_mb']:.0f}",
            f"p95 <= {SERVE_P95_MS} ms, 0 errors, memory flat",
            x["p95_ms"] <= SERVE_P95_MS and x["errors"] == 0 and flat,
            value=f"p95 {x['p95_ms']:.0f} ms, {x['errors']:.0f} errors",
        )
    for suffix, scope in (("", "default scope"), ("_d", "--scope all")):
        for key, args in GREP_PATTERNS.items():
            shown = " ".join(args)
            proc(f"h_{key}{suffix}", f"(h) grep {shown}, {scope}", 0.2 if not suffix else None)
            proc(f"h_git_{key}{suffix}", f"(h) git grep {shown}, same tags and paths", None)
            same = checks.get(f"h_same_{key}{suffix}")
            if same:
                ok = all(c["same"] for c in same)
                add(
                    f"h_same_{key}{suffix}",
                    f"(h) grep {shown}, {scope}: the lines git grep finds",
                    "identical",
                    ok,
                    value=f"{same[0]['lines']} lines, " + ("identical" if ok else "DIFFERENT"),
                )
            if suffix and f"h_{key}_d" in m and f"h_git_{key}_d" in m:
                value = m[f"h_git_{key}_d"]["wall"] / m[f"h_{key}_d"]["wall"]
                want = 10 if key == "sel" else 5
                ratio(
                    f"h_{key}_d/git",
                    f"(h) git grep / grep, {shown}, --scope all",
                    value,
                    f">= {want}",
                    value >= want,
                )
                cpu = m[f"h_git_{key}_d"]["cpu"] / m[f"h_{key}_d"]["cpu"]
                ratio(f"h_{key}_d/git_cpu", f"(h) the same in CPU time, {shown}", cpu)
    assess_atlas(m, proc, ratio)
    proc("r_cold", "(r) replay hermes, every version from v0.6.3, cold (environment and trees made)")
    proc("r_warm", "(r) replay hermes, every version from v0.6.3, warm", 15)
    proc("r_one", "(r) replay hermes, one version (the newest), warm", 2)
    proc("r_one_idle0", "(r) replay hermes, one version (the newest), no warm server (TPINDEX_REPLAY_IDLE=0)")
    size("i_a", "(i) database size of (a), with the code")
    proc("i_a0", "(i) (a) without the code (--no-code)")
    size("i_a0_size", "(i) database size of (a) without the code")
    size("i_d", "(i) database size of (d), with the code")
    proc("i_d0", "(i) (d) without the code (--no-code), first run")
    size("i_d0_size", "(i) database size of (d) without the code")
    if "a" in m and "f_a" in m:
        par = m["f_a"]["parse_s"] / jobs
        ratio(
            "a/f_par",
            f"(a)/(f/{jobs}), {jobs}-core floor",
            m["a"]["wall"] / par,
            "<= 1.5",
            m["a"]["wall"] / par <= 1.5,
        )
        ratio("a/f", "(a)/(f), 1-core floor", m["a"]["wall"] / m["f_a"]["parse_s"])
        ratio(
            "a/f_cpu",
            "(a)/(f) in CPU time (all work done; less sensitive to load)",
            m["a"]["cpu"] / m["f_a"]["parse_cpu_s"],
        )
        if "worker_s" in m["f_a"]:
            work = m["f_a"]["worker_s"] / jobs
            value = m["a"]["wall"] / work
            ratio(
                "a/f_w_par",
                f"(a)/((f+w)/{jobs}), the build's per-blob work on {jobs} cores",
                value,
                "<= 1.3",
                value <= 1.3,
            )
            ratio(
                "a/f_w_cpu",
                "(a)/(f+w) in CPU time (what the build does besides the per-blob work)",
                m["a"]["cpu"] / m["f_a"]["worker_cpu_s"],
            )
    if "d" in m and "f_d" in m:
        ratio("d/f_par", f"(d)/(f/{jobs}), {jobs}-core floor", m["d"]["wall"] / (m["f_d"]["parse_s"] / jobs))
        ratio("d/f", "(d)/(f), 1-core floor", m["d"]["wall"] / m["f_d"]["parse_s"])
        ratio("d/f_cpu", "(d)/(f) in CPU time", m["d"]["cpu"] / m["f_d"]["parse_cpu_s"])
    if "e" in m and "a" in m:
        value = m["e"]["wall"] / m["a"]["wall"]
        ratio("e/a", "(e)/(a), no-dedup / dedup", value, ">= 3", value >= 3)
    # A/B mode: each figure measured with the base too, the ratio of the medians (working tree / base)
    whats = {r["key"]: r["what"] for r in rows}
    for key in [k for k in m if k.startswith("base:")]:
        figure = key[len("base:") :]
        if figure not in m or "cpu" not in m[figure] or "cpu" not in m[key]:
            continue
        new, old = m[figure], m[key]
        wall, cpu = new["wall"] / old["wall"], new["cpu"] / old["cpu"]
        limit = AB_TARGETS.get(figure)
        add(
            figure + "/base",
            whats.get(figure, figure),
            None if limit is None else f"<= {limit:.1f}x",
            None if limit is None else (wall <= limit and cpu <= limit),
            ab=True,
            ratio=wall,
            cpu_ratio=cpu,
            base_wall=old["wall"],
            base_cpu=old["cpu"],
            wall=new["wall"],
            cpu=new["cpu"],
        )
    return rows


def summary(rows: list[dict], jobs: int) -> list[dict]:
    """The targets (TARGETS), each with its result, from the rows of assess()."""
    by = {r["key"]: r for r in rows}
    out = []

    def verdict(keys):
        found = [by[k]["met"] for k in keys if k in by and by[k]["met"] is not None]
        return None if not found else all(found)

    def grep_vs_git(key):
        pat = key[len("h_") : -len("_d/git")]
        ours, git, same = by[f"h_{pat}_d"], by[f"h_git_{pat}_d"], by.get(f"h_same_{pat}_d")
        result = (
            f"{ours['wall']:.2f} s vs {git['wall']:.2f} s = {by[key]['ratio']:.1f}x"
            f" (CPU {by[key + '_cpu']['ratio']:.1f}x); " + (same["value"] if same else "results not compared")
        )
        return (
            result,
            f"{by[key]['target']}x faster, identical results",
            verdict([key] + ([same["key"]] if same else ["missing"])),
        )

    for n, what, key in TARGETS:
        unmeasured = {"n": n, "what": what, "result": "not measured in this run", "target": "", "met": None}
        if key.endswith("_d/git") and key in by:
            result, target, met = grep_vs_git(key)
        elif key == "a/f_w_par" and key in by:
            a = by["a"]
            result = (
                f"{a['wall']:.2f} s ({a['cpu']:.2f} CPU-s) = {by[key]['ratio']:.2f}x the per-blob work on {jobs}"
                f" cores; {by['a/f_w_cpu']['ratio']:.2f}x it in CPU time"
            )
            target, met = "<= 1.3x the per-blob work (f+w) on N cores", by[key]["met"]
        elif key.endswith("/base") and key in by:
            r = by[key]
            result = (
                f"{r['ratio']:.2f}x wall, {r['cpu_ratio']:.2f}x CPU: {r['wall']:.2f} s ({r['cpu']:.2f} CPU-s)"
                f" against {r['base_wall']:.2f} s ({r['base_cpu']:.2f} CPU-s)"
            )
            target, met = f"{r['target']} the base, wall and CPU", r["met"]
        elif key in ("d", "k") and key in by:
            d = by[key]
            result = f"{d['wall']:.1f} s ({d['cpu']:.0f} CPU-s)"
            if "f_d" in by:
                result += f" = {d['wall'] / by['f_d/par']['wall']:.2f}x the floor"
            if key == "d":
                result += f", tree RSS {d['tree_rss_mb']:.0f} MB (largest process {d['maxrss_mb']:.0f} MB)"
            target, met = d["target"] or "", d["met"]
        elif key in ("t", "t_fast") and key in by:
            t = by[key]
            result = f"{t['wall'] / 60:.1f} min ({t['cpu'] / 60:.1f} CPU-min)" + (
                "" if "FAILED" not in t["what"] else ", FAILED"
            )
            target, met = t["target"], t["met"]
        elif key in ("b", "c", "j") and key in by:
            result, target, met = (
                f"{by[key]['wall']:.2f} s ({by[key]['cpu']:.2f} CPU-s)",
                by[key]["target"],
                by[key]["met"],
            )
        elif key == "s" and key in by:
            result, target, met = (
                by[key]["value"] + "; " + by[key]["what"].split(": ", 1)[1],
                by[key]["target"],
                by[key]["met"],
            )
        elif key == "h":
            keys = [f"h_{k}" for k in GREP_PATTERNS]
            if not any(k in by for k in keys):
                out.append(unmeasured)
                continue
            same = [by[k] for k in by if k.startswith("h_same_")]
            result = (
                "default scope "
                + " / ".join(f"{by[k]['wall']:.2f}" for k in keys if k in by)
                + " s; "
                + ("identical" if all(r["met"] for r in same) else "DIFFERENT")
                + f" results ({len(same)}"
                " comparisons, both scopes)"
            )
            target = "default scope <= 0.2 s each; identical results"
            met = verdict(keys + [r["key"] for r in same])
        elif key == "g":
            keys = [k for k in ("g_which", "g_diff", "g_card", "g_where") if k in by]
            if not keys:
                out.append(unmeasured)
                continue
            result = ", ".join(f"{k[2:]} {by[k]['wall']:.2f} s ({by[k]['cpu']:.2f} CPU-s)" for k in keys)
            target, met = "<= 0.1 s each", verdict(keys)
        elif key == "r":
            keys = [k for k in ("r_warm", "r_one") if k in by]
            if not keys:
                out.append(unmeasured)
                continue
            result = ", ".join(
                f"{label} {by[k]['wall']:.2f} s (CPU {by[k]['cpu']:.1f} s)"
                for k, label in (("r_warm", "warm"), ("r_one", "one version warm"), ("r_cold", "cold"))
                if k in by
            )
            target, met = "warm <= 15 s; one version warm <= 2 s", verdict(keys)
        elif key == "m":
            found = atlas_summary(by, verdict)
            if found is None:
                out.append(unmeasured)
                continue
            result, target, met = found
        elif key == "e/a" and key in by:
            result, target, met = f"{by[key]['ratio']:.2f}x", ">= 3x", by[key]["met"]
        else:
            out.append(unmeasured)
            continue
        out.append({"n": n, "what": what, "result": result, "target": target, "met": met})
    return out


def _n(x, fmt="{:.2f}") -> str:
    return "" if x is None else fmt.format(x)


def _verdict(met) -> str:
    return "" if met is None else ("met" if met else "MISSED")


def markdown(head: list[str], lines: list[list[str]], left: tuple[int, ...]) -> str:
    lines = [
        [str(c).replace("|", "\\|") for c in cells] for cells in lines
    ]  # a pattern's | is no cell border
    widths = [max(len(str(c)) for c in col) for col in zip(head, *lines, strict=True)]
    fmt = "| " + " | ".join(f"{{:{'<' if i in left else '>'}{w}}}" for i, w in enumerate(widths)) + " |"
    out = [
        fmt.format(*head),
        "|"
        + "|".join(("-" * (w + 2)) if i in left else ("-" * (w + 1) + ":") for i, w in enumerate(widths))
        + "|",
    ]
    out += [fmt.format(*cells) for cells in lines]
    return "\n".join(out)


def table(rows: list[dict]) -> str:
    head = ["figure", "wall s", "CPU s", "peak RSS MB", "tree RSS MB", "target", "result"]
    lines = []
    for r in rows:
        if r.get("ab"):
            continue  # in ab_table
        verdict = _verdict(r["met"])
        if "ratio" in r:
            cells = [r["what"], _n(r["ratio"], "{:.2f}x"), "", "", "", r["target"] or "", verdict]
        elif "size_mb" in r:
            cells = [r["what"], _n(r["size_mb"], "{:.1f} MB"), "", "", "", "", ""]
        elif "value" in r:
            cells = [r["what"], r["value"], "", "", "", r["target"] or "", verdict]
        else:
            cells = [
                r["what"],
                _n(r["wall"]),
                _n(r.get("cpu")),
                _n(r.get("maxrss_mb"), "{:.0f}"),
                _n(r.get("tree_rss_mb"), "{:.0f}"),
                r["target"] or "",
                verdict,
            ]
        lines.append(cells)
    return markdown(head, lines, left=(0, 5, 6))


def ab_table(rows: list[dict], base: str) -> str:
    """The figures measured side by side: the base's medians, the working tree's, and their ratios."""
    lines = [
        [
            r["what"],
            _n(r["base_wall"]),
            _n(r["base_cpu"]),
            _n(r["wall"]),
            _n(r["cpu"]),
            _n(r["ratio"], "{:.2f}x"),
            _n(r["cpu_ratio"], "{:.2f}x"),
            r["target"] or "",
            _verdict(r["met"]),
        ]
        for r in rows
        if r.get("ab")
    ]
    head = ["figure", f"{base} wall s", f"{base} CPU s", "wall s", "CPU s", "wall ratio", "CPU ratio"]
    return markdown([*head, "target", "result"], lines, left=(0, 7, 8)) if lines else ""


def summary_table(rows: list[dict]) -> str:
    return markdown(
        ["#", "figure", "result", "target", "verdict"],
        [[str(r["n"]), r["what"], r["result"], r["target"], _verdict(r["met"])] for r in rows],
        left=(1, 2, 3, 4),
    )


def environment(repo: Path, labels: list[str]) -> dict:
    def out(*cmd):
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        return r.stdout.strip() if r.returncode == 0 else None

    from importlib.metadata import version

    return {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "host": platform.node(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "loadavg_start": os.getloadavg(),
        "tree_sitter": version("tree-sitter"),
        "tree_sitter_python": version("tree-sitter-python"),
        "project_commit": out("git", "rev-parse", "HEAD"),
        "project_dirty": bool(out("git", "status", "--porcelain", "--", "indexer", "queries")),
        "repo": str(repo),
        "tags": labels,
    }


def heading(results: dict) -> str:
    env, labels = results["environment"], results["environment"]["tags"]
    return (
        f"{len(labels)} tags {labels[0]}..{labels[-1]}, median of {results['runs']} run(s), {env['cpus']} CPU(s),"
        f" Python {env['python']}, tree-sitter {env['tree_sitter']}, load average"
        f" {env['loadavg_start'][0]:.1f} at start, {env['loadavg_end'][0]:.1f} at end;"
        f" commit {(env.get('project_commit') or '?')[:10]}{' (uncommitted changes)' if env.get('project_dirty') else ''}"
        + (f"; side by side with {env['base'][:10]} ({env.get('base_ref')})" if env.get("base") else "")
        + ("; a run cut short (the figures it measured)" if results.get("partial") else "")
    )


def markdown_text(path: Path) -> str:
    """The README's tables, from a results file: the targets, then every figure."""
    results = json.loads(path.read_text())
    jobs = results["environment"]["cpus"] or 1
    # a file written before the summary (see main) holds the samples alone; the medians are taken again
    # from the samples, so a file keeps giving the tables of the code that reads it
    rows = assess(medians(results["samples"]), jobs, results.get("checks"))
    side = ab_table(rows, (results["environment"].get("base") or "base")[:7])
    return (
        f"`{path.name}`: {heading(results)}.\n\n{summary_table(summary(rows, jobs))}\n\n"
        + (f"Side by side (medians; ratio = this code / the base):\n\n{side}\n\n" if side else "")
        + f"{table(rows)}\n"
    )


def print_markdown(path: Path) -> int:
    print(markdown_text(path), end="")
    return 0


# The README's generated block: from the line naming the results file to the end line, all made by readme().
BLOCK_START = "<!-- bench tables: generated by `python tests/bench/bench.py --readme {path}`; do not edit -->"
BLOCK_END = "<!-- end of bench tables -->"
BLOCK_RE = r"<!-- bench tables: generated by `python tests/bench/bench\.py --readme (\S+)`; do not edit -->\n"


def readme_blocks(text: str):
    """(start, end, results path) of each generated block of a README's text."""
    import re

    for m in re.finditer(BLOCK_RE, text):
        end = text.index(BLOCK_END, m.end())
        yield m.start(), end + len(BLOCK_END), m.group(1)


def readme(results: Path, readme_path: Path = ROOT / "README.md") -> int:
    """Write the tables of a results file into the README's generated block (the first), naming the file."""
    text = readme_path.read_text()
    blocks = list(readme_blocks(text))
    if not blocks:
        sys.exit(f"bench: {readme_path} has no generated block (a line {BLOCK_START!r} ... {BLOCK_END!r})")
    start, end, _ = blocks[0]
    rel = results.resolve().relative_to(ROOT) if results.resolve().is_relative_to(ROOT) else results
    block = BLOCK_START.format(path=rel) + "\n" + markdown_text(ROOT / rel) + BLOCK_END
    readme_path.write_text(text[:start] + block + text[end:])
    print(f"{readme_path}: tables from {rel}")
    return 0


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.markdown:
        return print_markdown(args.markdown)
    if args.readme:
        return readme(args.readme)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("bench: terminated"))  # so the running child is ended
    from indexer.core.specs import SpecError, select
    from indexer.sources.git import GitSource

    repo = args.repo or releases.prepare(cache_dir() / "vllm-releases.git", args.tags, log=log)
    try:
        labels = select(args.tags, GitSource(repo).names()).names
    except SpecError as e:
        sys.exit(f"bench: {e}")
    if not labels:
        sys.exit(f"bench: {args.tags!r} selects no version tag in {repo}")
    log(f"benchmarking {len(labels)} tag(s) {labels[0]} .. {labels[-1]} of {repo}, {args.runs} run(s)")
    env = environment(repo, labels)
    # the package's bytecode, as an installed wheel has it: where PYTHONDONTWRITEBYTECODE is set (as on the
    # bench machine) an editable install compiled every module it imports in every process, 15-60 ms of CPU
    # of a short command (g) (measured loaded: which 0.110 -> 0.095 CPU-s, card 0.197 -> 0.137)
    import compileall

    compileall.compile_dir(ROOT / "indexer", quiet=1)
    jobs = os.cpu_count() or 1
    path = args.json or cache_dir() / "results" / time.strftime("bench-%Y%m%d-%H%M%S.json")
    base = None
    if args.base:
        try:
            base = ab.export(args.base, cache_dir())
        except subprocess.CalledProcessError as e:
            sys.exit(f"bench: --base {args.base}: not a revision of this repository ({e.stderr.strip()})")
        env["base"], env["base_ref"] = base.commit, args.base
        log(f"A/B mode: the base is {args.base} ({base.commit[:10]}), exported to {base.cwd}")
    with tempfile.TemporaryDirectory(prefix="tpindex-bench-") as work:
        bench = Bench(args, repo, labels, Path(work), path, env, base)
        try:
            bench.run()
        except measure.CommandFailed as e:
            sys.exit(f"bench: {e}")
    env["loadavg_end"] = os.getloadavg()
    path.parent.mkdir(parents=True, exist_ok=True)
    # the measurements first: whatever happens while they are summarised, a long run is never lost
    path.write_text(
        json.dumps(
            {"environment": env, "runs": args.runs, "checks": bench.checks, "samples": bench.samples},
            indent=1,
            default=str,
        )
    )
    m = medians(bench.samples)
    rows = assess(m, jobs, bench.checks)
    results = {
        "environment": env,
        "runs": args.runs,
        "medians": m,
        "checks": bench.checks,
        "figures": rows,
        "targets": summary(rows, jobs),
        "samples": bench.samples,
    }
    text = table(rows)
    print(f"\ntpindex benchmark: {heading(results)}\n")
    print(summary_table(results["targets"]))
    print()
    side = ab_table(rows, (env.get("base") or "base")[:7])
    if side:
        print(f"Side by side with {env.get('base_ref')} (medians; ratio = this code / the base):\n\n{side}\n")
    print(text)
    print(
        f"\n(d) and (k) are against the {jobs}-core parse floor (f_d/{jobs}) of the same run: the build parses in"
        f" {jobs} worker processes, so that is the best it could reach."
    )
    results["table"] = text
    path.write_text(json.dumps(results, indent=1, default=str))
    print(f"\nresults: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
