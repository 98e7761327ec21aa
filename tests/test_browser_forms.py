"""The pages that run code (/-/fit, /-/replay) in a real headless Chromium (issue 38, item 3): a link with the
input in its query string shows the form filled in, with a word to press its button, and runs nothing; the
form posted from the page's own origin shows the answer. Screenshots are saved (TPINDEX_SHOTS=DIR keeps
them) to be looked at.

Headless Chromium here loads pages and cannot press a button: the posted form's answer is fetched as the
form posts it (urllib, the page's Origin) and its HTML shown by Chromium with the server as its base.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from fixtures.browser import serve, shots_dir
from fixtures.loopback import post

pytestmark = pytest.mark.slow

OUTPUT = '<tg_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tg_call>'


@pytest.fixture
def server(browser, hostile_db, tmp_path):
    yield from serve(hostile_db, tmp_path)


def test_the_fit_form_filled_by_a_link_runs_only_when_posted(browser, server, tmp_path):
    shots = shots_dir(tmp_path)
    url = server + "-/fit?" + urlencode({"text": OUTPUT, "kind": "tool"})
    dom = browser.dom(url)
    assert "press Fit to run it" in dom and "get_weather" in dom and 'value="tool" selected' in dom
    assert "Tool parsers" not in dom  # no answer: nothing ran
    browser.screenshot(url, shots / "fit-form-from-a-link.png")

    status, page = post(server + "-/fit", {"text": OUTPUT, "kind": "tool"})
    assert status == 200 and "vllm serve" in page and "tagged" in page
    shown = tmp_path / "fit-answer.html"
    shown.write_text(page.replace("<head>", f'<head><base href="{server}">', 1))
    dom = browser.dom(shown.as_uri())
    assert "tool parsers with evidence" in dom and "tagged" in dom
    browser.screenshot(shown.as_uri(), shots / "fit-answer.png")


def test_the_replay_form_filled_by_a_link_runs_nothing(browser, server, tmp_path):
    shots = shots_dir(tmp_path)
    url = server + "-/replay?" + urlencode({"text": OUTPUT, "name": "tagged", "tags": "v0.32.0"})
    dom = browser.dom(url)
    assert "press Replay to run it" in dom and "tg_call" in dom and 'value="tagged"' in dom
    browser.screenshot(url, shots / "replay-form-from-a-link.png")
