"""Chat templates and tests of a name, matched by file name (indexer/answers/matching.py): exact names,
more specific files, families, more general files, the by-name preference, and files left unmatched."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.answers.matching import (
    VIAS,
    Keys,
    Named,
    assign,
    compact,
    family,
    named,
    owners,
    same_family,
    words,
)

T = "examples/tool_chat_template_{}.jinja".format
TP = "vllm/tool_parsers/{}.py".format
RP = "vllm/reasoning/{}.py".format

NAMES = [
    named("tool", "glm45", TP("glm4_moe_tool_parser"), TP("glm4_moe_tool_parser")),
    named("tool", "glm47", TP("glm47_moe_tool_parser"), "vllm/parser/glm47_moe.py"),
    named("tool", "llama3_json", TP("llama_tool_parser"), TP("llama_tool_parser")),
    named("tool", "llama4_json", TP("llama_tool_parser"), TP("llama_tool_parser")),
    named("tool", "internlm", TP("internlm2_tool_parser"), TP("internlm2_tool_parser")),
    named("tool", "phi4_mini_json", TP("phi4mini_tool_parser"), TP("phi4mini_tool_parser")),
    named("tool", "mistral", TP("mistral_tool_parser"), "vllm/parser/mistral.py"),
    named("tool", "granite", TP("granite_tool_parser"), TP("granite_tool_parser")),
    named("tool", "granite-20b-fc", TP("granite_20b_fc_tool_parser"), TP("granite_20b_fc_tool_parser")),
    named("tool", "qwen3_coder", TP("qwen3_engine_tool_parser"), "vllm/parser/qwen3.py"),
    named("tool", "hermes", TP("hermes_tool_parser"), TP("hermes_tool_parser")),
    named("tool", "longcat", TP("longcat_tool_parser"), TP("hermes_tool_parser")),
    named("tool", "xlam", TP("xlam_tool_parser"), TP("xlam_tool_parser")),
    named("tool", "kimi_k3", TP("kimi_k3_tool_parser"), TP("kimi_k3_tool_parser")),
    named("reasoning", "qwen3", RP("qwen3_reasoning_parser"), "vllm/parser/qwen3.py"),
    named(
        "reasoning", "hunyuan_a13b", RP("hunyuan_a13b_reasoning_parser"), RP("hunyuan_a13b_reasoning_parser")
    ),
    named("reasoning", "mistral", RP("mistral_reasoning_parser"), "vllm/parser/mistral.py"),
]

FILES = [
    T("glm4"),
    T("llama3.1_json"),
    T("llama3.2_json"),
    T("llama3.2_pythonic"),
    T("llama4_json"),
    T("internlm2_tool"),
    T("phi4_mini"),
    T("mistral"),
    T("mistral3"),
    T("mistral_parallel"),
    T("granite"),
    T("granite_20b_fc"),
    T("qwen3coder"),
    T("hermes"),
    T("xlam_llama"),
    T("xlam_qwen"),
    T("toolace"),
    "tests/tool_parsers/test_glm4_moe_tool_parser.py",
    "tests/tool_parsers/test_glm47_moe_tool_parser.py",
    "tests/tool_parsers/test_hermes_tool_parser.py",
    "tests/tool_parsers/test_longcat_tool_parser.py",
    "tests/tool_parsers/test_phi4mini_tool_parser.py",
    "tests/tool_parsers/test_kimi_k3_named_tool_choice.py",
    "tests/tool_parsers/test_qwen3coder_tool_parser.py",
    "tests/tool_parsers/test_rust_tool_parser.py",
    "tests/entrypoints/openai/tool_parsers/test_llama3_json_tool_parser.py",
    "tests/reasoning/test_qwen3_reasoning_parser.py",
    "tests/reasoning/test_hunyuan_reasoning_parser.py",
    "tests/parser/engine/test_qwen3.py",
    "tests/parser/engine/test_qwen3_reasoning.py",
    "tests/parser/engine/test_glm47_moe.py",
    "tests/parser/engine/test_engine.py",
    "tests/parser/mistral/test_tool_calls.py",
    "tests/parser/mistral/test_reasoning.py",
]


def files_of(kind, name, what):
    return [
        m.file.rsplit("/", 1)[-1] if what == "chat_templates" else m.file
        for m in assign(FILES, NAMES)[(kind, name)][what]
    ]


def templates(name):
    return [
        f.removeprefix("tool_chat_template_").removesuffix(".jinja")
        for f in files_of("tool", name, "chat_templates")
    ]


def test_template_families_from_the_issue():
    assert templates("glm45") == ["glm4"] and templates("glm47") == ["glm4"]
    assert templates("llama3_json") == ["llama3.1_json", "llama3.2_json"]
    assert templates("llama4_json") == ["llama4_json"]  # not llama3.x_json: another version of the family
    assert templates("internlm") == ["internlm2_tool"]
    assert templates("phi4_mini_json") == ["phi4_mini"]


def test_exact_and_more_specific_templates():
    assert templates("mistral") == ["mistral", "mistral3", "mistral_parallel"]
    assert templates("granite") == ["granite"] and templates("granite-20b-fc") == ["granite_20b_fc"]
    assert templates("qwen3_coder") == ["qwen3coder"]
    assert templates("xlam") == ["xlam_llama", "xlam_qwen"]


def test_a_name_preferred_to_a_file_it_shares():
    assert templates("hermes") == ["hermes"] and templates("longcat") == []
    assert files_of("tool", "hermes", "tests") == ["tests/tool_parsers/test_hermes_tool_parser.py"]
    assert files_of("tool", "longcat", "tests") == ["tests/tool_parsers/test_longcat_tool_parser.py"]


def test_unmatched_files_stay_unmatched():
    owned = {m.file for v in assign(FILES, NAMES).values() for ms in v.values() for m in ms}
    assert {
        T("toolace"),
        T("llama3.2_pythonic"),
        "tests/tool_parsers/test_rust_tool_parser.py",
        "tests/parser/engine/test_engine.py",
    }.isdisjoint(owned)


def test_tests_by_kind_directory_and_engine_files():
    assert files_of("tool", "qwen3_coder", "tests") == [
        "tests/parser/engine/test_qwen3.py",
        "tests/tool_parsers/test_qwen3coder_tool_parser.py",
    ]
    assert files_of("reasoning", "qwen3", "tests") == [
        "tests/parser/engine/test_qwen3.py",
        "tests/parser/engine/test_qwen3_reasoning.py",
        "tests/reasoning/test_qwen3_reasoning_parser.py",
    ]
    assert files_of("tool", "glm47", "tests") == [
        "tests/parser/engine/test_glm47_moe.py",
        "tests/tool_parsers/test_glm47_moe_tool_parser.py",
    ]
    assert files_of("tool", "glm45", "tests") == ["tests/tool_parsers/test_glm4_moe_tool_parser.py"]
    assert files_of("tool", "mistral", "tests") == ["tests/parser/mistral/test_tool_calls.py"]
    assert files_of("reasoning", "mistral", "tests") == ["tests/parser/mistral/test_reasoning.py"]
    assert files_of("tool", "phi4_mini_json", "tests") == ["tests/tool_parsers/test_phi4mini_tool_parser.py"]
    assert files_of("tool", "kimi_k3", "tests") == ["tests/tool_parsers/test_kimi_k3_named_tool_choice.py"]
    assert files_of("tool", "llama3_json", "tests") == [
        "tests/entrypoints/openai/tool_parsers/test_llama3_json_tool_parser.py"
    ]
    assert files_of("reasoning", "hunyuan_a13b", "tests") == [
        "tests/reasoning/test_hunyuan_reasoning_parser.py"
    ]


def test_levels_and_vias_are_reported():
    got = {m.file: (m.level, m.via) for m in assign(FILES, NAMES)[("tool", "glm47")]["chat_templates"]}
    assert got == {T("glm4"): ("family", "name")}
    got = {
        m.file: (m.level, m.via) for m in assign(FILES, NAMES)[("tool", "phi4_mini_json")]["chat_templates"]
    }
    assert got == {T("phi4_mini"): ("exact", "registered file")}


def test_family_rule():
    assert same_family(family(words("glm4")), family(words("glm47")))
    assert same_family(family(words("llama3.1_json")), family(words("llama3_json")))
    assert not same_family(family(words("llama3.1_json")), family(words("llama4_json")))
    assert not same_family(family(words("llama3.2_pythonic")), family(words("llama3_json")))
    assert same_family(family(words("mistral3")), family(words("mistral")))
    assert not same_family(family(words("gemma3_pythonic")), family(words("gemma4")))


def _owners_by_definition(subject, kind, names):
    """The levels as the module docstring writes them, every key compared with the subject (what `owners` looked
    up before its keys were indexed, issue 30), then the by-name preference per kind."""
    pool = [n for n in names if kind is None or n.kind in (kind, "engine")]
    if not subject:
        return []
    entries = [(n, via, k) for n in pool for via, k in n.keys]
    found = [(n, "exact", via) for n, via, k in entries if compact(k) == compact(subject)]
    longest = max(
        (len(k) for _, _, k in entries if len(k) < len(subject) and subject[: len(k)] == k), default=None
    )
    found = found or [
        (n, "more specific", via)
        for n, via, k in entries
        if longest is not None and len(k) == longest and subject[: len(k)] == k
    ]
    found = found or [(n, "family", "name") for n in pool if same_family(family(subject), n.fam)]
    found = found or [
        (n, "more general", via)
        for n, via, k in entries
        if len(subject) < len(k) and k[: len(subject)] == subject
    ]
    best = {n.kind: min(VIAS.index(v) for m, _, v in found if m.kind == n.kind) for n, _, _ in found}
    out, seen = [], set()
    for n, level, via in found:
        if VIAS.index(via) == best[n.kind] and (n.kind, n.name) not in seen:
            seen.add((n.kind, n.name))
            out.append((n, level, via))
    return out


WORDS = st.lists(
    st.sampled_from(["glm", "glm4", "glm45", "llama3", "json", "qwen3", "coder", "a", "b", "tool"]),
    max_size=4,
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["tool", "reasoning", "engine"]), WORDS, WORDS, WORDS), max_size=8),
    WORDS,
    st.sampled_from([None, "tool", "reasoning"]),
)
def test_the_indexed_keys_find_what_the_levels_define(specs, subject, kind):
    names = [
        Named(k, "_".join(n) or "tool", [("name", n), ("registered file", reg), ("real file", real)])
        for k, n, reg, real in specs
    ]
    want = [(n.kind, n.name, level, via) for n, level, via in _owners_by_definition(subject, kind, names)]
    assert [(n.kind, n.name, level, via) for n, level, via in owners(subject, kind, names)] == want
    assert [(n.kind, n.name, level, via) for n, level, via in owners(subject, kind, Keys(names))] == want
