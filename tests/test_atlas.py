"""The behaviour atlas (issue 44) on fixture trees of three eras (tests/fixtures/atlas_trees.py): cases made from
each version's own files (its chat template rendered, its test files' literals), run through replay in a child
process, stored by what determines them, and answered from the store."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from fixtures.atlas_trees import LITERAL_TEST, LITERAL_TEST_PATH, TEMPLATE_PATH
from fixtures.helpers import build_tags, line_of, tpindex


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    from indexer.replay import server

    root = tmp_path_factory.mktemp("atlas-cache")
    yield root
    server.stop(root)


@pytest.fixture(autouse=True)
def replay_env(monkeypatch, cache):
    """The fixture trees need no third-party package but jinja2: the test interpreter serves as the replay
    interpreter."""
    monkeypatch.setenv("TPINDEX_REPLAY_CACHE", str(cache))
    monkeypatch.setenv("TPINDEX_REPLAY_PYTHON", sys.executable)


@pytest.fixture(scope="module")
def ran(atlas_ran):
    return atlas_ran


def cell(answer, name, version, case, mode):
    (row,) = [r for r in answer.rows if (r.name, r.version) == (name, version)]
    (c,) = [c for c in row.cells if (c.case, c.mode) == (case, mode)]
    return c


def source(answer, name, version, case):
    (row,) = [r for r in answer.rows if (r.name, r.version) == (name, version)]
    (s,) = [s for s in row.sources if s.case == case]
    return s


def test_a_case_is_the_version_s_chat_template_rendered_with_known_calls(ran):
    db, answer = ran
    s = source(answer, "fixture_json", "v0.6.3", "single")
    assert (s.source, s.origin) == ("template", TEMPLATE_PATH)
    assert s.text.startswith('<call>{"name": "get_weather", "arguments": {')
    assert s.expected["calls"][0]["name"] == "get_weather"
    assert cell(answer, "fixture_json", "v0.6.3", "single", "nonstream").status == "ok"
    # its streaming never sends the arguments: wrong against the known call; the serving stream's flush fills
    # them in
    streamed = cell(answer, "fixture_json", "v0.6.3", "single", "stream:token")
    assert streamed.status == "wrong" and "arguments" in streamed.detail
    assert cell(answer, "fixture_json", "v0.6.3", "single", "serving-stream").status == "ok"
    assert cell(answer, "fixture_json", "v0.11.1", "single", "stream:token").status == "ok"


def test_a_case_the_format_cannot_express_is_not_applicable_with_why(ran):
    _, answer = ran
    c = cell(answer, "fixture_json", "v0.6.3", "parallel", "nonstream")
    assert c.status == "not-applicable"
    assert "template" in c.detail and "1 of the 2 calls" in c.detail
    # no reasoning parser of its name to take a think block apart: nothing makes the case
    lit = cell(answer, "literal", "v0.11.1", "reasoning", "nonstream")
    assert lit.status == "not-applicable" and "reasoning parser" in lit.detail


def test_the_writer_writes_a_case_in_the_call_shape_of_a_test_literal(ran):
    """`literal` has no template and no literal of two calls: the writer writes them as its one-call literal
    writes one, joined by the tokens that open and close a call."""
    _, answer = ran
    s = source(answer, "literal", "v0.11.1", "parallel")
    assert s.source == "writer" and s.origin == f"{LITERAL_TEST_PATH}:{line_of(LITERAL_TEST, 'ONE_CALL = ')}"
    assert s.text.count("<tool>") == 2 and s.text.count("</tool>") == 2
    assert [c["name"] for c in s.expected["calls"]] == ["get_weather", "get_time"]
    assert cell(answer, "literal", "v0.11.1", "parallel", "nonstream").status == "ok"


def test_a_case_is_a_model_output_literal_of_the_version_s_test_file(ran):
    _, answer = ran
    s = source(answer, "literal", "v0.11.1", "single")
    assert s.source == "test"
    assert s.origin == f"{LITERAL_TEST_PATH}:{line_of(LITERAL_TEST, 'ONE_CALL = ')}"
    assert s.expected["calls"] == [{"name": "get_weather", "arguments": {"city": "Oslo", "days": 2}}]
    before = source(answer, "literal", "v0.11.1", "content-before")
    assert before.source == "test" and before.expected["content"] == "Let me look that up."
    assert cell(answer, "literal", "v0.11.1", "content-before", "stream:char").status == "ok"


def test_a_parser_right_in_one_version_and_wrong_in_the_next(ran):
    _, answer = ran
    assert cell(answer, "literal", "v0.11.1", "single", "stream:token").status == "ok"
    wrong = cell(answer, "literal", "v0.11.2", "single", "stream:token")
    assert wrong.status == "wrong" and "not valid JSON" in wrong.detail
    assert cell(answer, "literal", "v0.11.2", "single", "nonstream").status == "ok"
    # the change is marked at the first version with the new behaviour
    changes = [
        c
        for c in answer.changes
        if (c.name, c.case, c.mode) == ("literal", "single", "stream:token") and c.version == "v0.11.2"
    ]
    assert changes and changes[0].before == "ok" and changes[0].after == "wrong"


def test_cells_of_unchanged_code_are_reused_not_run_again(ran):
    _, answer = ran
    ran_pairs = set(answer.run.ran)
    assert "fixture_json v0.11.1" in ran_pairs
    assert "fixture_json v0.11.2" not in ran_pairs  # its code and the serving code as at v0.11.1
    assert "literal v0.11.2" in ran_pairs
    assert answer.run.cells_reused > 0
    assert cell(answer, "fixture_json", "v0.11.2", "single", "serving-stream").status == "ok"


def test_no_run_answers_from_the_store_and_a_second_run_runs_nothing(ran):
    from indexer.api import Index, run_atlas

    db, answer = ran
    stored = Index(db).atlas()
    assert [r.to_json() for r in stored.rows] == [r.to_json() for r in answer.rows]
    again = run_atlas(db)
    assert again.run.cells_run == 0 and again.run.ran == []


def test_a_release_added_later_runs_only_what_changed(atlas_repo, tmp_path, cache):
    from indexer.api import Index, run_atlas

    db = tmp_path / "index.db"
    build_tags(atlas_repo, db, "v0.6.3..v0.11.1")
    first = run_atlas(db)
    assert {r.version for r in first.rows} == {"v0.6.3", "v0.11.1"}
    build_tags(atlas_repo, db, "v0.11.2")
    added = run_atlas(db)
    assert added.run.ran == ["literal v0.11.2"]
    assert {r.version for r in Index(db).atlas().rows} == {"v0.6.3", "v0.11.1", "v0.11.2"}
    assert cell(added, "fixture_json", "v0.11.2", "single", "nonstream").status == "ok"


def test_cli_runs_shows_and_answers_json_by_its_schema(ran, tmp_path):
    import jsonschema

    from indexer.schemas import load

    db, _ = ran
    out = tpindex("atlas", "--no-run", "--db", db, "--format", "json").output
    data = json.loads(out)
    jsonschema.validate(data, load("atlas"))
    assert {"cases", "rows", "changes"} <= set(data)
    assert data["rows"][0]["cells"][0].keys() >= {"case", "mode", "status", "detail"}
    text = tpindex("atlas", "literal", "--no-run", "--db", db).output
    assert "literal" in text and "v0.11.2" in text and "wrong" in text
    md = tpindex("atlas", "literal", "--no-run", "--db", db, "--format", "markdown").output
    assert md.lstrip().startswith("#") and "| v0.11.2 |" in md.replace("|  ", "| ")


def test_no_run_on_a_database_never_run_says_so(atlas_db):
    res = tpindex("atlas", "--no-run", "--db", atlas_db, ok=False)
    assert res.exit_code == 2 and "tpindex atlas" in res.output


def test_card_and_parser_page_show_the_behaviour_ranges_with_the_code_diff_at_the_change(ran):
    from indexer.api import Index

    db, _ = ran
    (card,) = Index(db).cards("literal", at="v0.11.2")
    (b,) = [b for b in card.behaviour if b["what"] == "arguments not valid JSON"]
    assert (b["first"], b["last"], b["fixed_in"], b["before"]) == ("v0.11.2", "v0.11.2", None, "v0.11.1")
    assert "single stream:token" in b["cells"]
    text = tpindex("card", "literal", "--at", "v0.11.2", "--db", db).output
    assert "behaviour (atlas)" in text and "tpindex diff v0.11.1 v0.11.2 --code literal" in text
    fixed = [
        b
        for b in Index(db).cards("fixture_json", at="v0.11.2")[0].behaviour
        if b["what"] == "arguments missing"
    ]
    assert fixed and fixed[0]["last"] == "v0.6.3" and fixed[0]["fixed_in"] == "v0.11.1"


def test_diff_has_a_behaviour_changes_section(ran):
    db, _ = ran
    d = json.loads(tpindex("diff", "v0.11.1", "v0.11.2", "--db", db, "--format", "json", ok=False).output)
    assert any(c["name"] == "literal" and c["after"] == "wrong" for c in d["behaviour"])
    text = tpindex("diff", "v0.11.1", "v0.11.2", "--db", db, ok=False).output
    assert "behaviour changes from v0.11.1 to v0.11.2" in text


def test_atlas_page_reads_the_store_and_runs_nothing_on_a_get(ran, monkeypatch):
    import re

    from fixtures.serve import serve

    import indexer.replay.runner

    def refuse(*a, **k):
        raise AssertionError("a GET of /-/atlas ran code")

    monkeypatch.setattr(indexer.replay.runner, "run", refuse)
    db, _ = ran
    client = serve(db)
    try:
        page = client.get("/-/atlas")
        assert page.status_code == 200, page.text[:300]
        assert 'data-name="literal"' in page.text and 'class="c s-wrong"' in page.text
        only = client.get("/-/atlas?case=content-only&mode=nonstream")
        assert only.status_code == 200 and 'class="c s-wrong"' not in only.text
        row = client.get("/-/atlas?name=literal&version=v0.11.2")
        assert row.status_code == 200
        assert "arguments not valid JSON" in row.text
        form = re.search(r'<form method="post" action="[^"]*/-/replay[^"]*">(.*?)</form>', row.text, re.S)
        assert (
            form
            and 'name="name" value="literal"' in form.group(1)
            and 'name="tags" value="v0.11.2"' in form.group(1)
        )
        parser = client.get("/-/parser/tool/literal?v=v0.11.2")
        assert parser.status_code == 200 and 'id="behaviour"' in parser.text
    finally:
        client.close()


def test_mcp_tool_answers_from_the_store(ran, tmp_path):
    import os

    import anyio
    import jsonschema
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    db, _ = ran
    exe = str(Path(sys.executable).parent / "tpindex")

    async def main():
        params = StdioServerParameters(command=exe, args=["mcp", "--db", str(db)], env=dict(os.environ))
        with open(tmp_path / "server.err", "w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                tool = {t.name: t for t in (await session.list_tools()).tools}["atlas"]
                result = await session.call_tool("atlas", {"names": ["literal"], "case": "single"})
                assert not result.is_error, result.content
                jsonschema.Draft202012Validator(tool.output_schema).validate(result.structured_content)
                rows = result.structured_content["rows"]
                assert {r["version"] for r in rows} == {"v0.11.1", "v0.11.2"}

    anyio.run(main)
