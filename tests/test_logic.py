"""Where the logic lives (issue 11): contract methods resolved through the class hierarchy as Python
resolves them, the class whose code does the parsing, delegating wrappers, declared engine classes, and
code that changed. The fixture imitates the unified-engine era (vllm/tool_parsers, vllm/reasoning,
vllm/parser with a parser manager and an engine) with small hand-written classes."""

from __future__ import annotations

import json

from fixtures.eras import (
    lazy_manager,
    lazy_registry,
)
from fixtures.helpers import build_tags, line_of, make_repo, rows, tpindex
from fixtures.logic import ABSTRACT, ABSTRACT_PARSER, BASE45, GENERIC_BASE, TOOL_INIT


def pm(db, name, kind="tool", version="v0.32.0"):
    cols = (
        "impl",
        "real_class",
        "real_file",
        "real_line",
        "reg_class",
        "reg_file",
        "streaming",
        "wrapper_class",
        "wrapper_file",
        "notes",
        "code_sig",
    )
    got = rows(
        db,
        f"select {', '.join(cols)} from parser_map_v where version = ? and kind = ? and name = ?",
        (version, kind, name),
    )
    assert len(got) == 1, (name, got)
    out = dict(zip(cols, got[0], strict=True))
    out["notes"] = json.loads(out["notes"]) if out["notes"] else []
    return out


def methods(db, name, role="registered", kind="tool", version="v0.32.0"):
    return {
        m: (cls, f, line, body, own)
        for m, cls, f, line, body, own in rows(
            db,
            "select method, defining_class, file, line, body, own from parser_methods_v where version = ?"
            " and kind = ? and name = ? and role = ?",
            (version, kind, name, role),
        )
    }


def hop_kinds(db, name, kind="tool", version="v0.32.0"):
    return [
        h
        for (h,) in rows(
            db,
            "select hop from parser_hops_v where version = ? and kind = ? and name = ? order by step",
            (version, kind, name),
        )
    ]


def test_inherited_extraction_moves_the_real_file_to_the_other_names_class(logic_db):
    p = pm(logic_db, "child47")
    assert (p["real_class"], p["real_file"]) == (
        "Base45ToolParser",
        "vllm/tool_parsers/base45_tool_parser.py",
    )
    assert (p["reg_class"], p["reg_file"]) == (
        "Child47ToolParser",
        "vllm/tool_parsers/child47_tool_parser.py",
    )
    assert p["impl"] == "standalone"
    assert any("inherited from Base45ToolParser" in n for n in p["notes"])
    m = methods(logic_db, "child47")
    assert m["extract_tool_calls"] == (
        "Base45ToolParser",
        "vllm/tool_parsers/base45_tool_parser.py",
        line_of(BASE45, "def extract_tool_calls("),
        "code",
        0,
    )
    assert m["adjust_request"][0] == "ToolParser"
    assert hop_kinds(logic_db, "child47") == ["registered", "class", "real"]


def test_base_imported_under_an_alias(logic_db):
    p = pm(logic_db, "aliased")
    assert p["real_class"] == "Base45ToolParser"


def test_selector_stub_is_a_note(logic_db):
    p = pm(logic_db, "stubby")
    assert p["real_class"] == "StubbyToolParser" and p["streaming"] == "raises-not-implemented"
    assert any(
        n.startswith("selector stub: extract_tool_calls and extract_tool_calls_streaming raise")
        for n in p["notes"]
    )
    assert methods(logic_db, "stubby")["extract_tool_calls"][3] == "raises-not-implemented"


def test_streaming_that_returns_none(logic_db):
    p = pm(logic_db, "quiet")
    assert p["streaming"] == "returns-none"
    assert any("QuietToolParser.extract_tool_calls_streaming returns None" in n for n in p["notes"])


def test_extraction_from_a_framework_base_keeps_the_registered_class_real(logic_db):
    p = pm(logic_db, "framed")
    assert p["real_class"] == "FramedToolParser"
    line = line_of(GENERIC_BASE, "def extract_tool_calls(")
    assert (
        f"extract_tool_calls: inherited from JsonishToolParser, vllm/tool_parsers/generic_base.py:{line}"
        in p["notes"]
    )
    # the abstract base's streaming method raises: that is what runs
    assert p["streaming"] == "raises-not-implemented"
    assert any(
        n.startswith("streaming: ToolParser.extract_tool_calls_streaming raises NotImplementedError")
        for n in p["notes"]
    )


def test_multiple_bases_resolve_in_c3_order(logic_db):
    m = methods(logic_db, "diamond")
    # DiamondToolParser(LeftMixin, RightMixin), both over RootPart: C3 puts RightMixin before RootPart
    assert m["extract_tool_calls"][0] == "LeftMixin"
    assert m["extract_tool_calls_streaming"][0] == "RightMixin"


def test_abstract_method_body(logic_db):
    got = rows(
        logic_db,
        "select body from methods_v where version = 'v0.32.0' and class = 'ToolParser'"
        " and method = 'extract_tool_calls'",
    )
    assert got == [("abstract",)]


def test_delegating_wrapper_composed_by_a_name_check_is_a_hop(logic_db):
    p = pm(logic_db, "wrapped")
    assert (p["real_class"], p["impl"]) == ("WrappedToolParser", "standalone")
    assert (p["wrapper_class"], p["wrapper_file"]) == ("WrapParser", "vllm/parser/wrapper.py")
    assert hop_kinds(logic_db, "wrapped") == ["registered", "name-check", "wrapper", "class"]
    w = methods(logic_db, "wrapped", role="wrapper")
    assert w["parse_delta"][0] == "WrapParser" and w["parse"][0] == "DelegatingParser"
    assert w["extract_tool_calls"][0] == "DelegatingParser"


def test_composed_class_that_parses_itself_is_real(logic_db):
    p = pm(logic_db, "selfish")
    assert (p["impl"], p["real_class"], p["real_file"]) == (
        "name-check",
        "SelfishParser",
        "vllm/parser/selfish.py",
    )
    assert p["wrapper_class"] is None


def test_class_check_composes_a_wrapper(logic_db):
    p = pm(logic_db, "mistra")
    assert (p["real_class"], p["wrapper_class"]) == ("MistraToolParser", "MistraParser")
    assert hop_kinds(logic_db, "mistra") == ["registered", "class-check", "wrapper", "class"]


def test_declared_engine_wins_over_a_name_check(logic_db):
    p = pm(logic_db, "declared", kind="reasoning")
    assert (p["impl"], p["real_class"], p["real_file"]) == (
        "unified",
        "DeclaredParser",
        "vllm/parser/declared.py",
    )
    assert p["wrapper_class"] == "DeclaredWrapper"
    assert methods(logic_db, "declared", role="engine", kind="reasoning")["extract_reasoning"][:2] == (
        "DeclaredParser",
        "vllm/parser/declared.py",
    )


def test_adapter_made_by_make_adapters_has_the_generic_adapter_as_base(logic_db):
    p = pm(logic_db, "engined")
    assert (p["impl"], p["real_class"]) == ("unified", "EnginedParser")
    reg = methods(logic_db, "engined")
    assert reg["extract_tool_calls"][0] == "ParserEngineToolAdapter"
    eng = methods(logic_db, "engined", role="engine")
    assert eng["parse_delta"][0] == "EnginedParser" and eng["parse"][0] == "ParserEngine"
    attrs = dict(
        rows(
            logic_db,
            "select attribute, defining_class from parser_attrs_v where version = 'v0.32.0'"
            " and name = 'engined' and role = 'registered'",
        )
    )
    assert attrs["_parser_engine_cls"] == "EnginedParserToolAdapter"
    assert attrs["engine_based_streaming"] == "ParserEngineToolAdapter"
    assert attrs["supports_required_and_named"] == "ToolParser"


def test_behaviour_attribute_resolved_with_the_class_that_sets_it(logic_db):
    got = rows(
        logic_db,
        "select name, value, defining_class, own from parser_attrs_v where version = 'v0.32.0'"
        " and attribute = 'supports_required_and_named' and name in ('base45', 'child47', 'quiet')"
        " order by name",
    )
    assert got == [
        ("base45", "False", "Base45ToolParser", 1),
        ("child47", "False", "Base45ToolParser", 0),
        ("quiet", "True", "ToolParser", 0),
    ]


def test_code_files_and_the_names_whose_code_changed(logic_db):
    code = dict(
        rows(
            logic_db, "select file, shared from parser_code_v where version = 'v0.32.0' and name = 'child47'"
        )
    )
    assert code == {
        "vllm/tool_parsers/child47_tool_parser.py": 0,
        "vllm/tool_parsers/base45_tool_parser.py": 0,
        "vllm/tool_parsers/abstract_tool_parser.py": 1,
    }
    for name in ("base45", "child47", "aliased"):
        assert pm(logic_db, name)["code_sig"] != pm(logic_db, name, version="v0.33.0")["code_sig"], name
    for name in ("quiet", "stubby", "engined"):
        assert pm(logic_db, name)["code_sig"] == pm(logic_db, name, version="v0.33.0")["code_sig"], name


def test_diff_reports_code_changes_and_a_framework_change_once(logic_db):
    out = tpindex("diff", "v0.32.0", "v0.33.0", "--format", "json", "--db", logic_db, ok=False)
    changes = json.loads(out.output)["changes"]
    code = sorted(c["name"] for c in changes if c["type"] == "code-changed")
    assert code == ["aliased", "base45", "child47"]
    framework = [c for c in changes if c["type"] == "framework-changed"]
    assert [c["file"] for c in framework] == ["vllm/parser/engine/adapters.py"]
    assert "engined (tool)" in framework[0]["names"]


def test_which_all_splits_ranges_where_the_code_changed(logic_db):
    out = tpindex("which", "child47", "--all", "--db", logic_db).output
    assert "v0.32.0 " in out and "v0.33.0 " in out and "code changed" in out
    life = rows(logic_db, "select code_changed_in from lifecycle where name = 'child47'")
    assert life == [("v0.33.0",)]


def test_which_shows_notes_and_the_wrapper(logic_db):
    out = tpindex("which", "wrapped", "--at", "v0.32.0", "--db", logic_db).output
    assert "wrapper" in out and "vllm/parser/wrapper.py" in out
    assert "=> really implemented in vllm/tool_parsers/wrapped_tool_parser.py (WrappedToolParser)" in out
    out = tpindex("which", "quiet", "--db", logic_db).output
    assert "returns None" in out


UNIFIED_INIT = lazy_registry("engine", {"minimax9": ("minimax9_parser", "MiniMax9Parser")})

UNIFIED_MANAGER = lazy_manager("ParserManager")

UNIFIED_PARSER = """
from vllm.parser.abstract_parser import DelegatingParser
from vllm.tool_parsers.minimax9_tool_parser import MiniMax9ToolParser


class MiniMax9Parser(DelegatingParser):
    tool_parser_cls = MiniMax9ToolParser

    def __init__(self, tokenizer):
        super().__init__(tokenizer)
        self._tool_parser = MiniMax9ToolParser(tokenizer)
"""

MINIMAX9_TOOL = """
from vllm.tool_parsers.abstract_tool_parser import ToolParser


class MiniMax9ToolParser(ToolParser):
    def extract_tool_calls(self, text, request):
        return text.split("<invoke>")

    def extract_tool_calls_streaming(self, previous, current, delta):
        return delta
"""

UNIFIED_TREE = {
    "vllm/tool_parsers/__init__.py": TOOL_INIT.replace(
        """    "base45": ("base45_tool_parser", "Base45ToolParser"),""",
        """    "minimax9": ("minimax9_tool_parser", "MiniMax9ToolParser"),""",
    ),
    "vllm/tool_parsers/abstract_tool_parser.py": ABSTRACT,
    "vllm/tool_parsers/minimax9_tool_parser.py": MINIMAX9_TOOL,
    "vllm/parser/__init__.py": UNIFIED_INIT,
    "vllm/parser/parser_manager.py": UNIFIED_MANAGER,
    "vllm/parser/abstract_parser.py": ABSTRACT_PARSER,
    "vllm/parser/minimax9_parser.py": UNIFIED_PARSER,
}


def test_the_unified_registrys_parser_of_the_same_name_is_a_wrapper(tmp_path):
    """v0.16.0 - v0.22.x: the parser manager prefers the unified registry's parser of the requested name;
    a delegating one wraps the registered tool parser."""
    repo = make_repo(tmp_path / "repo", {"v0.20.0": UNIFIED_TREE})
    db = tmp_path / "x.db"
    build_tags(repo, db, "v0.20.0")
    p = pm(db, "minimax9", version="v0.20.0")
    assert (p["real_class"], p["wrapper_class"]) == ("MiniMax9ToolParser", "MiniMax9Parser")
    assert hop_kinds(db, "minimax9", version="v0.20.0") == [
        "registered",
        "unified-registry",
        "wrapper",
        "class",
    ]
    u = pm(db, "minimax9", kind="engine", version="v0.20.0")
    assert u["real_class"] == "MiniMax9Parser"
    assert any(n.startswith("delegates to tool_parser_cls = MiniMax9ToolParser") for n in u["notes"])
