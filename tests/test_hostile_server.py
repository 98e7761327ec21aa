"""`tpindex serve` (and `tpindex mcp`) driven for real on loopback by a hostile client (issue 38, items 1, 3, 5, 7):
one request must not freeze the server, run code on a GET or from another site, or take the server's threads;
bodies and answers are bounded; SIGTERM ends the server at once.

Every wait is for a state the test can see (a child process of the server at work, a request ended, a process
gone: fixtures/loopback.py), never for a length of time: the work that must not hold the server is endless
(a regex that backtracks for hours, a parser that spins) and its limit is far away (600 s), so that it is
still at work whatever the machine's load when the other requests are asked.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from types import SimpleNamespace
from urllib.parse import urlencode

import pytest
from fixtures.helpers import build_tags, make_repo
from fixtures.hostile import ENDLESS
from fixtures.loopback import (
    HANG,
    Background,
    Stdio,
    alive,
    children_at_work,
    get,
    post,
    serving,
    stop,
    wait_until,
)

FAR = "600000"  # ms: serve --time-limit far beyond any test: the endless work is at work while asked around


def at_work(proc, before: set[int], needle: str | None = None) -> set[int]:
    """The server's processes started since `before` (with `needle` in their command line)."""
    new = children_at_work(proc.pid) - before
    if needle is None:
        return new
    found = set()
    for pid in new:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if needle.encode() in f.read():
                    found.add(pid)
        except OSError:
            pass
    return found


def pages_answer(url: str) -> None:
    """Pages that are not cached (their query string new each time), a search and the MCP tools: answered."""
    n = time.monotonic_ns()
    status, text = get(f"{url}/tpindex/versions.json?_shape=array&_n={n}")
    assert status == 200 and json.loads(text), text[:300]
    status, text = get(f"{url}/-/parser/tool/tagged?_n={n}")
    assert status == 200 and "TaggedToolParser" in text
    status, text = get(f"{url}/-/grep?q=extract_tool_calls&_n={n}")
    assert status == 200 and "tagged_tool_parser.py" in text


# -- 1. one request must not freeze serve, and SIGTERM stops it at once ----------------------------------------


def test_a_fit_whose_regex_backtracks_never_freezes_the_server_and_sigterm_ends_it(hostile_db):
    with serving(hostile_db, "--time-limit", FAR) as (url, proc):
        pages_answer(url)  # the first visits import what pages need: not what is asked of the server here
        before = children_at_work(proc.pid)
        bad = Background(post, f"{url}/-/fit", {"text": ENDLESS})
        wait_until(lambda: at_work(proc, before), "fit's child process at work")
        pages_answer(url)
        assert not bad.done, bad.result
        stop(proc)
        bad.thread.join(HANG)
        assert bad.done  # its request ended with the server


def test_a_fit_over_mcp_never_freezes_the_server(hostile_db):
    import anyio
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def call(url, tool, arguments):
        async with streamable_http_client(url) as streams, ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            return await session.call_tool(tool, arguments)

    with serving(hostile_db, "--time-limit", FAR) as (url, proc):
        pages_answer(url)
        assert not anyio.run(call, url + "/-/mcp", "versions", {}).is_error
        before = children_at_work(proc.pid)
        bad = Background(anyio.run, call, url + "/-/mcp", "fit", {"text": ENDLESS})
        wait_until(lambda: at_work(proc, before), "fit's child process at work")
        pages_answer(url)
        assert not anyio.run(call, url + "/-/mcp", "versions", {}).is_error
        assert not bad.done
        stop(proc)


def test_stdio_mcp_answers_while_a_fit_runs_and_ends_when_its_input_closes(hostile_db):
    stdio = Stdio(hostile_db, "--time-limit", "600")
    try:
        stdio.start()
        before = children_at_work(stdio.proc.pid)
        stdio.call("fit", {"text": ENDLESS})
        wait_until(lambda: at_work(stdio.proc, before), "fit's child process at work")
        assert "error" not in stdio.answer(stdio.call("versions", {}), HANG)
        fit_child = at_work(stdio.proc, before)
        stdio.proc.stdin.close()  # the client is gone: the process ends, the fit's child with it
        stdio.proc.wait(timeout=HANG)
        wait_until(lambda: not [p for p in fit_child if alive(p)], "fit's child gone")
    finally:
        if stdio.proc.poll() is None:
            stdio.proc.kill()
            stdio.proc.wait()


# -- 3. code runs only for a form posted from the server's own origin; Host and Origin on every page ----------


def test_a_get_shows_the_fit_form_and_runs_nothing(hostile_db):
    with serving(hostile_db, "--time-limit", FAR) as (url, proc):
        before = children_at_work(proc.pid)
        status, page = get(f"{url}/-/fit?" + urlencode({"text": ENDLESS}))
        assert status == 200 and "press Fit to run it" in page and ENDLESS[:20] in page
        assert not at_work(proc, before)
        status, page = get(f"{url}/-/replay?" + urlencode({"name": "tagged", "text": "<tg_call>"}))
        assert status == 200 and "press Replay to run it" in page


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://attacker.example"},
        {"Origin": "null"},
        {"Origin": "http://127.0.0.1:1"},  # another loopback origin: still not this server's page
        {"Origin": None, "Sec-Fetch-Site": "cross-site"},
        {"Host": "attacker.example"},  # DNS rebinding: the attacker's name resolving to 127.0.0.1
    ],
)
def test_a_form_from_another_origin_runs_nothing(hostile_db, headers):
    with serving(hostile_db, "--time-limit", FAR) as (url, proc):
        before = children_at_work(proc.pid)
        status, text = post(f"{url}/-/fit", {"text": ENDLESS}, headers=headers)
        assert status in (403, 421), (status, text[:300])
        assert not at_work(proc, before)
        status, _ = post(f"{url}/-/replay", {"name": "tagged", "text": "<tg_call>"}, headers=headers)
        assert status in (403, 421)


@pytest.mark.parametrize(
    "path",
    ["/", "/-/parser/tool/tagged", "/tpindex.json?" + urlencode({"sql": "select 1"}), "/-/fit", "/-/replay"],
)
def test_every_page_refuses_a_request_addressed_to_another_name(hostile_db, path):
    with serving(hostile_db) as (url, proc):
        port = url.rsplit(":", 1)[1]
        for host in ("attacker.example", f"attacker.example:{port}", f"rebind.127.0.0.1.nip.io:{port}"):
            status, text = get(url + path, headers={"Host": host})
            assert status == 421 and "--allow-host" in text, (host, status, text[:200])
        for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}", f"app.localhost:{port}"):
            assert get(url + path, headers={"Host": host})[0] == 200, host
        assert get(url + path, headers={"Origin": "http://attacker.example"})[0] == 403


def test_allow_host_admits_a_name(hostile_db):
    with serving(hostile_db, "--allow-host", "tpindex.internal") as (url, _):
        assert get(url + "/", headers={"Host": "tpindex.internal"})[0] == 200
        assert get(url + "/", headers={"Host": "other.internal"})[0] == 421


def test_a_same_origin_form_runs(hostile_db):
    with serving(hostile_db) as (url, _):
        text = '<tg_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tg_call>'
        status, page = post(f"{url}/-/fit", {"text": text})
        assert status == 200 and "tagged" in page and "vllm serve" in page, page[-3000:]


# -- 7. bounded bodies ---------------------------------------------------------------------------------------


def raw_post(
    url: str, path: str, length: int, chunks=(), chunked: bool = False, finish: bool = True
) -> tuple[int, bytes]:
    """A POST written by hand: its headers (a declared length, or chunked), then `chunks` (and, unless not
    `finish`, the chunked body's end); -> (status, body)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=HANG) as s:
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nOrigin: {url}\r\n"
            "Content-Type: application/x-www-form-urlencoded\r\n"
            + ("Transfer-Encoding: chunked\r\n" if chunked else f"Content-Length: {length}\r\n")
            + "\r\n"
        )
        s.sendall(head.encode())
        try:
            for c in chunks:
                s.sendall(b"%x\r\n%s\r\n" % (len(c), c) if chunked else c)
            if chunked and finish:
                s.sendall(b"0\r\n\r\n")
        except OSError:  # the server answered and closed before the whole body was sent
            pass
        data = b""
        while b"\r\n\r\n" not in data or not _complete(data):
            got = s.recv(65536)
            if not got:
                break
            data += got
    return int(data.split(b" ", 2)[1]), data


def _complete(data: bytes) -> bool:
    head, _, body = data.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return len(body) >= int(line.split(b":")[1])
        if line.lower() == b"transfer-encoding: chunked":
            return body.endswith(b"0\r\n\r\n")
    return True


@pytest.mark.parametrize("path", ["/-/fit", "/-/replay", "/-/check-doc", "/-/mcp", "/-/where"])
def test_a_declared_body_over_a_pages_limit_is_refused_before_it_is_read(hostile_db, path):
    with serving(hostile_db) as (url, _):
        status, body = raw_post(url, path, 300 << 20)  # 300 MB declared, nothing sent
        assert status == 413, body[:300]


def test_a_streamed_body_over_the_limit_is_cut_and_said_while_other_pages_answer(hostile_db):
    """16 MB sent without a declared length, and the body never ended: a server that reads the whole body
    before looking at its size never answers; one that stops at the page's limit (12 MB) answers."""
    with serving(hostile_db) as (url, _):
        piece = b"text=" + b"x" * (1 << 20)
        chunks = [piece] + [b"x" * (1 << 20)] * 15
        status, body = raw_post(url, "/-/fit", 0, chunks, chunked=True, finish=False)
        assert status == 200 and b"larger than 4 MB" in body
        pages_answer(url)


# -- 5. replays: a queue of their own, cancelled when the client goes away, ended by SIGTERM ---------------------


@pytest.fixture
def replay_env(tmp_path):
    return {
        "TPINDEX_REPLAY_PYTHON": sys.executable,
        "TPINDEX_REPLAY_CACHE": str(tmp_path / "replay-cache"),
        "TPINDEX_REPLAY_IDLE": "0",
    }


def replays_at_work(proc, before) -> set[int]:
    return at_work(proc, before, "main.py")  # the replay server of a run (child/main.py) and its workers


def test_replays_run_outside_the_sql_threads_and_sigterm_ends_them_at_once(replay_db, replay_env):
    spin = {"name": "spins", "tags": "v0.6.3", "text": "x", "splits": "token"}
    with serving(replay_db, "--time-limit", FAR, env=replay_env) as (url, proc):
        status, _ = get(url + "/-/parser/tool/spins")
        assert status == 200
        before = children_at_work(proc.pid)
        running = [Background(post, f"{url}/-/replay", spin) for _ in range(3)]
        wait_until(lambda: len(replays_at_work(proc, before)) >= 2, "two replays at work")
        for i in range(4):  # Datasette's three SQL threads, and more: every one free
            status, text = get(f"{url}/tpindex/versions.json?_shape=array&_n={i}{time.monotonic_ns()}")
            assert status == 200 and "v0.6.3" in text
        assert not any(r.done for r in running)
        stop(proc)
        wait_until(lambda: not [p for p in replays_at_work(proc, before) if alive(p)], "replays ended")
        for r in running:
            r.thread.join(HANG)


def test_a_replay_whose_client_goes_away_is_stopped(replay_db, replay_env):
    with serving(replay_db, "--time-limit", FAR, env=replay_env) as (url, proc):
        before = children_at_work(proc.pid)
        host, port = url.removeprefix("http://").split(":")
        body = urlencode({"name": "spins", "tags": "v0.6.3", "text": "x", "splits": "token"}).encode()
        s = socket.create_connection((host, int(port)))
        s.sendall(
            (
                f"POST /-/replay HTTP/1.1\r\nHost: {host}:{port}\r\nOrigin: {url}\r\n"
                f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {len(body)}\r\n\r\n"
            ).encode()
            + body
        )
        wait_until(lambda: replays_at_work(proc, before), "the replay at work")
        s.close()  # the browser's tab closed
        # ended long before the replay's own limit (60 s a version), which would end it without a cancel
        wait_until(
            lambda: not [p for p in replays_at_work(proc, before) if alive(p)],
            "its processes ended",
            timeout=30,
        )
        status, _ = get(url + "/tpindex/versions.json?_shape=array")
        assert status == 200


def test_more_code_than_the_queue_holds_is_answered_busy(replay_db, replay_env):
    from indexer.serve import work

    spin = {"name": "spins", "tags": "v0.6.3", "text": "x", "splits": "token"}
    with serving(replay_db, "--time-limit", FAR, env=replay_env) as (url, proc):
        before = children_at_work(proc.pid)
        running = [Background(post, f"{url}/-/replay", spin) for _ in range(work.WORKERS + work.WAITING)]
        wait_until(lambda: len(replays_at_work(proc, before)) >= work.WORKERS, "replays at work")
        status, page = wait_until(lambda: _busy(url, spin), "a request answered busy")
        assert status == 503 and "ask again" in page
        stop(proc)
        for r in running:
            r.thread.join(HANG)


def _busy(url, spin):
    """The server's answer once every slot and place in the queue is taken (None before: a request that
    took a place is still waiting for its answer, which is what this test keeps them doing)."""
    got = Background(post, f"{url}/-/replay", spin)
    got.thread.join(5)  # answered at once when busy; one that waits for a turn is left waiting
    return got.result if got.done and got.result[0] == 503 else None


# -- 7. a replay's answer is bounded --------------------------------------------------------------------------

RAISES = """
from vllm.entrypoints.openai.protocol import ExtractedToolCallInformation
from vllm.entrypoints.openai.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager


@ToolParserManager.register_module("raises")
class RaisesToolParser(ToolParser):
    def extract_tool_calls(self, model_output, request):
        return ExtractedToolCallInformation(False, [], model_output)

    def extract_tool_calls_streaming(self, previous_text, current_text, delta_text, *args, **kwargs):
        raise ValueError("cannot read " + delta_text)
"""


def test_a_replay_failing_on_every_delta_answers_a_bounded_list_of_errors(tmp_path, replay_env, monkeypatch):
    from fixtures.replay_trees import history

    from indexer.api import Index
    from indexer.replay.run import MAX_ERRORS

    for k, v in replay_env.items():
        monkeypatch.setenv(k, v)
    tp = "vllm/entrypoints/openai/tool_parsers/"
    tree = dict(history()["v0.6.3"])
    tree[tp + "raises_tool_parser.py"] = RAISES
    tree[tp + "__init__.py"] += "from .raises_tool_parser import RaisesToolParser\n"
    db = tmp_path / "r.db"
    build_tags(make_repo(tmp_path / "repo", {"v0.6.3": tree}), db, "v0.6.3")
    (v,) = Index(db).replay("raises", text="!" * 5000, splits=["char"], modes=["stream"]).versions
    (mode,) = v.modes
    assert len(mode.errors) == MAX_ERRORS + 1 and "more errors" in mode.errors[-1], mode.errors[-2:]
    assert len(json.dumps(v.to_json())) < 64_000


def test_materializing_a_versions_tree_leaves_no_git_process(replay_db, replay_env, monkeypatch):
    """Each version a replay materialized from a git repository left its `git cat-file --batch` running for
    the life of the process (a server's: one a version, for good)."""
    from fixtures.replay_trees import CALL

    from indexer.api import Index

    for k, v in replay_env.items():
        monkeypatch.setenv(k, v)

    def cat_files() -> set[int]:
        return at_work(SimpleNamespace(pid=os.getpid()), set(), "cat-file")

    before = cat_files()
    got = Index(replay_db).replay("fixture_json", tags="v0.6.3..", text=CALL, modes=["nonstream"]).versions
    assert [v.status for v in got] == ["ok"] * len(got) and len(got) == 3
    assert not [p for p in cat_files() - before if alive(p)]


def test_mcp_replay_answers_a_page_of_versions(tmp_path, replay_env):
    """MCP's replay of a long output split per character, over several versions: each answer a page of at
    most max_chars characters of versions (one version at least), with how to ask for the next."""
    from fixtures.replay_trees import history

    tp = "vllm/entrypoints/openai/tool_parsers/"
    tree = dict(history()["v0.6.3"])
    tree[tp + "raises_tool_parser.py"] = RAISES
    tree[tp + "__init__.py"] += "from .raises_tool_parser import RaisesToolParser\n"
    db = tmp_path / "r.db"
    build_tags(make_repo(tmp_path / "repo", {"v0.6.3": tree, "v0.6.4": {}, "v0.6.5": {}}), db, "v0.6.3..")
    stdio = Stdio(db, env=replay_env)
    try:
        stdio.start()
        args = {
            "name": "raises",
            "text": "!" * 20_000,
            "versions": "v0.6.3..",
            "splits": ["char"],
            "modes": ["stream"],
            "max_chars": 5000,
        }
        got = stdio.answer(stdio.call("replay", args), HANG)["result"]
        assert not got.get("isError"), got
        page = got["structuredContent"]
        assert len(page["versions"]) == 1 and page["truncated"] and page["next_offset"] == 1
        assert page["totals"]["versions"] == 3 and len(json.dumps(page["versions"])) < 64_000
        rest = stdio.answer(stdio.call("replay", {**args, "offset": 1}), HANG)["result"]["structuredContent"]
        assert rest["versions"][0]["version"] == "v0.6.4"
    finally:
        stdio.proc.stdin.close()
        stdio.proc.wait(timeout=HANG)
