"""Where the logic lives, on real releases (issue 11): v0.20.0, v0.25.0, v0.32.0 and v0.33.0 from their
source archives on the package index (cached).

Every expectation was established by reading those releases by hand: the registered classes, their
bases and the methods each class defines, the parser manager's composition branches (a name check for
kimi_k3 and minicpmv, a class check `is_mistral_tool_parser(tool_parser_cls)` for mistral at v0.25.0,
the unified registry's `minimax_m2` preferred by name at v0.20.0) and what the composed classes do
(`DelegatingParser.extract_tool_calls` hands the call to `self._tool_parser`; `KimiK3Parser`,
`MistralParser` and `MiniCPMVUnifiedParser` override parse/parse_delta only to call super() around it).
"""

from __future__ import annotations

import json

import pytest
from fixtures.helpers import rows, tpindex

pytestmark = pytest.mark.network


def row(db, version, name, kind):
    cols = (
        "impl",
        "real_file",
        "real_class",
        "reg_file",
        "reg_class",
        "wrapper_file",
        "wrapper_class",
        "streaming",
        "notes",
    )
    got = rows(
        db,
        f"select {', '.join(cols)} from parser_map_v where version = ? and name = ? and kind = ?",
        (version, name, kind),
    )
    assert len(got) == 1
    out = dict(zip(cols, got[0], strict=True))
    out["notes"] = json.loads(out["notes"] or "[]")
    return out


def test_glm47_at_v0_20_0_inherits_its_extraction_from_glm45s_class(real_logic_db):
    r = row(real_logic_db, "v0.20.0", "glm47", "tool")
    assert (r["impl"], r["real_file"], r["real_class"]) == (
        "standalone",
        "vllm/tool_parsers/glm4_moe_tool_parser.py",
        "Glm4MoeModelToolParser",
    )
    assert (r["reg_file"], r["reg_class"]) == (
        "vllm/tool_parsers/glm47_moe_tool_parser.py",
        "Glm47MoeModelToolParser",
    )
    got = rows(
        real_logic_db,
        "select method, defining_class, line from parser_methods_v where version = 'v0.20.0'"
        " and name = 'glm47' and kind = 'tool' and role = 'registered' and method like 'extract%'"
        " order by method",
    )
    assert got == [
        ("extract_tool_calls", "Glm4MoeModelToolParser", 190),
        ("extract_tool_calls_streaming", "Glm4MoeModelToolParser", 440),
    ]
    assert rows(
        real_logic_db,
        "select real_class from parser_map_v where version = 'v0.20.0' and name = 'glm45' and kind = 'tool'",
    ) == [("Glm4MoeModelToolParser",)]


@pytest.mark.parametrize(
    "kind,file,cls",
    [
        ("tool", "vllm/tool_parsers/kimi_k3_tool_parser.py", "KimiK3ToolParser"),
        ("reasoning", "vllm/reasoning/kimi_k3_reasoning_parser.py", "KimiK3ReasoningParser"),
    ],
)
def test_kimi_k3_at_v0_32_0_is_parsed_by_its_registered_parsers_inside_a_wrapper(
    real_logic_db, kind, file, cls
):
    r = row(real_logic_db, "v0.32.0", "kimi_k3", kind)
    assert (r["impl"], r["real_file"], r["real_class"]) == ("standalone", file, cls)
    assert (r["wrapper_file"], r["wrapper_class"]) == ("vllm/parser/kimi_k3.py", "KimiK3Parser")


def test_minicpmv_at_v0_32_0_the_declared_engine_class_wins(real_logic_db):
    r = row(real_logic_db, "v0.32.0", "minicpmv", "reasoning")
    assert (r["impl"], r["real_file"], r["real_class"]) == (
        "unified",
        "vllm/parser/minicpmv.py",
        "MiniCPMVParser",
    )
    assert r["wrapper_class"] == "MiniCPMVUnifiedParser"


def test_mistral_at_v0_25_0_chosen_by_a_class_check_is_a_wrapper(real_logic_db):
    r = row(real_logic_db, "v0.25.0", "mistral", "tool")
    assert (r["impl"], r["real_file"], r["real_class"]) == (
        "standalone",
        "vllm/tool_parsers/mistral_tool_parser.py",
        "MistralToolParser",
    )
    assert (r["wrapper_file"], r["wrapper_class"]) == ("vllm/parser/mistral.py", "MistralParser")
    hops = [
        h
        for (h,) in rows(
            real_logic_db,
            "select hop from parser_hops_v where version = 'v0.25.0' and name = 'mistral'"
            " and kind = 'tool' order by step",
        )
    ]
    assert hops[:3] == ["registered", "class-check", "wrapper"]


def test_minimax_m2_at_v0_20_0_the_unified_registrys_parser_wraps_the_tool_parser(real_logic_db):
    r = row(real_logic_db, "v0.20.0", "minimax_m2", "tool")
    assert (r["impl"], r["real_file"], r["real_class"]) == (
        "standalone",
        "vllm/tool_parsers/minimax_m2_tool_parser.py",
        "MinimaxM2ToolParser",
    )
    assert (r["wrapper_file"], r["wrapper_class"]) == ("vllm/parser/minimax_m2_parser.py", "MiniMaxM2Parser")


def test_openai_is_a_selector_stub_and_phi4_mini_json_does_not_stream(real_logic_db):
    r = row(real_logic_db, "v0.32.0", "openai", "tool")
    assert r["real_class"] == "GptOssToolParser" and r["streaming"] == "raises-not-implemented"
    assert any(n.startswith("selector stub:") for n in r["notes"])
    r = row(real_logic_db, "v0.32.0", "phi4_mini_json", "tool")
    assert r["streaming"] == "returns-none"


def test_diff_v0_32_0_v0_33_0_lists_glm47_as_code_changed(real_logic_db):
    out = tpindex("diff", "v0.32.0", "v0.33.0", "--format", "json", "--db", real_logic_db, ok=False)
    changes = json.loads(out.output)["changes"]
    glm47 = [
        c for c in changes if c["type"] == "code-changed" and c["name"] == "glm47" and c["kind"] == "tool"
    ]
    assert [f["file"] for f in glm47[0]["files"]] == ["vllm/parser/glm47_moe.py"]
    framework = {c["file"] for c in changes if c["type"] == "framework-changed"}
    assert "vllm/parser/engine/parser_engine.py" in framework
