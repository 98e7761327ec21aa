"""/-/where as a page (issue 27): versions as ranges, each definition linked to its line in the stored code
(upstream beside it), a path's moves linked to their own histories. test_where's fixture repository."""

from __future__ import annotations

import html
import re

import pytest
from fixtures.helpers import line_of
from fixtures.where import TP, parser

ALPHA_LINE = line_of(parser("AlphaToolParser"), "class AlphaToolParser")


@pytest.fixture(scope="module")
def client(tree_db):  # noqa: F811
    from fixtures.serve import serve

    c = serve(tree_db)
    yield c
    c.close()


def rows(page: str) -> list[str]:
    """The text of each row of the page's tables, tags dropped, spaces squeezed."""
    return [
        " ".join(html.unescape(re.sub(r"<[^>]+>", " ", r.replace("<wbr>", ""))).split())
        for r in re.findall(r"<tr>(.*?)</tr>", page, re.S)
    ]


def test_a_symbol_across_versions_is_a_table_of_ranges_with_linked_definitions(client):
    page = client.html("/-/where?q=AlphaToolParser")
    assert "<pre>" not in page
    assert any(
        r.startswith(f"v0.30.0 – v0.33.0 {TP}/alpha_tool_parser.py:{ALPHA_LINE}") for r in rows(page)
    ), rows(page)
    # linked at the range's last version, locally, with the upstream link beside it
    local = f'href="/-/source/v0.33.0/{TP}/alpha_tool_parser.py#L{ALPHA_LINE}"'
    up = f'href="https://github.com/vllm-project/vllm/blob/v0.33.0/{TP}/alpha_tool_parser.py#L{ALPHA_LINE}"'
    assert local in page and up in page and page.index(local) < page.index(up)
    assert 'class="tpindex-version" href="/-/version/v0.30.0"' in page


def test_a_definition_outside_the_stored_code_links_upstream_and_says_so(client):
    page = client.html("/-/where?q=setup_env")
    assert any(r.startswith("v0.32.0 – v0.33.0 vllm/entrypoints/common/startup.py:4") for r in rows(page)), (
        rows(page)
    )
    assert 'class="tpindex-up tpindex-up-only"' in page and "its code is not stored" in page
    assert client.get("/-/source/v0.33.0/vllm/entrypoints/common/startup.py").status_code == 404


def test_a_symbol_at_one_version_and_a_path_history_with_its_moves(client):
    page = client.html("/-/where?q=AlphaToolParser&at=v0.31.0")
    assert (
        "Defined 1 time at" in page
        and f'href="/-/source/v0.31.0/{TP}/alpha_tool_parser.py#L{ALPHA_LINE}"' in page
    )
    page = client.html("/-/where?q=docs/guide.md")
    moved = next(r for r in rows(page) if "moved" in r)
    assert moved.startswith("v0.32.0 – v0.33.0 moved at v0.32.0 to docs/features/guide.md (content)"), moved
    assert 'class="tpindex-where" href="/-/where?q=docs%2Ffeatures%2Fguide.md"' in page


def test_where_errors_are_shown_on_the_page(client):
    page = client.html("/-/where?q=AlphaToolParser&at=v9.9.9")
    assert "v9.9.9 is not indexed" in page
