"""The short commands as whole processes (issue 30: `which`, `card`, `diff`, `where` <= 0.1 s each): most of
their time is start-up, so each imports only what it uses. Asserted on the modules a real process has
imported when the command is done (no timings): none of the parser's, the browser's, the templates', git's
or the highlighter's packages, and of the answers' data classes (about 1 ms each to build) only its own
answer's module of them (answers/*_model.py; `card` defines its own), never answers/model.py, which holds
or re-exports them all.

The fixture imitates the lazy-registry era with hand-written files (no vLLM code).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.eras import PLAIN_ABSTRACT, lazy_registry, tool_names
from fixtures.helpers import imported_modules, make_repo

HEAVY = {
    "tree_sitter",
    "tree_sitter_python",
    "jinja2",
    "datasette",
    "sqlite_utils",
    "git",
    "pygments",
    "uvicorn",
    "mcp",
    "click_default_group",
    "pydantic",
    "httpx",
}
# and of tpindex's own: the resolver (about 15 ms to import); card and diff read its vocabulary (resolve/vocabulary.py)
RESOLVER = {
    "indexer.resolve.logic",
    "indexer.resolve.classgraph",
    "indexer.resolve.creation",
    "indexer.resolve.chains",
}

ALPHA = """
from vllm.tool_parsers.abstract_tool_parser import ToolParser


def make_arg_parser(parser):
    return parser


class AlphaToolParser(ToolParser):
    def extract_tool_calls(self, text):
        return make_arg_parser(text)
"""
HISTORY = {
    "v0.29.0": {
        "vllm/tool_parsers/__init__.py": lazy_registry("tool", tool_names("alpha"), call=True),
        "vllm/tool_parsers/abstract_tool_parser.py": PLAIN_ABSTRACT,
        "vllm/tool_parsers/alpha_tool_parser.py": ALPHA,
    },
    "v0.30.0": {
        "vllm/tool_parsers/__init__.py": lazy_registry("tool", tool_names("alpha", "beta"), call=True),
        "vllm/tool_parsers/beta_tool_parser.py": ALPHA.replace("Alpha", "Beta"),
    },
}


@pytest.fixture(scope="module")
def tree_db(tmp_path_factory) -> Path:
    from indexer.build.pipeline import build
    from indexer.core.scope import Scope
    from indexer.sources.git import GitSource

    root = tmp_path_factory.mktemp("startup")
    source = GitSource(make_repo(root / "repo", HISTORY))
    db = root / "tree.db"
    build(db, source, [source.ref(v) for v in HISTORY], Scope.named("default", tree=True), jobs=1)
    return db


def imported(args: list[str], tmp_path: Path) -> list[str]:
    r, modules = imported_modules(args, tmp_path)
    assert r.returncode in (0, 1), r.stderr  # diff exits 1 when there are changes
    assert r.stdout.strip(), r.stderr
    return modules


@pytest.mark.parametrize(
    "args",
    [
        ["which", "alpha"],
        ["card", "alpha"],
        ["diff", "v0.29.0", "v0.30.0"],
        ["where", "make_arg_parser"],
        ["card", "alpha", "--format", "json"],
        ["diff", "v0.29.0", "v0.30.0", "--format", "markdown"],
    ],
)
def test_a_short_command_imports_none_of_the_heavy_packages(tree_db, tmp_path, args):
    modules = imported([*args, "--db", str(tree_db)], tmp_path)
    assert "indexer.cli.commands" in modules
    heavy = sorted({m.split(".")[0] for m in modules} & HEAVY | set(modules) & RESOLVER)
    assert not heavy, f"tpindex {' '.join(args)} imported {heavy}"


# imported where they are used, none of them by these commands in a pipe: packaging (a version label not written
# as indexed), shutil and textwrap (a terminal's width, lines wrapped to it); and by which and where neither
# difflib (a close name suggested; diff compares lines with it) nor hashlib (the extractor's id, diff's compare
# links); by where no json (--format json; which reads a name's notes with it)
DEFERRED = {"packaging", "shutil", "textwrap"}
NEEDED = {"which": {"json"}, "card": {"difflib", "json"}, "diff": {"difflib", "hashlib", "json"}}


@pytest.mark.parametrize(
    "args",
    [["which", "alpha"], ["card", "alpha"], ["diff", "v0.29.0", "v0.30.0"], ["where", "make_arg_parser"]],
)
def test_what_a_command_may_need_is_imported_where_it_is_needed(tree_db, tmp_path, args):
    modules = imported([*args, "--db", str(tree_db)], tmp_path)
    unneeded = DEFERRED | {"difflib", "hashlib", "json"} - NEEDED.get(args[0], set())
    found = sorted({m.split(".")[0] for m in modules} & unneeded)
    assert not found, f"tpindex {' '.join(args)} imported {found}"


# the modules of data classes each short command builds: `card` has its own classes (answers/card.py), `diff`
# the commits it lists under a name whose code changed (answers/commit_model.py), `which` the documentation's
# pairings with the name (answers/docpairs_model.py)
MODELS = {
    "which": {"which_model", "docpairs_model"},
    "card": set(),
    "diff": {"diff_model", "commit_model"},
    "where": {"where_model"},
}


@pytest.mark.parametrize(
    "args",
    [
        ["which", "alpha"],
        ["which", "alpha", "--format", "json"],
        ["card", "alpha"],
        ["card", "alpha", "--format", "json"],
        ["diff", "v0.29.0", "v0.30.0"],
        ["diff", "v0.29.0", "v0.30.0", "--format", "json"],
        ["where", "make_arg_parser"],
    ],
)
def test_a_short_command_builds_only_its_answers_data_classes(tree_db, tmp_path, args):
    modules = imported([*args, "--db", str(tree_db)], tmp_path)
    assert f"indexer.answers.{args[0]}" in modules
    built = {
        m.rpartition(".")[2] for m in modules if m.startswith("indexer.answers.") and m.endswith("model")
    }
    assert built == MODELS[args[0]], f"tpindex {' '.join(args)} built {sorted(built)}"
