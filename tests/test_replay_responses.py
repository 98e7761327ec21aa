"""Replay through the Responses API (issue 43 item 8), on the fixture trees (tests/fixtures/replay_trees.py): the
version's own Responses serving code (`OpenAIServingResponses`, its full and stream generators) on the raw
output, the request its own `ResponsesRequest` (function tools in the Responses shape); a version without the
Responses API says so with a status of its own."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from fixtures.helpers import tpindex
from fixtures.replay_trees import CALL

PARIS = [("get_weather", {"city": "Paris"})]


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


def calls(m):
    return [(c.name, c.arguments) for c in m.calls]


def test_responses_in_each_era(replay_db):
    """v0.6.3 has no Responses API (a status of its own, not run); v0.11.1's full response parses the call but its
    stream runs no parser (the call's markup streams as text) and its completed response parses the last engine
    output only (the empty end-of-stream step); v0.24.0 parses the call in all three."""
    r = run(replay_db, "fixture_json", tags="v0.6.3..", api="responses")
    assert r.modes == ["responses-full", "responses-stream", "responses-completed"]
    none, old, engine = r.versions
    assert none.status == "no-responses-api" and "Responses" in none.error and not none.modes
    assert old.status == engine.status == "ok", (old.error, engine.error)
    assert calls(mode(old, "responses-full")) == PARIS
    assert mode(old, "responses-full").finish_reason == "completed"
    stream = mode(old, "responses-stream")
    assert calls(stream) == [] and stream.content == CALL
    completed = mode(old, "responses-completed")
    assert calls(completed) == [] and completed.content is None
    for m in ("responses-full", "responses-stream", "responses-completed"):
        assert calls(mode(engine, m)) == PARIS, (m, mode(engine, m))
        assert mode(engine, m).errors == [], mode(engine, m).errors
    assert mode(engine, "responses-stream").calls[0].chunks == 1
    assert mode(engine, "responses-full").entry.endswith("responses.serving.OpenAIServingResponses")
    changed = {(c.mode, c.version) for c in r.changes}
    assert ("responses-stream", "v0.24.0") in changed and ("responses-full", "v0.11.1") in changed


def test_responses_reads_the_request_and_reasoning(replay_db):
    """A reasoning parser on its own through Responses, chat_template_kwargs reaching it through the request
    (the engine era's _make_response_parser)."""
    (v,) = run(replay_db, "fixture_think", kind="reasoning", at="v0.24.0", text="Let me see.</think>It is sunny.",
               api="responses", chat_template_kwargs={"enable_thinking": True}).versions  # fmt: skip
    assert v.status == "ok", v.error
    for m in v.modes:
        assert (m.reasoning, m.content, m.calls) == ("Let me see.", "It is sunny.", []), m


def test_responses_on_the_command_line(replay_db, tmp_path):
    out = tmp_path / "out.txt"
    out.write_text(CALL)
    text = tpindex(
        "replay", "fixture_json", "--tags", "v0.6.3..", "--api", "responses", "--text", out, "--db", replay_db
    ).output
    assert "no-responses-api" in text and "responses-stream" in text
    res = tpindex(
        "replay", "fixture_json", "--at", "v0.24.0", "--api", "responses", "--mode", "nonstream", "--text", out,
        "--db", replay_db, ok=False,
    )  # fmt: skip
    assert res.exit_code == 2 and "--api responses" in res.output and "Hint:" in res.output
    json_out = tpindex(
        "replay", "fixture_json", "--at", "v0.24.0", "--api", "responses", "--text", out, "--format", "json",
        "--db", replay_db,
    ).output  # fmt: skip
    assert '"api": "responses"' in json_out
