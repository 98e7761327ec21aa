"""Replay on real vLLM releases (issue 25): the eight names of the issue at a version of every layout era,
non-streaming and streaming, run by each release's own code in the replay environment (created in the user
cache on first use, by pip from the package index; trees materialized from the cached release archives).

The expectations state what the releases' own code did with these raw outputs (written here in each
model's documented output format), seen in `tpindex replay NAME --tags v0.6.3..` (split token) over the 60
releases v0.6.3..v0.34.0 (the README's replay section says what that matrix shows):
- every name's non-streaming parse gives get_weather({"city": "Paris"}) at every era it is registered in;
- hermes's streaming, one token per delta, loses its arguments' closing brace before v0.11.0 (the
  arguments stream as unparseable text) and is right from v0.11.0 on;
Skipped, loudly, only when the package index cannot be reached.
"""

from __future__ import annotations

import pytest
from fixtures.helpers import tpindex

pytestmark = pytest.mark.network

# a version of every layout era (DESIGN.md section 2) from the decorator registry on; v0.34.0: torch helpers
# that compute with dtypes at import (a dtype table whose sizes are asserted)
ERAS = (
    "v0.6.3",
    "v0.7.1",
    "v0.11.1",
    "v0.13.0",
    "v0.14.0",
    "v0.16.0",
    "v0.20.0",
    "v0.24.0",
    "v0.27.0",
    "v0.32.0",
    "v0.33.0",
    "v0.34.0",
)
CALL = {"get_weather": {"city": "Paris"}}
TEXT = {
    "hermes": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    "llama3_json": '{"name": "get_weather", "parameters": {"city": "Paris"}}',
    "pythonic": '[get_weather(city="Paris")]',
    "mistral": '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]',
    "qwen3_coder": "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n"
    "</tool_call>",
    "glm45": "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
    "deepseek_v3": "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
    '{"city": "Paris"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    "kimi_k2": "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
    '{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>',
}

# A pre-v11 Mistral tokenizer has [TOOL_CALLS] and no [ARGS]: from v0.20.0 the parser takes [ARGS] in the
# vocabulary (the synthetic one holds every sentinel of its code) for a v11 tokenizer (test_mistral_formats).
SPECIALS = {"mistral": ["[TOOL_CALLS]"]}


@pytest.fixture(scope="session")
def eras_db(pypi, tmp_path_factory):
    db = tmp_path_factory.mktemp("real-replay") / "eras.db"
    tpindex("build", "--from-pypi", "--tags", ",".join(ERAS), "--db", db, "-q")
    return db


@pytest.fixture(scope="session")
def replays(eras_db):
    """Each name over the eras, non-streaming and streaming (one token per delta), once per session."""
    from indexer.api import Index

    ix = Index(eras_db)
    return {
        name: {
            v.version: v
            for v in ix.replay(
                name,
                tags=",".join(ERAS),
                text=text,
                modes=["nonstream", "stream"],
                specials=SPECIALS.get(name),
            ).versions
        }
        for name, text in TEXT.items()
    }


def calls(version, mode):
    (m,) = [m for m in version.modes if m.mode == mode]
    assert not m.errors or m.calls, (version.version, mode, m.errors)
    return {c.name: c.arguments for c in m.calls}


@pytest.mark.parametrize("name", list(TEXT))
def test_non_streaming_at_every_era(replays, name):
    ran = [v for v in replays[name].values() if v.status != "not-registered"]
    assert ran, name
    for v in ran:
        assert v.status == "ok", (name, v.version, v.error)
        assert calls(v, "nonstream") == CALL, (name, v.version)


MAKE_TOKENIZER = r"""
import sys
from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

text, path = sys.argv[1], sys.argv[2]
tk = Tokenizer(models.WordLevel(unk_token="[UNK]"))
tk.pre_tokenizer = pre_tokenizers.Split(Regex(r"<tool_call>|</tool_call>|\w+|[^\w\s]|\s+"), behavior="isolated")
tk.train_from_iterator([text], trainers.WordLevelTrainer(special_tokens=["[UNK]", "<tool_call>", "</tool_call>"]))
tk.add_special_tokens(["<tool_call>", "</tool_call>"])
tk.save(path)
"""


def test_the_models_tokenizer_file(eras_db, tmp_path):
    """--tokenizer: a tokenizer.json (made here with the environment's tokenizers package) tokenizes instead of
    the synthetic tokenizer; hermes at v0.33.0 parses the same call, streamed one of its tokens per delta."""
    import subprocess

    from indexer.api import Index
    from indexer.replay import env

    python = env.setup()
    path = tmp_path / "tokenizer.json"
    subprocess.run([str(python), "-c", MAKE_TOKENIZER, TEXT["hermes"], str(path)], check=True)
    (v,) = (
        Index(eras_db)
        .replay(
            "hermes",
            at="v0.33.0",
            text=TEXT["hermes"],
            tokenizer_file=str(path),
            modes=["nonstream", "stream"],
        )
        .versions
    )
    assert v.status == "ok", v.error
    assert calls(v, "nonstream") == CALL and calls(v, "stream:token") == CALL


def streamed(replays, name):
    return {v: calls(r, "stream:token") for v, r in replays[name].items() if r.status != "not-registered"}


def test_hermes_streaming_loses_its_arguments_before_v0_11(replays):
    """Seen: one synthetic token per delta, hermes's streamed arguments are text that is not JSON at v0.6.3
    ('{"Paris{"city": "Paris"}': a repeated fragment) and v0.7.1 ('{"city": "Paris"' and a newline: the
    closing brace never streamed), right from v0.11.0 on (the matrix over 60 releases: v0.6.3..v0.6.4.post1,
    v0.6.5..v0.10.2, v0.11.0..v0.34.0)."""
    got = streamed(replays, "hermes")
    assert got["v0.6.3"]["get_weather"] == '{"Paris{"city": "Paris"}'
    assert got["v0.7.1"]["get_weather"] == '{"city": "Paris"\n'
    assert all(got[v] == CALL for v in ERAS[2:]), got


def test_streaming_right_at_every_era(replays):
    """llama3_json, pythonic, qwen3_coder, glm45 and deepseek_v3 stream the call whole at every era they are
    registered in (pythonic from v0.6.4, deepseek_v3 from v0.9.0, qwen3_coder from v0.10.0, glm45 from v0.10.1)."""
    for name in ("llama3_json", "pythonic", "qwen3_coder", "glm45", "deepseek_v3"):
        got = streamed(replays, name)
        assert got and all(c == CALL for c in got.values()), (name, got)
    assert replays["pythonic"]["v0.6.3"].status == "not-registered"
    assert [v for v, r in replays["qwen3_coder"].items() if r.status != "not-registered"] == list(ERAS[2:])
    for name in ("glm45", "deepseek_v3", "kimi_k2"):
        assert [v for v, r in replays[name].items() if r.status != "not-registered"] == list(ERAS[2:]), name


def test_kimi_k2_streaming_leaks_its_markup_as_content_at_v0_11_1_to_v0_13_0(replays):
    """Seen: the call streams right, but v0.11.1..v0.13.0 also stream the call's own markup
    (`<|tool_call_begin|>functions.get_weather:0...<|tool_call_end|>`) as content; not at v0.14.0 and on."""
    for v, r in replays["kimi_k2"].items():
        if r.status == "not-registered":
            continue
        (m,) = [m for m in r.modes if m.mode == "stream:token"]
        assert calls(r, "stream:token") == CALL, v
        if v in ("v0.11.1", "v0.13.0"):
            assert m.content.startswith("<|tool_call_begin|>functions.get_weather:0") and m.content.endswith(
                "<|tool_call_end|>"
            ), (v, m.content)
        else:
            assert not (m.content or "").strip(), (v, m.content)


def test_mistral_streaming(replays):
    """Seen (a pre-v11 tokenizer): streamed arguments cut short before v0.13.0 ('{"Paris' at v0.6.3,
    '{"city": "Paris' at v0.7.1 and v0.11.1, the closing brace never streamed), right from v0.13.0 on."""
    got = streamed(replays, "mistral")
    assert got["v0.6.3"]["get_weather"] == '{"Paris'
    assert got["v0.7.1"]["get_weather"] == got["v0.11.1"]["get_weather"] == '{"city": "Paris'
    assert all(got[v] == CALL for v in ERAS[3:]), got


def test_mistral_formats(eras_db):
    """What the vocabulary says about the format: with [ARGS] in it (every sentinel of the parser's code), the
    parser of v0.20.0 on reads `[TOOL_CALLS]name{args}`, so the pre-v11 JSON list is read as a call named "["
    (whose arguments are the JSON: v0.27.0 and on parse it, v0.20.0 leaves it as text); and that v11 format
    itself is parsed from v0.20.0 on, while v0.13.0's parser makes content of it."""
    from indexer.api import Index

    ix = Index(eras_db)
    pre = {
        v.version: calls(v, "nonstream")
        for v in ix.replay(
            "mistral", tags="v0.20.0,v0.27.0", text=TEXT["mistral"], modes=["nonstream"]
        ).versions
    }
    assert list(pre["v0.20.0"]) == ["["] and isinstance(pre["v0.20.0"]["["], str)
    assert pre["v0.27.0"] == {"[": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    v11 = ix.replay(
        "mistral",
        tags="v0.13.0,v0.20.0,v0.33.0",
        text='[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}',
        modes=["nonstream"],
    ).versions
    (old,) = [m for m in v11[0].modes if m.mode == "nonstream"]
    assert not old.calls and old.content == 'get_weather[ARGS]{"city": "Paris"}'
    assert [calls(v, "nonstream") for v in v11[1:]] == [CALL, CALL]


# -- issue 43: a thinking-mode request and a Mistral tokenizer file, on real releases ---------------------------

THINKING = "I should check.</think>The answer is 4."


def test_a_thinking_mode_request(eras_db):
    """deepseek_v3's reasoning parser reads chat_template_kwargs (v0.11.1 on): with {"thinking": true} it splits
    the reasoning off (as deepseek_r1's, whose <think> tokens the model's tokenizer has: given here as special
    tokens); without the field the whole output is content. Seen at v0.11.1, v0.20.0 and v0.33.0 in every mode,
    serving-stream included (from v0.20.0 create_chat_completion hands the stream generator the
    chat_template_kwargs its parsers are built with)."""
    from indexer.api import Index

    ix = Index(eras_db)
    on = ix.replay(
        "deepseek_v3",
        kind="reasoning",
        tags="v0.11.1,v0.20.0,v0.33.0",
        text=THINKING,
        chat_template_kwargs={"thinking": True},
        specials=["<think>", "</think>"],
    )
    off = ix.replay("deepseek_v3", kind="reasoning", tags="v0.11.1,v0.33.0", text=THINKING,
                    specials=["<think>", "</think>"], modes=["nonstream", "stream"])  # fmt: skip
    for v in on.versions:
        assert v.status == "ok", (v.version, v.error)
        assert {m.mode for m in v.modes} >= {"serving-full", "serving-stream"}
        for m in v.modes:
            assert (m.reasoning, m.content) == ("I should check.", "The answer is 4."), (v.version, m.mode)
    for v in off.versions:
        for m in v.modes:
            assert (m.reasoning, m.content) == (None, THINKING), (v.version, m.mode)


THINKING_OFF = "<|im_start|>user\nWhat is the weather in Paris?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"


def test_a_thinking_off_prompt_ends_the_reasoning(eras_db):
    """A Qwen3-style output without a think block (the call alone), replayed through hermes + qwen3 after the
    prompt a ChatML template renders with thinking off (an empty think block). Before the parser engine (v0.16.0)
    the stream loop runs the reasoning parser until the reasoning ends: without the prompt it never does, and the
    streamed call is content; with it, the loop reads the prompt's ids (qwen3's is_reasoning_end is true on them)
    and hands every delta to hermes, so the call comes back streamed too, through the release's own stream
    generator as well. The engine (v0.33.0) is handed the prompt's ids (parse_delta, and the full generator's
    set_prompt_token_ids) and returns the call in every mode."""
    from indexer.api import Index

    ix = Index(eras_db)
    without = ix.replay("hermes", reasoning_parser="qwen3", at="v0.16.0", text=TEXT["hermes"])
    with_prompt = ix.replay("hermes", reasoning_parser="qwen3", tags="v0.16.0,v0.33.0", text=TEXT["hermes"],
                            prompt=THINKING_OFF)  # fmt: skip
    (old,) = without.versions
    for m in old.modes:
        streamed = m.mode in ("stream:token", "serving-stream")
        assert bool(m.calls) is not streamed, (m.mode, m.outcome)
    for v in with_prompt.versions:
        assert v.status == "ok", (v.version, v.error)
        assert "qwen3's is_reasoning_end on them: true" in v.prompt, v.prompt
        for m in v.modes:
            assert calls(v, m.mode) == CALL and not (m.content or "").strip(), (v.version, m.mode, m.outcome)
        assert {m.mode: m.finish_reason for m in v.modes}["serving-stream"] == "tool_calls"
    assert "parse_delta is handed them" in with_prompt.versions[1].prompt


def test_a_mistral_tokenizer_file(eras_db, tmp_path):
    """A v11 tekken.json made here (mistral_common of the replay environment) loaded as --tokenizer-mode mistral:
    the v11 output `[TOOL_CALLS]get_weather[ARGS]{...}` is content at v0.7.1, gives no call and no content at
    v0.11.1 (the parser logs a JSONDecodeError while streaming), a call named "get_weather[ARGS]" at v0.13.0, and
    the right call from v0.20.0 on."""
    import subprocess

    from fixtures.replay_trees import MAKE_TEKKEN

    from indexer.api import Index
    from indexer.replay import env

    python = env.setup()
    path = tmp_path / "tekken.json"
    subprocess.run([str(python), "-c", MAKE_TEKKEN, str(path)], check=True)
    r = Index(eras_db).replay(
        "mistral",
        tags="v0.7.1,v0.11.1,v0.13.0,v0.20.0,v0.33.0",
        text='[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}',
        tokenizer_file=str(path),
        modes=["nonstream", "stream"],
    )
    got = {v.version: v for v in r.versions}
    for v in r.versions:
        assert v.status == "ok", (v.version, v.error)
        assert v.tokenizer.startswith("mistral: tekken.json through mistral_common (Tekkenizer v11)")
    old = [m for m in got["v0.7.1"].modes if m.mode == "nonstream"][0]
    assert not old.calls and old.content == 'get_weather[ARGS]{"city": "Paris"}'
    (stream,) = [m for m in got["v0.11.1"].modes if m.mode == "stream:token"]
    assert not stream.calls and any("JSONDecodeError" in (x.exception or "") for x in stream.logged)
    assert calls(got["v0.13.0"], "nonstream") == {"get_weather[ARGS]": {"city": "Paris"}}
    for v in ("v0.20.0", "v0.33.0"):
        assert calls(got[v], "nonstream") == calls(got[v], "stream:token") == CALL, v


def test_a_tool_call_through_the_responses_api(eras_db):
    """--api responses: the release's own OpenAIServingResponses on hermes's call (one synthetic token per
    delta). Seen: v0.7.1 has no Responses API; v0.11.1's full response parses the call, its stream runs no tool
    parser (the markup streams as output text) and its response.completed parses only the last engine output
    (the end-of-stream step: no output at all); v0.14.0's completed response has the call while its stream still
    has none; from v0.20.0 the stream's events carry the call too."""
    from indexer.api import Index

    r = Index(eras_db).replay(
        "hermes", tags="v0.7.1,v0.11.1,v0.14.0,v0.20.0,v0.33.0", text=TEXT["hermes"], api="responses"
    )
    got = {v.version: v for v in r.versions}
    assert got["v0.7.1"].status == "no-responses-api"
    for v in r.versions[1:]:
        assert v.status == "ok", (v.version, v.error)

    def of(version, mode):
        (m,) = [m for m in got[version].modes if m.mode == mode]
        return m

    assert calls(got["v0.11.1"], "responses-full") == CALL
    stream = of("v0.11.1", "responses-stream")
    assert not stream.calls and stream.content == TEXT["hermes"]
    completed = of("v0.11.1", "responses-completed")
    assert not completed.calls and completed.content is None and completed.finish_reason == "completed"
    assert (
        calls(got["v0.14.0"], "responses-completed") == CALL and not of("v0.14.0", "responses-stream").calls
    )
    for v in ("v0.20.0", "v0.33.0"):
        for mode in ("responses-full", "responses-stream", "responses-completed"):
            assert calls(got[v], mode) == CALL, (v, mode)
