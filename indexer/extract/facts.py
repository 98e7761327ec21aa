"""Bytes -> raw facts: parse a blob once with tree-sitter and run every fact kind's extractor on the tree."""

from __future__ import annotations

from ..core.scope import FULL
from . import (
    adapters,
    aliases,
    class_sets,
    classes,
    definitions,
    env_defaults,
    imports,
    markers,
    namechecks,
    parser_calls,
    plants,
    regexes,
    registry,
    request_settings,
    sentinels,
    signatures,
    uses,
)
from .ts import parser, pattern_files, prime, unprime

KINDS = {
    "imports": imports.extract,
    "classes": classes.extract,
    "markers": markers.extract,
    "plants": plants.extract,
    "adapter_bindings": adapters.extract,
    "aliases": aliases.extract,
    "registrations": registry.extract,
    "name_checks": namechecks.extract,
    "sentinels": sentinels.extract,
    "request_settings": request_settings.extract,
    "regexes": regexes.extract,
    "class_sets": class_sets.extract,
    "env_defaults": env_defaults.extract,
    "module_defs": definitions.module_level,  # with classes: the blob's definitions (definitions.from_facts)
    "signatures": signatures.extract,  # the parser contract: functions' signatures, class attributes
    "parser_calls": parser_calls.extract,  # how vLLM's code constructs and calls parser objects
}
# Kinds read from the tree, the blob's bytes and the facts of the kinds above (KINDS run first)
DERIVED = {"uses": uses.extract}
# Kinds only the parser packages get (scope.FULL): a parser's token strings, request settings, regular
# expressions and plants;
# a module elsewhere (scope.MODULE) gets every other kind, registrations and name checks included (the
# serving code outside the parser packages checks parser classes, `--reasoning-parser` choices were once
# in vllm/engine/arg_utils.py), with the pattern files those read
PARSER_KINDS = ("sentinels", "request_settings", "regexes", "plants", "uses")
PARSER_PATTERNS = ("patterns/sentinels.scm", "patterns/request_settings.scm", "patterns/regexes.scm", "plants/")
MARKER_PATTERNS = "patterns/markers.scm"
MARKER_WORDS = (b"HACK", b"TODO", b"FIXME", b"XXX")  # a file without any has no marker comment


def kinds(depth: int) -> tuple[str, ...]:
    every = (*KINDS, *DERIVED)
    return every if depth >= FULL else tuple(k for k in every if k not in PARSER_KINDS)


def patterns(depth: int, markers: bool) -> tuple[str, ...]:
    """The pattern files a blob's extraction at `depth` runs (markers: whether its bytes hold a marker word;
    a blob without one skips the comment pattern, which tests every comment). Each combination is compiled
    once (ts.combined)."""
    files = pattern_files()  # listing them compiles nothing
    if depth < FULL:
        files = tuple(f for f in files if not f.startswith(PARSER_PATTERNS))
    return files if markers else tuple(f for f in files if f != MARKER_PATTERNS)


def parse(data: bytes, depth: int = FULL) -> dict:
    """Raw facts of one blob at an extraction depth (scope.MODULE: every kind but PARSER_KINDS, the same
    facts the full extraction gives for them), and how well it parsed. Never raises for any input bytes."""
    out: dict = {"status": "ok", "error_count": 0, "first_error_line": None, "error": None, "facts": {}}
    if b"\0" in data:
        out["status"], out["error"] = "nul-bytes", f"NUL byte at offset {data.find(0)}"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        if out["status"] == "ok":
            out["status"], out["error"] = "not-utf8", f"invalid UTF-8 at byte {e.start}"
        # pattern predicates decode node text strictly: parse a repaired copy (same lines)
        data = data.decode("utf-8", errors="replace").encode("utf-8")
    try:
        tree = parser().parse(data)
        root = tree.root_node
        if root.has_error:
            count, first = _errors(root)
            out["error_count"], out["first_error_line"] = count, first
            if out["status"] == "ok":
                out["status"], out["error"] = "syntax-errors", f"{count} syntax error(s), first at line {first}"
        marked = any(w in data for w in MARKER_WORDS)
        prime(root, patterns(depth, marked))
        facts = out["facts"]
        for kind in kinds(depth):
            if kind == "markers" and not marked:
                facts[kind] = []  # a marker is a comment holding one of the words: none in the bytes, none here
                continue  # (its pattern, left out of the primed query, would walk the tree again)
            facts[kind] = KINDS[kind](root) if kind in KINDS else DERIVED[kind](root, facts, data)
    except Exception as e:  # a parser or pattern failure must not stop the build: record it
        out["status"], out["error"] = "extract-failed", f"{type(e).__name__}: {e}"[:500]
        out["facts"] = {}
    finally:
        unprime()
    return out


def _errors(root) -> tuple[int, int | None]:
    """Number of ERROR / MISSING nodes and the first line with one (iterative: deep trees are fine)."""
    count, first = 0, None
    cursor = root.walk()
    stack_done = False
    while not stack_done:
        node = cursor.node
        if node.is_error or node.is_missing:
            count += 1
            line = node.start_point.row + 1
            first = line if first is None else min(first, line)
        if node.has_error and not node.is_missing and cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                stack_done = True
                break
    return count, first
