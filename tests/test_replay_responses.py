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


def test_the_replay_page_takes_the_api(replay_db):
    """/-/replay has the CLI's --api: a choice of chat or responses, kept in the form, the answer the Responses
    API's modes."""
    import re

    from fixtures.serve import serve

    client = serve(replay_db)
    try:
        page = client.get("/-/replay")
        assert '<select id="rp-api" name="api">' in page.text and 'value="responses"' in page.text
        token = re.search(r'name="csrftoken" value="([^"]+)"', page.text).group(1)
        r = client.post(
            "/-/replay",
            data={
                "csrftoken": token,
                "text": CALL,
                "name": "fixture_json",
                "tags": "v0.24.0",
                "api": "responses",
            },
            cookies=page.cookies,
        )
        assert r.status_code == 200, r.text[:500]
        assert "responses-full" in r.text and "responses-completed" in r.text and "serving-full" not in r.text
        assert '<option value="responses" selected>' in r.text
    finally:
        client.close()


def test_the_mcp_replay_tool_takes_the_api(replay_db, tmp_path):
    import os

    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    exe = str(Path(sys.executable).parent / "tpindex")

    async def main():
        params = StdioServerParameters(
            command=exe, args=["mcp", "--db", str(replay_db)], env=dict(os.environ)
        )
        with open(tmp_path / "server.err", "w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                tool = {t.name: t for t in (await session.list_tools()).tools}["replay"]
                assert tool.input_schema["properties"]["api"]["enum"] == ["chat", "responses"]
                result = await session.call_tool(
                    "replay", {"name": "fixture_json", "text": CALL, "version": "v0.24.0", "api": "responses"}
                )
                assert not result.is_error, result.content
                answer = result.structured_content
                assert answer["api"] == "responses"
                assert answer["modes"] == ["responses-full", "responses-stream", "responses-completed"]
                (v,) = answer["versions"]
                assert v["modes"][0]["calls"][0]["arguments"] == {"city": "Paris"}

    anyio.run(main)
