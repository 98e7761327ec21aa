"""Whether two versions of tpindex's code give the same per-blob output: for every unique blob a build
parses (one scope, a tag spec), `indexer.build.pipeline.parse_and_locate` at the depth the build gives it
(rows, packed facts, code), compared by digest, blob by blob.

    python tests/bench/same_facts.py --repo R --scope all --base main [--jobs 2] [--tags v0.6.0..]

The base is a git revision of this repository: its `indexer/` and `queries/` are exported to a temporary
directory and run from there; the other side is the code this script is run with (the working tree).
Each side runs in worker processes, PYTHONHASHSEED fixed (the code's line keys are `hash(bytes)`). Prints
one line per differing blob (its id, path and which part differs) and a summary; exits 1 on a difference.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def collect(repo: str, scope_name: str, tags: str) -> list[tuple[str, str, int, bytes]]:
    """(blob id, first path, depth, bytes) for each unique parsed blob, as tests/bench/floor.py picks them."""
    from indexer.core.scope import Scope, depth_needed, parsed
    from indexer.core.specs import select
    from indexer.sources.git import GitSource

    source = GitSource(repo)
    scope = Scope.named(scope_name)
    readers: dict[str, tuple] = {}
    depth: dict[str, int] = {}
    for label in select(tags, source.names()).names:
        for e in source.files(source.ref(label), scope):
            if parsed(e.path):
                readers.setdefault(e.blob_id, (e.path, e.read))
                depth[e.blob_id] = max(depth.get(e.blob_id, 0), depth_needed(e.path))
    return [(b, p, depth[b], read()) for b, (p, read) in readers.items()]


def _digest(value) -> str:
    return hashlib.md5(repr(value).encode()).hexdigest()


def digests(items) -> list[tuple[str, str, str, str]]:
    """(facts, rows, code, the rest) digests of parse_and_locate's output for each item."""
    from indexer.build.pipeline import parse_and_locate

    out = []
    for _, path, depth, data in items:
        res = dict(parse_and_locate(data, path, True, depth))
        parts = (res.pop("packed"), res.pop("rows"), res.pop("code"))
        out.append((*map(_digest, parts), _digest(sorted(res.items()))))
    return out


def _child(pickled: str, shard: int, shards: int, out: str) -> None:
    import indexer

    assert Path(indexer.__file__).is_relative_to(os.environ["PYTHONPATH"]), indexer.__file__
    with open(pickled, "rb") as f:
        items = pickle.load(f)[shard::shards]
    got = digests(items)
    with open(out, "wb") as f:
        pickle.dump(got, f)


def run_side(code_dir: Path, pickled: str, jobs: int, work: Path, name: str) -> tuple[list, float]:
    env = {**os.environ, "PYTHONPATH": str(code_dir), "PYTHONHASHSEED": "0"}
    t0 = time.perf_counter()
    procs = []
    for i in range(jobs):
        out = work / f"{name}-{i}.pkl"
        cmd = [sys.executable, __file__, "--child", pickled, str(i), str(jobs), str(out)]
        procs.append((subprocess.Popen(cmd, env=env, cwd=work), out))
    shards = []
    for p, out in procs:
        if p.wait():
            raise SystemExit(f"{name}: a worker failed")
        with open(out, "rb") as f:
            shards.append(pickle.load(f))
    merged: list = [None] * sum(map(len, shards))
    for i, s in enumerate(shards):
        merged[i::jobs] = s
    return merged, time.perf_counter() - t0


def main(argv=None) -> int:
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", required=True)
    ap.add_argument("--scope", default="default", choices=["default", "all"])
    ap.add_argument("--tags", default="v0.6.0..")
    ap.add_argument("--base", default="main", help="a git revision of this repository (default main)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--blobs", help="a pickle of the blobs to use (written there when it does not exist)")
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="same-facts-") as tmp:
        work = Path(tmp)
        pickled = args.blobs or str(work / "blobs.pkl")
        if not os.path.exists(pickled):
            items = collect(args.repo, args.scope, args.tags)
            with open(pickled, "wb") as f:
                pickle.dump(items, f, protocol=5)
        with open(pickled, "rb") as f:
            items = pickle.load(f)
        base = work / "base"
        base.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", args.base, "indexer", "queries"],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        old, old_s = run_side(base, pickled, args.jobs, work, "base")
        new, new_s = run_side(ROOT, pickled, args.jobs, work, "new")
    parts = ("packed facts", "rows", "code", "status")
    differ = 0
    for (blob, path, depth, _), a, b in zip(items, old, new, strict=True):
        if a != b:
            differ += 1
            which = ", ".join(p for p, x, y in zip(parts, a, b, strict=True) if x != y)
            print(f"DIFFERS {blob} {path} depth {depth}: {which}")
    print(
        f"{len(items)} blobs ({sum(len(i[3]) for i in items)} bytes), {differ} differ; "
        f"base {args.base} {old_s:.1f} s, working tree {new_s:.1f} s ({args.jobs} jobs each)"
    )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
