"""The parser contract per version and `tpindex diff A B --contract` (issue 28): the bases plugins derive
from, the registries they call, the utils helpers, the types the signatures name and where they are
imported from, and how serving constructs and calls parsers; their changes typed in the manner of griffe's
breakage check, each with file:line on both sides. Fixture history: tests/fixtures/plugin_eras.py."""

from __future__ import annotations

import json

import pytest
from fixtures.helpers import build_tags, line_of, make_repo, tpindex
from fixtures.plugin_eras import NEW, OLD, SERVING, abstract, history, serving


@pytest.fixture(scope="module")
def contract_db(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("contract")
    repo = make_repo(tmp / "repo", history())
    db = tmp / "i.db"
    build_tags(repo, db, "v0.10.0..")
    return db


def _ix(db):
    from indexer.api import Index

    return Index(db)


def _sig(c, cls, method):
    (k,) = [k for k in c.classes if k.name == cls]
    (m,) = [m for m in k.methods if m.name == method]
    return k, m


def test_the_contract_of_a_version(contract_db):
    c = _ix(contract_db).contract("v0.10.0")
    roles = {k.name: (k.role, k.file, k.derived) for k in c.classes}
    assert roles == {
        "ToolParser": ("base", f"{OLD}/abstract_tool_parser.py", 2),
        "ToolParserManager": ("manager", f"{OLD}/abstract_tool_parser.py", 0),
    }
    k, init = _sig(c, "ToolParser", "__init__")
    assert init.text == "(self, tokenizer)"
    assert init.line == line_of(abstract(), "def __init__")
    _, ext = _sig(c, "ToolParser", "extract_tool_calls")
    assert (
        ext.text
        == "(self, model_output: str, request: ChatCompletionRequest) -> ExtractedToolCallInformation"
    )
    assert ext.body == "raises-not-implemented"
    assert {a.name: a.value for a in k.attributes} == {"supports_required_and_named": "True"}
    _, reg = _sig(c, "ToolParserManager", "register_module")
    assert [p.name for p in reg.params] == ["cls", "name", "force", "module"]
    assert [h.name for h in c.helpers] == ["find_common_prefix", "partial_json_loads"]
    assert {h.file for h in c.helpers} == {f"{OLD}/utils.py"}
    types = {t.name: t.module for t in c.types}
    assert types == {
        "ChatCompletionRequest": "vllm.entrypoints.openai.protocol",
        "DeltaMessage": "vllm.entrypoints.openai.protocol",
        "ExtractedToolCallInformation": "vllm.entrypoints.openai.protocol",
    }
    (req,) = [t for t in c.types if t.name == "ChatCompletionRequest"]
    assert "ToolParser.extract_tool_calls" in req.used_by
    constructions = [(s.text, s.file, s.line) for s in c.calls if s.method == "__init__"]
    assert constructions == [
        ("self.tool_parser(tokenizer)", SERVING, line_of(serving(), "tool_parser = self"))
    ]


def _changes(d, type_=None):
    return [c for c in d.changes if type_ is None or c.type == type_]


def test_a_moved_package_moves_the_classes_and_the_helpers(contract_db):
    d = _ix(contract_db).contract_diff("v0.10.0", "v0.13.0")
    moved = {
        c.subject: (c.file_a, c.line_a, c.file_b, c.line_b, c.breaking) for c in _changes(d, "class-moved")
    }
    new = abstract(lazy=True)
    assert moved == {
        "ToolParser": (
            f"{OLD}/abstract_tool_parser.py",
            line_of(abstract(), "class ToolParser"),
            f"{NEW}/abstract_tool_parser.py",
            line_of(new, "class ToolParser"),
            True,
        ),
        "ToolParserManager": (
            f"{OLD}/abstract_tool_parser.py",
            line_of(abstract(), "class ToolParserManager"),
            f"{NEW}/abstract_tool_parser.py",
            line_of(new, "class ToolParserManager"),
            True,
        ),
    }
    (c,) = [c for c in _changes(d, "class-moved") if c.subject == "ToolParser"]
    assert c.before == "vllm.entrypoints.openai.tool_parsers.abstract_tool_parser"
    assert c.after == "vllm.tool_parsers.abstract_tool_parser"
    assert "import" in c.explanation
    assert {c.subject for c in _changes(d, "helper-moved")} == {"find_common_prefix", "partial_json_loads"}
    (added,) = _changes(d, "method-added")
    assert (added.subject, added.breaking) == ("ToolParserManager.register_lazy_module", False)
    assert not _changes(d, "parameter-added")  # the signatures themselves stayed


def test_the_constructor_era_change(contract_db):
    d = _ix(contract_db).contract_diff("v0.14.0", "v0.19.0")
    (p,) = _changes(d, "parameter-added")
    assert p.subject == "ToolParser.__init__(tools)"
    assert p.breaking
    assert (p.before, p.after) == ("(self, tokenizer)", "(self, tokenizer, tools=None)")
    assert "override" in p.explanation and "TypeError" in p.explanation
    assert (p.file_a, p.file_b) == (f"{NEW}/abstract_tool_parser.py", f"{NEW}/abstract_tool_parser.py")
    (con,) = _changes(d, "construction-changed")
    assert (con.before, con.after) == (
        "self.tool_parser(tokenizer)",
        "self.tool_parser(tokenizer, request.tools)",
    )
    assert (con.file_b, con.line_b) == (SERVING, line_of(serving(), "tool_parser = self"))
    assert con.breaking
    (t,) = _changes(d, "type-moved")
    assert (t.subject, t.before, t.after) == (
        "ChatCompletionRequest",
        "vllm.entrypoints.openai.protocol",
        "vllm.entrypoints.openai.chat_completion.protocol",
    )
    (r,) = _changes(d, "method-removed")
    assert (r.subject, r.breaking, r.file_b) == ("ToolParserManager.import_tool_parser", True, None)
    assert d.breaking == len([c for c in d.changes if c.breaking]) >= 4


def test_a_renamed_parameter_and_a_removed_method(contract_db):
    d = _ix(contract_db).contract_diff("v0.19.0", "v0.20.0")
    (r,) = _changes(d, "parameter-renamed")
    assert (r.subject, r.before, r.after) == (
        "ToolParser.extract_tool_calls(model_output)",
        "model_output",
        "text",
    )
    assert r.breaking and "keyword" in r.explanation
    (m,) = _changes(d, "method-removed")
    assert m.subject == "ToolParser.adjust_request"
    assert "no longer calls" in m.explanation
    (call,) = _changes(d, "call-changed")
    assert (call.before, call.after) == (
        "tool_parser.extract_tool_calls(output, request=request)",
        "tool_parser.extract_tool_calls(text=output, request=request)",
    )


def test_no_contract_change_between_equal_contracts(contract_db):
    d = _ix(contract_db).contract_diff("v0.19.0", "v0.19.0")
    assert d.changes == [] and d.breaking == 0


def test_cli_text_json_markdown_and_exit_status(contract_db):
    out = tpindex("diff", "v0.14.0", "v0.19.0", "--contract", "--db", contract_db, ok=False)
    assert out.exit_code == 1
    text = out.output
    assert text.splitlines()[0].startswith("contract v0.14.0 -> v0.19.0:")
    assert any(
        line.startswith("! parameter-added") and "ToolParser.__init__(tools)" in line
        for line in text.splitlines()
    )
    assert f"{NEW}/abstract_tool_parser.py:" in text
    out = tpindex(
        "diff", "v0.14.0", "v0.19.0", "--contract", "--format", "json", "--db", contract_db, ok=False
    )
    data = json.loads(out.output)
    import jsonschema

    from indexer.schemas import load

    jsonschema.validate(data, load("diff-contract"))
    assert {c["type"] for c in data["changes"]} >= {"parameter-added", "construction-changed", "type-moved"}
    out = tpindex(
        "diff", "v0.14.0", "v0.19.0", "--contract", "--format", "markdown", "--db", contract_db, ok=False
    )
    assert "| breaking | change |" in out.output
    same = tpindex("diff", "v0.19.0", "v0.19.0", "--contract", "--db", contract_db, ok=False)
    assert same.exit_code == 0 and "no contract change" in same.output
    bad = tpindex("diff", "v0.14.0", "v0.19.0", "--contract", "--code", "x.py", "--db", contract_db, ok=False)
    assert bad.exit_code == 2 and "Hint:" in bad.output


def test_engine_era_adapters_are_bases(tmp_path):
    from fixtures.eras import (
        ABS_REASONING,
        PLAIN_ABSTRACT,
        engine_adapters,
        engine_stub,
        lazy_registry,
        registered_adapters,
    )

    repo = make_repo(
        tmp_path / "repo",
        {
            "v0.24.0": {
                f"{NEW}/__init__.py": lazy_registry(
                    "tool",
                    {
                        "zeta": ("zeta_tool_parser", "ZetaToolParser"),
                        "eta": ("eta_tool_parser", "EtaToolParser"),
                    },
                ),
                f"{NEW}/abstract_tool_parser.py": PLAIN_ABSTRACT,
                f"{NEW}/zeta_tool_parser.py": engine_stub("ZetaToolParser", "ZetaParserToolAdapter"),
                f"{NEW}/eta_tool_parser.py": engine_stub("EtaToolParser", "EtaParserToolAdapter"),
                "vllm/reasoning/abs_reasoning_parsers.py": ABS_REASONING,
                "vllm/parser/engine/adapters.py": engine_adapters(
                    "class ParserEngine:\n    def parse(self, text):\n        return text\n", ""
                ),
                "vllm/parser/engine/registered_adapters.py": registered_adapters("zeta", "ZetaParser")
                + "from vllm.parser.eta import EtaParser\n\n(EtaParserReasoningAdapter, EtaParserToolAdapter) ="
                " make_adapters(EtaParser)\n",
                "vllm/parser/zeta.py": "from vllm.parser.engine.adapters import ParserEngine\n\n\nclass ZetaParser(ParserEngine):"
                "\n    pass\n",
                "vllm/parser/eta.py": "from vllm.parser.engine.adapters import ParserEngine\n\n\nclass EtaParser(ParserEngine):"
                "\n    pass\n",
            }
        },
    )
    db = tmp_path / "i.db"
    build_tags(repo, db, "v0.24.0")
    c = _ix(db).contract("v0.24.0")
    bases = {k.name: k.derived for k in c.classes if k.role == "base"}
    assert bases == {"ToolParser": 2, "ParserEngineToolAdapter": 2, "ParserEngine": 2}


def test_the_version_page_shows_the_contract_changes(contract_db):
    import html
    import re

    from fixtures.serve import serve

    c = serve(contract_db)
    try:
        page = c.html("/-/version/v0.19.0")
        section = page[page.index('id="contract"') :]
        assert "Parser contract changes from" in section and "v0.14.0" in section
        assert "tpindex diff v0.14.0 v0.19.0 --contract" in html.unescape(section)
        types = re.findall(r'<td class="type">([\w-]+)</td>', section)
        assert {"parameter-added", "construction-changed", "type-moved", "method-removed"} <= set(types)
        assert 'class="breaking"' in section
        assert (
            f'href="/-/source/v0.19.0/{NEW}/abstract_tool_parser.py#L' in section
        )  # file:line at B, stored code
        assert f'href="/-/source/v0.14.0/{NEW}/abstract_tool_parser.py#L' in section  # and at A
        first = c.html("/-/version/v0.10.0")
        assert 'id="contract"' not in first
    finally:
        c.close()
