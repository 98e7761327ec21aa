"""`tpindex fit OUTPUT --replay` (issues 29 and 25): the top candidates are run on the raw output by the
version's own code (indexer/replay/), and what each made of it is evidence in the ranking.

The fixture is the decorator-era tree of tests/fixtures/replay_trees.py (its `fixture_json` parser finds JSON between
<call> and </call>) with two parsers added here that look for the very same tokens, so the index's facts alone
cannot tell the three apart:

    a_silent  looks for <call> ... </call> but its extract_tool_calls never returns a call
    b_leaky   returns the call, and the whole output as content too (call markup left in the content)

Their names sort before fixture_json, so without --replay a tie puts them first.
"""

from __future__ import annotations

import sys

import pytest
from fixtures.helpers import build_tags, make_repo, tpindex
from fixtures.replay_trees import DECORATOR_INIT, history

OUTPUT = 'Let me look.\n<call>{"name": "get_weather", "arguments": {"city": "Paris"}}</call>'

HEAD = """
import json

from vllm.entrypoints.openai.protocol import (DeltaFunctionCall, DeltaMessage, DeltaToolCall,
                                              ExtractedToolCallInformation, FunctionCall, ToolCall)
from vllm.entrypoints.openai.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager
"""

SILENT = (
    HEAD
    + """

@ToolParserManager.register_module("a_silent")
class SilentToolParser(ToolParser):
    start = "<call>"
    end = "</call>"

    def extract_tool_calls(self, model_output, request):
        return ExtractedToolCallInformation(False, [], model_output)

    def extract_tool_calls_streaming(self, previous_text, current_text, delta_text, *args, **kwargs):
        return DeltaMessage(content=delta_text)
"""
)

LEAKY = (
    HEAD
    + """

@ToolParserManager.register_module("b_leaky")
class LeakyToolParser(ToolParser):
    start = "<call>"
    end = "</call>"

    def extract_tool_calls(self, model_output, request):
        if self.start not in model_output:
            return ExtractedToolCallInformation(False, [], model_output)
        call = json.loads(model_output.split(self.start, 1)[1].split(self.end, 1)[0])
        return ExtractedToolCallInformation(True, [ToolCall(FunctionCall(call["name"], json.dumps(call["arguments"])))],
                                            model_output)

    def extract_tool_calls_streaming(self, previous_text, current_text, delta_text, *args, **kwargs):
        return DeltaMessage(content=delta_text)
"""
)


def _db(base, silent_only: bool = False):
    tp = "vllm/entrypoints/openai/tool_parsers/"
    tree = dict(history()["v0.6.3"])
    tree[tp + "silent_tool_parser.py"] = SILENT
    tree[tp + "leaky_tool_parser.py"] = LEAKY
    init = DECORATOR_INIT + (
        "from .silent_tool_parser import SilentToolParser\nfrom .leaky_tool_parser import LeakyToolParser\n"
    )
    if silent_only:  # the two parsers that make the call are gone
        del tree[tp + "fixture_tool_parser.py"], tree[tp + "leaky_tool_parser.py"]
        init = "".join(
            line + "\n" for line in init.splitlines() if "Fixture" not in line and "Leaky" not in line
        )
    tree[tp + "__init__.py"] = init
    repo = make_repo(base / "repo", {"v0.6.3": tree})
    build_tags(repo, base / "index.db", "v0.6.3")
    return base / "index.db"


@pytest.fixture(scope="module")
def fit_replay_db(tmp_path_factory):
    return _db(tmp_path_factory.mktemp("fit-replay"))


@pytest.fixture(scope="module")
def silent_db(tmp_path_factory):
    return _db(tmp_path_factory.mktemp("fit-replay-silent"), silent_only=True)


@pytest.fixture(autouse=True)
def replay_env(monkeypatch, tmp_path_factory):
    """The fixture tree needs no third-party package: the test interpreter serves as the replay interpreter."""
    monkeypatch.setenv("TPINDEX_REPLAY_CACHE", str(tmp_path_factory.getbasetemp() / "fit-replay-cache"))
    monkeypatch.setenv("TPINDEX_REPLAY_PYTHON", sys.executable)


def ranks(f):
    return {c.name: c.rank for c in f.tool}


def test_the_facts_alone_cannot_tell_the_three_apart(fit_replay_db):
    from indexer.api import Index

    f = Index(fit_replay_db).fit(OUTPUT, proof=False)
    r = ranks(f)
    assert r["a_silent"] == r["b_leaky"] == r["fixture_json"]
    assert f.replay is None


def test_replay_ranks_the_parser_whose_code_makes_the_call_first(fit_replay_db):
    from indexer.api import Index

    f = Index(fit_replay_db).fit(OUTPUT, replay=True, proof=False)
    runs = {r.name: r for r in f.replay}
    assert set(runs) == {"a_silent", "b_leaky", "fixture_json"}
    assert all(r.status == "ok" and r.version == "v0.6.3" for r in runs.values())
    assert (
        runs["fixture_json"].calls == ['get_weather({"city": "Paris"})'] and runs["fixture_json"].leaked == []
    )
    assert runs["a_silent"].calls == []
    assert runs["b_leaky"].leaked == ["<call>", "</call>"]
    r = ranks(f)
    assert r["fixture_json"] == 1 and r["b_leaky"] == 2 and r["a_silent"] == 3
    by_name = {c.name: c for c in f.tool}
    (made,) = [e for e in by_name["fixture_json"].evidence if e.kind == "replay"]
    assert made.stance == "for" and "get_weather" in made.text
    (none,) = [e for e in by_name["a_silent"].evidence if e.kind == "replay"]
    assert none.stance == "against" and "no tool call" in none.text
    (leak,) = [e for e in by_name["b_leaky"].evidence if e.kind == "leak"]
    assert leak.stance == "against" and "<call>" in leak.text
    assert f.fits and f.serve.endswith("--tool-call-parser fixture_json")


def test_a_parser_whose_code_makes_no_call_does_not_fit(silent_db):
    """Only a_silent looks for <call>: the facts make it fit, its own code says otherwise."""
    from indexer.api import Index

    ix = Index(silent_db)
    assert ix.fit(OUTPUT, proof=False).fits
    f = ix.fit(OUTPUT, replay=True, proof=False)
    assert f.tool[0].name == "a_silent"
    assert not f.fits and f.serve is None and "no tool call" in f.verdict


def test_cli_text_json_and_markdown(fit_replay_db, tmp_path):
    import json

    import jsonschema

    from indexer.schemas import load

    out = tmp_path / "out.txt"
    out.write_text(OUTPUT)
    text = tpindex("fit", out, "--replay", "--no-proof", "--db", fit_replay_db).output
    assert "replayed at v0.6.3" in text and "fixture_json" in text.split("replayed")[1]
    data = json.loads(
        tpindex("fit", out, "--replay", "--no-proof", "--format", "json", "--db", fit_replay_db).output
    )
    jsonschema.validate(data, load("fit"))
    assert {r["name"] for r in data["replay"]} == {"a_silent", "b_leaky", "fixture_json"}
    md = tpindex("fit", out, "--replay", "--no-proof", "--format", "markdown", "--db", fit_replay_db).output
    assert "## Replay" in md


def test_replay_needs_a_raw_output(fit_replay_db, tmp_path):
    path = tmp_path / "t.jinja"
    path.write_text("{% for m in messages %}{{ m.content }}{% endfor %}")
    r = tpindex("fit", path, "--replay", "--db", fit_replay_db, ok=False)
    assert r.exit_code == 2 and "raw model output" in r.output and "Hint:" in r.output
