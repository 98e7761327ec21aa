"""Bytes -> raw facts: parse a blob once with tree-sitter and run every fact kind's extractor on the tree."""

from __future__ import annotations

import functools

from ..core.scope import FLAGS, FULL
from . import (
    adapters,
    aliases,
    class_sets,
    classes,
    definitions,
    dispatch,
    env_defaults,
    imports,
    markers,
    namechecks,
    parser_calls,
    plants,
    regexes,
    registry,
    request_settings,
    self_attrs,
    sentinels,
    signatures,
    uses,
)
from .ts import compiled, parser, patterns, prime, unprime

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
    "self_attrs": self_attrs.extract,  # what each method binds on the instance and reads
    "class_sets": class_sets.extract,
    "env_defaults": env_defaults.extract,
    "module_defs": definitions.module_level,  # with classes: the blob's definitions (definitions.from_facts)
    "signatures": signatures.extract,  # the parser contract: functions' signatures, class attributes
    "parser_calls": parser_calls.extract,  # how vLLM's code constructs and calls parser objects
}
# Kinds read from the tree, the blob's bytes and the facts of the kinds above (KINDS run first)
DERIVED = {"uses": uses.extract}
# Kinds only the parser packages get (scope.FULL): a parser's token strings, request settings, regular
# expressions, what its methods bind and read on the instance, and plants;
# a module elsewhere (scope.MODULE) gets every other kind, registrations and name checks included (the
# serving code outside the parser packages checks parser classes, `--reasoning-parser` choices were once
# in vllm/engine/arg_utils.py), with the pattern files those read
PARSER_KINDS = ("sentinels", "request_settings", "regexes", "self_attrs", "plants", "uses")
PARSER_PATTERNS = (
    "patterns/sentinels.scm",
    "patterns/request_settings.scm",
    "patterns/regexes.scm",
    "patterns/self_attrs.scm",
    "plants/",
)
# A pattern whose matches can give its kind a row only in a blob holding one of some words (each kind's module
# says which, for each pattern of its file, in order) is left out of the walk over a blob without any: its kind
# gets no match from it, so none of the rows it could not give. Each combination of patterns run is a query
# compiled once per process (25-80 ms, most of it the same whatever the patterns), so the gates are few: the
# marker words and one for every other gate, the union of their words (a pattern then runs
# in a blob holding a word of its group, more blobs than its own words need, never fewer); `super`, in half of
# the modules, gates nothing. Worth it at scope.MODULE (--scope all's modules hold few of the words: an eighth
# the rare ones); at FULL (the parser packages, which hold most of them, in many combinations) only the marker
# words gate.
GATES = {
    "patterns/markers.scm": markers.WORDS,
    "patterns/name_checks.scm": namechecks.WORDS,
    "patterns/parser_calls.scm": parser_calls.WORDS,
    "patterns/cli_choices.scm": dispatch.WORDS,
    "patterns/registry.scm": registry.WORDS,
    "patterns/adapter_bindings.scm": adapters.WORDS,
    "patterns/class_sets.scm": class_sets.WORDS,
}
GROUPS = (markers.WORDS[0],)  # apart; the other gates: one group
COMMON = (parser_calls.WORDS[1],)  # met by so many blobs that the pattern always runs
GATED_AT_FULL = ("patterns/markers.scm",)
# What a framework module gets (scope.FLAGS, vllm/envs.py): the environment flags' defaults, read from its
# top-level statements without a pattern walk, and its markers (diff and check list them), from their pattern
# (gated by the marker words: a walk only over a version holding one)
FLAG_KINDS = ("env_defaults", "markers")
FLAG_PATTERNS = ("patterns/markers.scm",)


def kinds(depth: int) -> tuple[str, ...]:
    every = (*KINDS, *DERIVED)
    if depth <= FLAGS:
        return FLAG_KINDS
    return every if depth >= FULL else tuple(k for k in every if k not in PARSER_KINDS)


def plan(depth: int) -> tuple[tuple[tuple[int, tuple[bytes, ...] | None], ...], frozenset[str]]:
    """The patterns (indexes of ts.patterns()) an extraction at `depth` may run, each with the words that
    gate it (None: run on every blob), and the pattern files they come from."""
    return _plan(depth, patterns())


@functools.cache
def _plan(
    depth: int, every: tuple
) -> tuple[tuple[tuple[int, tuple[bytes, ...] | None], ...], frozenset[str]]:
    joined = {
        w
        for gates in GATES.values()
        for gate in gates
        if gate is not None and gate not in COMMON and _group(gate) is None
        for w in gate
    }
    rare = tuple(
        sorted(w for w in joined if not any(o != w and o in w for o in joined))
    )  # "parser" has "_parser"
    out, files, seen = [], set(), {}
    for index, (file, _) in enumerate(every):
        if depth < FULL and file.startswith(PARSER_PATTERNS):
            continue
        if depth <= FLAGS and file not in FLAG_PATTERNS:
            continue
        nth = seen[file] = seen.get(file, -1) + 1
        gates = GATES.get(file, ()) if depth < FULL or file in GATED_AT_FULL else ()
        gate = gates[nth] if nth < len(gates) and gates[nth] not in COMMON else None
        out.append((index, gate if gate is None else _group(gate) or rare))
        files.add(file)
    return tuple(out), frozenset(files)


def _group(gate: tuple[bytes, ...]) -> tuple[bytes, ...] | None:
    return next((g for g in GROUPS if set(gate) <= set(g)), None)


# A combination of patterns is compiled at its COMPILE_AFTER-th blob of a process; until then such a blob runs
# every pattern of its depth (the same facts): a compile costs what the walks of some 40 blobs save, and a
# process that meets a combination a few times only (the default scope's few modules outside the parser
# packages) compiles no query for it
COMPILE_AFTER = 32
_ASKED: dict[tuple[int, ...], int] = {}


def chosen(depth: int, data: bytes) -> tuple[int, ...]:
    """The patterns a blob's extraction at `depth` runs: those whose words its bytes hold (or every pattern
    of the depth, while their combination is not worth a query of its own yet)."""
    held: dict[tuple[bytes, ...], bool] = {}
    out = []
    steps = plan(depth)[0]
    for index, gate in steps:
        if gate is not None:
            ok = held.get(gate)
            if ok is None:
                ok = held[gate] = any(w in data for w in gate)
            if not ok:
                continue
        out.append(index)
    picked = tuple(out)
    if picked and len(picked) < len(steps) and not compiled(picked):
        asked = _ASKED[picked] = _ASKED.get(picked, 0) + 1
        if asked < COMPILE_AFTER:
            return tuple(index for index, _ in steps)
    return picked


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
                out["status"], out["error"] = (
                    "syntax-errors",
                    f"{count} syntax error(s), first at line {first}",
                )
        prime(root, chosen(depth, data), plan(depth)[1])
        facts = out["facts"]
        for kind in kinds(depth):
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
