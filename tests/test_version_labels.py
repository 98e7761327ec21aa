"""Short version labels (issue 23, item 7): a label equal under PEP 440 to exactly one indexed version (`v0.31`,
`0.31`, `0.31.0` for v0.31.0) names it wherever a version is asked for — every command's --at, diff's A and B,
--tags among the indexed versions, the browser's pages and canned questions, MCP arguments — through one
resolver; an ambiguous label lists its candidates; a label that is not indexed lists the nearest indexed
versions around it and a build hint that works as written. On a fixture repository written here."""

from __future__ import annotations

import asyncio
import json
import shlex

import pytest
from fixtures.eras import PLAIN_ABSTRACT, lazy_registry
from fixtures.helpers import build_tags, make_repo, rows, tpindex

TP = "vllm/tool_parsers"


def parser(cls: str, body: str = "return text") -> str:
    return (
        f"from vllm.tool_parsers.abstract_tool_parser import ToolParser\n\n\n"
        f"class {cls}(ToolParser):\n    def extract_tool_calls(self, text):\n        {body}\n"
    )


NAMES = {"alpha": ("alpha_tool_parser", "AlphaToolParser")}
HISTORY = {
    "v0.30.0": {
        f"{TP}/__init__.py": lazy_registry("tool", NAMES, inline=True, imports="ToolParserManager"),
        f"{TP}/abstract_tool_parser.py": PLAIN_ABSTRACT,
        f"{TP}/alpha_tool_parser.py": parser("AlphaToolParser"),
    },
    "v0.31.0": {f"{TP}/alpha_tool_parser.py": parser("AlphaToolParser", "return text.strip()")},
    "v0.32.0": {f"{TP}/alpha_tool_parser.py": parser("AlphaToolParser", "return [text.strip()]")},
    "v0.33.0": {f"{TP}/alpha_tool_parser.py": parser("AlphaToolParser", "return [text]")},
}
ALPHA = f"{TP}/alpha_tool_parser.py"


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return make_repo(tmp_path_factory.mktemp("labels") / "repo", HISTORY)


@pytest.fixture(scope="module")
def db(repo, tmp_path_factory):
    """v0.30.0 - v0.32.0 indexed with --tree (v0.33.0 is in the repository, not indexed)."""
    from indexer.core.scope import Scope

    path = tmp_path_factory.mktemp("labels-db") / "index.db"
    build_tags(repo, path, "v0.30.0..v0.32.0", scope=Scope.named("default", tree=True))
    return path


def run(db, *args, ok=True):
    return tpindex(*args, "--db", db, ok=ok)


def js(db, *args):
    r = run(db, *args, "--format", "json", ok=False)
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.output)


@pytest.mark.parametrize("label", ["v0.31", "0.31", "0.31.0", "v0.31.0.0", "V0.31"])
def test_a_short_label_names_the_one_equal_version_in_every_command(db, label):
    assert js(db, "diff", label, "v0.32.0")["a"] == "v0.31.0"
    assert js(db, "diff", "v0.30.0", label)["b"] == "v0.31.0"
    assert js(db, "which", "alpha", "--at", label)["version"] == "v0.31.0"
    assert js(db, "card", "alpha", "--at", label)["version"] == "v0.31.0"
    assert js(db, "export", "--at", label)["version"] == "v0.31.0"
    assert js(db, "show", ALPHA, "--at", label)["version"] == "v0.31.0"
    assert js(db, "show", "alpha", "--at", label)["version"] == "v0.31.0"
    assert js(db, "diff", label, "v0.32.0", "--code", ALPHA)["a"] == "v0.31.0"
    assert js(db, "diff", label, "v0.32.0", "--code", "alpha")["a"] == "v0.31.0"
    assert js(db, "where", "AlphaToolParser", "--at", label)["version"] == "v0.31.0"
    assert {v for m in js(db, "grep", "strip", "--at", label) for v in m["versions"]} == {"v0.31.0"}
    assert {v for m in js(db, "grep", "strip", "--tags", f"{label},v0.32") for v in m["versions"]} == {
        "v0.31.0",
        "v0.32.0",
    }


def test_check_doc_at_a_short_label(db):
    from click.testing import CliRunner

    from indexer.cli.main import main

    r = CliRunner().invoke(
        main,
        ["check-doc", "-", "--at", "v0.31", "--at", "v0.30..v0.31", "--format", "json", "--db", str(db)],
        input="Use `--tool-call-parser alpha`.\n",
    )
    assert r.exit_code == 0, r.output
    assert [v["version"] for v in json.loads(r.output)["versions"]] == ["v0.30.0", "v0.31.0"]


def test_a_label_that_is_not_indexed_lists_its_neighbours_and_a_hint_that_works(db, repo, tmp_path):
    r = run(db, "diff", "v0.31.5", "v0.32.0", ok=False)
    assert r.exit_code == 2 and "nearest indexed: v0.30.0, v0.31.0, v0.32.0" in r.output
    r = run(db, "which", "alpha", "--at", "v0.33", ok=False)
    assert r.exit_code == 2 and "version v0.33 is not indexed; nearest indexed: " in r.output
    assert "v0.32.0" in r.output.split("nearest indexed: ")[1].splitlines()[0]
    hint = r.output.split("Hint: ", 1)[1].split("  (", 1)[0]
    cmd = shlex.split(hint.removeprefix("index it first: "))
    copy = tmp_path / "copy.db"
    copy.write_bytes(db.read_bytes())
    cmd[cmd.index(str(db))] = str(copy)
    tpindex(*cmd[1:], "-q")  # `build --tags v0.33` works as written
    assert ("v0.33.0",) in rows(copy, "select label from versions")


@pytest.fixture(scope="module")
def twin_db(tmp_path_factory):
    """Two indexed versions equal under PEP 440: tags v0.31.0 and 0.31 (on other commits)."""
    base = tmp_path_factory.mktemp("twins")
    repo = make_repo(
        base / "repo",
        {"v0.30.0": HISTORY["v0.30.0"], "v0.31.0": HISTORY["v0.31.0"], "0.31": HISTORY["v0.32.0"]},
    )
    path = base / "index.db"
    build_tags(repo, path, "v0.30.0,v0.31.0,0.31")
    return path


def test_an_ambiguous_label_lists_its_candidates(twin_db):
    for args in (
        ["which", "alpha", "--at", "v0.31"],
        ["diff", "v0.30.0", "0.31.0"],
        ["grep", "x", "--tags", "v0.31"],
    ):
        r = run(twin_db, *args, ok=False)
        assert r.exit_code == 2, (args, r.output)
        assert "ambiguous" in r.output and "0.31" in r.output and "v0.31.0" in r.output, r.output
        assert "Traceback" not in r.output
    # a label written exactly as indexed is never ambiguous
    assert js(twin_db, "which", "alpha", "--at", "0.31")["version"] == "0.31"
    assert js(twin_db, "which", "alpha", "--at", "v0.31.0")["version"] == "v0.31.0"


def test_the_resolver_itself():
    from indexer.answers.versions import AnswerError, resolve

    labels = ["v0.30.0", "v0.31.0", "v0.31.1", "main"]
    assert resolve("v0.31", labels) == "v0.31.0" and resolve("0.31.1", labels) == "v0.31.1"
    assert resolve("main", labels) == "main"
    with pytest.raises(AnswerError) as e:
        resolve("v0.32", labels)
    assert e.value.message.endswith("nearest indexed: v0.30.0, v0.31.0, v0.31.1")
    with pytest.raises(AnswerError) as e:
        resolve("0.31.0", ["v0.31.0", "0.31"] + labels[2:])
    assert "ambiguous" in e.value.message and "v0.31.0, 0.31" in e.value.message


# -- the browser and MCP ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client(db):
    from fixtures.serve import serve

    c = serve(db)
    yield c
    c.close()


def test_the_browser_pages_resolve_short_labels(client):
    page = client.html("/-/parser/tool/alpha?v=v0.31")
    assert 'data-version="v0.31.0"' in page
    assert "v0.31.0" in client.html("/-/version/0.31")
    r = client.get("/-/find?q=v0.31")
    assert r.status_code in (301, 302) and r.headers["location"].endswith("/-/version/v0.31.0")
    page = client.html(f"/-/diff?a=v0.31&b=v0.32&path={ALPHA}")
    assert f"Diff {ALPHA}: v0.31.0 &rarr; v0.32.0" in page
    assert "v0.31.0" in client.html(f"/-/source/v0.31/{ALPHA}")
    r = client.get("/-/parser/tool/alpha?v=v0.99")
    assert r.status_code == 404 and "v0.99 is not indexed" in r.text


def test_canned_questions_resolve_short_labels(client):
    from fixtures.serve import canned

    got = canned(client, "which", name="alpha", version="v0.31")
    assert got and {r["version"] for r in got} == {"v0.31.0"}
    changed = canned(client, "names_changed", a="0.30", b="v0.31")
    assert all(r["change"] is None or not r["change"].startswith("not indexed") for r in changed), changed
    assert canned(client, "parsers_by_impl", version="0.31", impl="")


def test_mcp_arguments_resolve_short_labels(db):
    from indexer.mcp.tools import stdio_server

    server = stdio_server(str(db))
    got = asyncio.run(server.call_tool("which", {"name": "alpha", "version": "v0.31"}))
    assert not got.is_error and got.structured_content["version"] == "v0.31.0"
    got = asyncio.run(server.call_tool("diff", {"a": "0.30", "b": "v0.31"}))
    assert not got.is_error and (got.structured_content["a"], got.structured_content["b"]) == (
        "v0.30.0",
        "v0.31.0",
    )
