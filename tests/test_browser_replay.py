"""/-/replay in headless Chromium (issue 41 item 5): the form's fields (raw output, parser and its kind, reasoning
parser, versions, splits, tools, request fields) each with its label beside it, at 1400 and 900 px; and the
answer, whose changed versions link to the code diff at that change. The answer comes from a same-origin POST
(the page runs code only on one): the test posts it with the form's token and shows the page it answered in
Chromium, its links resolved against the server (screenshots under TPINDEX_SHOTS or tmp_path)."""

from __future__ import annotations

import re
import sys
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar

import pytest
from fixtures.browser import follow, serve, shots_dir
from fixtures.replay_trees import CALL

pytestmark = pytest.mark.slow

FIELDS = ("text", "name", "kind", "reasoning_parser", "tags", "splits", "api", "tools", "request")


@pytest.fixture
def replay_server(browser, replay_db, tmp_path, monkeypatch):
    from indexer.replay import server

    cache = tmp_path / "replay-cache"
    monkeypatch.setenv("TPINDEX_REPLAY_CACHE", str(cache))
    monkeypatch.setenv("TPINDEX_REPLAY_PYTHON", sys.executable)
    yield from serve(replay_db, tmp_path)
    server.stop(cache)


def _labels_beside_fields(page: str) -> None:
    """Every field has a label naming it, and the label comes right before its field (the grid puts it beside)."""
    for field in FIELDS:
        m = re.search(rf'<(?:input|select|textarea)[^>]*name="{field}"[^>]*id="([^"]+)"', page) or re.search(
            rf'<(?:input|select|textarea)[^>]*id="([^"]+)"[^>]*name="{field}"', page
        )
        assert m, f"no field {field}"
        label = re.search(
            rf'<label for="{m.group(1)}"[^>]*>([^<]+)</label>\s*(?:<div class="pair">\s*)?<', page
        )
        assert label, f"the {field} field has no label right before it"


def test_replay_page_fields_and_the_answer_linking_each_change_to_its_diff(browser, replay_server, tmp_path):
    shots = shots_dir(tmp_path)
    url = urllib.parse.urljoin(replay_server, "-/replay")
    page = browser.dom(url)
    _labels_beside_fields(page)
    browser.screenshot(url, shots / "replay-form-1400.png", "1400,900")
    browser.screenshot(url, shots / "replay-form-900.png", "900,900")

    jar = CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    form = opener.open(url).read().decode()
    token = re.search(r'name="csrftoken" value="([^"]+)"', form).group(1)
    data = {
        "csrftoken": token,
        "text": CALL,
        "name": "fixture_json",
        "kind": "tool",
        "tags": "v0.6.3..",
        "splits": "token",
        "tools": "",
        "request": '{"parallel_tool_calls": false}',
    }
    answer = (
        opener.open(urllib.request.Request(url, data=urllib.parse.urlencode(data).encode(), method="POST"))
        .read()
        .decode()
    )
    assert "Where the result changes" in answer, answer[:2000]
    diff = follow(
        answer,
        url,
        r'<a class="rp-diff" href="([^"]+)">the code diff v0\.6\.3 &rarr; v0\.11\.1</a>',
        "the change at v0.11.1 links the code diff from v0.6.3",
    )
    assert "a=v0.6.3" in diff and "b=v0.11.1" in diff and "name=fixture_json" in diff
    assert '"parallel_tool_calls": false' in answer  # the request fields, as replayed
    diff_page = browser.dom(diff)
    assert "fixture_tool_parser.py" in diff_page
    # the answer as Chromium shows it (a file with the server as its base, so its styles and links resolve)
    shown = tmp_path / "replay-answer.html"
    shown.write_text(answer.replace("<head>", f'<head><base href="{replay_server}">', 1))
    for width in (1400, 900):
        browser.screenshot(shown.as_uri(), shots / f"replay-answer-{width}.png", f"{width},1400")
    browser.screenshot(diff, shots / "replay-diff.png", "1400,1000")
