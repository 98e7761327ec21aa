"""Which paths of a version tree are indexed.

A scope is a list of glob patterns over repository paths (fnmatch: `*` also crosses `/`). Sources walk
only the literal directory prefix of each pattern, so a scope never reads the rest of the tree.
Only Python files under `vllm/` are parsed; other in-scope files (chat templates, tests) are recorded
as present.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from dataclasses import dataclass

from .problems import Problem

# Every path the tool-calling subsystem has had (DESIGN.md section 2).
TOOL_CALLING = (
    "vllm/entrypoints/openai/tool_parsers/*.py",
    "vllm/entrypoints/openai/reasoning_parsers/*.py",
    "vllm/tool_parsers/*.py",
    "vllm/reasoning/*.py",
    "vllm/parser/*.py",
    "vllm/entrypoints/openai/cli_args.py",
    "vllm/entrypoints/openai/serving_chat.py",
)
# Framework modules the parsers read for one thing only (scope.FLAGS, in every scope): vllm/envs.py gives the
# defaults of the environment flags that what runs at class creation reads (`ToolParser.__init_subclass__` and
# VLLM_ENFORCE_STRICT_TOOL_CALLING, v0.28.0 on), and its markers (TODO sites: diff and check list them). Its
# other facts (imports, classes, functions) answer no question: extracting them was an eighth of the default
# scope's per-blob work (50 versions, 3 MB of 17).
FRAMEWORK = ("vllm/envs.py",)
# Recorded as present, never parsed: chat templates and the parser test files (tool-parser, reasoning,
# and from v0.25.0 the parser engine's: tests/parser/, tests/parser/engine/, tests/parser/<model>/; the
# tool-use tests of tests/tool_use/ and its per-model directories such as tests/tool_use/mistral/).
PRESENCE = (
    "examples/tool_chat_template_*.jinja",
    "tests/tool_parsers/test_*.py",
    "tests/entrypoints/tool_parsers/test_*.py",
    "tests/entrypoints/openai/tool_parsers/test_*.py",
    "tests/reasoning/test_*.py",
    "tests/parser/*test_*.py",
    "tests/tool_use/*test_*.py",
)
# The tool-calling and reasoning documentation (docs/source/features/ until the docs moved in v0.9.0), recorded and
# stored like the templates: the search box reads the model families the tool-calling page names
# (answers/docwords.py); the advice (fit, the serve line) reads the reasoning page's model table and its notes and
# the tool-calling page's sections with their flags (answers/docpairs.py)
TOOL_DOCS = ("docs/features/tool_calling.md", "docs/source/features/tool_calling.md")
REASONING_DOCS = ("docs/features/reasoning_outputs.md", "docs/source/features/reasoning_outputs.md")
DOCS = TOOL_DOCS + REASONING_DOCS
PRESENCE += DOCS
TOOL_CALLING += FRAMEWORK + PRESENCE
ALL = ("vllm/*.py",)

_GLOB_CHARS = re.compile(r"[*?\[]")


SCOPE_HINT = "an --include pattern is a path inside the version tree, e.g. 'vllm/entrypoints/*.py'"


class ScopeError(Problem, ValueError):
    """A scope name or pattern that cannot be one."""


@dataclass(frozen=True)
class Scope:
    patterns: tuple[str, ...]
    name: str = "default"
    tree: bool = False  # also every path of the tree and every module's definitions (build --tree)

    @classmethod
    def named(cls, name: str, extra: tuple[str, ...] = (), tree: bool = False) -> Scope:
        if name == "default":
            base = TOOL_CALLING
        elif name == "all":
            base = ALL + PRESENCE
        else:
            raise ScopeError(
                f"unknown scope {name!r} (use 'default' or 'all', and --path GLOB to add)", SCOPE_HINT
            )
        for pat in extra:
            if pat.startswith("/") or ".." in pat.split("/") or not pat.strip("/ "):
                raise ScopeError(
                    f"scope pattern {pat!r} is not a path inside the version tree (patterns are"
                    " relative to the tree's root, without '..')",
                    SCOPE_HINT,
                )
        label = name if not extra else f"{name}+" + ",".join(extra)
        return cls(tuple(dict.fromkeys(base + tuple(extra))), label + ("+tree" if tree else ""), tree)

    def roots(self) -> list[str]:
        """Literal directory prefixes to walk ("" = the whole tree), with nested ones dropped."""
        roots = set()
        for pat in self.patterns:
            m = _GLOB_CHARS.search(pat)
            literal = pat if m is None else pat[: m.start()]
            roots.add(literal if m is None else literal.rpartition("/")[0])
        out: list[str] = []
        for r in sorted(roots, key=len):
            if not any(r == o or r.startswith(o + "/") or o == "" for o in out):
                out.append(r)
        return sorted(out)

    def matches(self, path: str) -> bool:
        return _matches(self.patterns, path)


@functools.lru_cache(maxsize=1 << 16)
def _matches(patterns: tuple[str, ...], path: str) -> bool:
    """Cached: versions share most paths, and a build asks about each path once per version."""
    return _any_of(patterns)(path) is not None


@functools.lru_cache(maxsize=64)
def _any_of(patterns: tuple[str, ...]):
    """One regular expression for the patterns (fnmatch's translation of each, as fnmatchcase uses): a path
    is matched once, not once per pattern."""
    return re.compile("|".join(fnmatch.translate(p) for p in patterns)).match


def parsed(path: str) -> bool:
    """Whether a path in scope is parsed for facts (Python under vllm/) or only recorded."""
    return path.startswith("vllm/") and path.endswith(".py")


# How deeply a blob's content is extracted. A blob is stored once at the depth of the first path it was
# met at; met later at a path needing more (content copied from tests/ into vllm/, or from elsewhere in
# vllm/ into a parser package), it is extracted again. A unit's rows depend only on its path's depth
# (extract/locate.py leaves out the kinds a path does not need), so the order builds meet paths in
# changes nothing.
RECORDED = 0  # present, not parsed (templates, tests, --include globs outside vllm/)
FLAGS = 1  # a framework module (FRAMEWORK): the environment flags' defaults and its markers only
MODULE = 2  # a module outside the parser packages (--scope all, --include): every fact kind but a parser's
# own (sentinels, request settings, plants; extract/facts.py PARSER_KINDS)
FULL = 3  # the parser packages (the default scope's Python files): parsed for every fact kind
PARSER_PACKAGES = tuple(
    p for p in TOOL_CALLING if p.startswith("vllm/") and p.endswith(".py") and p not in FRAMEWORK
)


def depth_needed(path: str) -> int:
    """The extraction depth a path in scope needs."""
    if not parsed(path):
        return RECORDED
    if _matches(PARSER_PACKAGES, path):
        return FULL
    return FLAGS if path in FRAMEWORK else MODULE


def is_template(path: str) -> bool:
    """A chat template (Jinja): recorded, and what it renders for one tool call stored (extract/templates.py)."""
    return path.endswith(".jinja")


def module_of(path: str) -> str:
    """Dotted module of a repository path: vllm/a/b.py -> vllm.a.b, vllm/a/__init__.py -> vllm.a."""
    p = path[:-3] if path.endswith(".py") else path
    parts = p.split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_of(path: str) -> str:
    """The package a file's relative imports start from."""
    mod = module_of(path)
    return mod if path.endswith("/__init__.py") else mod.rpartition(".")[0]
