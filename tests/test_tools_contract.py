"""Feeding other tools (issue 16): one query layer, a JSON contract with shipped schemas, and MCP tools
served over stdio (`tpindex mcp`) and streamable HTTP (`tpindex serve`, /-/mcp), talked to with the MCP
SDK's own client as an agent would. On the unified-era fixture of test_resolve."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import jsonschema
import pytest
from fixtures.helpers import rows, tpindex

TPINDEX = str(Path(sys.executable).parent / "tpindex")


@pytest.fixture(scope="module")
def db(unified_db):  # noqa: F811
    return unified_db


def cli_json(*args) -> object:
    return json.loads(tpindex(*args, ok=False).output)


def validate(name: str, data) -> None:
    from indexer.schemas import load

    jsonschema.Draft202012Validator(load(name)).validate(data)


# -- the query layer -----------------------------------------------------------------------------------------


def test_the_python_api_answers_like_the_cli(db):
    from indexer.api import Index

    ix = Index(db)
    assert ix.which("beta", at="v0.25.0").to_json() == cli_json(
        "which", "beta", "--at", "v0.25.0", "--format", "json", "--db", db
    )
    assert ix.which("beta", at="v0.25.0").parsers[0].real_file == "vllm/parser/beta.py"
    assert ix.diff("v0.24.0", "v0.25.0").to_json() == cli_json(
        "diff", "v0.24.0", "v0.25.0", "--format", "json", "--db", db
    )
    assert [v.version for v in ix.versions()] == ["v0.24.0", "v0.25.0", "v0.27.0"]


# -- the JSON contract ------------------------------------------------------------------------------------------


def test_schema_files_are_the_generated_contract():
    from indexer.schemas import generate, load, names

    generated = generate()
    assert sorted(generated) == names()
    for name, schema in generated.items():
        assert load(name) == schema, f"{name}.json is stale: python -m indexer.schemas rewrites it"
        assert schema["x-tpindex-contract"] >= 1 and schema["$id"].endswith(
            f":{name}:v{schema['x-tpindex-contract']}"
        )
        jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize(
    "name,args",
    [
        ("which", ["which", "beta", "--at", "v0.25.0"]),
        ("which", ["which", "alpha"]),
        ("which-all", ["which", "beta", "--all"]),
        ("diff", ["diff", "v0.24.0", "v0.27.0"]),
        ("export", ["export", "--at", "v0.25.0"]),
        ("versions", ["versions"]),
        ("check", ["check"]),
        ("card", ["card", "beta", "--at", "v0.25.0"]),
        ("card", ["card", "--all", "--at", "v0.27.0"]),
        ("grep", ["grep", "class \\w+Parser"]),
        ("show", ["show", "vllm/parser/beta.py:1-2", "--at", "v0.25.0"]),
        ("show-name", ["show", "beta", "--at", "v0.25.0"]),
        ("show-name", ["show", "beta", "--at", "v0.25.0", "--method", "parse"]),
        ("diff-code", ["diff", "v0.24.0", "v0.25.0", "--code", "vllm/tool_parsers/beta_tool_parser.py"]),
        ("diff-code-name", ["diff", "v0.24.0", "v0.25.0", "--code", "beta"]),
        ("diff-contract", ["diff", "v0.24.0", "v0.27.0", "--contract"]),
    ],
)
def test_every_json_output_follows_its_schema(db, name, args):
    validate(name, cli_json(*args, "--format", "json", "--db", db))


def test_schema_command(db):
    out = tpindex("schema", "diff").output
    assert json.loads(out)["title"].startswith("tpindex diff")
    assert "contract v1" in tpindex("schema").output
    r = tpindex("schema", "dif", ok=False)
    assert r.exit_code == 2 and "did you mean diff" in r.output


# -- MCP, as a client talks to it ----------------------------------------------------------------------------------

CALLS = {
    "which": ({"name": "beta", "version": "v0.25.0"}, ["which", "beta", "--at", "v0.25.0"]),
    "which_history": ({"name": "beta"}, ["which", "beta", "--all"]),
    "diff": ({"a": "v0.24.0", "b": "v0.25.0"}, ["diff", "v0.24.0", "v0.25.0"]),
    "export": ({"version": "v0.25.0"}, ["export", "--at", "v0.25.0"]),
    "versions": ({}, ["versions"]),
    "card": ({"name": "beta", "version": "v0.25.0"}, ["card", "beta", "--at", "v0.25.0"]),
    "grep": ({"pattern": "class \\w+Parser"}, ["grep", "class \\w+Parser"]),
    "show": (
        {"path": "vllm/parser/beta.py", "version": "v0.25.0"},
        ["show", "vllm/parser/beta.py", "--at", "v0.25.0"],
    ),
    "show_parser": (
        {"name": "beta", "version": "v0.25.0", "method": "parse"},
        ["show", "beta", "--at", "v0.25.0", "--method", "parse"],
    ),
    "code_diff": (
        {"a": "v0.24.0", "b": "v0.25.0", "target": "beta"},
        ["diff", "v0.24.0", "v0.25.0", "--code", "beta"],
    ),
    "log": ({"name": "beta", "a": "v0.24.0", "b": "v0.27.0"}, ["log", "beta", "v0.24.0", "v0.27.0"]),
    "contract_diff": ({"a": "v0.24.0", "b": "v0.27.0"}, ["diff", "v0.24.0", "v0.27.0", "--contract"]),
}
PAGED = ("diff", "export")


def unpaged(answer: dict) -> dict:
    """A paged tool's answer without the page's fields (mcp/tools.py _page)."""
    return {k: v for k, v in answer.items() if k not in ("offset", "next_offset", "truncated", "totals")}


PLUGIN = (
    "from vllm.tool_parsers import ToolParser\n\n\nclass Mine(ToolParser):\n    def extract_tool_calls(self, text):\n"
    "        return None\n"
)


async def session_checks(session, db) -> dict:
    from mcp.types import Tool

    init = await session.initialize()
    tools: dict[str, Tool] = {t.name: t for t in (await session.list_tools()).tools}
    assert init.instructions  # read by the served test from session.instructions
    for name, (arguments, cli) in CALLS.items():
        tool = tools[name]
        assert tool.description and len(tool.description) > 60
        assert tool.annotations.read_only_hint is True
        result = await session.call_tool(name, arguments)
        assert not result.is_error, result.content
        got = result.structured_content
        jsonschema.Draft202012Validator(tool.output_schema).validate(got)
        want = cli_json(*cli, "--format", "json", "--db", db)
        if name == "versions":
            got = got["versions"]
        elif name == "grep":
            got = got["matches"]
        elif name in PAGED:  # one page holds the whole of these small answers
            assert got["truncated"] is False and got["next_offset"] is None, name
            got = unpaged(got)
        assert got == want, name
    (v25,) = [r[0] for r in rows(db, "select commit_id from versions where label = 'v0.25.0'")]
    held = await session.call_tool("contains", {"target": v25[:8]})
    jsonschema.Draft202012Validator(tools["contains"].output_schema).validate(held.structured_content)
    assert held.structured_content == cli_json("contains", v25[:8], "--format", "json", "--db", db)
    assert held.structured_content["versions"] == ["v0.25.0", "v0.27.0"]
    bad = await session.call_tool("contains", {"target": "#"})
    assert bad.is_error and "neither a commit id nor a pull request" in bad.content[0].text
    doc = "Start the server with `--tool-call-parser beta` or `--tool-call-parser betta`.\n"
    checked = await session.call_tool("check_doc", {"document": doc, "versions": ["v0.27.0"]})
    assert not checked.is_error
    jsonschema.Draft202012Validator(tools["check_doc"].output_schema).validate(checked.structured_content)
    from indexer.api import Index

    assert checked.structured_content == Index(db).check_doc(doc, ["v0.27.0"]).to_json()
    assert [r["status"] for r in checked.structured_content["versions"][0]["results"]] == ["ok", "wrong"]
    contract = await session.call_tool("contract", {"version": "v0.27.0"})
    assert not contract.is_error, contract.content
    jsonschema.Draft202012Validator(tools["contract"].output_schema).validate(contract.structured_content)
    assert contract.structured_content["truncated"] is False
    assert unpaged(contract.structured_content) == Index(db).contract("v0.27.0").to_json()
    plugin = await session.call_tool("check_plugin", {"source": PLUGIN})
    assert not plugin.is_error, plugin.content
    jsonschema.Draft202012Validator(tools["check_plugin"].output_schema).validate(plugin.structured_content)
    assert plugin.structured_content == Index(db).check_plugin(PLUGIN).to_json()
    tree = await session.call_tool("where", {"query": "BetaParser"})
    assert tree.is_error and "--tree" in tree.content[0].text
    bad = await session.call_tool("which", {"name": "alpah"})
    assert (
        bad.is_error and "no parser named 'alpah'" in bad.content[0].text and "alpha" in bad.content[0].text
    )
    bad = await session.call_tool("diff", {"a": "v0.24.0"})
    assert bad.is_error and "b" in bad.content[0].text
    bad = await session.call_tool("which", {"name": "beta", "version": "v9.9.9"})
    assert bad.is_error and "v9.9.9 is not indexed" in bad.content[0].text
    await strict_and_bounded(session, tools)
    return tools


async def strict_and_bounded(session, tools) -> None:
    """An argument a tool does not take is an error naming the ones it takes (issue 27); a long answer is
    bounded and says so, with the total."""
    for name in CALLS:
        assert tools[name].input_schema.get("additionalProperties") is False, name
    bad = await session.call_tool("which", {"name": "beta", "at": "v0.25.0"})  # the parameter is `version`
    assert (
        bad.is_error and "takes no argument 'at'" in bad.content[0].text and "version" in bad.content[0].text
    )
    whole = await session.call_tool("show", {"path": "vllm/parser/beta.py", "version": "v0.25.0"})
    assert whole.structured_content["truncated"] is False
    total = whole.structured_content["line_count"]
    assert total > 2
    cut = await session.call_tool(
        "show", {"path": "vllm/parser/beta.py", "version": "v0.25.0", "max_lines": 2}
    )
    got = cut.structured_content
    jsonschema.Draft202012Validator(tools["show"].output_schema).validate(got)
    assert (
        got["truncated"] is True and got["line_count"] == total and got["end"] == 2 and len(got["lines"]) == 2
    )


def test_mcp_over_stdio(db, tmp_path):
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def main():
        params = StdioServerParameters(command=TPINDEX, args=["mcp", "--db", str(db)], env=dict(os.environ))
        with open(tmp_path / "server.err", "w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                tools = await session_checks(session, db)
                assert "execute_sql" not in tools  # SQL is the served endpoint's (datasette-mcp), not stdio's

    anyio.run(main)


@pytest.fixture
def served(db):
    from fixtures.loopback import serving

    with serving(db) as (url, _):
        yield url + "/-/mcp"


def test_mcp_over_streamable_http_from_serve(db, served):
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def main():
        async with (
            streamable_http_client(served) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            tools = await session_checks(session, db)
            assert {"execute_sql", "get_database_schema", "list_databases"} <= set(tools)
            # the served instructions send agents to the curated tools first, SQL for the rest
            text = session.instructions
            assert text.index("`which`") < text.index("`card`") < text.index("execute_sql")
            ok = await session.call_tool(
                "execute_sql", {"database": "tpindex", "sql": "select count(*) as n from versions"}
            )
            assert not ok.is_error and ok.structured_content["rows"] == [{"n": 3}]
            for sql in (
                "delete from versions",
                "update versions set label = 'x'",
                "drop table versions",
                "select 1; delete from versions",
            ):
                refused = await session.call_tool("execute_sql", {"database": "tpindex", "sql": sql})
                assert refused.is_error, sql

    anyio.run(main)
    from fixtures.helpers import rows

    assert rows(db, "select count(*) from versions") == [(3,)]


# -- the tools as a table, large answers in pages (issues 24, 27) ---------------------------------------------


def _in_process(db):
    """The stdio server's tools, called in this process."""
    from indexer.mcp.tools import stdio_server

    return stdio_server(str(db))


def test_every_tool_is_one_row_of_the_table(db):
    """register() adds one tool per row of TOOLS: its name, its description, its arguments (the input schema,
    which takes nothing else) and the schema of its answer."""
    from indexer.mcp.tools import PAGE_NOTE, TOOLS
    from indexer.schemas import load

    mcp = _in_process(db)
    listed = {t.name: t for t in anyio.run(mcp.list_tools)}
    assert list(listed) == [spec.name for spec in TOOLS]
    for spec in TOOLS:
        tool = listed[spec.name]
        assert tool.description == spec.description + (PAGE_NOTE if spec.paged else "")
        want = [a.name for a in spec.args] + (["offset", "max_chars"] if spec.paged else [])
        assert list(tool.input_schema["properties"]) == want, spec.name
        assert tool.input_schema["additionalProperties"] is False
        assert tool.input_schema.get("required", []) == [a.name for a in spec.args if a.required]
        schema = load(spec.schema)
        if schema.get("type") == "object" and spec.name != "grep":
            assert set(schema["properties"]) <= set(tool.output_schema["properties"]), spec.name


def _pages(mcp, tool: str, arguments: dict, max_chars: int) -> list[dict]:
    out, offset = [], 0
    while offset is not None:
        got = anyio.run(mcp.call_tool, tool, {**arguments, "offset": offset, "max_chars": max_chars})
        assert not got.is_error, got.content
        out.append(got.structured_content)
        offset = got.structured_content["next_offset"]
        assert len(out) < 1000
    return out


@pytest.mark.parametrize(
    "tool,arguments,lists",
    [
        ("diff", {"a": "v0.24.0", "b": "v0.27.0"}, ("changes",)),
        ("export", {"version": "v0.27.0"}, ("parsers",)),
        ("contract", {"version": "v0.27.0"}, ("classes", "helpers", "types", "calls", "notes")),
    ],
)
def test_large_answers_come_in_pages_that_say_what_is_left(db, tool, arguments, lists):
    """A paged answer holds at most max_chars characters of items (at least one), says it is truncated, how
    many items each list has in the whole answer and where the next page starts; the pages together are the
    whole answer, never silently cut."""
    from indexer.api import Index
    from indexer.mcp.tools import TOOLS

    mcp = _in_process(db)
    (spec,) = [s for s in TOOLS if s.name == tool]
    whole = spec.ask(Index(db), type("Args", (), arguments)).to_json()
    n = sum(len(whole[name]) for name in lists)
    assert n > 2, "the fixture's answer is too small to page"
    one = anyio.run(mcp.call_tool, tool, arguments)
    assert one.structured_content["truncated"] is False and one.structured_content["totals"] == {
        name: len(whole[name]) for name in lists
    }
    item = max(len(json.dumps(x, ensure_ascii=False)) for name in lists for x in whole[name])
    budget = item * 2 + 4
    pages = _pages(mcp, tool, arguments, max_chars=budget)
    assert len(pages) > 1
    validator = jsonschema.Draft202012Validator(
        {t.name: t for t in anyio.run(mcp.list_tools)}[tool].output_schema
    )
    for i, page in enumerate(pages):
        validator.validate(page)
        held = [x for name in lists for x in page[name]]
        assert held and (
            len(held) == 1 or sum(len(json.dumps(x, ensure_ascii=False)) + 2 for x in held) <= budget
        )
        assert page["truncated"] is (i < len(pages) - 1)
        assert page["totals"] == {name: len(whole[name]) for name in lists}
    for name in lists:
        assert [x for page in pages for x in page[name]] == whole[name]
    rest = {k: v for k, v in whole.items() if k not in lists}
    assert all({k: page[k] for k in rest} == rest for page in pages)
