"""The short commands as whole processes (issue 30: `which`, `card`, `diff`, `where` <= 0.1 s each): most of
their time is start-up, so each imports only what it uses. Asserted on the modules a real process has
imported when the command is done (no timings): none of the parser's, the browser's, the templates', git's
or the highlighter's packages, and `where` and `card`, whose answers are not among the data classes of
answers/model.py, not those either.

The fixture imitates the lazy-registry era with hand-written files (no vLLM code).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.eras import PLAIN_ABSTRACT, lazy_registry, tool_names
from fixtures.helpers import make_repo

HEAVY = {"tree_sitter", "tree_sitter_python", "jinja2", "datasette", "sqlite_utils", "git", "pygments", "uvicorn",
         "mcp", "click_default_group", "pydantic", "httpx"}

ALPHA = '''
from vllm.tool_parsers.abstract_tool_parser import ToolParser


def make_arg_parser(parser):
    return parser


class AlphaToolParser(ToolParser):
    def extract_tool_calls(self, text):
        return make_arg_parser(text)
'''
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

# what a process imported, written by the process itself once the command is done
PROBE = """
import atexit, json, os, sys
atexit.register(lambda: open(os.environ["MODULES_OUT"], "w").write(json.dumps(sorted(sys.modules))))
sys.argv = ["tpindex", *json.loads(os.environ["ARGS"])]
from indexer.cli.main import main
main()
"""


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
    out = tmp_path / "modules.json"
    env = {**os.environ, "ARGS": json.dumps(args), "MODULES_OUT": str(out)}
    r = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode in (0, 1), r.stderr  # diff exits 1 when there are changes
    assert r.stdout.strip(), r.stderr
    return json.loads(out.read_text())


@pytest.mark.parametrize("args", [["which", "alpha"], ["card", "alpha"], ["diff", "v0.29.0", "v0.30.0"],
                                  ["where", "make_arg_parser"], ["card", "alpha", "--format", "json"],
                                  ["diff", "v0.29.0", "v0.30.0", "--format", "markdown"]])
def test_a_short_command_imports_none_of_the_heavy_packages(tree_db, tmp_path, args):
    modules = imported([*args, "--db", str(tree_db)], tmp_path)
    assert "indexer.cli.commands" in modules
    heavy = sorted({m.split(".")[0] for m in modules} & HEAVY)
    assert not heavy, f"tpindex {' '.join(args)} imported {heavy}"


@pytest.mark.parametrize("args", [["where", "make_arg_parser"], ["card", "alpha"], ["card", "alpha", "--format", "json"]])
def test_where_and_card_do_not_build_the_answers_data_classes(tree_db, tmp_path, args):
    """`where` answers from the tree tables, `card` with data classes of its own (answers/card.py)."""
    modules = imported([*args, "--db", str(tree_db)], tmp_path)
    assert f"indexer.answers.{args[0]}" in modules
    assert "indexer.answers.model" not in modules
