"""Parser cards (issue 14): everything about one name at a version, gathered from the index, in text, JSON
and Markdown, and `card --all`. The fixture imitates the unified-engine era with small hand-written files:

    v0.30.0  zeta: standalone (sentinels, a regex, adjust_request, a TODO, a plant, streaming returns None);
             omega: standalone in its tool-parser file
    v0.31.0  omega moves onto the engine (stub + adapter + vllm/parser/omega.py with non-ASCII sentinels);
             a reasoning parser named omega shares the engine class; zeta's code changes
"""

from __future__ import annotations

import json

import pytest
from fixtures.card import ZETA, build_card_fixture
from fixtures.helpers import line_of, tpindex


@pytest.fixture(scope="module")
def card_db(tmp_path_factory):
    return build_card_fixture(tmp_path_factory.mktemp("cards"))


def card_json(db, *args):
    """The one card a question about one name and kind gives (JSON: {version, cards: [...]})."""
    data = json.loads(tpindex("card", *args, "--format", "json", "--db", db).output)
    (card,) = data["cards"]
    assert card["version"] == data["version"]
    return card


def test_standalone_card_facts(card_db):
    c = card_json(card_db, "zeta", "--at", "v0.31.0")
    assert (c["kind"], c["name"], c["impl"], c["version"]) == ("tool", "zeta", "standalone", "v0.31.0")
    file = "vllm/tool_parsers/zeta_tool_parser.py"
    assert (c["registered"]["class"], c["registered"]["file"]) == ("ZetaToolParser", file)
    assert (c["real"]["class"], c["real"]["file"], c["real"]["line"]) == (
        "ZetaToolParser",
        file,
        line_of(ZETA, "class ZetaToolParser"),
    )
    assert c["streaming"] == "returns-none"
    assert c["streaming_method"]["line"] == line_of(ZETA, "def extract_tool_calls_streaming")
    attrs = {a["attribute"]: (a["value"], a["class"]) for a in c["attributes"]}
    assert attrs["supports_required_and_named"] == ("True", "ToolParser")


def test_adjust_request_is_read_with_its_condition(card_db):
    c = card_json(card_db, "zeta", "--at", "v0.31.0")
    [a] = c["adjust_request"]
    assert (a["class"], a["calls_super"]) == ("ZetaToolParser", True)
    assert [(s["field"], s["value"], s["guard"]) for s in a["sets"]] == [
        ("skip_special_tokens", "False", 'request.tools and request.tool_choice != "none"')
    ]
    assert a["sets"][0]["line"] == line_of(ZETA, "request.skip_special_tokens = False")


def test_sentinels_of_the_names_own_code(card_db):
    c = card_json(card_db, "zeta", "--at", "v0.31.0")
    got = {s["value"]: s["attributes"] for s in c["sentinels"]}
    assert got == {
        "<zeta_call>": ["tool_call_start_token", "call_regex"],
        "</zeta_call>": ["tool_call_end_token", "call_regex"],
    }
    hows = [p["how"] for p in c["sentinels"][0]["places"]]
    assert hows == ["attribute", "regex"]


def test_unified_card_engine_sentinels_non_ascii_and_the_shared_engine(card_db):
    c = card_json(card_db, "omega", "--at", "v0.31.0", "--kind", "tool")
    assert (c["impl"], c["real"]["class"], c["real"]["file"]) == (
        "unified",
        "OmegaParser",
        "vllm/parser/omega.py",
    )
    assert c["adapter"] == "OmegaParserToolAdapter" and c["registered"]["class"] == "OmegaToolParser"
    values = [s["value"] for s in c["sentinels"]]
    assert values == ["<｜omega▁calls｜>", "<｜/omega▁calls｜>", "</think>"]
    assert c["sentinels"][0]["non_ascii"] == "U+FF5C FULLWIDTH VERTICAL LINE, U+2581 LOWER ONE EIGHTH BLOCK"
    assert "[OMEGA_CALLS]" not in values  # the standalone era's token is gone at v0.31.0
    [pair] = c["pairs"]
    assert (pair["kind"], pair["real_class"], pair["shares_real_class"]) == ("reasoning", "OmegaParser", True)
    chain = [(a["class"], [s["field"] for s in a["sets"]]) for a in c["adjust_request"]]
    assert chain == [("ParserEngineToolAdapter", []), ("ParserEngine", ["skip_special_tokens"])]
    attrs = {a["attribute"]: (a["value"], a["class"]) for a in c["attributes"]}
    assert attrs["supports_required_and_named"] == ("False", "OmegaToolParser")


def test_templates_tests_plants_markers_and_lifecycle(card_db):
    c = card_json(card_db, "zeta", "--at", "v0.31.0")
    assert [(t["file"], t["level"], t["via"]) for t in c["chat_templates"]] == [
        ("examples/tool_chat_template_zeta.jinja", "exact", "name")
    ]
    assert [t["file"] for t in c["tests"]] == ["tests/tool_parsers/test_zeta_tool_parser.py"]
    assert [p["plant"] for p in c["plants"]] == ["prev_tool_call_arr_empty_arguments"]
    assert [(m["kind"], m["text"]) for m in c["markers"]] == [("TODO", "TODO: nested calls")]
    life = c["lifecycle"]
    # v0.31.0 edits a comment of zeta's class only: no change to the code that runs
    assert (life["first_version"], life["last_version"], life["code_changed_in"]) == (
        "v0.30.0",
        "v0.31.0",
        None,
    )
    omega = card_json(card_db, "omega", "--at", "v0.31.0", "--kind", "tool")
    assert omega["lifecycle"]["became_unified"] == "v0.31.0"
    assert [t["file"] for t in omega["chat_templates"]] == ["examples/tool_chat_template_omega2.jinja"]
    assert [t["file"] for t in omega["tests"]] == ["tests/parser/engine/test_omega.py"]


def test_upstream_links_at_the_cards_version(card_db):
    c = card_json(card_db, "zeta", "--at", "v0.30.0")
    line = line_of(ZETA, "class ZetaToolParser")
    assert (
        c["real"]["url"]
        == f"https://github.com/vllm-project/vllm/blob/v0.30.0/vllm/tool_parsers/zeta_tool_parser.py#L{line}"
    )
    assert c["chat_templates"][0]["url"].endswith("/blob/v0.30.0/examples/tool_chat_template_zeta.jinja")


def test_text_card(card_db):
    out = tpindex("card", "omega", "--at", "v0.31.0", "--db", card_db).output
    assert out.startswith("omega (tool parser) at v0.31.0\n")
    assert "\n\nomega (reasoning parser) at v0.31.0\n" in out  # every kind the name has, one card each
    assert "  real class         OmegaParser  vllm/parser/omega.py:" in out
    assert "U+FF5C FULLWIDTH VERTICAL LINE" in out
    assert (
        "omega (reasoning parser): unified, OmegaParser (vllm/parser/omega.py:" in out
        and "shares the real class" in out
    )
    zeta = tpindex("card", "zeta", "--db", card_db).output
    assert "zeta (tool parser) at v0.31.0" in zeta  # the newest by default
    assert (
        'sets request.skip_special_tokens = False  when request.tools and request.tool_choice != "none"'
        in zeta
    )
    assert "streaming          returns-none: ZetaToolParser.extract_tool_calls_streaming" in zeta


def test_markdown_card(card_db):
    out = tpindex("card", "zeta", "--at", "v0.31.0", "--format", "markdown", "--db", card_db).output
    assert out.startswith("## zeta (tool parser) at v0.31.0\n")
    assert "| sentinels | `<zeta_call>" in out
    # the fixture's template prints the messages as Python sees them: that is the markup it renders
    assert "| chat templates | examples/tool_chat_template_zeta.jinja (exact, by name)<br>renders  `" in out
    assert "(no call markup recognised) |" in out


def test_card_all_markdown_is_one_document_with_a_row_and_a_section_per_name(card_db):
    out = tpindex("card", "--all", "--at", "v0.31.0", "--format", "markdown", "--db", card_db).output
    assert out.startswith("# vLLM v0.31.0: tool-calling parser reference\n")
    rows = [
        line for line in out.splitlines() if line.startswith("| tool |") or line.startswith("| reasoning |")
    ]
    assert [r.split("|")[2].strip() for r in rows] == [
        "[omega](#tool-omega)",
        "[zeta](#tool-zeta)",
        "[omega](#reasoning-omega)",
    ]
    assert out.count("\n## ") == 3
    data = json.loads(tpindex("card", "--all", "--at", "v0.30.0", "--format", "json", "--db", card_db).output)
    assert data["version"] == "v0.30.0"
    assert [(c["kind"], c["name"]) for c in data["cards"]] == [("tool", "omega"), ("tool", "zeta")]


def test_card_errors(card_db):
    r = tpindex("card", "zetta", "--db", card_db, ok=False)
    assert r.exit_code == 2 and "did you mean: zeta" in r.output
    r = tpindex("card", "omega", "--kind", "reasoning", "--at", "v0.30.0", "--db", card_db, ok=False)
    assert r.exit_code == 2 and "not registered at v0.30.0" in r.output and "--at v0.31.0" in r.output
    r = tpindex("card", "--db", card_db, ok=False)
    assert r.exit_code == 2 and "Hint:" in r.output
    r = tpindex("card", "zeta", "--all", "--db", card_db, ok=False)
    assert r.exit_code == 2
    r = tpindex("card", "zeta", "--at", "v9.9", "--db", card_db, ok=False)
    assert r.exit_code == 2 and "not indexed" in r.output
