"""Advice an operator can paste (issue 39; names in any case, issue 41 item 8): the `vllm serve` line follows the
version's own documentation, then the model's template, then the code, and is proven by replaying it.

The fixture (tests/fixtures/advice.py) is one runnable lazy-registry version whose documentation is written in
each docs era's form (v0.8.5: docs/source/features/, a MyST label, the table's notes as bullets; v0.11.1:
docs/features/, `!!! note`), with the same claims; the thinking ChatML template is tests/fixtures/templates/
(written for these tests). Every family, model and parser name is the fixture's: none is in tpindex's code.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from fixtures.advice import NOTES, TOOL_DOC
from fixtures.helpers import line_of, tpindex

ERAS = ["v0.8.5", "v0.11.1"]
NEW = "v0.11.1"
CHATML = (Path(__file__).parent / "fixtures" / "templates" / "thinking_chatml.jinja").read_text()


@pytest.fixture(autouse=True)
def replay_env(monkeypatch, tmp_path_factory):
    """The fixture tree needs no third-party package: the test interpreter serves as the replay interpreter."""
    monkeypatch.setenv("TPINDEX_REPLAY_CACHE", str(tmp_path_factory.getbasetemp() / "advice-replay-cache"))
    monkeypatch.setenv("TPINDEX_REPLAY_PYTHON", sys.executable)


def model(db, name: str, at: str = NEW, *args: str) -> dict:
    r = tpindex("fit", "--model", name, "--at", at, "--format", "json", "--db", db, *args, ok=False)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def fit_file(db, tmp_path, text: str, *args: str, at: str = NEW) -> dict:
    path = tmp_path / "model.txt"
    path.write_text(text, encoding="utf-8")
    r = tpindex("fit", path, "--at", at, "--format", "json", "--db", db, *args, ok=False)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def config(name_or_path: str) -> str:
    """A tokenizer_config.json of a model: its name and the ChatML template."""
    return json.dumps({"name_or_path": name_or_path, "chat_template": CHATML})


def flags(serve: str) -> str:
    return serve.split(" ", 3)[3]


# -- the documentation, read in each era's form ------------------------------------------------------------


@pytest.mark.parametrize("at", ERAS)
def test_a_model_id_gets_its_section_s_tool_parser_and_its_row_s_reasoning_parser(advice_db, at):
    ans = model(advice_db, "orca-labs/Orca-3-8B", at, "--no-proof")
    assert ans["serve"] == (
        "vllm serve orca-labs/Orca-3-8B --enable-auto-tool-choice --tool-call-parser tagjson"
        " --reasoning-parser patient"
    )
    d = ans["documented"]
    assert d["family"] == "Orca-3 series" and d["section"] == "Orca Models"
    root = "docs/features/" if at == NEW else "docs/source/features/"
    said = {(e["file"], e["line"]) for e in d["evidence"]}
    assert (root + "tool_calling.md", line_of(TOOL_DOC, "Flags: `--tool-call-parser tagjson`")) in said
    assert any(f == root + "reasoning_outputs.md" for f, _ in said)
    # the notes under the table: thinking on by default, and how to turn it off
    assert d["thinking"] == "on" and d["kwargs"] == ["enable_thinking=False"]
    assert [n["text"] for n in d["notes"]] == [NOTES[1]]
    assert {p["parser"] for p in ans["pair"]["evidence"] if p["kind"] == "docs"} == {"tagjson", "patient"}


@pytest.mark.parametrize("at", ERAS)
def test_a_family_name_is_read_in_any_case(advice_db, at):
    a = model(advice_db, "ORCA-3", at, "--no-proof")
    b = model(advice_db, "orca-3 series", at, "--no-proof")
    assert (
        flags(a["serve"])
        == flags(b["serve"])
        == ("--enable-auto-tool-choice --tool-call-parser tagjson --reasoning-parser patient")
    )


def test_a_more_specific_family_is_not_the_general_one(advice_db):
    # Orca-3-Coder has a section of its own: it is not the Orca-3 series of the reasoning table
    ans = model(advice_db, "orca-labs/Orca-3-Coder-30B", NEW, "--no-proof")
    assert ans["pair"]["tool"] == "orca_xml" and ans["pair"]["reasoning"] is None
    # its flags name a template: the line has it
    assert ans["serve"].endswith(
        "--tool-call-parser orca_xml --chat-template examples/tool_chat_template_orca_xml.jinja"
    )


def test_a_linked_model_and_a_model_s_own_parser_name_come_first(advice_db):
    ans = model(advice_db, "orca-labs/OrcaThink-7B", NEW, "--no-proof")  # the table links this one model
    assert (ans["pair"]["tool"], ans["pair"]["reasoning"]) == ("tagjson", "eager")
    # Duo's flags name duo_b for both, but its model line names duo_a: the model's own
    ans = model(advice_db, "duo/Duo-A-2025", NEW, "--no-proof")
    assert (ans["pair"]["tool"], ans["pair"]["reasoning"]) == ("duo_a", "duo_a")


def test_see_above_gives_each_model_its_own_template_and_the_table_s_cross_is_said(advice_db):
    ans = model(advice_db, "zeta-ai/Zeta-R2-0528", NEW, "--no-proof")
    assert ans["serve"].endswith(
        "--tool-call-parser zeta --reasoning-parser eager --chat-template examples/tool_chat_template_zetar2.jinja"
    )
    assert ans["documented"]["tool_calling"] is False and "not supported" in ans["verdict"]


def test_a_lone_template_line_is_the_flags_after_it_not_before(advice_db):
    before = model(advice_db, "kappa/Kappa-2-9B", NEW, "--no-proof")
    assert before["serve"].endswith("--chat-template examples/tool_chat_template_kappa21.jinja")
    after = model(advice_db, "Kappa-2.1", NEW, "--no-proof")
    assert "--chat-template" not in after["serve"]
    # off by default, and tool calling in non-thinking mode: both notes said, with their lines
    d = after["documented"]
    assert d["thinking"] == "off" and d["kwargs"] == ["thinking=True"]
    assert [n["text"] for n in d["notes"]] == [NOTES[0], NOTES[2]]


def test_adjacent_flags_lines_are_one_model_s_and_an_aside_pairs_nothing(advice_db):
    ans = model(advice_db, "twin-co/Twin-1", NEW, "--no-proof")
    assert (ans["pair"]["tool"], ans["pair"]["reasoning"]) == ("twin", "twin")
    assert [c["name"] for c in ans["tool"]] == ["twin"]  # not tagjson, which the aside names


def test_a_family_without_a_tool_section_gets_the_parser_of_its_name(advice_db):
    ans = model(advice_db, "Lumen 5", NEW, "--no-proof")
    assert (ans["pair"]["tool"], ans["pair"]["reasoning"]) == ("lumen5", "lumen5")
    (tool,) = ans["tool"]
    assert tool["evidence"][0]["kind"] == "name"


def test_a_tie_the_docs_leave_is_reported_not_broken_silently(advice_db):
    ans = model(advice_db, "Duo", NEW, "--no-proof")  # both models of the section, two parser names
    assert ans["pair"]["tie"]["tool"] == ["duo_a", "duo_b"]
    assert all(c["rank"] == 1 for c in ans["tool"])
    assert "a tie no evidence breaks between duo_a, duo_b" in ans["verdict"]


def test_a_database_without_the_reasoning_page_says_so(tmp_path):
    from fixtures.advice import tree
    from fixtures.helpers import build_tags, make_repo

    files = {k: v for k, v in tree("new").items() if not k.endswith("reasoning_outputs.md")}
    build_tags(make_repo(tmp_path / "repo", {"v0.11.1": files}), tmp_path / "t.db", "v0.11.1")
    ans = model(tmp_path / "t.db", "orca-labs/Orca-2.5-7B", NEW, "--no-proof")  # from the tool-calling page
    assert ans["pair"]["tool"] == "tagjson"
    assert any("reasoning page of v0.11.1 is not stored" in n for n in ans["observed"]["notes"])


def test_an_unknown_model_is_refused_with_a_hint(advice_db):
    r = tpindex("fit", "--model", "acme/Nothing-1B", "--db", advice_db, ok=False)
    assert r.exit_code == 2 and "nothing in" in r.output and "Hint:" in r.output
    r = tpindex("fit", "--db", advice_db, ok=False)
    assert r.exit_code == 2 and "--model" in r.output


# -- fit FILE: the docs, the template, the code, the proof ---------------------------------------------------


def test_the_docs_decide_the_reasoning_parser_the_code_cannot_tell_apart(advice_db, tmp_path):
    # eager and patient hold the same tokens: the code's evidence ties them; the model the file names is
    # documented with patient
    ans = fit_file(advice_db, tmp_path, config("orca-labs/Orca-3-8B"), "--no-proof")
    assert ans["pair"]["reasoning"] == "patient" and ans["pair"]["tie"] == {}
    docs = [e for e in ans["pair"]["evidence"] if e["parser"] == "patient" and e["kind"] == "docs"]
    assert any("Orca-3 series" in e["text"] and e["file"].endswith("reasoning_outputs.md") for e in docs)
    assert ans["serve"].endswith("--tool-call-parser tagjson --reasoning-parser patient")


def test_equal_scores_share_a_rank_and_a_tie_is_said(advice_db, tmp_path):
    # the template names no model: the docs pair tagjson with both eager (OrcaThink-7B) and patient (Orca-3)
    ans = fit_file(advice_db, tmp_path, CHATML, "--no-proof")
    by = {c["name"]: c for c in ans["reasoning"]}
    assert by["eager"]["score"] == by["patient"]["score"]
    assert by["eager"]["rank"] == by["patient"]["rank"] == 1
    assert ans["pair"]["tie"]["reasoning"] == ["eager", "patient"]
    assert "a tie no evidence breaks between eager, patient" in ans["verdict"]
    # pairjson scores what onejson scores, from more of its tokens: one rank, not two
    tools = {c["name"]: c for c in ans["tool"]}
    assert tools["pairjson"]["score"] == tools["onejson"]["score"]
    assert tools["pairjson"]["rank"] == tools["onejson"]["rank"] == 2
    scores = [c["score"] for c in ans["tool"] + ans["reasoning"]]
    for kind in ("tool", "reasoning"):
        for a in ans[kind]:
            for b in ans[kind]:
                assert (a["score"] == b["score"]) == (a["rank"] == b["rank"]), (a["name"], b["name"], scores)


def test_the_proof_replays_the_pair_and_breaks_the_tie(advice_db, tmp_path):
    ans = fit_file(advice_db, tmp_path, CHATML)
    proof = ans["proof"]
    assert proof["ok"] is True and (proof["tool"], proof["reasoning"]) == ("tagjson", "patient")
    assert ans["serve"].startswith(
        "vllm serve MODEL --enable-auto-tool-choice --tool-call-parser tagjson --reasoning-parser patient"
    )
    # the template's two outputs (with and without reasoning), each in every mode
    assert sorted(o["what"] for o in proof["outputs"]) == ["a tool call", "reasoning and a tool call"]
    for o in proof["outputs"]:
        assert {m["mode"] for m in o["modes"]} == {
            "nonstream",
            "stream:token",
            "serving-full",
            "serving-stream",
        }
        assert all(m["ok"] for m in o["modes"])
        serving = [m for m in o["modes"] if m["mode"] == "serving-full"][0]
        assert serving["finish_reason"] == "tool_calls" and serving["calls"] == [
            'get_weather({"city": "Paris"})'
        ]
    # eager makes the whole output without a think block its reasoning: no call; said, and not recommended
    (eager,) = [r for r in proof["tried"] if r["reasoning"] == "eager"]
    assert eager["ok"] is False
    bad = [m for o in eager["outputs"] for m in o["modes"] if not m["ok"]]
    assert bad and "no tool call" in bad[0]["why"]
    assert "tagjson + eager fails" in ans["verdict"]
    assert ans["pair"]["tie"] == {}
    assert any(e["kind"] == "proof" and e["parser"] == "patient" for e in ans["pair"]["evidence"])


def test_a_documented_pair_that_fails_the_proof_is_not_recommended(advice_db, tmp_path):
    # the file names OrcaThink-7B, documented with eager; on this template's outputs eager loses the call
    ans = fit_file(advice_db, tmp_path, config("orca-labs/OrcaThink-7B"))
    assert ans["pair"]["reasoning"] == "patient" and ans["proof"]["ok"] is True
    by = {c["name"]: c for c in ans["reasoning"]}
    assert any(e["kind"] == "docs" for e in by["eager"]["evidence"])
    assert any(e["kind"] == "proof" and e["stance"] == "against" for e in by["eager"]["evidence"])
    assert "tagjson + eager fails" in ans["verdict"]


def test_the_answer_follows_its_schema_and_no_proof_skips_it(advice_db, tmp_path):
    import jsonschema

    from indexer.schemas import load

    for ans in (
        fit_file(advice_db, tmp_path, CHATML),
        model(advice_db, "ORCA-3"),
        fit_file(advice_db, tmp_path, CHATML, "--no-proof"),
    ):
        jsonschema.validate(ans, load("fit"))
    assert fit_file(advice_db, tmp_path, CHATML, "--no-proof")["proof"] is None
    text = tpindex("fit", "--model", "orca-labs/Orca-3-8B", "--at", NEW, "--db", advice_db).output
    assert "proof at v0.11.1" in text and text.rstrip().endswith("--reasoning-parser patient")


def test_a_model_named_is_proven_on_its_parser_s_template_and_its_think_tokens(advice_db):
    ans = model(advice_db, "orca-labs/Orca-3-8B")
    assert ans["proof"]["ok"] is True
    (out,) = ans["proof"]["outputs"]
    assert out["what"] == "reasoning and a tool call" and out["text"].startswith("<think>")
    assert any("examples/tool_chat_template_tagjson.jinja" in n for n in ans["observed"]["notes"])


# -- one serve line everywhere -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client(advice_db):
    from fixtures.serve import serve

    c = serve(advice_db)
    yield c
    c.close()


def serve_cmd(page: str) -> str:
    import html

    return html.unescape(re.search(r'<pre class="serve-cmd"><code>(.*?)</code></pre>', page, re.S).group(1))


def test_parser_pages_add_a_chat_template_only_where_the_docs_flags_do(client):
    # tagjson ships examples/tool_chat_template_tagjson.jinja, which no flags line names
    assert serve_cmd(client.html("/-/parser/tool/tagjson")) == (
        "vllm serve MODEL --enable-auto-tool-choice --tool-call-parser tagjson"
    )
    assert serve_cmd(client.html("/-/parser/tool/orca_xml")).endswith(
        "--chat-template examples/tool_chat_template_orca_xml.jinja"
    )
    assert "--chat-template" not in serve_cmd(client.html("/-/parser/tool/zeta"))  # {see_above}: per model


def test_a_cross_in_the_table_keeps_a_pair_off_the_line_unless_a_note_says_tool_calling_works(client):
    # Zeta R2 -> eager is marked without tool calling: listed, not in the line
    page = client.html("/-/parser/tool/zeta")
    assert "--reasoning-parser" not in serve_cmd(page) and "tool calling not supported" in page
    # Kappa-2.1 -> musing is marked too, but its note says tool calling works in non-thinking mode
    assert serve_cmd(client.html("/-/parser/tool/kappa21")).endswith(
        "--tool-call-parser kappa21 --reasoning-parser musing"
    )


def test_reasoning_pages_list_the_tool_parsers_they_pair_with(client):
    page = client.html("/-/parser/reasoning/patient")
    assert serve_cmd(page) == (
        "vllm serve MODEL --enable-auto-tool-choice --tool-call-parser tagjson --reasoning-parser patient"
    )
    listed = re.search(r'<ul class="documented">(.*?)</ul>', page, re.S).group(1)
    assert "Orca-3 series" in listed and "/-/source/v0.11.1/docs/features/reasoning_outputs.md#L" in listed
    tool_page = client.html("/-/parser/tool/tagjson")  # several families: each with its reasoning parser
    listed = re.search(r'<ul class="documented">(.*?)</ul>', tool_page, re.S).group(1)
    assert (
        "Orca-3 series" in listed and "patient" in listed and "OrcaThink-7B" in listed and "eager" in listed
    )


def test_the_search_box_answers_a_model_name_with_the_serve_line(client):
    r = client.get("/-/find?q=orca-labs/Orca-3-8B")
    assert r.status_code == 200
    assert serve_cmd(r.text) == (
        "vllm serve orca-labs/Orca-3-8B --enable-auto-tool-choice --tool-call-parser tagjson"
        " --reasoning-parser patient"
    )
    assert "Orca-3 series" in r.text and "reasoning_outputs.md#L" in r.text
    # the proof runs code: never on a GET, offered as a form that posts
    assert re.search(r'<form[^>]*method="post"[^>]*action="/-/fit"', r.text)


def test_the_fit_page_s_line_names_no_pasted_file(client):
    page = client.get("/-/fit")
    token = re.search(r'name="csrftoken" value="([^"]+)"', page.text).group(1)
    r = client.post("/-/fit", data={"csrftoken": token, "text": CHATML, "at": NEW}, cookies=page.cookies)
    assert r.status_code == 200
    assert "the pasted file" not in serve_cmd(r.text) and "--tool-call-parser tagjson" in serve_cmd(r.text)


def test_the_mcp_tool_takes_a_model(advice_db):
    import anyio

    from indexer.mcp.tools import stdio_server

    async def call():
        server = stdio_server(str(advice_db))
        return await server.call_tool("fit", {"model": "ORCA-3", "proof": False})

    result = anyio.run(call)
    data = result.structured_content if hasattr(result, "structured_content") else result[1]
    assert data["serve"].endswith("--tool-call-parser tagjson --reasoning-parser patient")


# -- names in any case; a reasoning parser's name and its family's tool parser (issue 41, item 8) --------------


def test_names_are_read_in_any_case(advice_db):
    assert (
        json.loads(tpindex("which", "TAGJSON", "--format", "json", "--db", advice_db).output)["name"]
        == "tagjson"
    )
    card = tpindex("card", "Patient", "--db", advice_db).output
    assert card.startswith("patient (reasoning parser)")


def test_which_a_reasoning_parser_says_which_tool_parser_its_family_uses(advice_db):
    out = tpindex("which", "Patient", "--db", advice_db).output
    assert "patient (reasoning parser)" in out
    assert re.search(r"Orca-3 series: .*--tool-call-parser tagjson --reasoning-parser patient", out)
    data = json.loads(tpindex("which", "patient", "--format", "json", "--db", advice_db).output)
    assert [(m["family"], m["tool"]) for m in data["models"]] == [("Orca-3 series", "tagjson")]
    r = tpindex("which", "orca-labs/Orca-3-8B", "--db", advice_db, ok=False)
    assert r.exit_code == 2 and "tpindex fit --model orca-labs/Orca-3-8B" in r.output
