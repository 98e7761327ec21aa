"""The browser's own pages (issue 14), through Datasette's test client on test_serve's fixture database:
a page per parser name and per version, the search box, linked names / classes / versions in tables and
canned queries, why the `which` question is empty, and page titles.

Fixture history (test_serve): v0.6.0 alpha dispatch; v0.29.0 alpha, beta standalone, gamma unresolved;
v0.30.0 beta unified (tool and reasoning), delta name-check, gamma gone; v0.31.0 alpha's file renamed.
"""

from __future__ import annotations

import html
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from fixtures.serve import BETA_PARSER_LINE, GH, VERSIONS, serve


@pytest.fixture(scope="module")
def client(fixture_db):  # noqa: F811  (the fixture imported above)
    c = serve(fixture_db)
    yield c
    c.close()


def hrefs(page: str, cls: str) -> list[tuple[str, str]]:
    """(text, href) of the links of a class."""
    found = re.findall(
        rf'<a class="{cls}" href="([^"]+)"[^>]*>((?:[^<]|<wbr>)*)</a>', page
    )  # may wrap at <wbr>
    return [(html.unescape(t.replace("<wbr>", "")), html.unescape(h)) for h, t in found]


def title(page: str) -> str:
    return html.unescape(re.search(r"<title>(.*?)</title>", page, re.S).group(1).strip())


# -- a parser name ------------------------------------------------------------------------------------


def test_parser_page_shows_the_card_chain_and_history(client):
    page = client.html("/-/parser/tool/beta?v=v0.30.0")
    assert title(page) == "beta (tool parser) at v0.30.0"
    assert 'data-version="v0.30.0"' in page
    assert f'href="{GH}/v0.30.0/vllm/parser/beta.py#L{BETA_PARSER_LINE}"' in page  # the real class, upstream
    tree = next(h for t, h in hrefs(page, "tpindex-class") if t == "BetaParser")  # the card's, first
    q = parse_qs(urlsplit(tree).query)
    assert urlsplit(tree).path == "/tpindex/class_tree"
    assert q == {"version": ["v0.30.0"], "class": ["BetaParser"]}
    # the same name in the other registry, at the same version, sharing the real class
    names = hrefs(page, "tpindex-name")
    assert ("beta", "/-/parser/reasoning/beta?v=v0.30.0") in names
    assert "shares the real class" in page
    # the chain, then every version from the first: standalone, then unified
    chain = page[page.index("Chain at v0.30.0") : page.index('id="history"')]
    assert [h for h in ("registered", "class", "adapter", "real") if f"<td>{h}</td>" in chain] == [
        "registered",
        "class",
        "adapter",
        "real",
    ]
    history = page[page.index('id="history"') : page.index('id="changes"')]
    versions = [t for t, _ in hrefs(history, "tpindex-version")]
    assert versions == ["v0.29.0", "v0.30.0", "v0.31.0"]
    assert "real file moved" in history
    assert all(h == f"/-/version/{t}" for t, h in hrefs(history, "tpindex-version"))


def test_parser_page_defaults_to_the_newest_version_that_has_the_name(client):
    page = client.html("/-/parser/tool/alpha")
    assert 'data-version="v0.31.0"' in page
    assert "vllm/tool_parsers/alpha_parser.py" in page
    gamma = client.html("/-/parser/tool/gamma?v=v0.31.0")  # gone after v0.29.0
    assert 'data-version="v0.29.0"' in gamma and "is not registered as a tool parser at" in gamma


def test_parser_page_lists_versions_where_its_code_changed(client):
    page = client.html("/-/parser/tool/alpha")
    changes = page[page.index('id="changes"') :]
    assert "v0.31.0" in changes and "vllm/tool_parsers/alpha_parser.py" in changes
    assert (
        "compare upstream" in changes
        and f"{GH.rsplit('/blob', 1)[0]}/compare/v0.30.0...v0.31.0#diff-" in changes
    )


def test_parser_page_errors_say_what_to_ask(client):
    r = client.get("/-/parser/reasoning/alpha")
    assert r.status_code == 404 and "is not a reasoning parser" in r.text and "tool parser" in r.text
    r = client.get("/-/parser/tool/alpah")
    assert r.status_code == 404 and '<a href="/-/find?q=alpha">alpha</a>' in r.text  # links, not a command
    r = client.get("/-/parser/tool/alpha?v=v9.9.9")
    assert r.status_code == 404 and "v9.9.9 is not indexed" in r.text


# -- a version ----------------------------------------------------------------------------------------


def test_version_page_groups_names_by_kind_and_impl_with_counts(client):
    page = client.html("/-/version/v0.30.0")
    assert title(page) == "vLLM v0.30.0: parser names"
    tool = page[page.index('id="kind-tool"') : page.index('id="kind-reasoning"')]
    groups = re.findall(r'<h3 id="tool-([\w-]+)">.*?</span> (\d+)</h3>', tool)
    assert groups == [("standalone", "1"), ("unified", "1"), ("name-check", "1")]
    assert [t for t, _ in hrefs(tool, "tpindex-name")] == ["alpha", "beta", "delta"]
    assert ("delta", "/-/parser/tool/delta?v=v0.30.0") in hrefs(tool, "tpindex-name")
    # previous / next versions
    nav = page[page.index('class="nav"') : page.index("</p>", page.index('class="nav"'))]
    assert [t for t, _ in hrefs(nav, "tpindex-version")] == ["v0.29.0", "v0.31.0"]


def test_version_page_says_what_changed_from_the_previous_version(client):
    page = client.html("/-/version/0.30.0")  # labels without v work
    changes = page[page.index('id="changes"') :]
    assert "Changes from" in changes and "v0.29.0" in changes
    types = re.findall(r'<td class="type">([\w-]+)</td>', changes)
    assert {"name-added", "name-removed", "impl-changed"} <= set(types)
    assert ("gamma", "/-/parser/tool/gamma?v=v0.29.0") in hrefs(
        changes, "tpindex-name"
    )  # removed: its last version
    first = client.html("/-/version/v0.6.0")
    assert "is the first indexed version" in first
    assert client.get("/-/version/v9.9.9").status_code == 404


# -- the search box -----------------------------------------------------------------------------------


def find(client, q: str):
    return client.get("/-/find?q=" + q)


def test_search_goes_from_a_name_prefix_any_case_to_its_page(client):
    for q in ("alpha", "ALPHA", "alp", "Del"):
        r = find(client, q)
        assert r.status_code == 302, q
    assert find(client, "alp").headers["location"] == "/-/parser/tool/alpha"
    assert find(client, "DELTA").headers["location"] == "/-/parser/tool/delta"


def test_search_lists_several_matches_and_suggests_close_names(client):
    r = find(client, "be")  # beta is a tool and a reasoning parser
    assert r.status_code == 200
    assert hrefs(r.text, "tpindex-name") == [
        ("beta", "/-/parser/tool/beta"),
        ("beta", "/-/parser/reasoning/beta"),
    ]
    r = find(client, "alpah")
    assert r.status_code == 404 and "No parser name, class or file matches" in r.text
    assert [t for t, _ in hrefs(r.text, "tpindex-name")] == ["alpha"]


def test_search_goes_to_a_version_page(client):
    assert find(client, "v0.30.0").headers["location"] == "/-/version/v0.30.0"
    assert find(client, "0.31.0").headers["location"] == "/-/version/v0.31.0"


def test_every_page_has_the_search_box(client):
    for path in (
        "/",
        "/tpindex",
        "/tpindex/parser_map_v",
        "/tpindex/which?name=beta&version=",
        "/-/parser-matrix",
        "/-/parser/tool/beta",
        "/-/version/v0.30.0",
        "/-/find?q=be",
    ):
        page = client.html(path)
        assert re.search(r'<form class="tpindex-find" action="/-/find"', page), path
        assert 'name="q"' in page, path


# -- names, classes and versions linked everywhere ----------------------------------------------------


def test_table_cells_link_names_classes_and_versions(client):
    page = client.html("/tpindex/parser_map_v?version=v0.30.0&name=beta")
    names = hrefs(page, "tpindex-name")
    assert ("beta", "/-/parser/tool/beta?v=v0.30.0") in names and (
        "beta",
        "/-/parser/reasoning/beta?v=v0.30.0",
    ) in names
    classes = dict(hrefs(page, "tpindex-class"))
    assert parse_qs(urlsplit(classes["BetaParser"]).query) == {
        "version": ["v0.30.0"],
        "class": ["BetaParser"],
    }
    assert ("v0.30.0", "/-/version/v0.30.0") in hrefs(page, "tpindex-version")
    # an imported name is not a parser name: imports_v has no kind column
    assert hrefs(client.html("/tpindex/imports_v?version=v0.30.0"), "tpindex-name") == []


def test_canned_question_cells_link_too(client):
    which = client.html("/tpindex/which?name=beta&version=v0.30.0")
    assert ("beta", "/-/parser/tool/beta?v=v0.30.0") in hrefs(which, "tpindex-name")
    assert "BetaParserToolAdapter" in dict(hrefs(which, "tpindex-class"))
    life = client.html("/tpindex/name_lifecycle?name=beta")
    assert ("v0.30.0", "/-/version/v0.30.0") in hrefs(
        life, "tpindex-version"
    )  # became_unified, real_file_changed_in
    reasoning = client.html("/tpindex/reasoning_parsers?version=v0.30.0")
    names = hrefs(reasoning, "tpindex-name")
    assert ("beta", "/-/parser/reasoning/beta?v=v0.30.0") in names and (
        "beta",
        "/-/parser/tool/beta?v=v0.30.0",
    ) in names
    tree = client.html("/tpindex/class_tree?version=v0.30.0&class=AlphaToolParser")
    assert "ToolParser" in dict(hrefs(tree, "tpindex-class"))


def test_matrix_names_and_versions_link_to_their_pages(client):
    page = client.html("/-/parser-matrix")
    assert '<a href="/-/parser/tool/alpha">alpha</a>' in page
    assert '<a href="/-/parser/reasoning/beta">beta</a>' in page
    for v in VERSIONS:
        assert f'<a href="/-/version/{v}">' in page


# -- the which question when it has no rows, and page titles ------------------------------------------


def why(page: str) -> str:
    m = re.search(r'<div class="tpindex-why[^"]*"[^>]*>(.*?)</div>', page, re.S)
    return " ".join(re.sub(r"<[^>]+>", " ", html.unescape(m.group(1))).split()) if m else ""


def test_which_says_why_it_is_empty(client):
    assert "no parser is named 'alpah' in any indexed version" in why(
        client.html("/tpindex/which?name=alpah&version=")
    )
    assert "Did you mean: alpha" in why(client.html("/tpindex/which?name=alpah&version="))
    text = why(client.html("/tpindex/which?name=delta&version=v0.29.0"))
    assert "'delta' is not registered at v0.29.0" in text and "v0.30.0" in text and "v0.31.0" in text
    text = why(client.html("/tpindex/which?name=delta&version=v0.99.0"))
    assert "version v0.99.0 is not indexed" in text
    page = client.html("/tpindex/which?name=delta&version=v0.29.0")
    assert ".zero-results { display: none; }" in page
    # a question with rows says nothing more
    assert why(client.html("/tpindex/which?name=delta&version=v0.30.0")) == ""


def test_page_titles_are_the_questions_not_their_sql(client):
    assert title(client.html("/tpindex/which?name=beta&version=")) == "Which file implements NAME at VERSION"
    assert title(client.html("/tpindex/history?name=beta")) == "NAME across versions"
    assert "select" not in title(client.html("/tpindex?sql=select+1")).lower()


def test_notes_render_as_a_list(client):
    page = client.html("/tpindex/parser_map_v?version=v0.29.0&name=beta&kind=reasoning")
    assert (
        '<ul class="tpindex-notes"><li>streaming: no streaming method in the resolution order</li></ul>'
        in page
    )
