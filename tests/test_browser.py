"""End to end: `tpindex serve` in a subprocess, driven by a real headless Chromium.

Opens the home page, follows its "Which file implements" question and runs it for a fixture name as the
form would, follows a file of the answer to its source page, opens the parser matrix and follows a cell
whose code changed to its diff page, runs a code search, and saves screenshots of the pages under
tmp_path (screenshots/). Then, on the cards fixture (test_card): searches a name from the home page's
search box, reaches the name's page, follows a version link and a class link from it, and saves
screenshots of each (TPINDEX_SHOTS=DIR keeps them there to look at).
"""

from __future__ import annotations

import re
from urllib.parse import urlencode, urljoin

import pytest
from fixtures.browser import follow, serve, shots_dir
from fixtures.card import build_card_fixture
from fixtures.serve import BETA_HACK_LINE, BETA_PARSER_LINE, VERSIONS, build_fixture

pytestmark = pytest.mark.slow


@pytest.fixture
def server(browser, tmp_path):
    yield from serve(build_fixture(tmp_path), tmp_path)


@pytest.fixture
def cards_server(browser, tmp_path):
    yield from serve(build_card_fixture(tmp_path), tmp_path)


def test_browse_home_question_source_matrix_diff_and_search_in_chromium(browser, server, tmp_path):
    shots = tmp_path / "screenshots"
    shots.mkdir()

    home = browser.dom(server)
    assert "tool-calling code across versions" in home
    question = follow(
        home,
        server,
        r'<a href="([^"]+)">Which file implements NAME at VERSION</a>',
        "the home page lists the 'which' question",
    )
    browser.screenshot(server, shots / "home.png", "1400,1400")

    # run the question as its form does: a GET with the parameters
    which = question + "?" + urlencode({"name": "beta", "version": "v0.30.0"})
    page = browser.dom(which)
    assert "vllm/parser/beta.py" in page and "BetaParserToolAdapter" in page
    assert (
        f"https://github.com/vllm-project/vllm/blob/v0.30.0/vllm/parser/beta.py#L{BETA_PARSER_LINE}" in page
    )
    browser.screenshot(which, shots / "which.png")

    # the real file of the answer, in the stored code, at the answer's version and line
    source_url = follow(
        page,
        which,
        r'<a class="tpindex-src" href="([^"]*/-/source/v0\.30\.0/vllm/parser/beta\.py#L\d+)"',
        "the which answer links its files to their source pages",
    )
    assert source_url.endswith(f"#L{BETA_PARSER_LINE}")
    source = browser.dom(source_url)
    assert "vllm/parser/beta.py" in source and f'id="L{BETA_HACK_LINE}"' in source
    assert "HACK: the model sometimes repeats its opening tag" in source
    browser.screenshot(source_url, shots / "source.png", "1400,700")

    matrix = browser.dom(urljoin(server, "-/parser-matrix"))
    assert all(f'title="{v}"' in matrix for v in VERSIONS)
    assert (
        'data-name="beta"' in matrix and 'data-impl="unified"' in matrix and 'data-impl="dispatch"' in matrix
    )
    browser.screenshot(urljoin(server, "-/parser-matrix"), shots / "matrix.png")

    # the cell where alpha's real file moved (v0.31.0) links to the diff of its code
    diff_url = follow(
        matrix,
        server,
        r'<tr data-kind="tool" data-name="alpha">.*?<td class="c i-standalone moved[^"]*" '
        r'data-version="v0\.31\.0"[^>]*><a href="([^"]+)"',
        "the moved cell links somewhere",
        re.S,
    )
    assert "/-/diff?" in diff_url
    diff = browser.dom(diff_url)
    assert "alpha (tool): v0.30.0" in diff and "vllm/tool_parsers/alpha_parser.py" in diff
    assert 'class="del"' in diff and 'class="add"' in diff
    browser.screenshot(diff_url, shots / "diff.png", "1400,800")

    grep_url = urljoin(server, "-/grep?" + urlencode({"q": "def \\w+_streaming"}))
    found = browser.dom(grep_url)
    assert "<mark>def extract_tool_calls_streaming</mark>" in found
    browser.screenshot(grep_url, shots / "grep.png", "1400,800")

    assert sorted(p.name for p in shots.iterdir()) == [
        "diff.png",
        "grep.png",
        "home.png",
        "matrix.png",
        "source.png",
        "which.png",
    ]
    assert all(p.stat().st_size > 5000 for p in shots.iterdir())


def test_search_a_name_reach_its_page_follow_a_version_and_a_class_in_chromium(
    browser, cards_server, tmp_path
):
    shots = shots_dir(tmp_path)
    home = browser.dom(cards_server)
    search = follow(
        home,
        cards_server,
        r'<form class="tpindex-homefind" action="([^"]+)" method="get"',
        "the home page has a search box",
    )
    assert '<form class="tpindex-find"' in home, "and the header too"
    browser.screenshot(cards_server, shots / "cards-home.png", "1400,900")

    # search as the form does (a GET with q): an upper-case prefix of a name reaches the name's page
    found = search + "?" + urlencode({"q": "ZET"})
    page = browser.dom(found)
    assert 'data-kind="tool" data-name="zeta" data-version="v0.31.0"' in page
    assert "&lt;zeta_call&gt;" in page and "request.skip_special_tokens = False" in page
    browser.screenshot(found, shots / "cards-zeta.png", "1400,2000")

    omega = urljoin(cards_server, "-/parser/tool/omega")
    page = browser.dom(omega)
    assert "U+FF5C FULLWIDTH VERTICAL LINE" in page and "shares the real class" in page
    browser.screenshot(omega, shots / "cards-omega.png", "1400,2200")

    # follow a version link and a class link from the name's page
    vpage_url = follow(
        page,
        cards_server,
        r'<a class="tpindex-version" href="([^"]*/-/version/v0\.30\.0[^"]*)"',
        "the page links its versions",
    )
    vpage = browser.dom(vpage_url)
    assert 'data-version="v0.30.0"' in vpage and "tpindex-name" in vpage
    browser.screenshot(vpage_url, shots / "cards-version.png", "1400,1200")

    tree_url = follow(
        page,
        cards_server,
        r'<a class="tpindex-class" href="([^"]+)"[^>]*>OmegaParser</a>',
        "the page links its classes to the class tree",
    )
    tree = browser.dom(tree_url)
    assert "vllm/parser/omega.py" in tree and "ParserEngine" in tree and "<title>Class tree</title>" in tree
    browser.screenshot(tree_url, shots / "cards-class-tree.png", "1400,900")

    names = [
        "cards-class-tree.png",
        "cards-home.png",
        "cards-omega.png",
        "cards-version.png",
        "cards-zeta.png",
    ]
    assert all((shots / n).stat().st_size > 5000 for n in names)
