"""The behaviour atlas's page /-/atlas (issue 44) in a real headless Chromium, on the fixture eras' atlas
(tests/fixtures/atlas_trees.py): the matrix, a filter, a cell's row with its cases and the button replaying
one (screenshots under tmp_path/screenshots, or TPINDEX_SHOTS=DIR)."""

from __future__ import annotations

import pytest
from fixtures.browser import follow, serve, shots_dir

pytestmark = pytest.mark.slow


@pytest.fixture
def atlas_server(browser, atlas_ran, tmp_path):
    db, _ = atlas_ran
    yield from serve(db, tmp_path)


def test_atlas_matrix_filters_and_a_row_in_chromium(browser, atlas_server, tmp_path):
    shots = shots_dir(tmp_path)
    home = browser.dom(atlas_server)
    page_url = follow(
        home, atlas_server, r'<a href="([^"]+)">Behaviour atlas</a>', "the home page links the atlas"
    )
    page = browser.dom(page_url)
    assert 'data-name="literal"' in page and 'data-name="fixture_json"' in page
    assert 'class="c s-wrong"' in page  # literal at v0.11.2, fixture_json at v0.6.3
    browser.screenshot(page_url, shots / "atlas.png", "1200,700")

    only = browser.dom(page_url + "?case=content-only")
    assert 'class="c s-wrong"' not in only and 'class="c s-ok"' in only

    cell = follow(
        page,
        page_url,
        r'<td class="c s-wrong" data-version="v0.11.2" title="literal[^"]*"><a href="([^"]+)"',
        "a wrong cell links its row",
    )
    row = browser.dom(cell)
    assert "arguments not valid JSON" in row and "Replay this output" in row
    assert 'method="post"' in row and "/-/replay" in row
    browser.screenshot(cell, shots / "atlas-row.png", "1400,1600")
