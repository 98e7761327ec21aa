"""Extract: pure functions from a file's bytes to raw facts, one module per fact kind, each driven by a
tree-sitter pattern file. A blob is parsed once and every pattern runs on the same tree.

`parse(data)` gives the raw facts of a blob (independent of where the blob sits); `locate.locate()`
turns them into rows for one path (modules, relative imports, names resolved through imports).
"""

from __future__ import annotations

import functools

from .paths import queries_dir

# Bump when extraction code changes; pattern files are hashed in, so editing or adding a pattern
# (a new plant) makes every stored fact stale and recomputed on the next build.
EXTRACTOR_VERSION = 14  # 3: methods' calls and delegation; 4: sentinels, request settings; 5: module_defs;
# 6: the code of each parsed blob (indexer/code.py); 7: modules outside the parser packages at scope.MODULE;
# 8: tests/tool_use/ in the default scope, name checks keep the registered class's hops (versions re-indexed)
# 9: class_sets and env_defaults (what runs at class creation), sentinels held by properties, f-string patterns
# 10: signatures and parser calls (the parser contract, issue 28)
# 11: uses (each definition's digest and the module-level names it reads), imports' end lines
# 12: the text of recorded files (chat templates, tests) in the code store (versions re-indexed to store it);
#     regexes (the regular expressions of a parser's code, for fit)
# 13: self_attrs (what each method of a parser's code binds on the instance and reads: an overriding __init__)
# 14: vllm/envs.py extracted for its environment flags' defaults only (scope.FLAGS); depths renumbered


@functools.cache
def extractor_id() -> str:
    import hashlib  # here: what answers read of extract/ (templates, tokens) needs no hash (OpenSSL's, 11 M instructions)

    h = hashlib.sha1()
    for p in sorted(queries_dir().rglob("*.scm")):
        h.update(p.relative_to(queries_dir()).as_posix().encode() + b"\0" + p.read_bytes())
    return f"{EXTRACTOR_VERSION}:{h.hexdigest()[:12]}"


def parse(data: bytes, depth: int | None = None) -> dict:
    """Raw facts of one blob at an extraction depth (scope.MODULE or, by default, scope.FULL), and how
    well it parsed. Never raises for any input bytes.

    (tree-sitter is imported on the first call: commands that parse nothing start faster.)"""
    from ..core.scope import FULL
    from .facts import parse as parse_blob

    return parse_blob(data, FULL if depth is None else depth)
