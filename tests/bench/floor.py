"""The parse floor: how long tree-sitter alone takes over the unique blobs a build parses.

Run as its own process by bench.py (python floor.py --repo R --tags SPEC --scope default|all); prints
one JSON object. The unique blob ids in scope are collected with the project's Scope and GitSource over
every selected tag, keeping only the files the build parses (indexer.core.scope.parsed: Python under
vllm/); their bytes are read beforehand (untimed); then only `Parser.parse` over them is timed, in
this one process. With --extract, the extraction (`indexer.extract.parse`: tree-sitter parse, every
pattern query, the extractors) is timed the same way, as a second figure, and the build's whole per-blob
function (`indexer.build.pipeline.parse_and_locate`: the extraction, packing the facts, locating them at the path,
splitting the code into line keys) as a third, each blob at the extraction depth the build gives it (the
deepest its paths need, indexer.core.scope.depth_needed: vllm/envs.py and the other modules outside the parser
packages without a parser's own kinds).
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", required=True)
    ap.add_argument("--tags", required=True)
    ap.add_argument("--scope", default="default", choices=["default", "all"])
    ap.add_argument("--extract", action="store_true")
    args = ap.parse_args(argv)

    from tree_sitter import Parser

    from indexer.core.scope import Scope, depth_needed, parsed
    from indexer.core.specs import select
    from indexer.extract.ts import LANGUAGE
    from indexer.sources.git import GitSource

    source = GitSource(args.repo)
    scope = Scope.named(args.scope)
    labels = select(args.tags, source.names()).names
    t0 = time.perf_counter()
    readers, depth, files = {}, {}, 0
    for label in labels:
        for e in source.files(source.ref(label), scope):
            files += 1
            if parsed(e.path):
                readers.setdefault(e.blob_id, (e.path, e.read))
                depth[e.blob_id] = max(
                    depth.get(e.blob_id, 0), depth_needed(e.path)
                )  # the deepest, as the build
    paths = [path for path, _ in readers.values()]
    depths = [depth[blob_id] for blob_id in readers]
    blobs = [read() for _, read in readers.values()]
    collect = time.perf_counter() - t0

    parser = Parser(LANGUAGE)
    c0, t0 = time.process_time(), time.perf_counter()
    for data in blobs:
        parser.parse(data)
    parse_wall, parse_cpu = time.perf_counter() - t0, time.process_time() - c0

    out = {
        "versions": len(labels),
        "files": files,
        "unique_blobs": len(blobs),
        "bytes": sum(map(len, blobs)),
        "collect_s": collect,
        "parse_s": parse_wall,
        "parse_cpu_s": parse_cpu,
    }
    if args.extract:
        from indexer.extract import parse

        parse(b"x = 1\n")  # compile the pattern queries before timing
        c0, t0 = time.process_time(), time.perf_counter()
        for data, depth in zip(blobs, depths, strict=True):
            parse(data, depth)
        out["extract_s"], out["extract_cpu_s"] = time.perf_counter() - t0, time.process_time() - c0
        from indexer.build.pipeline import parse_and_locate

        c0, t0 = time.process_time(), time.perf_counter()
        for path, data, depth in zip(paths, blobs, depths, strict=True):
            parse_and_locate(data, path, True, depth)
        out["worker_s"], out["worker_cpu_s"] = time.perf_counter() - t0, time.process_time() - c0
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
