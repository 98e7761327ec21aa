"""Parser cards on a real release (issue 14): hermes, deepseek_v3, mistral, glm47, qwen3_coder, phi4_mini_json
and openai at v0.32.0, from its source archive on the package index (cached; the build of
test_real_logic is reused).

Every expectation was established by reading vllm 0.32.0's source by hand: the registered classes and
their lines, the class attributes holding the tokens (`tool_call_start_token: str = "<tool_call>"` in
Hermes2ProToolParser; `self.tool_calls_start_token: str = "<｜tool▁calls▁begin｜>"` in DeepSeekV3ToolParser's
__init__, and `<｜tool▁sep｜>` only inside its regular expressions; module constants TOOL_CALL_START,
ARG_KEY_START, ... in vllm/parser/glm47_moe.py, FUNC_PREFIX = "<function=" in vllm/parser/qwen3.py;
`_TOOL_CALLS = SpecialTokens.tool_calls.value` in vllm/parser/mistral.py; `self.bot_token = "functools"` in
Phi4MiniJsonToolParser), the adjust_request bodies (hermes: super() then `request.skip_special_tokens =
False` under `if request.tools and request.tool_choice != "none"`; MistralToolParser hands the call to
`self._parser_engine.adjust_request`, MistralParser's sets it), GptOssToolParser's two methods raising
NotImplementedError, Phi4MiniJsonToolParser's streaming method returning None, and the file names under
examples/ and tests/.
"""

from __future__ import annotations

import json

import pytest
from fixtures.helpers import tpindex

pytestmark = pytest.mark.network

AT = "v0.32.0"


def card(db, name, kind="tool"):
    (one,) = json.loads(
        tpindex("card", name, "--at", AT, "--kind", kind, "--format", "json", "--db", db).output
    )["cards"]
    return one


def sentinels(c):
    return {s["value"]: s for s in c["sentinels"]}


def attrs(c):
    return {a["attribute"]: (a["value"], a["class"]) for a in c["attributes"] if a["role"] == "registered"}


def files(ms):
    return [m["file"] for m in ms]


def test_hermes(real_logic_db):  # noqa: F811
    c = card(real_logic_db, "hermes")
    f = "vllm/tool_parsers/hermes_tool_parser.py"
    assert (c["impl"], c["real"]["class"], c["real"]["file"], c["real"]["line"]) == (
        "standalone",
        "Hermes2ProToolParser",
        f,
        34,
    )
    assert c["aliases"] == ["qwen3_json"] and c["pairs"] == []
    s = sentinels(c)
    assert (
        s["<tool_call>"]["attributes"][0] == "tool_call_start_token"
        and s["<tool_call>"]["places"][0]["line"] == 36
    )
    assert s["</tool_call>"]["attributes"][0] == "tool_call_end_token"
    assert [p["how"] for p in s["<scratch_pad>"]["places"]] == ["regex"]
    [a] = c["adjust_request"]
    assert (a["class"], a["line"], a["calls_super"]) == ("Hermes2ProToolParser", 59, True)
    assert [(x["field"], x["value"], x["guard"], x["line"]) for x in a["sets"]] == [
        ("skip_special_tokens", "False", 'request.tools and request.tool_choice != "none"', 67)
    ]
    assert attrs(c)["structural_tag_model"] == ('"hermes"', "Hermes2ProToolParser")
    assert files(c["chat_templates"]) == ["examples/tool_chat_template_hermes.jinja"]
    assert "tests/tool_parsers/test_hermes_tool_parser.py" in files(c["tests"])
    assert c["streaming"] == "code"


def test_deepseek_v3(real_logic_db):  # noqa: F811
    c = card(real_logic_db, "deepseek_v3")
    assert (c["impl"], c["real"]["class"], c["real"]["file"], c["real"]["line"]) == (
        "standalone",
        "DeepSeekV3ToolParser",
        "vllm/tool_parsers/deepseekv3_tool_parser.py",
        30,
    )
    s = sentinels(c)
    begin = s["<｜tool▁calls▁begin｜>"]
    assert begin["attributes"] == ["tool_calls_start_token"] and begin["places"][0]["line"] == 43
    assert begin["non_ascii"] == "U+FF5C FULLWIDTH VERTICAL LINE, U+2581 LOWER ONE EIGHTH BLOCK"
    assert {p["how"] for p in s["<｜tool▁sep｜>"]["places"]} == {"regex"}  # only inside regular expressions
    assert {"<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>"} <= set(s)
    [pair] = c["pairs"]
    assert (pair["kind"], pair["real_class"], pair["shares_real_class"]) == (
        "reasoning",
        "DeepSeekV3ReasoningParser",
        False,
    )
    assert files(c["chat_templates"]) == ["examples/tool_chat_template_deepseekv3.jinja"]
    assert files(c["tests"]) == ["tests/tool_parsers/test_deepseekv3_tool_parser.py"]


def test_mistral(real_logic_db):  # noqa: F811
    c = card(real_logic_db, "mistral")
    assert (c["impl"], c["real"]["class"], c["real"]["file"], c["real"]["line"]) == (
        "unified",
        "MistralParser",
        "vllm/parser/mistral.py",
        273,
    )
    assert (c["registered"]["class"], c["registered"]["file"], c["registered"]["line"]) == (
        "MistralToolParser",
        "vllm/tool_parsers/mistral_tool_parser.py",
        15,
    )
    assert attrs(c)["supports_required_and_named"] == ("False", "MistralToolParser")
    first, engine = c["adjust_request"]
    assert (first["class"], first["delegates"]) == ("MistralToolParser", "_parser_engine.adjust_request")
    assert (engine["class"], engine["line"]) == ("MistralParser", 343)
    assert ("skip_special_tokens", "False", 378) in [
        (x["field"], x["value"], x["line"]) for x in engine["sets"]
    ]
    s = sentinels(c)
    assert s["SpecialTokens.tool_calls.value"]["attributes"] == ["_TOOL_CALLS"]
    assert s["SpecialTokens.tool_calls.value"]["places"][0]["how"] == "reference"
    assert s["<think>"]["attributes"] == ["_THINK_START_TEXT"]
    [pair] = c["pairs"]
    assert (pair["kind"], pair["real_class"], pair["shares_real_class"]) == (
        "reasoning",
        "MistralParser",
        True,
    )
    assert files(c["chat_templates"]) == [
        "examples/tool_chat_template_mistral.jinja",
        "examples/tool_chat_template_mistral3.jinja",
        "examples/tool_chat_template_mistral_parallel.jinja",
    ]
    assert files(c["tests"]) == [
        "tests/parser/mistral/test_tool_calls.py",
        "tests/tool_use/mistral/test_mistral_tool_calls.py",
    ]  # (issue 23 item 8)


def test_glm47(real_logic_db):  # noqa: F811
    c = card(real_logic_db, "glm47")
    assert (c["impl"], c["real"]["class"], c["real"]["file"], c["real"]["line"]) == (
        "unified",
        "Glm47MoeParser",
        "vllm/parser/glm47_moe.py",
        203,
    )
    assert c["registered"]["class"] == "Glm47MoeModelToolParser" and c["stub"] is True
    assert c["aliases"] == ["glm45"]
    assert attrs(c)["supports_required_and_named"] == ("False", "Glm47MoeModelToolParser")
    s = sentinels(c)
    assert (
        s["<tool_call>"]["attributes"][0] == "TOOL_CALL_START" and s["<tool_call>"]["places"][0]["line"] == 40
    )
    assert {"</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"} <= set(s)
    [pair] = c["pairs"]
    assert (pair["kind"], pair["real_class"], pair["shares_real_class"]) == (
        "reasoning",
        "Glm47MoeParser",
        True,
    )
    assert [(m["file"], m["level"]) for m in c["chat_templates"]] == [
        ("examples/tool_chat_template_glm4.jinja", "family")
    ]
    assert {
        "tests/parser/engine/test_glm47_moe.py",
        "tests/tool_parsers/test_glm47_moe_tool_parser.py",
    } <= set(files(c["tests"]))
    assert c["lifecycle"]["became_unified"] == "v0.25.0"  # the first indexed version of this build that is


def test_qwen3_coder(real_logic_db):  # noqa: F811
    c = card(real_logic_db, "qwen3_coder")
    assert (c["impl"], c["real"]["class"], c["real"]["file"], c["real"]["line"]) == (
        "unified",
        "Qwen3Parser",
        "vllm/parser/qwen3.py",
        205,
    )
    assert c["aliases"] == ["qwen3_xml"]
    s = sentinels(c)
    assert s["<function="]["attributes"] == ["FUNC_PREFIX"] and s["<parameter="]["attributes"] == [
        "PARAM_START"
    ]
    assert s["<tool_call>"]["attributes"] == ["TOOL_CALL_START"]
    assert attrs(c)["structural_tag_model"] == ('"qwen_3_coder"', "Qwen3EngineToolParser")
    assert files(c["chat_templates"]) == ["examples/tool_chat_template_qwen3coder.jinja"]
    assert files(c["tests"]) == [
        "tests/parser/engine/test_qwen3.py",
        "tests/tool_parsers/test_qwen3coder_tool_parser.py",
    ]
    assert c["pairs"] == []


def test_phi4_mini_json(real_logic_db):  # noqa: F811
    c = card(real_logic_db, "phi4_mini_json")
    assert (c["impl"], c["real"]["class"]) == ("standalone", "Phi4MiniJsonToolParser")
    assert c["streaming"] == "returns-none" and c["streaming_method"]["line"] == 113
    s = sentinels(c)
    assert list(s) == ["functools"] and s["functools"]["attributes"] == ["bot_token"]
    assert s["functools"]["places"][0]["line"] == 52
    assert [(m["file"], m["via"]) for m in c["chat_templates"]] == [
        ("examples/tool_chat_template_phi4_mini.jinja", "registered file")
    ]
    assert files(c["tests"]) == ["tests/tool_parsers/test_phi4mini_tool_parser.py"]


def test_openai(real_logic_db):  # noqa: F811
    c = card(real_logic_db, "openai")
    assert (c["impl"], c["real"]["class"], c["real"]["file"], c["real"]["line"]) == (
        "standalone",
        "GptOssToolParser",
        "vllm/tool_parsers/gptoss_tool_parser.py",
        17,
    )
    assert c["streaming"] == "raises-not-implemented"
    assert any(n.startswith("selector stub:") for n in c["notes"])
    assert attrs(c)["structural_tag_model"] == ('"harmony"', "GptOssToolParser")
    assert c["sentinels"] == [] and c["chat_templates"] == [] and c["pairs"] == []
    assert files(c["tests"]) == ["tests/entrypoints/tool_parsers/test_openai_tool_parser.py"]


def test_card_all_markdown_of_a_real_release(real_logic_db):  # noqa: F811
    out = tpindex("card", "--all", "--at", AT, "--format", "markdown", "--db", real_logic_db).output
    assert out.startswith(f"# vLLM {AT}: tool-calling parser reference")
    for name in ("hermes", "deepseek_v3", "mistral", "glm47", "qwen3_coder", "phi4_mini_json", "openai"):
        assert f"| tool | [{name}](#tool-{name.replace('_', '-')}) |" in out


def test_deepseek_dsml_pieces_and_tokens_with_a_space(real_logic_db):  # noqa: F811
    s = sentinels(card(real_logic_db, "deepseek_v32"))
    assert s["｜DSML｜"]["attributes"] == ["_DSML"] and s["｜DSML｜"]["places"][0]["line"] == 45
    s = sentinels(card(real_logic_db, "deepseek_v41"))
    assert (
        s["<｜DSML｜ calls>"]["attributes"] == ["DSML_TOOL_START"]
        and s["<｜DSML｜ calls>"]["places"][0]["line"] == 16
    )
    assert "U+FF5C FULLWIDTH VERTICAL LINE" in s["<｜DSML｜ calls>"]["non_ascii"]
