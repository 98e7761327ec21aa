"""tpindex serve: canned queries, upstream links, the parser matrix, the home page and read-only serving,
through Datasette's test client on a database built by the real pipeline from a small git history.

The history imitates vLLM's layouts with hand-written files (no vLLM code):

    v0.6.0   the hard-coded era: `--tool-call-parser` choices and a branch in the serving code (alpha: dispatch)
    v0.29.0  a lazy dict in vllm/tool_parsers/__init__.py (alpha, beta: standalone; gamma: unresolved)
    v0.30.0  beta moves onto the parser engine (stub + adapter + vllm/parser/beta.py); delta is picked by a
             name check; gamma is gone
    v0.31.0  alpha's file is renamed (its real file moves); the plant is removed
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import socket
import sqlite3
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, quote, urlencode, urlsplit

import pytest
from fixtures.helpers import line_of, make_repo, remount, rows, tmpfs, tpindex
from fixtures.helpers import rows as rows_
from fixtures.serve import (
    ADAPTERS,
    ALPHA,
    ALPHA_MOVED,
    BETA_HACK_LINE,
    BETA_PARSER,
    BETA_PARSER_LINE,
    BETA_REASONING_STUB,
    BETA_STUB,
    DELTA_PARSER,
    GH,
    HISTORY,
    INIT_30,
    OLD,
    OLD_ALPHA,
    PARSER_MANAGER,
    VERSIONS,
    Client,
    build_fixture,
    canned,
    serve,
)

# Lines the tests expect, computed from the texts above.
ALPHA_CLASS_LINE = line_of(ALPHA, "class AlphaToolParser")
ALPHA_TODO_LINE = line_of(ALPHA, "# TODO")
ALPHA_PLANT_LINE = line_of(ALPHA, "prev_tool_call_arr")
BETA_STUB_LINE = line_of(BETA_STUB, "class BetaToolParser")
ADAPTER_IMPORT_LINE = line_of(BETA_STUB, "import BetaParserToolAdapter")
REASONING_ADAPTER_IMPORT_LINE = line_of(BETA_REASONING_STUB, "import BetaParserReasoningAdapter")
ADAPTER_BINDING_LINE = line_of(ADAPTERS, "= make_adapters(BetaParser)")
DELTA_CHECK_LINE = line_of(PARSER_MANAGER, 'if tool_parser_name == "delta"')
DELTA_CLASS_LINE = line_of(DELTA_PARSER, "class DeltaParser")


# -- the served database -----------------------------------------------------------------------------


def pick(rows_: list[dict], *cols: str) -> list[tuple]:
    return [tuple(r[c] for c in cols) for r in rows_]


CANNED_DIR = Path(__file__).resolve().parent.parent / "queries" / "canned"
REG_INIT = "vllm/tool_parsers/__init__.py"


def test_every_canned_file_is_served_with_its_title_and_parameters(client):
    from indexer.serve.canned import load

    served = client.json("/tpindex.json")["queries"]
    by_name = {q["name"]: q for q in served}
    assert set(by_name) == {p.stem for p in CANNED_DIR.glob("*.sql")}
    listing = client.json("/tpindex.json")
    tables = {t["name"] for t in listing["tables"]} | {
        v["name"] if isinstance(v, dict) else v for v in listing["views"]
    }
    assert set(by_name) & tables == set(), "a canned query named like a table hides the table"
    for c in load(CANNED_DIR):
        assert c.title and c.description, f"{c.name}.sql: the header needs a title and a description"
        sql_params = set(re.findall(r"(?<![:\w]):([A-Za-z_]\w*)", re.sub(r"--[^\n]*", "", c.sql)))
        assert [n for n, _ in c.params] and sql_params == {n for n, _ in c.params}, (
            f"{c.name}.sql: every :param is documented in the header, in form order"
        )
        assert by_name[c.name]["title"] == c.title


def test_which_follows_a_stub_through_its_adapter_to_the_parser_engine(client):
    got = canned(client, "which", name="beta", version="v0.30.0")
    assert {r["version"] for r in got} == {"v0.30.0"} and {r["impl"] for r in got} == {"unified"}
    tool = [r for r in got if r["kind"] == "tool"]
    assert pick(tool, "step", "hop", "class", "file", "line", "real") == [
        (0, "registered", "BetaToolParser", REG_INIT, line_of(INIT_30, '"beta":'), None),
        (1, "class", "BetaToolParser", "vllm/tool_parsers/beta_tool_parser.py", BETA_STUB_LINE, None),
        (
            2,
            "adapter",
            "BetaParserToolAdapter",
            "vllm/parser/engine/registered_adapters.py",
            ADAPTER_BINDING_LINE,
            None,
        ),
        (3, "real", "BetaParser", "vllm/parser/beta.py", BETA_PARSER_LINE, "real"),
    ]
    assert "stub" in tool[0]["note"]
    reasoning = [r for r in got if r["kind"] == "reasoning"]
    assert pick(reasoning, "hop", "class")[-1] == ("real", "BetaParser")


def test_which_answers_the_newest_version_when_none_is_given_and_takes_labels_without_v(client):
    newest = canned(client, "which", name="alpha", version="")
    assert {r["version"] for r in newest} == {"v0.31.0"}
    assert pick(newest, "hop", "file", "real")[-1] == ("class", "vllm/tool_parsers/alpha_parser.py", "real")
    assert canned(client, "which", name="alpha", version="0.30.0")[0]["version"] == "v0.30.0"


def test_which_shows_name_checks_dispatch_and_unresolved_names(client):
    delta = canned(client, "which", name="delta", version="v0.30.0")
    assert pick(delta, "impl", "hop", "class", "file", "line") == [
        ("name-check", "registered", "DeltaToolParser", REG_INIT, line_of(INIT_30, '"delta":')),
        ("name-check", "name-check", "DeltaParser", "vllm/parser/parser_manager.py", DELTA_CHECK_LINE),
        ("name-check", "real", "DeltaParser", "vllm/parser/delta.py", DELTA_CLASS_LINE),
    ]
    old = canned(client, "which", name="alpha", version="v0.6.0")
    assert {r["impl"] for r in old} == {"dispatch"}
    assert old[-1]["file"] == f"{OLD}/alpha_tool_parser.py" and old[-1]["real"] == "real"
    gamma = canned(client, "which", name="gamma", version="v0.29.0")
    assert pick(gamma, "impl", "hop") == [("unresolved", "registered")]
    assert gamma[0]["note"].startswith("unresolved: ") and "gamma_tool_parser" in gamma[0]["note"]
    assert canned(client, "which", name="gamma", version="v0.30.0") == []


def test_history_collapses_equal_versions_into_ranges(client):
    got = canned(client, "history", name="alpha")
    assert pick(
        got, "kind", "first_version", "last_version", "versions", "impl", "real_file", "real_line"
    ) == [
        (
            "tool",
            "v0.6.0",
            "v0.6.0",
            1,
            "dispatch",
            f"{OLD}/alpha_tool_parser.py",
            line_of(OLD_ALPHA, "class Alpha"),
        ),
        (
            "tool",
            "v0.29.0",
            "v0.30.0",
            2,
            "standalone",
            "vllm/tool_parsers/alpha_tool_parser.py",
            ALPHA_CLASS_LINE,
        ),
        (
            "tool",
            "v0.31.0",
            "v0.31.0",
            1,
            "standalone",
            "vllm/tool_parsers/alpha_parser.py",
            line_of(ALPHA_MOVED, "class Alpha"),
        ),
    ]


def test_lifecycle_of_a_name(client):
    cols = (
        "kind",
        "first_version",
        "last_version",
        "versions_present",
        "became_unified",
        "real_file_changed_in",
        "removed_in",
    )
    assert pick(canned(client, "name_lifecycle", name="beta"), *cols) == [
        ("reasoning", "v0.29.0", "v0.31.0", 3, "v0.30.0", "v0.30.0", None),
        ("tool", "v0.29.0", "v0.31.0", 3, "v0.30.0", "v0.30.0", None),
    ]
    assert pick(canned(client, "name_lifecycle", name="gamma"), *cols) == [
        ("tool", "v0.29.0", "v0.29.0", 1, None, None, "v0.30.0")
    ]


def test_names_added_removed_and_moved_between_two_versions(client):
    got = canned(client, "names_changed", a="v0.29.0", b="v0.30.0")
    assert pick(got, "change", "kind", "name", "impl_a", "impl_b", "real_file_a", "real_file_b") == [
        ("added", "tool", "delta", None, "name-check", None, "vllm/parser/delta.py"),
        (
            "moved",
            "reasoning",
            "beta",
            "standalone",
            "unified",
            "vllm/reasoning/beta_reasoning_parser.py",
            "vllm/parser/beta.py",
        ),
        (
            "moved",
            "tool",
            "beta",
            "standalone",
            "unified",
            "vllm/tool_parsers/beta_tool_parser.py",
            "vllm/parser/beta.py",
        ),
        ("removed", "tool", "gamma", "unresolved", None, None, None),
    ]
    assert {(r["a"], r["b"]) for r in got} == {("v0.29.0", "v0.30.0")}
    assert pick(canned(client, "names_changed", a="0.30.0", b="0.31.0"), "change", "name", "real_file_b") == [
        ("moved", "alpha", "vllm/tool_parsers/alpha_parser.py")
    ]
    assert canned(client, "names_changed", a="v0.30.0", b="v0.30.0") == []
    assert pick(canned(client, "names_changed", a="v0.30.0", b="v9.9.9"), "change", "name") == [
        ("not indexed: v9.9.9", None)
    ]


def test_parsers_of_a_version_by_implementation(client):
    got = canned(client, "parsers_by_impl", version="v0.30.0", impl="")
    assert pick(got, "impl", "kind", "name", "real_file") == [
        ("standalone", "tool", "alpha", "vllm/tool_parsers/alpha_tool_parser.py"),
        ("unified", "reasoning", "beta", "vllm/parser/beta.py"),
        ("unified", "tool", "beta", "vllm/parser/beta.py"),
        ("name-check", "tool", "delta", "vllm/parser/delta.py"),
    ]
    assert pick(canned(client, "parsers_by_impl", version="v0.30.0", impl="unified"), "kind", "adapter") == [
        ("reasoning", "BetaParserReasoningAdapter"),
        ("tool", "BetaParserToolAdapter"),
    ]
    assert pick(canned(client, "parsers_by_impl", version="v0.29.0", impl="unresolved"), "name") == [
        ("gamma",)
    ]


def test_reasoning_parsers_of_a_version_with_their_tool_parsers(client):
    got = canned(client, "reasoning_parsers", version="v0.30.0")
    assert pick(got, "name", "impl", "real_class", "real_file", "real_line", "tool_parsers") == [
        ("beta", "unified", "BetaParser", "vllm/parser/beta.py", BETA_PARSER_LINE, "beta")
    ]
    assert pick(canned(client, "reasoning_parsers", version="v0.6.0"), "name") == []


def test_files_importing_an_adapter(client):
    got = canned(client, "adapter_importers", version="v0.30.0")
    assert pick(got, "file", "line", "adapter", "imported_from", "role") == [
        (
            "vllm/reasoning/beta_reasoning_parser.py",
            REASONING_ADAPTER_IMPORT_LINE,
            "BetaParserReasoningAdapter",
            "vllm.parser.engine.registered_adapters",
            "reasoning",
        ),
        (
            "vllm/tool_parsers/beta_tool_parser.py",
            ADAPTER_IMPORT_LINE,
            "BetaParserToolAdapter",
            "vllm.parser.engine.registered_adapters",
            "tool",
        ),
    ]
    assert canned(client, "adapter_importers", version="v0.29.0") == []


def test_class_tree_is_served(client):
    got = canned(client, "class_tree", version="v0.30.0", **{"class": "AlphaToolParser"})
    assert pick(got, "relation", "class", "file") == [
        ("ancestor", "ToolParser", "vllm/tool_parsers/abstract_tool_parser.py"),
        ("self", "AlphaToolParser", "vllm/tool_parsers/alpha_tool_parser.py"),
    ]


def test_classes_setting_an_attribute_and_defining_a_method(client):
    got = canned(client, "class_attribute", attribute="supports_required_and_named", version="v0.30.0")
    assert pick(got, "class", "value", "file", "line") == [
        (
            "AlphaToolParser",
            "False",
            "vllm/tool_parsers/alpha_tool_parser.py",
            line_of(ALPHA, "supports_required_and_named"),
        )
    ]
    got = canned(client, "method_overrides", method="extract_tool_calls_streaming", version="v0.30.0")
    assert pick(got, "class", "file") == [
        ("ToolParser", "vllm/tool_parsers/abstract_tool_parser.py"),
        ("AlphaToolParser", "vllm/tool_parsers/alpha_tool_parser.py"),
    ]


def test_markers_of_a_version_by_kind_and_words(client):
    everything = canned(client, "marker_sites", version="v0.30.0", kind="", q="")
    assert pick(everything, "kind", "file", "line") == [
        ("HACK", "vllm/parser/beta.py", BETA_HACK_LINE),
        ("TODO", "vllm/tool_parsers/alpha_tool_parser.py", ALPHA_TODO_LINE),
    ]
    assert pick(canned(client, "marker_sites", version="v0.30.0", kind="todo", q=""), "kind") == [("TODO",)]
    assert pick(canned(client, "marker_sites", version="v0.30.0", kind="", q="opening tag"), "kind") == [
        ("HACK",)
    ]
    assert pick(canned(client, "marker_sites", version="v0.30.0", kind="", q="stream arg"), "kind") == [
        ("TODO",)
    ]
    assert canned(client, "marker_sites", version="v0.29.0", kind="HACK", q="") == []


def test_plants_by_version(client):
    everything = canned(client, "plants_by_version", version="")
    assert pick(everything, "version", "plant", "file", "line", "text") == [
        (
            v,
            "prev_tool_call_arr_empty_arguments",
            "vllm/tool_parsers/alpha_tool_parser.py",
            ALPHA_PLANT_LINE,
            'self.prev_tool_call_arr = [{"arguments": {}}]',
        )
        for v in ("v0.30.0", "v0.29.0")
    ]
    assert canned(client, "plants_by_version", version="v0.31.0") == []
    assert pick(canned(client, "plants_by_version", version="0.29.0"), "version") == [("v0.29.0",)]


def test_the_markers_view_is_searchable_through_its_full_text_index(client):
    got = client.json("/tpindex/markers_v.json?_search=opening&_shape=array")
    assert {(r["version"], r["kind"]) for r in got} == {("v0.30.0", "HACK"), ("v0.31.0", "HACK")}
    assert client.json("/tpindex/markers.json?_search=stream&_shape=array&_col=kind")[0]["kind"] == "TODO"
    assert "search" in client.html("/tpindex/markers_v").lower()


HOSTILE = [
    "x' or '1'='1",
    "'; drop table versions; --",
    '") union select sqlite_version() --',
    "%",
    "*",
    "NEAR(",
    'a" OR "b',
    "v0.30.0'--",
    "1; delete from parser_map",
    "\\",
    ":name",
    "\x00",
]


@pytest.mark.parametrize("value", HOSTILE)
def test_canned_queries_bind_their_parameters(client, fixture_db, value):
    from indexer.serve.canned import load

    before = rows(fixture_db, "select count(*) from parser_map")
    for c in load(CANNED_DIR):
        params = {n: value for n, _ in c.params}
        r = client.get(f"/tpindex/{c.name}.json?" + urlencode({**params, "_shape": "array"}))
        assert r.status_code == 200, (c.name, value, r.text)
        got = r.json()
        if c.name == "names_changed":  # echoes the unknown versions back, as data
            assert {x["change"] for x in got} == {f"not indexed: {value.strip()}"}, (value, got)
        else:
            assert got == [], (c.name, value, got)
        page = client.html(f"/tpindex/{c.name}?" + urlencode(params))
        assert "message-error" not in page and "Traceback" not in page
    assert rows(fixture_db, "select count(*) from parser_map") == before


# -- upstream links ----------------------------------------------------------------------------------

LINK = re.compile(
    r'<a class="tpindex-src" href="([^"]+)"[^>]*>((?:[^<]|<wbr>)*)</a>'
)  # a path may wrap at <wbr>
UP = re.compile(
    r'<a class="tpindex-src" href="([^"]+)"[^>]*>((?:[^<]|<wbr>)*)</a>&nbsp;<a class="tpindex-up" href="([^"]+)"'
)
DIFF = re.compile(r'<a class="tpindex-diff" href="([^"]+)"')


def links(page: str) -> list[tuple[str, str]]:
    """(file, where it links): the stored code of Python files under vllm/, upstream for the others."""
    return [(text.replace("<wbr>", ""), href.replace("&amp;", "&")) for href, text in LINK.findall(page)]


def upstream_links(page: str) -> list[tuple[str, str]]:
    """(file, its upstream link beside the source link)."""
    return [(text.replace("<wbr>", ""), up.replace("&amp;", "&")) for _, text, up in UP.findall(page)]


def src(version: str, path: str, line: int | None = None) -> str:
    return f"/-/source/{version}/{path}" + (f"#L{line}" if line else "")


def test_files_link_to_their_line_in_the_stored_code_and_upstream_at_the_rows_version(client):
    page = client.html("/tpindex/which?name=beta&version=v0.30.0")
    assert ("vllm/parser/beta.py", src("v0.30.0", "vllm/parser/beta.py", BETA_PARSER_LINE)) in links(page)
    assert ("vllm/parser/beta.py", f"{GH}/v0.30.0/vllm/parser/beta.py#L{BETA_PARSER_LINE}") in upstream_links(
        page
    )
    assert (
        "vllm/tool_parsers/beta_tool_parser.py",
        f"{GH}/v0.30.0/vllm/tool_parsers/beta_tool_parser.py#L{BETA_STUB_LINE}",
    ) in upstream_links(page)
    # a comparison links each side at its own version, and the second side to the diff of the two
    page = client.html("/tpindex/names_changed?a=v0.30.0&b=v0.31.0")
    moved_line = line_of(ALPHA_MOVED, "class Alpha")
    assert links(page) == [
        (
            "vllm/tool_parsers/alpha_tool_parser.py",
            src("v0.30.0", "vllm/tool_parsers/alpha_tool_parser.py", ALPHA_CLASS_LINE),
        ),
        (
            "vllm/tool_parsers/alpha_parser.py",
            src("v0.31.0", "vllm/tool_parsers/alpha_parser.py", moved_line),
        ),
    ]
    assert upstream_links(page)[1] == (
        "vllm/tool_parsers/alpha_parser.py",
        f"{GH}/v0.31.0/vllm/tool_parsers/alpha_parser.py#L{moved_line}",
    )
    [diff] = DIFF.findall(page)
    q = parse_qs(urlsplit(diff.replace("&amp;", "&")).query)
    assert urlsplit(diff).path == "/-/diff"
    assert q == {
        "a": ["v0.30.0"],
        "b": ["v0.31.0"],
        "path_a": ["vllm/tool_parsers/alpha_tool_parser.py"],
        "path_b": ["vllm/tool_parsers/alpha_parser.py"],
        "name": ["alpha"],
        "kind": ["tool"],
    }
    # a range links at its last version
    page = client.html("/tpindex/history?name=delta")
    assert ("vllm/parser/delta.py", src("v0.31.0", "vllm/parser/delta.py", DELTA_CLASS_LINE)) in links(page)


def test_tables_and_views_link_their_file_columns_too(client):
    page = client.html("/tpindex/parser_map_v?version=v0.30.0&name=delta")
    got = dict((href.split("#")[0].rsplit("/", 1)[-1], href) for _, href in links(page))
    assert got["delta.py"] == src("v0.30.0", "vllm/parser/delta.py", DELTA_CLASS_LINE)
    delta_line = line_of(INIT_30, '"delta":')
    assert got["__init__.py"] == src("v0.30.0", REG_INIT, delta_line)
    # a file without a line links to the file; rows without a version do not link
    page = client.html("/tpindex/version_files?version=v0.29.0&file=vllm/reasoning/__init__.py")
    assert links(page) == [("vllm/reasoning/__init__.py", src("v0.29.0", "vllm/reasoning/__init__.py"))]
    assert upstream_links(page) == [
        ("vllm/reasoning/__init__.py", f"{GH}/v0.29.0/vllm/reasoning/__init__.py")
    ]
    assert links(client.html("/tpindex/units")) == []


def test_upstream_comes_from_the_build_and_serve_time_wins(tmp_path):
    db = build_fixture(tmp_path, upstream="https://git.example.org/mirror/vllm.git/")
    c = serve(db)
    try:
        page = c.html("/tpindex/which?name=delta&version=v0.31.0")
        assert (
            f"https://git.example.org/mirror/vllm/blob/v0.31.0/vllm/parser/delta.py#L{DELTA_CLASS_LINE}"
            in page
        )
    finally:
        c.close()
    c = serve(db, upstream="https://code.example.com/{ref}/src/{path}#L{line}")
    try:
        page = c.html("/tpindex/which?name=delta&version=v0.31.0")
        assert f"https://code.example.com/v0.31.0/src/vllm/parser/delta.py#L{DELTA_CLASS_LINE}" in page
        assert "git.example.org" not in page
    finally:
        c.close()


def test_link_rules():
    from indexer.core.links import link_columns, ref_for, source_url
    from indexer.core.paths import is_linkable_file

    keys = [
        "version",
        "file",
        "line",
        "reg_file",
        "reg_line",
        "real_file_a",
        "real_line_a",
        "a",
        "parent_file",
    ]
    assert link_columns("file", keys) == ("version", "line")
    assert link_columns("reg_file", keys) == ("version", "reg_line")
    assert link_columns("real_file_a", keys) == ("a", "real_line_a")
    assert link_columns("parent_file", keys) == ("version", None)
    assert link_columns("real_file_b", keys) is None  # no b column
    assert link_columns("name", keys) is None
    assert link_columns("real_file", ["last_version", "real_file", "real_line"]) == (
        "last_version",
        "real_line",
    )
    assert link_columns("file", ["file", "line"]) is None
    assert (
        is_linkable_file("vllm/x.py") and not is_linkable_file("two words.py") and not is_linkable_file(None)
    )
    assert source_url("https://h/o/r", "v1.0.0", "a b/c.py", 3) == "https://h/o/r/blob/v1.0.0/a%20b/c.py#L3"
    assert source_url("https://h/{ref}/{path}#L{line}", "v1", "c.py") == "https://h/v1/c.py"
    assert ref_for("v0.30.0", "pypi", "sha256...") == "v0.30.0"
    assert ref_for("main", "git", "abc123") == "abc123"


# -- the parser matrix -------------------------------------------------------------------------------


class MatrixPage(HTMLParser):
    """Versions (column headers), and for each row its kind, name and cells (attributes and link)."""

    def __init__(self):
        super().__init__()
        self.versions: list[str] = []
        self.rows: list[dict] = []
        self.legend: list[str] = []
        self._in_td = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "th" and "v" in classes:
            self.versions.append(a["title"])
        elif tag == "tr" and "data-kind" in a:
            self.rows.append({"kind": a["data-kind"], "name": a["data-name"], "cells": []})
        elif tag == "td" and "c" in classes and self.rows:
            self.rows[-1]["cells"].append({**a, "classes": classes})
        elif tag == "a" and self.rows and self.rows[-1]["cells"] and "href" not in self.rows[-1]["cells"][-1]:
            self.rows[-1]["cells"][-1]["href"] = a.get("href")
        elif tag == "span" and "sw" in classes:
            self.legend.extend(c[2:] for c in classes if c.startswith("i-"))


def matrix(client: Client, query: str = "") -> tuple[MatrixPage, str]:
    page = client.html("/-/parser-matrix" + query)
    m = MatrixPage()
    m.feed(page)
    return m, page


EXPECTED_MATRIX = {
    ("tool", "alpha"): ["dispatch", "standalone", "standalone", "standalone"],
    ("tool", "beta"): [None, "standalone", "unified", "unified"],
    ("tool", "delta"): [None, None, "name-check", "name-check"],
    ("tool", "gamma"): [None, "unresolved", None, None],
    ("reasoning", "beta"): [None, "standalone", "unified", "unified"],
}


def test_matrix_rows_are_names_columns_are_versions_in_version_order(client):
    m, page = matrix(client)
    assert m.versions == VERSIONS  # v0.6.0 first: version order, not text order
    assert [(r["kind"], r["name"]) for r in m.rows] == list(EXPECTED_MATRIX)
    for r in m.rows:
        assert [c.get("data-impl") for c in r["cells"]] == EXPECTED_MATRIX[(r["kind"], r["name"])], r["name"]
        assert [c["data-version"] for c in r["cells"]] == VERSIONS


def test_matrix_cells_are_coloured_by_impl_with_a_legend_and_link_to_which_or_to_the_diff(client):
    from indexer.serve.matrix import IMPLS

    m, page = matrix(client)
    colours = dict(re.findall(r"\.i-([\w-]+) \{ background: (#[0-9a-fA-F]{6}); \}", page))
    assert set(colours) == set(IMPLS) and len(set(colours.values())) == len(IMPLS)
    assert m.legend == list(IMPLS)
    diffs = []
    for r in m.rows:
        previous = None
        for c in r["cells"]:
            if c.get("data-impl"):
                assert f"i-{c['data-impl']}" in c["classes"]
                q = parse_qs(urlsplit(c["href"]).query)
                if (
                    "moved" in c["classes"] or "changed" in c["classes"]
                ):  # the code since the previous version
                    assert urlsplit(c["href"]).path == "/-/diff", c
                    assert q["a"] == [previous] and q["b"] == [c["data-version"]]
                    assert q["name"] == [r["name"]] and q["kind"] == [r["kind"]]
                    diffs.append((r["kind"], r["name"], c["data-version"]))
                else:
                    assert urlsplit(c["href"]).path == "/tpindex/which"
                    assert q == {"name": [r["name"]], "version": [c["data-version"]]}
                previous = c["data-version"]
            else:
                assert "empty" in c["classes"] and "href" not in c and "title" not in c
    # beta moves onto the engine at v0.30.0; alpha's file is renamed at v0.31.0 (and its code changes)
    assert ("tool", "beta", "v0.30.0") in diffs and ("tool", "alpha", "v0.31.0") in diffs
    assert ("tool", "delta", "v0.31.0") not in diffs  # same code
    beta = next(r for r in m.rows if r["name"] == "beta" and r["kind"] == "tool")
    cell = beta["cells"][VERSIONS.index("v0.30.0")]
    assert (
        f"vllm/parser/beta.py:{BETA_PARSER_LINE}" in cell["title"]
        and "BetaParserToolAdapter" in cell["title"]
    )
    assert "moved" in cell["classes"] and "moved" not in beta["cells"][VERSIONS.index("v0.31.0")]["classes"]
    gamma = next(r for r in m.rows if r["name"] == "gamma")
    assert "gamma_tool_parser" in gamma["cells"][1]["title"]


def test_matrix_filters_by_kind_and_name_prefix(client):
    m, _ = matrix(client, "?kind=reasoning")
    assert [(r["kind"], r["name"]) for r in m.rows] == [("reasoning", "beta")]
    m, _ = matrix(client, "?prefix=al")
    assert [(r["kind"], r["name"]) for r in m.rows] == [("tool", "alpha")]
    m, _ = matrix(client, "?kind=tool&prefix=b")
    assert [(r["kind"], r["name"]) for r in m.rows] == [("tool", "beta")]
    m, page = matrix(client, "?kind=engine")
    assert m.rows == [] and "No registered names match" in page
    m, _ = matrix(client, "?kind=bogus&prefix=" + "x'%22;--")
    assert m.rows == [] and m.versions == []


def test_matrix_stays_compact_for_many_versions(client):
    """70 versions x 60 names: sticky header row and name column, rotated short labels, fixed-width cells."""
    _, page = matrix(client)
    style = page[page.index("<style>") : page.index("</style>")]
    assert re.search(r"table\.pm thead th \{[^}]*position: sticky; top: 0", style)
    assert re.search(r"table\.pm th\.name \{[^}]*position: sticky; left: 0", style)
    assert "writing-mode: vertical-rl" in style
    assert re.search(r"td\.c \{[^}]*width: 15px", style)
    assert "<span>0.29.0</span>" in page  # short labels, the full one in the title


# -- the home page -----------------------------------------------------------------------------------


def test_home_page_says_what_the_database_is_and_lists_the_questions_first(client):
    from indexer.serve.canned import load

    page = client.html("/")
    assert (
        "tpindex: vLLM&#39;s tool-calling code across versions" in page
        or "tpindex: vLLM's tool-calling code across versions" in page
    )
    assert (
        "4 versions indexed (v0.6.0 &ndash; v0.31.0); 4 tool parser names, 1 reasoning parser name."
        in " ".join(re.sub(r"<[^>]+>", "", page).split())
    )
    titles = [c.title for c in load(CANNED_DIR)]
    positions = [page.index(f">{t}</a>") for t in titles]
    assert positions == sorted(positions), "questions in their order"
    assert positions[-1] < page.index('href="/tpindex"'), "questions before the table listing"
    assert titles[0] == "Which file implements NAME at VERSION"
    assert 'href="/tpindex/which"' in page and 'href="/-/parser-matrix"' in page


# -- read-only -------------------------------------------------------------------------------------


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


WRITES = [
    "delete from versions",
    "insert into meta values ('x', 'y')",
    "update parser_map set impl = 'x'",
    "drop table markers",
    "select 1; delete from versions",
    "pragma query_only = 0",
    "attach database ':memory:' as x",
    "with x as (select 1) delete from versions",
    "vacuum",
    "create table t(x)",
]


@pytest.mark.parametrize("sql", WRITES)
def test_writes_through_sql_are_refused(client, fixture_db, sql):
    before = digest(fixture_db)
    r = client.get("/tpindex.json?" + urlencode({"sql": sql, "_shape": "array"}))
    assert r.status_code == 400, (sql, r.status_code, r.text)
    assert r.json()["ok"] is False
    assert digest(fixture_db) == before


def test_there_are_no_write_endpoints(client, fixture_db):
    before = digest(fixture_db)
    for path in (
        "/tpindex/meta/-/insert",
        "/tpindex/versions/-/insert",
        "/tpindex/-/create",
        "/tpindex/versions/-/drop",
        "/tpindex/versions/1/-/delete",
        "/tpindex/which",
    ):
        r = client.post(path, json={"row": {"key": "x", "value": "y"}})
        assert not 200 <= r.status_code < 300, (path, r.status_code)
    assert not [q for q in client.json("/tpindex.json")["queries"] if q.get("write")]
    with pytest.raises(sqlite3.OperationalError):
        client.run(client.ds.get_database("tpindex").execute_write("delete from versions"))
    assert digest(fixture_db) == before
    assert rows(fixture_db, "select count(*) from versions") == [(len(VERSIONS),)]


def test_sql_has_a_time_limit(fixture_db):
    c = serve(fixture_db, time_limit_ms=200)
    try:
        assert c.ds.setting("sql_time_limit_ms") == 200
        endless = "with recursive n(x) as (select 1 union all select x + 1 from n) select count(*) from n"
        r = c.get("/tpindex.json?" + urlencode({"sql": endless}))
        assert r.status_code == 400 and "too long" in r.text
    finally:
        c.close()
    from indexer.serve.app import SQL_TIME_LIMIT_MS

    assert client_setting(fixture_db) == SQL_TIME_LIMIT_MS


def client_setting(db: Path) -> int:
    c = serve(db)
    try:
        return c.ds.setting("sql_time_limit_ms")
    finally:
        c.close()


# -- metadata ---------------------------------------------------------------------------------------


def test_every_table_and_view_is_described_and_its_settings_name_real_columns(fixture_db):
    from indexer.serve.metadata import TABLES

    conn = sqlite3.connect(fixture_db)
    try:
        found = {
            n: [r[1] for r in conn.execute(f"pragma table_info([{n}])")]
            for (n,) in conn.execute(
                "select name from sqlite_master where type in ('table', 'view') and name not like 'markers_fts_%'"
                " and name not like 'tree_words_%' and name not like 'code_postings_%'"
            )
        }  # full-text shadow tables
    finally:
        conn.close()
    assert set(found) - set(TABLES) == set(), "describe every table and view in indexer/serve/metadata.py"
    assert set(TABLES) - set(found) == set(), "metadata describes tables that no longer exist"
    for name, meta in TABLES.items():
        assert meta["description"], name
        named = set(meta.get("facets", [])) | set(meta.get("columns", {}))
        named |= {
            meta[k]
            for k in ("sort", "sort_desc", "label_column", "fts_pk")
            if k in meta and meta[k] != "rowid"
        }
        if name not in ("markers_fts", "code_postings"):
            assert named <= set(found[name]), (name, named - set(found[name]))


def test_views_have_facets_and_sort_in_version_order(client):
    got = client.json("/tpindex/parser_map_v.json?_size=1")
    assert {f for f in got["facet_results"]} >= {"kind", "impl", "form", "version"}
    assert got["query"]["sql"].endswith("order by version_ord desc limit 2")


# -- the command -----------------------------------------------------------------------------------


def test_serve_refuses_a_missing_database_and_a_busy_port(tmp_path, fixture_db):
    r = tpindex("serve", "--db", tmp_path / "nope.db", ok=False)
    assert r.exit_code == 2 and "no database at" in r.output and "Traceback" not in r.output
    (tmp_path / "other.db").write_bytes(b"not sqlite at all, not at all" * 10)
    r = tpindex("serve", "--db", tmp_path / "other.db", ok=False)
    assert r.exit_code == 2 and "Traceback" not in r.output
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = tpindex("serve", "--db", fixture_db, "--port", port, ok=False)
    assert r.exit_code == 2 and f"port {port}" in r.output and "--port" in r.output


def test_serve_help_documents_every_option():
    out = tpindex("serve", "--help").output
    for opt in ("--db", "--host", "--port", "--open", "--upstream", "--time-limit"):
        assert opt in out


def test_json_of_the_home_page_stays_datasettes(client):
    assert "tpindex" in json.dumps(client.json("/.json"))


# -- upstream values, read-only media, the matrix's time limit ----------------------------------------------------

BAD_UPSTREAMS = [
    "https://x.example/{nope}",
    "https://x.example/{",
    "https://x.example/}",
    "javascript:alert(1)",
    "ftp://x.example/vllm",
    "x.example/vllm",
    "https://x.example/{0}",
    "https://x.example/{ref!r}",
    "https://x.example/{path.upper}",
    "https://x.example/{line:>5}",
    " ",
]


@pytest.mark.parametrize("upstream", BAD_UPSTREAMS)
def test_a_bad_upstream_is_refused_by_serve_and_build(fixture_db, tmp_path, upstream):
    from fixtures.crash import assert_user_error

    with socket.socket() as busy:  # were the upstream accepted, serve would stop at the port, not serve
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        result = tpindex(
            "serve", "--db", fixture_db, "--upstream", upstream, "--port", busy.getsockname()[1], ok=False
        )
    assert_user_error(result, "--upstream")
    db = tmp_path / "new.db"
    repo = make_repo(tmp_path / "repo", {"v0.30.0": HISTORY["v0.30.0"]})
    result = tpindex(
        "build", "--repo", repo, "--tags", "v0.30.0", "--db", db, "--upstream", upstream, ok=False
    )
    assert_user_error(result, "--upstream", "{ref}")
    assert not db.exists()


@pytest.mark.parametrize(
    "stored",
    [
        "https://x.example/{nope}",
        "https://x.example/{",
        "javascript:alert(1)",
        "https://x.example/{0}",
        "data:text/html,hi",
    ],
)
def test_a_stored_bad_upstream_never_fails_a_page(fixture_db, tmp_path, stored):
    """A database whose stored upstream is not valid (an older tpindex stored it): every page works, and
    files are shown without links."""
    db = tmp_path / "stored.db"
    db.write_bytes(fixture_db.read_bytes())
    conn = sqlite3.connect(db)
    conn.execute("insert or replace into meta(key, value) values ('upstream', ?)", [stored])
    conn.commit()
    conn.close()
    c = serve(db)
    try:
        for page in (
            "/tpindex/which?name=delta&version=v0.31.0",
            "/tpindex/files",
            "/tpindex/parser_map_v",
            "/-/parser-matrix",
            "/",
        ):
            text = c.html(page)
            assert links(text) == [] and "javascript:" not in text and "x.example" not in text, page
    finally:
        c.close()
    out = tpindex("check", "--db", db).output
    assert "note: the stored upstream is not valid" in out and "ok: " in out, out


def database_with_data_only_in_its_wal(built: Path, into: Path) -> None:
    """A copy of a database whose committed pages are all in its -wal, with no -shm: as a copy made while
    a writer had not checkpointed yet. (The backup goes through a WAL-mode connection that never
    checkpoints; its files are copied while it is still open.)"""
    import shutil

    work = into.parent / "work"
    work.mkdir()
    dst = sqlite3.connect(work / into.name)
    dst.execute("pragma journal_mode = wal")
    dst.execute("pragma wal_autocheckpoint = 0")
    src = sqlite3.connect(built)
    src.backup(dst)
    src.close()
    shutil.copyfile(work / into.name, into)
    shutil.copyfile(work / (into.name + "-wal"), into.parent / (into.name + "-wal"))
    dst.close()
    shutil.rmtree(work)


@pytest.fixture
def read_only_dir(tmp_path):
    """A directory on a tmpfs: fill it, then call the returned function to remount it read-only (root)."""
    with tmpfs(tmp_path / "ro", "size=8m", "needs root to mount a read-only filesystem") as d:
        yield d, lambda: remount(d, "ro")


@pytest.mark.parametrize("state", ["checkpointed", "data only in the wal"])
def test_serving_a_database_on_read_only_media(fixture_db, read_only_dir, state):
    """A database in a read-only directory, closed cleanly or with its data only in its -wal and no -shm:
    pages and the command line show every version, and nothing is written there."""
    d, make_read_only = read_only_dir
    db = d / "index.db"
    if state == "checkpointed":
        db.write_bytes(fixture_db.read_bytes())
    else:
        database_with_data_only_in_its_wal(fixture_db, db)
        immutable = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
        assert immutable.execute("select count(*) from sqlite_master").fetchone()[0] == 0  # all in the WAL
        immutable.close()
    files_before = sorted(p.name for p in d.iterdir())
    make_read_only()
    c = serve(db)
    try:
        versions = [r["label"] for r in c.json("/tpindex/versions.json?_shape=array&_sort=ord")]
        assert versions == VERSIONS
        assert canned(c, "which", name="delta", version="v0.31.0")
        c.html("/-/parser-matrix")
        c.html("/tpindex/which?name=delta&version=v0.31.0")
    finally:
        c.close()
    import tempfile

    def views():
        return sorted(Path(tempfile.gettempdir()).glob("tpindex-view-*"))

    left = Path(tempfile.gettempdir()) / "tpindex-view-999999999-left"  # by a process that was killed
    left.mkdir()
    shown = views()
    out = tpindex("versions", "--db", db).output
    assert all(v in out for v in VERSIONS), out
    assert "DeltaParser" in tpindex("which", "delta", "--at", "v0.31.0", "--db", db).output
    assert sorted(p.name for p in d.iterdir()) == files_before
    # the command line's copies are gone once opened; a copy left by a killed process goes with the next
    assert views() == ([v for v in shown if v != left] if state != "checkpointed" else shown)
    if left.exists():  # checkpointed: no copy was made, nothing swept
        left.rmdir()


def test_the_parser_matrix_runs_under_the_serve_time_limit(fixture_db, monkeypatch):
    """The matrix's query gets --time-limit, however large (it was capped at 10 s)."""
    import datasette.database

    limits = []
    real = datasette.database.sqlite_timelimit

    def recording(conn, ms):
        limits.append(ms)
        return real(conn, ms)

    monkeypatch.setattr(datasette.database, "sqlite_timelimit", recording)
    for limit in (300, 60_000):
        c = serve(fixture_db, time_limit_ms=limit)
        try:
            limits.clear()
            c.html("/-/parser-matrix")
            assert limits and set(limits) == {limit}, limits
        finally:
            c.close()


def test_a_parser_matrix_past_the_time_limit_says_so(fixture_db, monkeypatch):
    """The matrix asks Index under serve's --time-limit (the test above): its query interrupted there is the page
    that says what to narrow, not a server error."""
    import sqlite3

    from indexer.api import Index

    def interrupted(self, kind="", prefix=""):
        raise sqlite3.OperationalError(
            "interrupted"
        )  # what SQLite raises when the time limit's handler stops it

    monkeypatch.setattr(Index, "matrix_rows", interrupted)
    c = serve(fixture_db)
    try:
        r = c.get("/-/parser-matrix")
        assert r.status_code == 400 and "longer than the SQL time limit" in r.text, (
            r.status_code,
            r.text[:500],
        )
    finally:
        c.close()


# -- the code pages: source, diff, search -------------------------------------------------------------------


def test_source_page_shows_the_stored_code_with_line_anchors_and_highlighting(client):
    page = client.html("/-/source/v0.30.0/vllm/parser/beta.py")
    assert (
        f'<tr id="L{BETA_HACK_LINE}"><td class="ln"><a href="#L{BETA_HACK_LINE}">{BETA_HACK_LINE}</a>' in page
    )
    assert "HACK: the model sometimes repeats its opening tag" in page
    assert '<span class="k">class</span>' in page and ".tp-code .k" in page  # Pygments spans and their style
    assert f'href="{GH}/v0.30.0/vllm/parser/beta.py"' in page  # upstream
    assert ">v0.31.0</a>" in page and "search this version" in page  # the other versions holding the file
    # the previous version's file differs: a diff link; the same file at the next version: none
    page = client.html("/-/source/v0.31.0/vllm/tool_parsers/__init__.py")
    assert (
        'class="tp-diff-prev" href="/-/diff?a=v0.30.0&amp;b=v0.31.0&amp;path=vllm%2Ftool_parsers%2F__init__.py"'
        in page
    )
    page = client.html("/-/source/v0.30.0/vllm/parser/delta.py")
    assert "tp-diff-prev" not in page and "tp-diff-next" not in page and "next: v0.31.0 (same)" in page
    # everything the code holds is escaped
    assert '&lt;b&gt;not bold&lt;/b&gt; &amp; "quoted" &lt;script&gt;' in page
    assert "<script>alert(1)</script>" not in page


def test_source_page_errors_say_what_is_wrong(client):
    r = client.get("/-/source/v0.30.0/vllm/parser/gamma.py")
    assert r.status_code == 404 and "is in no indexed version" in r.text
    r = client.get("/-/source/v0.29.0/vllm/parser/beta.py")
    assert r.status_code == 404 and "is not in v0.29.0; it is in v0.30.0 - v0.31.0" in r.text
    r = client.get("/-/source/v9.9.9/vllm/parser/beta.py")
    assert r.status_code == 404 and "version v9.9.9 is not indexed" in r.text
    r = client.get("/-/source/v0.30.0/vllm/%3Cscript%3Ealert(1)%3C/script%3E.py")
    assert r.status_code == 404 and "<script>alert" not in r.text and "&lt;script&gt;" in r.text
    r = client.get("/-/source/v0.30.0/vllm/parser/beta.py?db=nope")
    assert r.status_code == 404 and "nope is not a tpindex database" in r.text


ERROR_PAGES = [
    "/-/parser/tool/alpah",
    "/-/parser/tool/alpha?v=v9.9.9",
    "/-/version/v9.9.9",
    "/-/source/v0.30.0/vllm/parser/gamma.py",
    "/-/diff?a=v9.9.9&b=v0.31.0&path=vllm/parser/beta.py",
    "/-/diff?a=v0.30.0&b=v0.31.0&name=nosuch",
] + [
    f"{page}{'&' if '?' in page else '?'}db=nope"
    for page in (
        "/-/parser-matrix",
        "/-/parser/tool/alpha",
        "/-/version/v0.30.0",
        "/-/find?q=alpha",
        "/-/where?q=x",
        "/-/check-doc",
        "/-/fit",
        "/-/replay",
        "/-/grep?q=x",
        "/-/diff",
        "/-/source/v0.30.0/vllm/parser/beta.py",
    )
]


@pytest.mark.parametrize("url", ERROR_PAGES)
def test_every_page_error_is_the_one_error_page_from_the_one_hook(client, capsys, url):
    """What a page cannot show is a Problem raised where it is found; the plugin's handle_exception hook makes it
    the one error page (templates/tpindex_error.html), with its status, and Datasette's own handler never runs
    for it (it would log a traceback for a user's mistake)."""
    r = client.get(url)
    assert r.status_code == 404 and r.text.count('class="tpindex-error"') == 1, (url, r.text[:500])
    assert 'class="message-error"' in r.text
    assert "Traceback" not in capsys.readouterr().err


def test_serve_renders_errors_in_one_place_with_one_template():
    from indexer.serve import plugin

    templates = sorted(p.name for p in plugin.TEMPLATES.iterdir() if "error" in p.name or "message" in p.name)
    assert templates == ["tpindex_error.html"]
    sources = {p.name: p.read_text() for p in plugin.TEMPLATES.parent.glob("*.py")}
    assert [n for n, text in sources.items() if '"tpindex_error.html"' in text] == ["errors.py"]
    assert not [n for n, text in sources.items() if '"error.html"' in text]


def test_diff_page_of_a_moved_file_and_of_an_added_one(client):
    url = (
        "/-/diff?a=v0.30.0&b=v0.31.0&path_a=vllm/tool_parsers/alpha_tool_parser.py"
        "&path_b=vllm/tool_parsers/alpha_parser.py&name=alpha&kind=tool"
    )
    page = client.html(url)
    assert "alpha (tool): v0.30.0 &rarr; v0.31.0" in page and "modified" in page
    rows = re.findall(r'<tr class="(add|del)"><td class="ln2">(\d*)</td><td class="ln2">(\d*)</td>', page)
    assert rows == [
        ("del", str(ALPHA_PLANT_LINE), ""),
        ("add", "", str(line_of(ALPHA_MOVED, "prev_tool_call_arr"))),
    ]
    assert '<span class="s2">"arguments"</span>' in page
    assert "/tpindex/which?name=alpha&amp;version=v0.31.0" in page
    assert 'href="/-/source/v0.31.0/vllm/tool_parsers/alpha_parser.py"' in page
    page = client.html("/-/diff?a=v0.29.0&b=v0.30.0&path=vllm/parser/beta.py")
    assert "added" in page and page.count('<tr class="add">') == len(BETA_PARSER.strip().splitlines())
    assert "<em>no file</em> at v0.29.0" in page
    page = client.html("/-/diff?a=v0.30.0&b=v0.31.0&path=vllm/parser/delta.py")
    assert "The two files are identical" in page
    r = client.get("/-/diff?a=v0.30.0&path=vllm/parser/delta.py")
    assert r.status_code == 400 and "two versions and a path" in r.text
    r = client.get("/-/diff?a=v0.30.0&b=v0.31.0&path=vllm/nowhere.py")
    assert r.status_code == 404 and "in no indexed version" in r.text


def grep_rows(page: str) -> list[tuple[str, str, str]]:
    """(versions, line link, text without marks) of a search page: a row holding a line that moved gives one
    entry per place (its versions and line)."""
    out = []
    for versions, lines, text in re.findall(
        r'<tr><td class="v">(.*?)</td><td class="w">(.*?)</td><td class="t">(.*?)</td></tr>', page, re.S
    ):
        spans = re.findall(r"<div>([^<]*)</div>", versions)
        hrefs = re.findall(r'<a href="([^"]+)">\d+</a>', lines)
        out += [
            (v, h, re.sub(r"</?mark>", "", html.unescape(text))) for v, h in zip(spans, hrefs, strict=True)
        ]
    return out


def test_search_page_answers_as_tpindex_grep(client, fixture_db):
    page = client.html("/-/grep?q=def+extract_tool_calls_streaming")
    rows = grep_rows(page)
    cli = json.loads(
        tpindex("grep", "def extract_tool_calls_streaming", "--db", fixture_db, "--format", "json").output
    )
    assert len(rows) == len(cli) > 0
    from indexer.answers.grep import collapse

    versions = [r[0] for r in rows_(fixture_db, "select label from versions order by ord")]
    want = sorted(
        (
            collapse(w["versions"], versions),
            f"/-/source/{w['versions'][-1]}/{w['path']}#L{w['line']}",
            w["text"].strip(),
        )
        for w in cli
    )  # the page shows code flush left
    assert sorted(rows) == want
    assert "<mark>def extract_tool_calls_streaming</mark>" in page
    # -i, -F, versions and paths, as the command line
    page = client.html("/-/grep?q=BETAPARSER&i=1&tags=v0.31.0&path=vllm/parser/beta.py")
    assert [r[2] for r in grep_rows(page)] == ["class BetaParser:"]
    page = client.html("/-/grep?q=" + quote("[{") + "&F=1")
    assert len(grep_rows(page)) == 1
    page = client.html("/-/grep?q=nothing+like+this")
    assert "0 matching lines in the 4 versions searched" in page


def test_search_page_reports_errors_and_runs_patterns_that_can_take_exponential_time_under_its_limit(client):
    page = client.html("/-/grep?q=" + quote("\\d+"))
    assert "which ERE does not define" in page and "Hint:" in page
    page = client.html(
        "/-/grep?q=" + quote("(a+)+$")
    )  # nested repetition: run, stopped by the time limit if slow
    assert "exponential" not in page and "Hint:" not in page
    page = client.html("/-/grep?q=" + quote("<script>"))
    assert "<script>" not in page.split("</form>")[0].split("<form")[1]
    assert 'value="&lt;script&gt;"' in page


def test_search_page_caps_what_it_shows(fixture_db, monkeypatch):
    from indexer.serve import code_pages

    monkeypatch.setattr(code_pages, "MAX_GREP_ROWS", 2)
    c = serve(fixture_db)
    try:
        page = c.html("/-/grep?q=return")
        total = len(json.loads(tpindex("grep", "return", "--db", fixture_db, "--format", "json").output))
        assert len(grep_rows(page)) == 2 and f"{total - 2} more matching lines not shown" in page
    finally:
        c.close()


def test_code_pages_respect_datasette_permissions(fixture_db):
    c = serve(fixture_db)
    c.ds._metadata_local["allow"] = {"id": "someone"}  # the instance is closed to anonymous visitors
    try:
        for url in (
            "/-/source/v0.30.0/vllm/parser/beta.py",
            "/-/diff?a=v0.30.0&b=v0.31.0&path=vllm/parser/beta.py",
            "/-/grep?q=x",
            "/-/parser-matrix",
        ):
            assert c.get(url).status_code == 403, url
    finally:
        c.close()


def test_a_version_built_while_serving_gets_its_cells_linked(tmp_path, monkeypatch):
    """The database is served mutable so that a build finishing meanwhile shows up: its version's cells
    are linked to the version page too, once the labels the plugin read have aged (LABELS_TTL)."""
    from indexer.build.pipeline import build
    from indexer.core.scope import Scope
    from indexer.serve import state
    from indexer.sources.git import GitSource

    source = GitSource(make_repo(tmp_path / "repo", HISTORY))
    db = tmp_path / "growing.db"
    build(db, source, [source.ref(VERSIONS[0])], Scope.named("default"), jobs=1)
    client = serve(db)
    try:
        first = f"/tpindex/parser_map_v?version={VERSIONS[0]}"
        assert f'href="/-/version/{VERSIONS[0]}"' in client.html(first)  # the plugin has read the labels
        link = f'href="/-/version/{VERSIONS[-1]}"'
        page = f"/tpindex/parser_map_v?version={VERSIONS[-1]}"
        build(db, source, [source.ref(VERSIONS[-1])], Scope.named("default"), jobs=1)
        monkeypatch.setattr(state, "LABELS_TTL", 0.0)
        assert link in client.html(page)
    finally:
        client.close()
