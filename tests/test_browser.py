"""End to end: `tpindex serve` in a subprocess, driven by a real headless Chromium.

Opens the home page, follows its "Which file implements" question and runs it for a fixture name as the
form would, follows a file of the answer to its source page, opens the parser matrix and follows a cell
whose code changed to its diff page, runs a code search, and saves screenshots of the pages under
tmp_path (screenshots/).
"""

from __future__ import annotations

import html
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlencode, urljoin

import pytest
from test_serve import BETA_HACK_LINE, BETA_PARSER_LINE, VERSIONS, build_fixture

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Browser:
    def __init__(self, profile: Path):
        self.profile = profile

    def run(self, *args: str) -> str:
        out = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={self.profile}", *args],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        return out.stdout

    def dom(self, url: str) -> str:
        """The page's DOM after it loaded (scripts run)."""
        return self.run("--dump-dom", url)

    def screenshot(self, url: str, path: Path, size: str = "1400,1000") -> Path:
        self.run(f"--screenshot={path}", f"--window-size={size}", "--hide-scrollbars", url)
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
        return path


@pytest.fixture
def browser(tmp_path) -> Browser:
    if CHROMIUM is None:
        pytest.skip("CHROMIUM IS NOT INSTALLED: this end-to-end browser test did not run. "
                    "Install it with `apt-get install -y chromium` (.ci/run does).")
    return Browser(tmp_path / "chromium-profile")


@pytest.fixture
def server(browser, tmp_path):
    db = build_fixture(tmp_path)
    port = free_port()
    log = (tmp_path / "serve.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "indexer.cli", "serve", "--db", str(db), "--host", "127.0.0.1",
                             "--port", str(port)], stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(base, timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()
            assert time.monotonic() < deadline, "tpindex serve did not answer within 60 s"
            time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def test_browse_home_question_source_matrix_diff_and_search_in_chromium(browser, server, tmp_path):
    shots = tmp_path / "screenshots"
    shots.mkdir()

    home = browser.dom(server)
    assert "tool-calling code across versions" in home
    link = re.search(r'<a href="([^"]+)">Which file implements NAME at VERSION</a>', home)
    assert link, "the home page lists the 'which' question"
    browser.screenshot(server, shots / "home.png", "1400,1400")

    # run the question as its form does: a GET with the parameters
    which = urljoin(server, html.unescape(link.group(1))) + "?" + urlencode({"name": "beta", "version": "v0.30.0"})
    page = browser.dom(which)
    assert "vllm/parser/beta.py" in page and "BetaParserToolAdapter" in page
    assert f"https://github.com/vllm-project/vllm/blob/v0.30.0/vllm/parser/beta.py#L{BETA_PARSER_LINE}" in page
    browser.screenshot(which, shots / "which.png")

    # the real file of the answer, in the stored code, at the answer's version and line
    src = re.search(r'<a class="tpindex-src" href="([^"]*/-/source/v0\.30\.0/vllm/parser/beta\.py#L\d+)"', page)
    assert src, "the which answer links its files to their source pages"
    source_url = urljoin(which, html.unescape(src.group(1)))
    assert source_url.endswith(f"#L{BETA_PARSER_LINE}")
    source = browser.dom(source_url)
    assert "vllm/parser/beta.py" in source and f'id="L{BETA_HACK_LINE}"' in source
    assert "HACK: the model sometimes repeats its opening tag" in source
    browser.screenshot(source_url, shots / "source.png", "1400,700")

    matrix = browser.dom(urljoin(server, "-/parser-matrix"))
    assert all(f'title="{v}"' in matrix for v in VERSIONS)
    assert 'data-name="beta"' in matrix and 'data-impl="unified"' in matrix and 'data-impl="dispatch"' in matrix
    browser.screenshot(urljoin(server, "-/parser-matrix"), shots / "matrix.png")

    # the cell where alpha's real file moved (v0.31.0) links to the diff of its code
    cell = re.search(r'<tr data-kind="tool" data-name="alpha">.*?<td class="c i-standalone moved[^"]*" '
                     r'data-version="v0\.31\.0"[^>]*><a href="([^"]+)"', matrix, re.S)
    assert cell, "the moved cell links somewhere"
    diff_url = urljoin(server, html.unescape(cell.group(1)))
    assert "/-/diff?" in diff_url
    diff = browser.dom(diff_url)
    assert "alpha (tool): v0.30.0" in diff and "vllm/tool_parsers/alpha_parser.py" in diff
    assert 'class="del"' in diff and 'class="add"' in diff
    browser.screenshot(diff_url, shots / "diff.png", "1400,800")

    grep_url = urljoin(server, "-/grep?" + urlencode({"q": "def \\w+_streaming"}))
    found = browser.dom(grep_url)
    assert "<mark>def extract_tool_calls_streaming</mark>" in found
    browser.screenshot(grep_url, shots / "grep.png", "1400,800")

    assert sorted(p.name for p in shots.iterdir()) == ["diff.png", "grep.png", "home.png", "matrix.png", "source.png",
                                                      "which.png"]
    assert all(p.stat().st_size > 5000 for p in shots.iterdir())
