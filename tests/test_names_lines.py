"""Tests and lines (issue 23, item 8), on fixture repositories written here:

- tests under `tests/tool_use/` (and its subdirectories, such as `tests/tool_use/<model>/`) are recorded by the
  scope and matched to names like the other test directories;
- a name the parser manager composes by a name check keeps its registered class's line (`registered_line`,
  the card) and its `which` chain shows the class hop (and the re-export hop, for a registered module that
  only re-exports the class from elsewhere, whose `reexport` is true);
- the hard-coded era (cli-choices): `which` says what is known, the dispatching file, line and class, never `?.?`.
"""

from __future__ import annotations

import json

import pytest
from fixtures.eras import PLAIN_ABSTRACT, lazy_registry
from fixtures.helpers import build_tags, line_of, make_repo, rows, tpindex
from fixtures.registry_eras import HISTORY as ERAS
from fixtures.registry_eras import SERVING_CHAT

TP = "vllm/tool_parsers"

CMD_STUBS = """
from vllm.tool_parsers.abstract_tool_parser import ToolParser


class BaseCmdToolParser(ToolParser):
    preset = None


class Cmd3ToolParser(BaseCmdToolParser):
    preset = "cmd3"
"""

TMPL_REEXPORT = """
from vllm.parser.tmpl import TmplToolParser

__all__ = ["TmplToolParser"]
"""

TMPL_MODEL = """
from vllm.tool_parsers.abstract_tool_parser import ToolParser


class TmplToolParser(ToolParser):
    pass


class TmplParser:
    tool_parser_cls = TmplToolParser

    def parse(self, text):
        return text
"""

CMD_MODEL = """
class CmdParser:
    def parse(self, text):
        return text.split()
"""

MANAGER = """
class ParserManager:
    @classmethod
    def get_parser(cls, tool_parser_name=None):
        if tool_parser_name == "cmd3":
            from vllm.parser.cmd import CmdParser

            return CmdParser
        if tool_parser_name == "tmpl":
            from vllm.parser.tmpl import TmplParser

            return TmplParser
        return None
"""

KIMI = (
    "from vllm.tool_parsers.abstract_tool_parser import ToolParser\n\n\n"
    "class KimiK3ToolParser(ToolParser):\n    def extract_tool_calls(self, text):\n        return text\n"
)
MISTRAL = KIMI.replace("KimiK3", "Mistral")

TREE = {
    f"{TP}/__init__.py": lazy_registry(
        "tool",
        {
            "cmd3": ("cmd_tool_parser", "Cmd3ToolParser"),
            "tmpl": ("tmpl_tool_parser", "TmplToolParser"),
            "kimi_k3": ("kimi_k3_tool_parser", "KimiK3ToolParser"),
            "mistral": ("mistral_tool_parser", "MistralToolParser"),
        },
        inline=True,
        imports="ToolParserManager",
    ),
    f"{TP}/abstract_tool_parser.py": PLAIN_ABSTRACT,
    f"{TP}/cmd_tool_parser.py": CMD_STUBS,
    f"{TP}/tmpl_tool_parser.py": TMPL_REEXPORT,
    f"{TP}/kimi_k3_tool_parser.py": KIMI,
    f"{TP}/mistral_tool_parser.py": MISTRAL,
    "vllm/parser/__init__.py": "",
    "vllm/parser/cmd.py": CMD_MODEL,
    "vllm/parser/tmpl.py": TMPL_MODEL,
    "vllm/parser/parser_manager.py": MANAGER,
    "tests/tool_use/__init__.py": "",
    "tests/tool_use/conftest.py": "import pytest\n",
    "tests/tool_use/test_kimi_k3_tool_parser.py": "def test_kimi():\n    assert True\n",
    "tests/tool_use/test_chat_completions.py": "def test_chat():\n    assert True\n",
    "tests/tool_use/mistral/__init__.py": "",
    "tests/tool_use/mistral/test_mistral_tool_calls.py": "def test_mistral():\n    assert True\n",
    "tests/tool_use/mistral/test_streaming.py": "def test_streaming():\n    assert True\n",
}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    base = tmp_path_factory.mktemp("lines")
    repo = make_repo(base / "repo", {"v0.30.0": TREE, "v0.6.0": {}})  # (the v0.6.0 tag is unused here)
    path = base / "index.db"
    build_tags(repo, path, "v0.30.0")
    return path


def export(db) -> dict[str, dict]:
    data = json.loads(tpindex("export", "--at", "v0.30.0", "--format", "json", "--db", db).output)
    return {p["name"]: p for p in data["parsers"]}


def test_the_scope_records_tests_under_tests_tool_use():
    from indexer.core.scope import Scope

    scope = Scope.named("default")
    assert scope.matches("tests/tool_use/test_kimi_k3_tool_parser.py")
    assert scope.matches("tests/tool_use/mistral/test_mistral_tool_calls.py")
    assert not scope.matches("tests/tool_use/utils.py")


def test_tests_under_tests_tool_use_are_matched(db):
    ex = export(db)
    assert ex["kimi_k3"]["tests"] == ["tests/tool_use/test_kimi_k3_tool_parser.py"]
    # a file of tests/tool_use/<model>/ is that model's, whatever its own name says
    assert ex["mistral"]["tests"] == [
        "tests/tool_use/mistral/test_mistral_tool_calls.py",
        "tests/tool_use/mistral/test_streaming.py",
    ]
    owned = {t for p in ex.values() for t in p["tests"]}
    assert "tests/tool_use/test_chat_completions.py" not in owned  # about no name: never guessed


def test_a_name_check_keeps_the_registered_class_line(db):
    p = export(db)["cmd3"]
    assert p["impl"] == "name-check" and p["real_class"] == "CmdParser"
    assert (p["registered_class"], p["registered_file"], p["registered_line"]) == (
        "Cmd3ToolParser",
        f"{TP}/cmd_tool_parser.py",
        line_of(CMD_STUBS, "class Cmd3ToolParser"),
    )
    card = tpindex("card", "cmd3", "--db", db).output
    assert f"Cmd3ToolParser  {TP}/cmd_tool_parser.py:{line_of(CMD_STUBS, 'class Cmd3ToolParser')}" in card


def test_a_name_check_chain_shows_the_class_hop(db):
    got = rows(db, "select hop, class, file, line from parser_hops_v where name = 'cmd3' order by step")
    assert got == [
        ("registered", "Cmd3ToolParser", f"{TP}/__init__.py", line_of(TREE[f"{TP}/__init__.py"], '"cmd3"')),
        ("class", "Cmd3ToolParser", f"{TP}/cmd_tool_parser.py", line_of(CMD_STUBS, "class Cmd3ToolParser")),
        ("name-check", "CmdParser", "vllm/parser/parser_manager.py", line_of(MANAGER, '== "cmd3"')),
        ("real", "CmdParser", "vllm/parser/cmd.py", line_of(CMD_MODEL, "class CmdParser")),
    ]
    out = tpindex("which", "cmd3", "--db", db).output
    assert [line.split()[0] for line in out.splitlines()[1:5]] == [
        "registered",
        "class",
        "name-check",
        "real",
    ]


def test_a_registered_module_that_only_reexports_is_a_reexport(db):
    p = export(db)["tmpl"]
    assert p["impl"] == "name-check" and p["real_class"] == "TmplParser"
    assert p["reexport"] is True
    assert p["registered_line"] == line_of(TMPL_REEXPORT, "import TmplToolParser")
    got = [h[:2] for h in rows(db, "select hop, file from parser_hops_v where name = 'tmpl' order by step")]
    assert got == [
        ("registered", f"{TP}/__init__.py"),
        ("reexport", f"{TP}/tmpl_tool_parser.py"),
        ("class", "vllm/parser/tmpl.py"),
        ("name-check", "vllm/parser/parser_manager.py"),
        ("real", "vllm/parser/tmpl.py"),
    ]
    assert "registered module only re-exports the class" in tpindex("which", "tmpl", "--db", db).output


@pytest.fixture(scope="module")
def v060(tmp_path_factory):
    base = tmp_path_factory.mktemp("v060")
    repo = make_repo(base / "repo", {"v0.6.0": ERAS["v0.6.0"]})
    path = base / "index.db"
    build_tags(repo, path, "v0.6.0")
    return path


def test_the_hard_coded_era_says_what_is_known(v060):
    out = tpindex("which", "hermes", "--at", "v0.6.0", "--db", v060).output
    assert "?" not in out
    line = line_of(SERVING_CHAT, 'tool_parser == "hermes"')
    registered = out.splitlines()[1]
    assert registered.split()[0] == "registered" and "cli-choices" in registered
    assert (
        f"'hermes' -> Hermes2ProToolParser, picked by name at vllm/entrypoints/openai/serving_chat.py:{line}"
        in registered
    )
    card = tpindex("card", "hermes", "--at", "v0.6.0", "--db", v060).output
    reg = next(s for s in card.splitlines() if s.strip().startswith("registered class"))
    assert "None" not in reg and "?" not in reg
    assert "--tool-call-parser choice" in reg and f"serving_chat.py:{line}" in reg
    data = json.loads(tpindex("card", "hermes", "--at", "v0.6.0", "--format", "json", "--db", v060).output)
    assert data["cards"][0]["dispatch"]["class"] == "Hermes2ProToolParser"
