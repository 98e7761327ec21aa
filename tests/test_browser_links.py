"""The browser keeps the user in the stored code (issue 27): every file:line of every page links to the local
source page at that version and line, with the upstream link beside it; every "code changed" links to the
local diff of that name's code with its +/- counts; no page links to the upstream host without a local link
beside it. Datasette's test client on test_serve's fixture database (see its history there)."""

from __future__ import annotations

import html
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from fixtures.links import UPSTREAM_HOST, upstream_without_local
from fixtures.serve import BETA_PARSER_LINE, VERSIONS, serve


@pytest.fixture(scope="module")
def client(fixture_db):  # noqa: F811  (the fixture imported above)
    c = serve(fixture_db)
    yield c
    c.close()


def pages(client) -> list[str]:
    names = [("tool", "alpha"), ("tool", "beta"), ("reasoning", "beta"), ("tool", "delta"), ("tool", "gamma")]
    out = [f"/-/parser/{k}/{n}" for k, n in names] + [f"/-/parser/tool/alpha?v={v}" for v in VERSIONS]
    out += [f"/-/version/{v}" for v in VERSIONS]
    out += [
        "/tpindex/which?name=beta&version=v0.30.0",
        "/tpindex/history?name=alpha",
        "/tpindex/parser_map_v",
        "/-/parser-matrix",
        "/-/grep?q=parse",
    ]
    return out  # (the source and diff pages are the local code: their upstream link is the same code's)


def test_no_page_links_upstream_without_a_local_link_beside_it(client):
    seen, only = 0, []
    for path in pages(client):
        page = client.html(path)
        seen += page.count(UPSTREAM_HOST)
        assert upstream_without_local(page, only) == [], path
    assert seen > 20  # the pages do link upstream, each beside a local link
    for href in set(only):  # a file linked upstream only is one whose code the database does not hold
        m = re.search(r"/blob/([^/]+)/([^#]+)", href)
        assert client.get(f"/-/source/{m.group(1)}/{m.group(2)}").status_code == 404, href


def local_links(page: str) -> list[tuple[str, str]]:
    """(text, href) of the links to the local source pages."""
    return [
        (html.unescape(re.sub(r"<[^>]+>", "", t)), html.unescape(h))
        for h, t in re.findall(r'<a class="tpindex-src" href="(/-/source/[^"]+)"[^>]*>(.*?)</a>', page)
    ]


def test_the_parser_page_links_every_file_line_to_the_local_source_at_its_version(client):
    page = client.html("/-/parser/tool/beta?v=v0.30.0")
    card = page[: page.index('id="history"')]
    assert (
        f"vllm/parser/beta.py:{BETA_PARSER_LINE}",
        f"/-/source/v0.30.0/vllm/parser/beta.py#L{BETA_PARSER_LINE}",
    ) in local_links(card)
    history = page[page.index('id="history"') : page.index('id="changes"')]
    # the history's rows link at the last version of their range: standalone at v0.29.0
    assert any(
        h.startswith("/-/source/v0.29.0/vllm/tool_parsers/beta_tool_parser.py#L")
        for _, h in local_links(history)
    )
    # every link to a file of the card is a local one, upstream beside
    assert all(t.split(":")[0] in h for t, h in local_links(card))


def diff_links(page: str) -> list[tuple[str, dict]]:
    """(text, query) of the links to local diffs."""
    return [
        (html.unescape(re.sub(r"<[^>]+>", "", t)).strip(), parse_qs(urlsplit(html.unescape(h)).query))
        for h, t in re.findall(r'<a class="tpindex-diff" href="(/-/diff\?[^"]+)"[^>]*>(.*?)</a>', page, re.S)
    ]


def test_code_changed_links_the_local_diff_of_the_names_code_with_counts(client):
    page = client.html("/-/parser/tool/alpha")
    changes = page[page.index('id="changes"') :]
    found = diff_links(changes)
    assert found, "the code changes link their diffs"
    text, q = next((t, q) for t, q in found if q["b"] == ["v0.31.0"] and "name" in q)  # its real file moved
    assert q["a"] == ["v0.30.0"] and q["name"] == ["alpha"] and q["kind"] == ["tool"]
    counts = re.fullmatch(r"diff \+(\d+) −(\d+)", text)
    assert counts, text
    # the counts are the diff page's own
    diff = client.html("/-/diff?a=v0.30.0&b=v0.31.0&name=alpha&kind=tool")
    assert diff.count('<tr class="add">') == int(counts.group(1))
    assert diff.count('<tr class="del">') == int(counts.group(2))


def test_the_version_page_links_real_files_locally_and_code_changes_to_their_diffs(client):
    page = client.html("/-/version/v0.31.0")
    names = page[page.index('id="kind-tool"') : page.index('id="changes"')]
    assert any(
        h.startswith("/-/source/v0.31.0/vllm/tool_parsers/alpha_parser.py#L") for _, h in local_links(names)
    )
    changes = page[page.index('id="changes"') :]
    assert any(
        q.get("name") == ["alpha"] and q["a"] == ["v0.30.0"] and q["b"] == ["v0.31.0"]
        for _, q in diff_links(changes)
    )


def test_a_removed_names_page_says_when_it_went_and_what_took_over(client):
    page = client.html("/-/parser/tool/gamma")
    banner = re.search(r'<div class="removed" role="note">(.*?)</div>', page, re.S)
    assert banner, "a banner"
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", "", banner.group(1))).split())
    assert text.startswith("gamma is gone: removed in v0.30.0 (last registered in v0.29.0)."), text
    assert 'class="removed"' not in client.html("/-/parser/tool/beta")


def test_the_parser_page_picks_a_version_to_diff_its_code_from(client):
    page = client.html("/-/parser/tool/alpha?v=v0.31.0")
    form = re.search(r'<form class="pick since" method="get" action="([^"]+)">(.*?)</form>', page, re.S)
    assert form and form.group(1) == "/-/diff"
    assert re.findall(r"<option[^>]*>([^<]+)</option>", form.group(2)) == ["v0.30.0", "v0.29.0", "v0.6.0"]
    hidden = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', form.group(2)))
    assert hidden == {"b": "v0.31.0", "name": "alpha", "kind": "tool"}
    assert client.get("/-/diff?a=v0.29.0&b=v0.31.0&name=alpha&kind=tool").status_code == 200


def clicks(page: str) -> list[tuple[str, str]]:
    found = re.search(r'class="tpindex-clicks">Try instead: (.*?)</(?:p|div)>', page, re.S)
    assert found, "the error offers links"
    return [
        (html.unescape(t), html.unescape(h))
        for h, t in re.findall(r'<a href="([^"]+)">([^<]+)</a>', found.group(1))
    ]


def test_web_errors_offer_links_to_close_versions_and_paths_not_command_lines(client):
    r = client.get("/-/parser/tool/alpha?v=v0.30.5")
    assert r.status_code == 404 and "v0.30.5 is not indexed" in r.text
    assert {
        ("at v0.30.0", "/-/parser/tool/alpha?v=v0.30.0"),
        ("at v0.31.0", "/-/parser/tool/alpha?v=v0.31.0"),
    } <= set(clicks(r.text))
    assert "tpindex versions" not in r.text and "tpindex build" not in r.text  # no command line offered
    r = client.get("/-/version/v0.30.5")
    assert r.status_code == 404 and ("at v0.31.0", "/-/version/v0.31.0") in clicks(r.text)
    # a file that is not in the version asked for: the versions that hold it, close paths
    r = client.get("/-/source/v0.31.0/vllm/tool_parsers/alpha_tool_parser.py")
    assert r.status_code == 404 and "--at" not in r.text
    offered = clicks(r.text)
    assert ("at v0.30.0", "/-/source/v0.30.0/vllm/tool_parsers/alpha_tool_parser.py") in offered
    assert (
        "vllm/tool_parsers/alpha_parser.py",
        "/-/source/v0.31.0/vllm/tool_parsers/alpha_parser.py",
    ) in offered
    for text, href in offered:
        assert client.get(href).status_code == 200, (text, href)
    r = client.get("/-/parser/tool/alpah")
    assert ("alpha", "/-/find?q=alpha") in clicks(r.text)


def test_the_home_page_links_the_tools_and_diff_without_parameters_is_a_form(client):
    home = client.html("/")
    tools = re.search(r'<nav class="tpindex-tools"[^>]*>(.*?)</nav>', home, re.S).group(1)
    linked = re.findall(r'<a href="([^"]+)">', tools)
    assert linked == ["/-/diff", "/-/grep", "/-/where", "/-/check-doc", "/-/fit", "/-/replay", "/-/atlas"]
    for href in linked:
        assert client.get(href).status_code == 200, href
    form = client.html("/-/diff")
    assert '<form class="tp-diff-form" method="get" action="/-/diff">' in form
    options = re.findall(r'<select id="d-a" name="a">(.*?)</select>', form, re.S)[0]
    assert re.findall(r"<option[^>]*>([^<]+)</option>", options) == VERSIONS[::-1]
    assert "<option selected>v0.30.0</option>" in options  # the two newest, preselected
    assert (
        client.get("/-/diff?a=v0.30.0").status_code == 400
    )  # half a question: the form, saying what is missing


def test_plants_and_markers_say_whose_code_holds_them(client):
    from fixtures.serve import canned

    plants = canned(client, "plants_by_version", version="v0.30.0")
    assert [(r["file"], r["tool_parsers"], r["reasoning_parser_names"]) for r in plants] == [
        ("vllm/tool_parsers/alpha_tool_parser.py", "alpha", None)
    ]
    markers = {r["file"]: r for r in canned(client, "marker_sites", version="v0.30.0", kind="", q="")}
    assert markers["vllm/parser/beta.py"]["tool_parsers"] == "beta"  # the engine file: beta's real code
    assert markers["vllm/parser/beta.py"]["reasoning_parser_names"] == "beta"
    page = client.html("/tpindex/marker_sites?version=v0.30.0&kind=&q=")
    assert '<a class="tpindex-name" href="/-/parser/reasoning/beta?v=v0.30.0">beta</a>' in page


def test_the_source_page_outlines_the_file_says_what_it_implements_and_lists_directories(client):
    from fixtures.serve import BETA_PARSER

    page = client.html("/-/source/v0.30.0/vllm/parser/beta.py")
    implements = re.search(r'<p class="tp-implements">(.*?)</p>', page, re.S).group(1)
    assert ("tool", "beta") in [
        (k, n) for k, n in re.findall(r'href="/-/parser/(\w+)/(\w+)\?v=v0\.30\.0"', implements)
    ]
    assert ("reasoning", "beta") in re.findall(r'href="/-/parser/(\w+)/(\w+)\?v=v0\.30\.0"', implements)
    outline = re.search(r'<details class="tp-outline" open>(.*?)</details>', page, re.S).group(1)
    line = BETA_PARSER_LINE
    assert f'<a href="#L{line}"><code>class BetaParser</code></a>' in outline
    assert f'<a href="#L{line + 1}"><code>parse</code></a>' in outline and "def parse" in BETA_PARSER
    assert 'class="tp-parent" href="/-/source/v0.30.0/vllm/parser"' in page
    listing = client.html("/-/source/v0.30.0/vllm/parser")
    files = re.findall(r'<a class="tpindex-src" href="(/-/source/v0\.30\.0/[^"]+)">', listing)
    assert (
        "/-/source/v0.30.0/vllm/parser/beta.py" in files
        and "/-/source/v0.30.0/vllm/parser/engine/registered_adapters.py" in files
    )
    assert all(client.get(f).status_code == 200 for f in files)
    assert client.get("/-/source/v0.30.0/vllm/nowhere").status_code == 404


def test_the_source_page_outline_lists_module_level_functions_with_links(client):
    from fixtures.helpers import line_of
    from fixtures.serve import PARSER_MANAGER

    page = client.html("/-/source/v0.30.0/vllm/parser/parser_manager.py")
    outline = re.search(r'<details class="tp-outline" open>(.*?)</details>', page, re.S)
    assert outline, "a file of functions only has an outline too"
    line = line_of(PARSER_MANAGER, "def tool_parser_for")
    assert f'<a href="#L{line}"><code>def tool_parser_for</code></a>' in outline.group(1)
    assert f'id="L{line}"' in page
    # a file of classes and functions lists both, in the order of the file; a method is no module function
    page = client.html("/-/source/v0.30.0/vllm/tool_parsers/__init__.py")
    outline = re.search(r'<details class="tp-outline" open>(.*?)</details>', page, re.S).group(1)
    assert re.findall(r"<code>def (\w+)</code>", outline) == ["register_lazy_tool_parsers"]


def test_a_blank_cell_is_empty_and_long_names_may_wrap_so_a_question_fits_the_window(client):
    # a column of blanks takes no room (td:empty in the CSS), not Datasette's &nbsp;
    page = client.html("/tpindex/history?name=alpha")
    assert '<td class="col-reason"></td>' in page and '<td class="col-reason">&nbsp;</td>' not in page
    # a long file name (20 characters or more) may wrap after an underscore, a path after a slash
    from indexer.serve.cells import breakable_class, breakable_path

    assert (
        str(breakable_path("vllm/tool_parsers/glm47_moe_tool_parser.py"))
        == "vllm/<wbr>tool_parsers/<wbr>glm47_<wbr>moe_<wbr>tool_<wbr>parser.py"
    )
    assert str(breakable_path("vllm/parser/glm47_moe.py")) == "vllm/<wbr>parser/<wbr>glm47_moe.py"
    page = client.html("/-/parser/tool/alpha?v=v0.30.0")
    assert ">vllm/<wbr>tool_parsers/<wbr>alpha_<wbr>tool_<wbr>parser.py:4</a>" in page
    assert str(breakable_class("ToolParser.__init_subclass__")) == "Tool<wbr>Parser.<wbr>__init_subclass__"


def test_search_rows_merge_a_line_that_only_moved_and_show_code_flush_left(client):
    from indexer.answers.grep import Match, Result
    from indexer.serve.code_pages import _grep_rows

    vs = ["v0.29.0", "v0.30.0", "v0.31.0"]
    text = "        return delta"
    moved = [
        Match("vllm/x.py", 12, text, ["v0.31.0"], [("        ", False), ("return delta", True)]),
        Match("vllm/x.py", 9, text, ["v0.29.0", "v0.30.0"], [("        ", False), ("return delta", True)]),
        Match("vllm/x.py", 3, "import re", ["v0.31.0"], [("import re", False)]),
    ]
    rows = _grep_rows(client.ds, Result(None, vs, moved, vs), moved, None)
    assert [(r["path"], [(a["line"], a["versions"]) for a in r["at"]]) for r in rows] == [
        (
            "vllm/x.py",
            [(9, "v0.29.0 - v0.30.0"), (12, "v0.31.0")],
        ),  # one row, its line per range, first by version
        ("vllm/x.py", [(3, "v0.31.0")]),
    ]
    assert str(rows[0]["html"]) == "<mark>return delta</mark>"
    assert rows[0]["at"][1]["href"] == "/-/source/v0.31.0/vllm/x.py#L12"
