"""The text of chat templates and parser tests in the code store (issue 27, templates part): `show`, `grep`
and `diff --code` read them from the database like the parser code, and a database whose templates were only
recorded as present gets their text on its next build.

The fixture is a lazy-registry era repository (v0.11.1 on) with one tool parser, one chat template and one
test file, written here by hand; the template changes its tool-call markup between the two versions.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from fixtures.eras import PLAIN_ABSTRACT, lazy_registry, tool_names
from fixtures.helpers import build_tags, make_repo, rows, tpindex

TEMPLATE = "examples/tool_chat_template_zeta.jinja"
TEST = "tests/tool_parsers/test_zeta_tool_parser.py"

ZETA = """
from vllm.tool_parsers.abstract_tool_parser import ToolParser


class ZetaToolParser(ToolParser):
    tool_call_start_token = "<zeta_call>"
    tool_call_end_token = "</zeta_call>"

    def extract_tool_calls(self, text):
        return text
"""

TEMPLATE_V1 = """\
{%- for message in messages %}
{%- if message.tool_calls %}
{%- for call in message.tool_calls %}
{{- '<zeta_call>' + call.function.name + ' ' + call.function.arguments | tojson + '</zeta_call>' }}
{%- endfor %}
{%- else %}
{{- message.role + ': ' + message.content + '\\n' }}
{%- endif %}
{%- endfor %}
"""
TEMPLATE_V2 = TEMPLATE_V1.replace("' ' + call", "'\\n' + call")

HISTORY = {
    "v0.12.0": {
        "vllm/tool_parsers/__init__.py": lazy_registry("tool", tool_names("zeta")),
        "vllm/tool_parsers/abstract_tool_parser.py": PLAIN_ABSTRACT,
        "vllm/tool_parsers/zeta_tool_parser.py": ZETA,
        TEMPLATE: TEMPLATE_V1,
        TEST: "def test_zeta_call():\n    assert '<zeta_call>' in 'x'\n",
    },
    "v0.13.0": {TEMPLATE: TEMPLATE_V2},
}


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    root = tmp_path_factory.mktemp("template-code")
    repo = make_repo(root / "repo", HISTORY)
    db = root / "index.db"
    build_tags(repo, db, "v0.12.0..")
    return repo, db


def test_show_prints_a_chat_template_and_a_test_file(stored):
    _, db = stored
    out = tpindex("show", TEMPLATE, "--at", "v0.12.0", "--db", db).output
    assert "4  {{- '<zeta_call>' + call.function.name + ' '" in out
    shown = json.loads(tpindex("show", f"{TEST}:2", "--at", "v0.12.0", "--format", "json", "--db", db).output)
    assert shown["lines"] == [{"line": 2, "text": "    assert '<zeta_call>' in 'x'"}]


def test_grep_searches_templates_and_tests(stored):
    _, db = stored
    found = json.loads(tpindex("grep", "<zeta_call>", "--format", "json", "--db", db).output)
    paths = {m["path"] for m in found}
    assert {TEMPLATE, TEST, "vllm/tool_parsers/zeta_tool_parser.py"} <= paths
    in_template = [m for m in found if m["path"] == TEMPLATE]
    assert [(m["line"], m["versions"]) for m in in_template] == [(4, ["v0.12.0"]), (4, ["v0.13.0"])]


def test_diff_code_of_a_template(stored):
    _, db = stored
    r = tpindex("diff", "v0.12.0", "v0.13.0", "--code", TEMPLATE, "--db", db, ok=False)
    assert r.exit_code == 1
    assert f"--- a/{TEMPLATE}\t(v0.12.0)" in r.output
    assert "-{{- '<zeta_call>' + call.function.name + ' ' +" in r.output
    assert "+{{- '<zeta_call>' + call.function.name + '\\n' +" in r.output


def test_each_template_and_test_blob_is_stored_once(stored):
    _, db = stored
    held = rows(
        db,
        "select count(distinct f.blob_id) from version_files f join code_texts t on t.blob_id = f.blob_id"
        " where f.file like 'examples/%' or f.file like 'tests/%'",
    )[0][0]
    assert held == 3  # two versions of the template, one of the test


def test_an_older_database_gets_the_text_of_its_templates_on_the_next_build(tmp_path):
    repo = make_repo(tmp_path / "repo", HISTORY)
    db = tmp_path / "old.db"
    build_tags(repo, db, "v0.12.0..")
    # as an older tpindex left it: templates and tests recorded as present, their text not stored
    conn = sqlite3.connect(db)
    conn.execute(
        "delete from code_texts where blob_id in (select blob_id from version_files"
        " where file like 'examples/%' or file like 'tests/%')"
    )
    conn.execute("update versions set extractor = '9:000000000000'")
    conn.commit()
    conn.close()
    r = tpindex("show", TEMPLATE, "--db", db, ok=False)
    assert r.exit_code == 2 and "older tpindex" in r.output and "build" in r.output
    stats = build_tags(repo, db, "v0.12.0..")
    assert len(stats.versions_reindexed) == 2
    assert "<zeta_call>" in tpindex("show", TEMPLATE, "--db", db).output


def test_the_card_shows_the_call_markup_each_chat_template_renders(stored):
    _, db = stored
    (card,) = json.loads(tpindex("card", "zeta", "--at", "v0.12.0", "--format", "json", "--db", db).output)[
        "cards"
    ]
    (tmpl,) = card["chat_templates"]
    assert tmpl["file"] == TEMPLATE
    assert tmpl["markup"] == '<zeta_call>get_weather {"city": "Paris"}</zeta_call>'
    assert tmpl["shape"].startswith("JSON objects") is False  # the arguments alone: no JSON call object
    text = tpindex("card", "zeta", "--at", "v0.13.0", "--db", db).output
    assert 'renders  <zeta_call>get_weather\\n{"city": "Paris"}</zeta_call>' in text
    md = tpindex("card", "zeta", "--at", "v0.13.0", "--format", "markdown", "--db", db).output
    assert '`<zeta_call>get_weather\\n{"city": "Paris"}</zeta_call>`' in md


def test_the_build_stores_what_each_template_renders_once_per_content(stored):
    _, db = stored
    got = rows(
        db,
        "select f.version, r.call from template_renders r join version_files f on f.blob_id = r.blob_id"
        " where f.file = ? order by f.version",
        [TEMPLATE],
    )
    assert got == [
        ("v0.12.0", '<zeta_call>get_weather {"city": "Paris"}</zeta_call>'),
        ("v0.13.0", '<zeta_call>get_weather\n{"city": "Paris"}</zeta_call>'),
    ]
    assert rows(db, "select count(*) from template_renders") == [(2,)]  # the test file is no template


def test_a_database_without_stored_renderings_renders_the_template_when_asked(tmp_path):
    repo = make_repo(tmp_path / "repo", HISTORY)
    db = tmp_path / "no-renders.db"
    build_tags(repo, db, "v0.12.0")
    conn = sqlite3.connect(db)
    conn.execute("delete from template_renders")
    conn.commit()
    conn.close()
    (card,) = json.loads(tpindex("card", "zeta", "--format", "json", "--db", db).output)["cards"]
    assert card["chat_templates"][0]["markup"] == '<zeta_call>get_weather {"city": "Paris"}</zeta_call>'
