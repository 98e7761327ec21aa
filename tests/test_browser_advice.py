"""The advice in a real headless Chromium (issue 39; issue 41 item 5, the /-/fit half): /-/fit puts the answer
(the serve line, the pair and its evidence, the proof) before the ranked candidates, folded; its labels sit beside
their fields; the evidence column is not clipped at 900 px; the search box answers a model name with its serve
line. Screenshots at 1400 and 900 px under tmp_path (TPINDEX_SHOTS=DIR keeps them there to look at).

The proof runs code, so only a POST asks for it: the test posts the form as the browser does (with the page's
CSRF token and cookie) and opens the answer it gets in Chromium, its links resolved against the server."""

from __future__ import annotations

import html
import re
import sys
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path
from urllib.parse import urlencode, urljoin

import pytest
from fixtures.browser import serve, shots_dir

pytestmark = pytest.mark.slow

CHATML = (Path(__file__).parent / "fixtures" / "templates" / "thinking_chatml.jinja").read_text()
SIZES = {"wide": "1400,1600", "narrow": "900,1800"}


@pytest.fixture
def advice_server(browser, advice_db, tmp_path, monkeypatch):
    monkeypatch.setenv("TPINDEX_REPLAY_CACHE", str(tmp_path / "replay-cache"))
    monkeypatch.setenv("TPINDEX_REPLAY_PYTHON", sys.executable)  # the fixture tree needs no package
    yield from serve(advice_db, tmp_path)


def post(base: str, path: str, data: dict) -> str:
    """The page a form on `path` posts to, as the browser posts it: with the page's CSRF token and cookie."""
    jar = CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    page = opener.open(urljoin(base, path), timeout=60).read().decode()
    token = re.search(r'name="csrftoken" value="([^"]+)"', page).group(1)
    body = urlencode({"csrftoken": token, **data}).encode()
    return opener.open(urljoin(base, path), data=body, timeout=300).read().decode()


def test_fit_shows_the_answer_first_labels_beside_fields_and_the_evidence_unclipped(
    browser, advice_server, tmp_path
):
    shots = shots_dir(tmp_path)
    # the page runs fit for its form only (a POST); its answer is shown in Chromium from the posted page
    page = post(advice_server, "-/fit", {"text": CHATML, "at": "v0.11.1", "candidates": "open"})
    served = tmp_path / "fit-open.html"
    served.write_text(page.replace("<head>", f'<head><base href="{advice_server}">', 1))
    url = served.as_uri()
    dom = browser.dom(url)
    # the answer before the candidates, which are folded
    assert dom.index('class="serve-cmd"') < dom.index('class="fit-candidates"')
    assert re.search(r'<details class="fit-candidates" data-kind="tool" open="">', dom)
    # each label names the field beside it, in the form's grid of label, field
    grid = re.search(r'<div class="fields">(.*?)</div>\s*</form>', dom, re.S).group(1)
    for target in re.findall(r'<label[^>]* for="([\w-]+)"', grid):
        assert re.search(rf'id="{target}"', grid), target
    for name, size in SIZES.items():
        browser.screenshot(url, shots / f"fit-{name}.png", size)
    folded = post(advice_server, "-/fit", {"text": CHATML, "at": "v0.11.1"})
    assert '<details class="fit-candidates" data-kind="tool">' in folded


def test_the_proven_answer_and_a_model_name_s_answer_in_chromium(browser, advice_server, tmp_path):
    shots = shots_dir(tmp_path)
    page = post(advice_server, "-/fit", {"text": CHATML, "at": "v0.11.1", "proof": "on"})
    assert 'data-ok="true"' in page and "tagjson + eager" in html.unescape(page)
    served = tmp_path / "proven.html"
    served.write_text(page.replace("<head>", f'<head><base href="{advice_server}">', 1))
    for name, size in SIZES.items():
        browser.screenshot(served.as_uri(), shots / f"fit-proven-{name}.png", size)
    found = urljoin(advice_server, "-/find?" + urlencode({"q": "orca-labs/Orca-3-8B"}))
    dom = browser.dom(found)
    assert "--tool-call-parser tagjson --reasoning-parser patient" in dom
    assert re.search(r'<form class="advice-prove" method="post"', dom)
    for name, size in SIZES.items():
        browser.screenshot(found, shots / f"find-model-{name}.png", size)
