"""What an operator's review found in the browser (issue 41, items 4 and 6), measured in a real Chromium at 1400
and 900 px: the code-search page counts the versions holding a match apart from the versions searched; the
parser matrix opens on the newest versions and takes a range of versions; no canned question scrolls sideways.

The fixture is sixty releases of the lazy-registry layout (files written here): `steady` in all of them (with a
long class name, as real ones are), `early` in the first ten, `late` from v0.50.0 on. Screenshots are saved
(TPINDEX_SHOTS=DIR keeps them) to be looked at.
"""

from __future__ import annotations

import re
from urllib.parse import urlencode, urljoin

import pytest
from fixtures.browser import serve, shots_dir
from fixtures.eras import PLAIN_ABSTRACT, lazy_registry
from fixtures.helpers import build_tags, make_repo

pytestmark = pytest.mark.slow

VERSIONS = [f"v0.{n}.0" for n in range(1, 61)]
STEADY = ("steady_tool_parser", "SteadyLongNamedExampleModelToolParser")


def parser(cls: str, body: str = "") -> str:
    return (
        f"from vllm.tool_parsers.abstract_tool_parser import ToolParser\n\n\nclass {cls}(ToolParser):\n"
        f"    def extract_tool_calls(self, text):\n        return text{body}\n"
    )


def history() -> dict:
    def registry(*names: str) -> str:
        known = {
            "steady": STEADY,
            "early": ("early_tool_parser", "EarlyToolParser"),
            "late": ("late_tool_parser", "LateToolParser"),
        }
        return lazy_registry("tool", {n: known[n] for n in names})

    out: dict[str, dict] = {v: {} for v in VERSIONS}
    out["v0.1.0"] = {
        "vllm/tool_parsers/__init__.py": registry("steady", "early"),
        "vllm/tool_parsers/abstract_tool_parser.py": PLAIN_ABSTRACT,
        "vllm/tool_parsers/steady_tool_parser.py": parser(STEADY[1]),
        "vllm/tool_parsers/early_tool_parser.py": parser("EarlyToolParser"),
    }
    out["v0.11.0"] = {
        "vllm/tool_parsers/__init__.py": registry("steady"),
        "vllm/tool_parsers/early_tool_parser.py": None,
    }
    out["v0.50.0"] = {
        "vllm/tool_parsers/__init__.py": registry("steady", "late"),
        "vllm/tool_parsers/late_tool_parser.py": parser("LateToolParser", '.split("<late>")  # LATE_TOKEN'),
    }
    return out


@pytest.fixture(scope="module")
def sixty_db(tmp_path_factory):
    root = tmp_path_factory.mktemp("sixty")
    db = root / "sixty.db"
    build_tags(make_repo(root / "repo", history()), db, "v0.1.0..")
    return db


@pytest.fixture
def server(browser, sixty_db, tmp_path):
    yield from serve(sixty_db, tmp_path)


def test_the_code_search_counts_the_versions_that_match_and_those_searched(browser, server, tmp_path):
    url = urljoin(server, "-/grep?" + urlencode({"q": "LATE_TOKEN"}))
    page = browser.dom(url)
    count = re.search(r'<p class="tp-count">(.*?)</p>', page, re.S).group(1)
    assert " ".join(count.split()) == "1 matching line, in 11 of the 60 versions searched."
    every = browser.dom(urljoin(server, "-/grep?" + urlencode({"q": "class Steady"})))
    assert "in all 60 versions searched" in every
    shots = shots_dir(tmp_path)
    for width in (1400, 900):
        browser.screenshot(url, shots / f"grep-count-{width}.png", f"{width},700")


# the rightmost version column the matrix's scroller shows, and how far it is scrolled
NEWEST_SHOWN = """(() => {
  const wrap = document.querySelector('.pm-wrap'), right = wrap.getBoundingClientRect().right;
  const seen = [...wrap.querySelectorAll('thead th.v')].filter(th => th.getBoundingClientRect().right <= right + 1);
  const late = [...document.querySelectorAll('tr[data-name="late"] td.c')].filter(
    td => td.getBoundingClientRect().right <= right + 1 && td.getBoundingClientRect().left >= 0);
  return [seen.length ? seen[seen.length - 1].title : null, wrap.scrollLeft > 0,
          late.filter(td => td.dataset.impl).length];
})()"""


@pytest.mark.parametrize("width", [1400, 900])
def test_the_matrix_opens_on_the_newest_versions(browser, server, tmp_path, width):
    url = urljoin(server, "-/parser-matrix")
    newest, scrolled, late_cells = browser.evaluate(url, NEWEST_SHOWN, f"{width},1000")
    assert newest == VERSIONS[-1]
    assert late_cells > 0  # the row of a name of the newest versions is not blank on screen
    if width == 900:
        assert scrolled  # sixty columns do not fit: it opened scrolled to the right end
    browser.screenshot(url, shots_dir(tmp_path) / f"matrix-{width}.png", f"{width},1000")


def test_the_matrix_takes_a_range_of_versions(browser, server, tmp_path):
    url = urljoin(server, "-/parser-matrix?" + urlencode({"from": "v0.45", "to": "v0.55.0"}))
    page = browser.dom(url)
    shown = re.findall(r'<th class="v[^"]*" title="([^"]+)"', page)
    assert shown == VERSIONS[44:55]
    names = re.findall(r'<tr data-kind="tool" data-name="([^"]+)"', page)
    assert names == ["late", "steady"]  # early is in none of them
    chosen = re.findall(r'<option selected(?:="")?>(v[\d.]+)</option>', page)
    assert chosen == ["v0.45.0", "v0.55.0"]  # the range, as the resolver read it (v0.45 is v0.45.0)
    assert "11 versions" in page
    browser.screenshot(url, shots_dir(tmp_path) / "matrix-range-900.png", "900,800")
    wrong = browser.dom(urljoin(server, "-/parser-matrix?" + urlencode({"from": "v0.70.0"})))
    assert "v0.70.0 is not indexed" in wrong and "v0.60.0" in wrong


CANNED = {
    "which": {"name": "steady", "version": "v0.55.0"},
    "history": {"name": "steady"},
    "name_lifecycle": {"name": "early"},
    "names_changed": {"a": "v0.10.0", "b": "v0.50.0"},
    "parsers_by_impl": {},
    "reasoning_parsers": {},
    "adapter_importers": {},
    "class_tree": {"class": STEADY[1]},
    "class_attribute": {"attribute": "supports_required_and_named"},
    "method_overrides": {"method": "extract_tool_calls"},
    "marker_sites": {},
    "plants_by_version": {},
}
# how far the page and each table of results reach past their box (0: nothing scrolls sideways)
OVERFLOW = """[document.documentElement.scrollWidth - document.documentElement.clientWidth,
  ...[...document.querySelectorAll('.table-wrapper')].map(w => w.scrollWidth - w.clientWidth),
  document.querySelectorAll('table.rows-and-columns tbody tr').length]"""


@pytest.mark.parametrize("width", [1400, 900])
def test_no_canned_question_scrolls_sideways(browser, server, tmp_path, width):
    urls = [urljoin(server, f"tpindex/{q}?{urlencode(a)}") for q, a in CANNED.items()]
    got = dict(zip(CANNED, browser.evaluate(urls, OVERFLOW, f"{width},1000"), strict=True))
    assert got["parsers_by_impl"][-1] > 0 and got["which"][-1] > 0  # questions with rows to lay out
    wide = {q: v[:-1] for q, v in got.items() if any(x > 0 for x in v[:-1])}
    assert wide == {}
    shots = shots_dir(tmp_path)
    for q in ("parsers_by_impl", "which", "history"):
        browser.screenshot(urls[list(CANNED).index(q)], shots / f"canned-{q}-{width}.png", f"{width},1000")
