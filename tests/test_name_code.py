"""The code of a parser name (issues 11 and 12): `show NAME [--method M]`, `diff A B --code NAME` following
the real file when it moves, and the line counts of `code-changed`. On the fixtures of test_logic (a name
inheriting its extraction; v0.33.0 changes base45's code) and test_resolve (beta moves to vllm/parser/)."""

from __future__ import annotations

import json

import pytest
from fixtures.helpers import line_of, tpindex
from fixtures.logic import BASE45
from fixtures.unified import BETA_MODEL, BETA_STANDALONE


def test_show_name_prints_the_class_that_really_implements_it(logic_db):  # noqa: F811
    out = tpindex("show", "child47", "--at", "v0.32.0", "--db", logic_db).output
    first = line_of(BASE45, "class Base45ToolParser")
    last = len(BASE45.strip("\n").splitlines())
    assert out.splitlines()[0] == (
        f"== child47 (tool parser) at v0.32.0: Base45ToolParser, "
        f"vllm/tool_parsers/base45_tool_parser.py:{first}-{last}"
    )
    assert out.splitlines()[1].split() == [str(first), "class", "Base45ToolParser(ToolParser):"]
    data = json.loads(
        tpindex("show", "child47", "--at", "v0.32.0", "--format", "json", "--db", logic_db).output
    )
    (span,) = data["spans"]
    assert (span["class"], span["role"], span["start"], span["end"]) == (
        "Base45ToolParser",
        "real",
        first,
        last,
    )
    assert span["code"]["lines"][0]["text"] == "class Base45ToolParser(ToolParser):"


def test_show_name_method_as_the_name_resolves_it(logic_db):  # noqa: F811
    out = tpindex(
        "show", "child47", "--method", "extract_tool_calls", "--at", "v0.32.0", "--db", logic_db
    ).output
    line = line_of(BASE45, "def extract_tool_calls(")
    assert out.splitlines()[0].startswith(
        "== child47 (tool parser) at v0.32.0: Base45ToolParser.extract_tool_calls, "
        f"vllm/tool_parsers/base45_tool_parser.py:{line}-"
    )
    assert "(registered)" in out.splitlines()[0]
    out = tpindex("show", "quiet", "--method", "extract_tool_calls_streaming", "--db", logic_db).output
    assert "returns-none" in out.splitlines()[0] and "return None" in out
    out = tpindex("show", "engined", "--method", "parse_delta", "--db", logic_db).output
    assert "EnginedParser.parse_delta" in out and "(engine)" in out
    r = tpindex("show", "quiet", "--method", "nope", "--db", logic_db, ok=False)
    assert r.exit_code == 2 and "defines nope" in r.output and "extract_tool_calls" in r.output


def test_show_name_errors(logic_db):  # noqa: F811
    r = tpindex("show", "quiett", "--db", logic_db, ok=False)
    assert r.exit_code == 2 and "did you mean: quiet" in r.output
    r = tpindex("show", "vllm/tool_parsers/quiet_tool_parser.py", "--method", "x", "--db", logic_db, ok=False)
    assert r.exit_code == 2 and "--method go with a parser NAME" in r.output


def test_diff_code_name_diffs_its_own_files_only(logic_db):  # noqa: F811
    data = json.loads(
        tpindex(
            "diff", "v0.32.0", "v0.33.0", "--code", "child47", "--format", "json", "--db", logic_db, ok=False
        ).output
    )
    assert data["name"] == "child47" and data["kinds"] == ["tool"]
    assert [(f["path_a"], f["status"]) for f in data["files"]] == [
        ("vllm/tool_parsers/base45_tool_parser.py", "modified")
    ]
    r = tpindex("diff", "v0.32.0", "v0.33.0", "--code", "quiet", "--db", logic_db, ok=False)
    assert r.exit_code == 0 and "no change to quiet" in r.output


def test_diff_code_name_follows_the_real_file_when_it_moves(unified_db):  # noqa: F811
    data = json.loads(
        tpindex(
            "diff", "v0.24.0", "v0.25.0", "--code", "beta", "--format", "json", "--db", unified_db, ok=False
        ).output
    )
    first = data["files"][0]
    assert (first["path_a"], first["path_b"]) == (
        "vllm/tool_parsers/beta_tool_parser.py",
        "vllm/parser/beta.py",
    )
    assert first["status"] == "modified"
    text = tpindex("diff", "v0.24.0", "v0.25.0", "--code", "beta", "--db", unified_db, ok=False).output
    assert text.startswith(
        "--- a/vllm/tool_parsers/beta_tool_parser.py\t(v0.24.0)\n+++ b/vllm/parser/beta.py\t(v0.25.0)"
    )
    assert BETA_MODEL and BETA_STANDALONE


def test_code_changed_counts_lines_in_the_names_code(logic_db):  # noqa: F811
    changes = json.loads(
        tpindex("diff", "v0.32.0", "v0.33.0", "--format", "json", "--db", logic_db, ok=False).output
    )["changes"]
    (child,) = [c for c in changes if c["type"] == "code-changed" and c["name"] == "child47"]
    (f,) = child["files"]
    assert f["file"] == "vllm/tool_parsers/base45_tool_parser.py"
    assert (f["added"], f["removed"], f["file_added"], f["file_removed"]) == (1, 1, 1, 1)
    assert child["detail"] == (
        "code changed in vllm/tool_parsers/base45_tool_parser.py: extraction"
        " Base45ToolParser.extract_tool_calls (+1 -1)"
    )


@pytest.mark.parametrize("args", [["show", "child47"], ["show", "child47", "--method", "extract_tool_calls"]])
def test_show_name_json_follows_its_schema(logic_db, args):  # noqa: F811
    import jsonschema

    from indexer.schemas import load

    data = json.loads(tpindex(*args, "--format", "json", "--db", logic_db).output)
    jsonschema.Draft202012Validator(load("show-name")).validate(data)


def test_diff_page_of_a_names_own_code(logic_db):  # noqa: F811
    from fixtures.serve import serve

    c = serve(logic_db)
    try:
        page = c.html("/-/diff?a=v0.32.0&b=v0.33.0&name=child47&kind=tool")
        assert "child47 (tool): v0.32.0 &rarr; v0.33.0" in page and "1 file changed" in page
        assert "<h2>vllm/tool_parsers/base45_tool_parser.py</h2>" in page
        page = c.html("/-/diff?a=v0.32.0&b=v0.33.0&name=quiet&kind=tool")
        assert "Its own code did not change" in page
        r = c.get("/-/diff?a=v0.32.0&b=v0.33.0&name=nosuchname")
        assert r.status_code == 404 and "nosuchname" in r.text
        page = c.html("/-/parser/tool/child47")
        assert "/-/diff?a=v0.32.0&amp;b=v0.33.0&amp;name=child47&amp;kind=tool" in page
    finally:
        c.close()


def test_a_version_pages_counts_of_several_names_are_each_names_own(logic_db, unified_db):  # noqa: F811
    # the version page counts every changed name at once (names_code_counts): the same +/- as each name's own
    import sqlite3

    from indexer.answers.namecode import name_code_counts, names_code_counts
    from indexer.answers.versions import AnswerError
    from indexer.store.database import Reader

    for path, a, b in ((logic_db, "v0.32.0", "v0.33.0"), (unified_db, "v0.24.0", "v0.25.0")):
        conn = sqlite3.connect(path)
        conn.row_factory = sqlite3.Row
        db = Reader(conn)
        names = [
            (r[0], r[1]) for r in db.execute("select distinct kind, name from parser_map order by kind, name")
        ]
        one = {}
        for kind, name in names:
            try:
                one[(kind, name)] = name_code_counts(db, a, b, name, kind)
            except AnswerError:  # registered at neither version: the page lists no counts for it
                continue
        assert names_code_counts(db, a, b, names) == one and any(v for v in one.values())
        conn.close()
