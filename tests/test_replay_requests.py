"""Replay II (issue 43) on fixture trees of each era (tests/fixtures/replay_trees.py, written here): the request a
reporter's bug needs (chat_template_kwargs, fields refused by name), a reasoning parser on its own and composed
before the parser engine, what vLLM logged while a parser swallowed an exception, a Mistral tokenizer file
loaded through mistral_common, the server's arguments and start-up, and the answer's deciding detail (key
order, whole content, versions as asked, the code diff of each change)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.helpers import tpindex
from fixtures.replay_trees import CALL, MAKE_TEKKEN

THOUGHT = "Let me see.</think>It is sunny."


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


def run(db, name, **kw):
    from indexer.api import Index

    kw.setdefault("text", CALL)
    return Index(db).replay(name, **kw)


def mode(version, name):
    (m,) = [m for m in version.modes if m.mode == name]
    return m


# -- 1. the request ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["v0.11.1", "v0.24.0"])
def test_chat_template_kwargs_reach_the_parser(replay_db, version):
    """A reasoning parser that reads chat_template_kwargs (enable_thinking, default off): with thinking on, what
    precedes </think> is reasoning; without the request field it is all content, as before. v0.24.0's stream
    generator takes the kwargs as create_chat_completion hands them (not from the request): serving-stream
    splits too."""
    on = run(
        replay_db,
        "fixture_think",
        kind="reasoning",
        at=version,
        text=THOUGHT,
        chat_template_kwargs={"enable_thinking": True},
    )
    (v,) = on.versions
    assert v.status == "ok", v.error
    assert on.request == {"chat_template_kwargs": {"enable_thinking": True}}
    for m in v.modes:
        assert (m.reasoning, m.content) == ("Let me see.", "It is sunny."), (m.mode, m)
    (off,) = run(replay_db, "fixture_think", kind="reasoning", at=version, text=THOUGHT).versions
    for m in off.modes:
        assert (m.reasoning, m.content) == (None, THOUGHT), (m.mode, m)


def test_request_file_and_fields_refused_by_name(replay_db, tmp_path):
    request = tmp_path / "request.json"
    request.write_text('{"chat_template_kwargs": {"enable_thinking": true}, "parallel_tool_calls": false}')
    text = tmp_path / "out.txt"
    text.write_text(THOUGHT)
    out = tpindex(
        "replay", "fixture_think", "--kind", "reasoning", "--at", "v0.24.0", "--text", text,
        "--request", request, "--mode", "nonstream", "--db", replay_db,
    ).output  # fmt: skip
    assert "reasoning: 'Let me see.'" in out and '"parallel_tool_calls": false' in out
    request.write_text('{"no_such_field": 1}')
    res = tpindex(
        "replay", "fixture_json", "--at", "v0.6.3", "--text", text, "--request", request, "--db", replay_db,
        ok=False,
    )  # fmt: skip
    assert res.exit_code == 2 and "'no_such_field'" in res.output and "Hint:" in res.output
    request.write_text('{"stream": true}')
    res = tpindex("replay", "fixture_json", "--text", text, "--request", request, "--db", replay_db, ok=False)
    assert res.exit_code == 2 and "'stream'" in res.output and "--mode" in res.output


# -- 3. reasoning parsers on their own, and composed before the engine ------------------------------------


def test_reasoning_only_in_each_era(replay_db):
    """`--kind reasoning`: no tool parser, no tools; v0.6.3's parser has the old method names
    (extract_reasoning_content[_streaming]) and thinks always; the engine era composes it alone."""
    r = run(replay_db, "fixture_think", kind="reasoning", tags="v0.6.3..", text=THOUGHT,
            chat_template_kwargs={"enable_thinking": True})  # fmt: skip
    assert [v.status for v in r.versions] == ["ok", "ok", "ok"], [v.error for v in r.versions]
    old, lazy, engine = r.versions
    assert mode(old, "nonstream").entry.endswith("ThinkReasoningParser.extract_reasoning_content")
    assert mode(lazy, "stream:token").entry.endswith("ThinkReasoningParser.extract_reasoning_streaming")
    assert mode(engine, "nonstream").entry.endswith("EngineParser.parse")
    for v in r.versions:
        for m in v.modes:
            assert (m.reasoning, m.content, m.calls) == ("Let me see.", "It is sunny.", []), (v.version, m)
    assert not r.changes


def test_stream_composes_reasoning_then_tools_before_the_engine(replay_db):
    """v0.11.1 with --reasoning-parser: the stream runs the reasoning parser until the end of reasoning, then the
    tool parser on what follows (as that era's serving loop does), so it agrees with serving-stream."""
    (v,) = run(replay_db, "fixture_json", at="v0.11.1", reasoning_parser="fixture_think",
               text="Let me see.</think>" + CALL, chat_template_kwargs={"enable_thinking": True}).versions  # fmt: skip
    assert v.status == "ok", v.error
    stream = mode(v, "stream:token")
    assert stream.reasoning == "Let me see." and not (stream.content or "").strip()
    assert [(c.name, c.arguments) for c in stream.calls] == [("get_weather", {"city": "Paris"})]
    assert "after" in stream.entry and "extract_reasoning_streaming" in stream.entry
    assert mode(v, "nonstream").reasoning == "Let me see."


# -- 4. what vLLM logged --------------------------------------------------------------------------------


def test_a_swallowed_exception_is_shown_as_logged(replay_db, tmp_path):
    bad = '<try_call>{"name": "get_weather", "arguments": {"city": }</try_call>'
    (v,) = run(replay_db, "swallows", at="v0.6.3", text=bad, modes=["nonstream", "stream"]).versions
    non = mode(v, "nonstream")
    assert non.errors == [] and non.calls == [] and non.content == bad
    (rec,) = non.logged
    assert rec.level == "ERROR" and rec.message == "Error in extracting tool call from response."
    assert rec.exception.startswith("JSONDecodeError: ")
    assert rec.where.startswith("vllm/entrypoints/openai/tool_parsers/swallows_tool_parser.py:")
    (warn,) = mode(v, "stream:token").logged
    assert warn.level == "WARNING" and warn.count > 1  # the same record, once per delta after <try_call>
    out = tmp_path / "out.txt"
    out.write_text(bad)
    text = tpindex("replay", "swallows", "--at", "v0.6.3", "--text", out, "--db", replay_db).output
    assert (
        "logged: ERROR vllm.entrypoints.openai.tool_parsers.swallows_tool_parser: Error in extracting" in text
    )
    assert "JSONDecodeError" in text


# -- 5. the deciding detail -----------------------------------------------------------------------------------


def test_a_validation_error_names_its_field(replay_db):
    """A pydantic-style message (`1 validation error for X` and then the field and the problem on the next lines)
    keeps the field and the problem, and the outcome names the error's type: two different errors are two
    outcomes."""
    (v,) = run(replay_db, "strict", at="v0.6.3", modes=["nonstream"]).versions
    (err,) = mode(v, "nonstream").errors
    assert err.startswith(
        "ValueError: 1 validation error for ToolCallItem: arguments: Input should be a valid"
    )
    assert "For further information" not in err
    assert mode(v, "nonstream").outcome == "error: ValueError"


def test_outcomes_keep_key_order_and_whole_content(replay_db, tmp_path):
    preamble = "A preamble much longer than forty characters, before the call: "
    text = (
        preamble + '<call>{"name": "get_weather", "arguments": {"unit": "celsius", "city": "Paris"}}</call>'
    )
    (v,) = run(replay_db, "fixture_json", at="v0.6.3", text=text, modes=["nonstream"]).versions
    m = mode(v, "nonstream")
    assert list(m.calls[0].arguments) == ["unit", "city"]
    assert m.outcome.startswith('get_weather({"unit": "celsius", "city": "Paris"})')
    assert repr(preamble.strip()) in m.outcome


def test_versions_are_printed_as_the_list_asked(replay_db, tmp_path):
    out = tmp_path / "out.txt"
    out.write_text(CALL)
    listed = tpindex(
        "replay", "fixture_json", "--tags", "v0.6.3,v0.24.0", "--mode", "nonstream", "--text", out,
        "--db", replay_db,
    ).output  # fmt: skip
    assert "v0.6.3..v0.24.0" not in listed
    assert "2 versions v0.6.3, v0.24.0" in listed and "\nv0.6.3,v0.24.0 " in listed
    ranged = tpindex(
        "replay",
        "fixture_json",
        "--tags",
        "v0.6.3..",
        "--mode",
        "nonstream",
        "--text",
        out,
        "--db",
        replay_db,
    ).output
    assert "3 versions v0.6.3..v0.24.0" in ranged and "\nv0.6.3..v0.24.0 " in ranged


def test_each_change_names_its_code_diff_and_commits(replay_db):
    r = run(replay_db, "fixture_json", tags="v0.6.3..", modes=["stream"])
    (c,) = [c for c in r.changes if c.version == "v0.11.1"]
    assert c.previous == "v0.6.3" and c.code_diff == "tpindex diff --code fixture_json v0.6.3 v0.11.1"
    assert c.commits and c.commits[0].endswith("state for v0.11.1")


def test_a_change_outside_the_parsers_code_says_so(replay_db, tmp_path):
    """fixture_plain's file is the same at v0.11.1 and v0.24.0 (its streaming method streams text only); the engine
    era's parse_delta parses the whole output at the end: the stream's outcome changes with no change of its own
    code, and the change says so (its code signature is the same at both versions)."""
    text = '<plain_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</plain_call>'
    r = run(replay_db, "fixture_plain", tags="v0.11.1..", text=text, modes=["nonstream", "stream"])
    (c,) = r.changes
    assert (c.mode, c.version, c.code_changed) == ("stream:token", "v0.24.0", False)
    assert all(
        c.code_changed for c in run(replay_db, "fixture_json", tags="v0.6.3..", modes=["stream"]).changes
    )
    out = tmp_path / "out.txt"
    out.write_text(text)
    shown = tpindex(
        "replay", "fixture_plain", "--tags", "v0.11.1..", "--mode", "stream", "--text", out, "--db", replay_db
    ).output
    assert "fixture_plain's code unchanged" in shown


# -- 8. the server's arguments and its start -----------------------------------------------------------------


def test_server_arguments_as_the_version_reads_them(replay_db):
    """Without --enable-auto-tool-choice the fixture's serving runs no tool parser on an auto request."""
    (v,) = run(replay_db, "fixture_json", at="v0.6.3", modes=["serving"],
               server_args=["enable-auto-tool-choice=false"]).versions  # fmt: skip
    full = mode(v, "serving-full")
    assert full.calls == [] and full.content == CALL
    from indexer.core.problems import Problem

    with pytest.raises(Problem, match="'no_such_flag'"):
        run(replay_db, "fixture_json", at="v0.6.3", server_args=["no-such-flag=1"])
    with pytest.raises(Problem, match="VLLM_NO_SUCH_VARIABLE"):
        run(replay_db, "fixture_json", at="v0.6.3", server_args=["VLLM_NO_SUCH_VARIABLE=1"])


def test_startup_says_whether_the_server_would_start(replay_db):
    """A tokenizer without the parser's token: where get_parser checks the tokenizer (the engine fixture), the
    server refuses to start; before, it starts and every request's parser fails."""
    r = run(replay_db, "fixture_json", tags="v0.11.1..", specials=["<other>"], modes=["nonstream"])
    lazy, engine = r.versions
    assert lazy.startup.startswith("starts; building the parser for a request fails")
    assert "the tokenizer has no <call> token" in lazy.startup
    assert engine.startup.startswith("refused at start: TypeError")
    (ok,) = run(replay_db, "fixture_json", at="v0.11.1", modes=["nonstream"]).versions
    assert ok.startup == "starts (the parser is built per request)"


# -- 2. the model's tokenizer -----------------------------------------------------------------------------


def test_eos_token_named(replay_db):
    (v,) = run(replay_db, "fixture_json", at="v0.6.3", modes=["serving"], eos="<|end|>").versions
    assert "<|end|>" in v.specials and "<|replay_eos|>" not in v.specials
    assert mode(v, "serving-stream").finish_reason == "tool_calls"


@pytest.fixture
def tekken(tmp_path, monkeypatch):
    """A v11 tekken.json made here with the replay environment's mistral_common (which also runs the replay)."""
    from indexer.core.cachedir import cache_home
    from indexer.replay import env

    root = cache_home() / "replay"  # the user's replay environment (this module's cache holds only trees)
    if not env.ready(root):
        pytest.skip("the replay environment (with mistral_common) is not made: tpindex replay --setup")
    python = env.python_of(env.env_dir(root))
    path = tmp_path / "tekken.json"
    subprocess.run([str(python), "-c", MAKE_TEKKEN, str(path)], check=True)
    monkeypatch.setenv("TPINDEX_REPLAY_PYTHON", str(python))
    return path


def test_a_mistral_tokenizer_file_loaded_through_mistral_common(replay_db, tekken):
    """tekken.json is loaded as `--tokenizer-mode mistral` loads it: the tree's own MistralTokenizer over
    mistral_common's tokenizer (v0.6.3: built from it; v0.11.1 on: from transformers' wrapper, answered by replay's
    adapter). The parser sees a v11 Mistral tokenizer and reads `[TOOL_CALLS]name[ARGS]{args}`; [TOOL_CALLS] and
    [ARGS] are the file's own special-token ids."""
    text = '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}'
    r = run(replay_db, "fixture_mistral", tags="v0.6.3..", text=text, tokenizer_file=str(tekken),
            modes=["nonstream", "stream"])  # fmt: skip
    for v in r.versions:
        assert v.status == "ok", (v.version, v.error)
        assert v.tokenizer.startswith("mistral: tekken.json through mistral_common (Tekkenizer v11)"), (
            v.tokenizer
        )
        for m in v.modes:
            assert [(c.name, c.arguments) for c in m.calls] == [("get_weather", {"city": "Paris"})], (
                v.version,
                m,
            )
        assert {"[TOOL_CALLS]", "[ARGS]"} <= set(v.specials)
    assert "adapter" not in r.versions[0].tokenizer and "adapter" in r.versions[1].tokenizer


def test_a_tokenizer_file_given_relative_to_the_working_directory(replay_db, tekken, monkeypatch):
    """--tokenizer tekken.json from the directory that holds it: the child (which runs elsewhere) is given the
    file's absolute path."""
    monkeypatch.chdir(tekken.parent)
    out = tekken.parent / "out.txt"
    out.write_text('[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}')
    text = tpindex(
        "replay", "fixture_mistral", "--at", "v0.6.3", "--mode", "nonstream", "--text", "out.txt",
        "--tokenizer", "tekken.json", "--db", replay_db,
    ).output  # fmt: skip
    assert 'call get_weather {"city": "Paris"}' in text, text
