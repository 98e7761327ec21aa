"""Replay takes the rendered prompt (`--prompt`, `Index.replay(prompt=...)`): its token ids are what each version's
code reads as the prompt's, so an output after a template rendered with thinking off (the end of the reasoning in
the prompt) is judged as serving judges it. The fixture (tests/fixtures/prompt_trees.py) has each era's stream
loop: one that never reads the prompt (v0.9.0), one that reads it after the reasoning parser has read a delta
(v0.11.1), one that reads it first and hands the same delta to the tool parser (v0.14.0, v0.17.0, where a reasoning
parser served alone also passes content), and the parser engine's parse_delta (v0.24.0)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from fixtures.helpers import tpindex
from fixtures.prompt_trees import THINK_OFF, THINK_ON
from fixtures.replay_trees import CALL

CALLED = [("get_weather", {"city": "Paris"})]


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    from indexer.replay import server

    root = tmp_path_factory.mktemp("replay-cache")
    yield root
    server.stop(root)


@pytest.fixture(autouse=True)
def replay_env(monkeypatch, cache):
    monkeypatch.setenv("TPINDEX_REPLAY_CACHE", str(cache))
    monkeypatch.setenv("TPINDEX_REPLAY_PYTHON", sys.executable)


def run(db, **kw):
    from indexer.api import Index

    kw.setdefault("text", CALL)
    kw.setdefault("tags", "v0.9.0..")
    if kw.get("kind") != "reasoning":
        kw.setdefault("reasoning_parser", "fixture_r1")
    name = "fixture_r1" if kw.get("kind") == "reasoning" else "fixture_json"
    r = Index(db).replay(name, **kw)
    assert [v.status for v in r.versions] == ["ok"] * 5, [v.error for v in r.versions]
    return {v.version: v for v in r.versions}


def mode(version, name):
    (m,) = [m for m in version.modes if m.mode == name]
    return m


def calls(m):
    return [(c.name, c.arguments) for c in m.calls]


def test_without_a_prompt_an_output_without_a_think_block_is_all_reasoning(prompt_db):
    for v in run(prompt_db).values():
        assert v.prompt is None
        for m in v.modes:
            assert not m.calls and m.reasoning, (v.version, m.mode, m.outcome)


def test_a_thinking_off_prompt_ends_the_reasoning_where_each_era_s_loop_reads_it(prompt_db):
    got = run(prompt_db, prompt=THINK_OFF)
    for v in got.values():
        assert "fixture_r1's is_reasoning_end on them: true" in v.prompt, v.prompt
        # the full output is split by extract_reasoning alone: no era reads the prompt there
        for name in ("nonstream", "serving-full"):
            assert not mode(v, name).calls, (v.version, name)
    assert "does not read them" in got["v0.9.0"].prompt
    assert not mode(got["v0.9.0"], "stream:token").calls
    # the reasoning parser reads the first delta before the prompt ends the reasoning: that delta (the call's
    # start tag) stays reasoning, and the tool parser never sees it
    old = mode(got["v0.11.1"], "stream:token")
    assert "after the reasoning parser has read the first delta" in got["v0.11.1"].prompt
    assert not old.calls and old.reasoning == "<call>", old.outcome
    for v in ("v0.14.0", "v0.17.0", "v0.24.0"):
        stream = mode(got[v], "stream:token")
        assert calls(stream) == CALLED and not stream.reasoning, (v, stream.outcome)
        # the release's own stream generator, handed the prompt's ids in its engine outputs, agrees
        assert calls(mode(got[v], "serving-stream")) == CALLED, (v, mode(got[v], "serving-stream").outcome)
        assert mode(got[v], "serving-stream").finish_reason == "tool_calls"
    assert "before the reasoning parser reads a delta" in got["v0.14.0"].prompt
    assert "parse_delta is handed them" in got["v0.24.0"].prompt


def test_a_thinking_on_prompt_leaves_the_reasoning_open(prompt_db):
    got = run(prompt_db, prompt=THINK_ON)
    for v in got.values():
        assert "is_reasoning_end on them: false" in v.prompt
        assert not any(m.calls for m in v.modes), v.version


def test_a_reasoning_parser_alone_passes_content_after_the_prompt_where_its_era_does(prompt_db):
    got = run(prompt_db, kind="reasoning", text="It is sunny.", prompt=THINK_OFF)
    assert mode(got["v0.17.0"], "stream:token").content == "It is sunny."
    assert not mode(got["v0.17.0"], "stream:token").reasoning
    assert "passes every delta as content" in got["v0.17.0"].prompt
    for v in ("v0.9.0", "v0.11.1", "v0.14.0"):
        assert mode(got[v], "stream:token").reasoning == "It is sunny.", v
        assert "does not read them" in got[v].prompt
    assert mode(got["v0.17.0"], "nonstream").reasoning == "It is sunny."


def test_the_prompt_option_takes_a_file(prompt_db, tmp_path):
    prompt = tmp_path / "prompt.txt"
    prompt.write_text(THINK_OFF, encoding="utf-8")
    out = tmp_path / "out.txt"
    out.write_text(CALL, encoding="utf-8")
    r = tpindex("replay", "fixture_json", "--reasoning-parser", "fixture_r1", "--at", "v0.14.0", "--text", out,
                "--prompt", prompt, "--mode", "stream", "--db", prompt_db)  # fmt: skip
    assert 'get_weather({"city": "Paris"})' in r.output
    assert "prompt: " in r.output and "is_reasoning_end on them: true" in r.output
