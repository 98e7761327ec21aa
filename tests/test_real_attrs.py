"""Attributes, sentinels and where streaming comes from, on real releases (issue 23, items 3-5): v0.11.0,
v0.17.1 and v0.32.0 from their source archives on the package index (cached).

Established by reading those releases by hand:

- v0.32.0: `ToolParser.__init_subclass__` (vllm/tool_parsers/abstract_tool_parser.py) sets
  `cls.supports_required_and_named = False` when `cls.structural_tag_model is not None and
  envs.VLLM_ENFORCE_STRICT_TOOL_CALLING`; vllm/envs.py's table reads that flag as
  `os.getenv("VLLM_ENFORCE_STRICT_TOOL_CALLING", "True").lower() in ("true", "1")`. DeepSeekV3ToolParser
  sets `structural_tag_model = "deepseek_r1"` and no `supports_required_and_named`; SeedOssEngineToolParser
  sets `structural_tag_model = None`; Glm47MoeModelToolParser sets both (`False`, "glm_4_7").
  HYV3ToolParser.__init__ sets `self.tool_calls_start_token: str = f"<tool_calls{self.suffix}>"` (and eight
  more of that form).
- v0.11.0: MistralReasoningParser(DeepSeekR1ReasoningParser) overrides `start_token` / `end_token` with
  cached properties returning mistral_common's `SpecialTokens.begin_think` / `SpecialTokens.end_think`;
  DeepSeekR1ReasoningParser's properties return "<think>" / "</think>". MistralReasoningParser defines no
  extraction method; DeepSeekR1ReasoningParser defines `extract_reasoning_content_streaming` (line 31),
  BaseThinkingReasoningParser (vllm/reasoning/basic_parsers.py, registered by no name) the non-streaming
  `extract_reasoning_content`.
- v0.17.1: NemotronV3ReasoningParser(DeepSeekR1ReasoningParser) defines only `extract_reasoning`; its
  streaming method is DeepSeekR1ReasoningParser's `extract_reasoning_streaming` (deepseek_r1_reasoning_parser.py:28).
"""

from __future__ import annotations

import json

import pytest
from fixtures.helpers import rows, tpindex

pytestmark = pytest.mark.network

TAGS = "v0.11.0,v0.17.1,v0.32.0"
FLAG = "VLLM_ENFORCE_STRICT_TOOL_CALLING"


@pytest.fixture(scope="session")
def attrs_db(pypi, tmp_path_factory):  # noqa: F811
    db = tmp_path_factory.mktemp("real-attrs") / "real.db"
    tpindex("build", "--from-pypi", "--tags", TAGS, "--db", db, "-q")
    return db


def tool_attrs(db, attribute, version="v0.32.0"):
    return {
        n: dict(zip(("value", "class", "set_by", "condition"), r, strict=True))
        for n, *r in rows(
            db,
            "select name, value, defining_class, set_by, condition from parser_attrs_v where version = ?"
            " and kind = 'tool' and role = 'registered' and attribute = ?",
            (version, attribute),
        )
    }


def test_supports_required_and_named_at_v0_32_0_as_class_creation_leaves_it(attrs_db):
    got = tool_attrs(attrs_db, "supports_required_and_named")
    d = got["deepseek_v3"]
    assert (d["value"], d["class"], d["set_by"]) == (
        "False",
        "DeepSeekV3ToolParser",
        "ToolParser.__init_subclass__",
    )
    assert d["condition"].startswith(
        f"cls.structural_tag_model is not None and envs.{FLAG} ({FLAG} defaults to True, vllm/envs.py:"
    )
    assert d["condition"].endswith(f"; True when {FLAG} is False")
    assert (got["seed_oss"]["value"], got["seed_oss"]["set_by"], got["seed_oss"]["condition"]) == (
        "True",
        None,
        None,
    )
    assert (
        got["glm47"]["value"] == "False" and "True when" not in got["glm47"]["condition"]
    )  # its body says False


def test_every_tool_name_that_sets_a_structural_tag_model_loses_required_and_named(attrs_db):
    tag = tool_attrs(attrs_db, "structural_tag_model")
    srn = tool_attrs(attrs_db, "supports_required_and_named")
    tagged = {n for n, a in tag.items() if a["value"] not in ("None", None)}
    assert len(tagged) >= 17
    for name in tagged:
        assert (srn[name]["value"], srn[name]["set_by"]) == ("False", "ToolParser.__init_subclass__"), name
    for name in set(srn) - tagged:
        assert srn[name]["set_by"] is None, name


def test_card_and_which_json_at_v0_32_0(attrs_db):
    (card,) = json.loads(
        tpindex(
            "card", "deepseek_v3", "--kind", "tool", "--at", "v0.32.0", "--format", "json", "--db", attrs_db
        ).output
    )["cards"]
    (a,) = [a for a in card["attributes"] if a["attribute"] == "supports_required_and_named"]
    assert (a["value"], a["set_by"]) == ("False", "ToolParser.__init_subclass__")
    which = json.loads(
        tpindex(
            "which", "deepseek_v3", "--kind", "tool", "--at", "v0.32.0", "--format", "json", "--db", attrs_db
        ).output
    )
    (w,) = [w for w in which["parsers"][0]["attributes"] if w["attribute"] == "supports_required_and_named"]
    assert w["condition"] == a["condition"] and w["value"] == "False"


def sentinels(db, name, kind, version):
    (card,) = json.loads(
        tpindex("card", name, "--kind", kind, "--at", version, "--format", "json", "--db", db).output
    )["cards"]
    return {s["value"]: s for s in card["sentinels"]}


def test_mistral_reasoning_at_v0_11_0_uses_the_tokens_its_properties_return(attrs_db):
    s = sentinels(attrs_db, "mistral", "reasoning", "v0.11.0")
    assert "<think>" not in s and "</think>" not in s
    for value, attribute in (
        ("SpecialTokens.begin_think", "start_token"),
        ("SpecialTokens.end_think", "end_token"),
    ):
        assert s[value]["attributes"] == [attribute]
        assert s[value]["places"][0]["how"] == "reference"
        assert s[value]["places"][0]["file"] == "vllm/reasoning/mistral_reasoning_parser.py"
    # deepseek_r1 itself keeps its own
    assert {"<think>", "</think>"} <= set(sentinels(attrs_db, "deepseek_r1", "reasoning", "v0.11.0"))


def test_hy_v3_at_v0_32_0_shows_its_f_string_patterns(attrs_db):
    s = sentinels(attrs_db, "hy_v3", "tool", "v0.32.0")
    p = s["<tool_calls{self.suffix}>"]
    assert p["attributes"] == ["tool_calls_start_token"] and p["places"][0]["how"] == "pattern"
    assert p["places"][0]["file"] == "vllm/tool_parsers/hy_v3_tool_parser.py"
    assert {"</tool_calls{self.suffix}>", "<tool_call{self.suffix}>", "</tool_call{self.suffix}>"} <= set(s)


def mapped(db, name, kind, version):
    cols = (
        "real_class",
        "real_file",
        "reg_class",
        "streaming_class",
        "streaming_file",
        "streaming_line",
        "streaming_from",
    )
    (got,) = rows(
        db,
        f"select {', '.join(cols)} from parser_map_v where version = ? and kind = ? and name = ?",
        (version, kind, name),
    )
    return dict(zip(cols, got, strict=True))


R1_FILE = "vllm/reasoning/deepseek_r1_reasoning_parser.py"


def test_mistral_reasoning_at_v0_11_0_streams_through_deepseek_r1s_class(attrs_db):
    m = mapped(attrs_db, "mistral", "reasoning", "v0.11.0")
    assert (m["reg_class"], m["real_class"], m["real_file"]) == (
        "MistralReasoningParser",
        "DeepSeekR1ReasoningParser",
        R1_FILE,
    )
    assert (m["streaming_class"], m["streaming_line"], m["streaming_from"]) == (
        "DeepSeekR1ReasoningParser",
        31,
        "deepseek_r1",
    )
    out = " ".join(
        tpindex("which", "mistral", "--kind", "reasoning", "--at", "v0.11.0", "--db", attrs_db).output.split()
    )
    assert f"=> really implemented in {R1_FILE} (DeepSeekR1ReasoningParser)" in out
    assert "streaming first" in out and "inherited from BaseThinkingReasoningParser" in out


def test_nemotron_v3_at_v0_17_1_says_where_streaming_comes_from(attrs_db):
    m = mapped(attrs_db, "nemotron_v3", "reasoning", "v0.17.1")
    assert (m["real_class"], m["real_file"]) == (
        "NemotronV3ReasoningParser",
        "vllm/reasoning/nemotron_v3_reasoning_parser.py",
    )
    assert (m["streaming_class"], m["streaming_file"], m["streaming_line"], m["streaming_from"]) == (
        "DeepSeekR1ReasoningParser",
        R1_FILE,
        28,
        "deepseek_r1",
    )
    out = " ".join(
        tpindex(
            "which", "nemotron_v3", "--kind", "reasoning", "--at", "v0.17.1", "--db", attrs_db
        ).output.split()
    )
    assert (
        "=> really implemented in vllm/reasoning/nemotron_v3_reasoning_parser.py (NemotronV3ReasoningParser);"
        f" streaming in {R1_FILE}:28 (DeepSeekR1ReasoningParser, deepseek_r1's parser)"
    ) in out
    text = tpindex("card", "nemotron_v3", "--kind", "reasoning", "--at", "v0.17.1", "--db", attrs_db).output
    line = next(x for x in text.splitlines() if x.strip().startswith("streaming "))
    assert (
        "DeepSeekR1ReasoningParser.extract_reasoning_streaming" in line and "(deepseek_r1's parser)" in line
    )
