"""Replay (issue 25) on fixture trees that imitate each era's interfaces (tests/fixtures/replay_trees.py, written
here): the version's own code runs in a child process, from a tree materialized into the cache."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from fixtures.helpers import tpindex
from fixtures.replay_trees import CALL


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    from indexer.replay import server

    root = tmp_path_factory.mktemp("replay-cache")
    yield root
    server.stop(root)  # the warm server these tests started


@pytest.fixture(autouse=True)
def replay_env(monkeypatch, cache):
    """The fixture trees need no third-party package: the test interpreter serves as the replay interpreter."""
    monkeypatch.setenv("TPINDEX_REPLAY_CACHE", str(cache))
    monkeypatch.setenv("TPINDEX_REPLAY_PYTHON", sys.executable)


def run(db, name, **kw):
    from indexer.api import Index

    kw.setdefault("text", CALL)
    return Index(db).replay(name, **kw)


def mode(version, name):
    (m,) = [m for m in version.modes if m.mode == name]
    return m


def test_decorator_era_parser_and_serving_generators(replay_db):
    """v0.6.3: the decorator-registered parser, fed deltas the old way; its streaming never sends the
    arguments, and the serving stream generator's end-of-stream flush fills them in."""
    (v,) = run(replay_db, "fixture_json", at="v0.6.3").versions
    assert v.status == "ok", v.error
    assert "<call>" in v.specials and "</call>" in v.specials
    non = mode(v, "nonstream")
    assert non.entry.endswith("tool_parsers.fixture_tool_parser.FixtureJsonToolParser.extract_tool_calls")
    assert [(c.name, c.arguments) for c in non.calls] == [("get_weather", {"city": "Paris"})]
    stream = mode(v, "stream:token")
    assert stream.entry.endswith("FixtureJsonToolParser.extract_tool_calls_streaming")
    assert [(c.name, c.arguments, c.chunks) for c in stream.calls] == [("get_weather", None, 0)]
    served = mode(v, "serving-stream")
    assert [(c.name, c.arguments) for c in served.calls] == [("get_weather", {"city": "Paris"})]
    assert served.finish_reason == "tool_calls"
    assert mode(v, "serving-full").finish_reason == "tool_calls"


def test_lazy_registry_parser(replay_db):
    (v,) = run(replay_db, "fixture_json", at="v0.11.1").versions
    stream = mode(v, "stream:token")
    assert stream.entry.startswith("vllm.tool_parsers.fixture_tool_parser.")
    assert [(c.name, c.arguments, c.chunks) for c in stream.calls] == [("get_weather", {"city": "Paris"}, 1)]


def test_engine_era_parse_and_parse_delta(replay_db):
    (v,) = run(replay_db, "fixture_json", at="v0.24.0", modes=["nonstream", "stream"]).versions
    assert v.status == "ok", v.error
    non, stream = mode(v, "nonstream"), mode(v, "stream:token")
    assert non.entry.endswith("EngineParser.parse") and stream.entry.endswith("EngineParser.parse_delta")
    assert [(c.name, c.arguments) for c in non.calls] == [("get_weather", {"city": "Paris"})]
    assert [(c.name, c.arguments, c.chunks) for c in stream.calls] == [("get_weather", {"city": "Paris"}, 1)]


def test_matrix_marks_the_first_version_with_a_new_result(replay_db):
    r = run(replay_db, "fixture_json", tags="v0.6.3..", modes=["nonstream", "stream"])
    assert [v.version for v in r.versions] == ["v0.6.3", "v0.11.1", "v0.24.0"]
    changed = {(c.mode, c.version) for c in r.changes}
    assert ("stream:token", "v0.11.1") in changed
    assert not any(c.mode == "nonstream" for c in r.changes)


def test_cli_formats_and_schema(replay_db, tmp_path):
    import jsonschema

    from indexer.schemas import load

    out = tmp_path / "out.txt"
    out.write_text(CALL)
    res = tpindex(
        "replay", "fixture_json", "--tags", "v0.6.3..", "--text", out, "--db", replay_db, "--format", "json"
    )
    data = json.loads(res.output)
    jsonschema.validate(data, load("replay"))
    text = tpindex("replay", "fixture_json", "--tags", "v0.6.3..", "--text", out, "--db", replay_db).output
    assert "changes (first version with the new outcome):" in text
    assert re.search(r"stream:token\s+v0\.11\.1", text)
    md = tpindex(
        "replay",
        "fixture_json",
        "--tags",
        "v0.6.3..",
        "--text",
        out,
        "--db",
        replay_db,
        "--format",
        "markdown",
    ).output
    assert md.splitlines()[2].startswith("| versions | nonstream |")


def test_a_stubbed_module_is_recorded_when_the_replay_touches_it(replay_db):
    (v,) = run(replay_db, "needs_torch", at="v0.6.3", modes=["nonstream"]).versions
    assert v.status == "ok", v.error
    assert v.standins_touched == ["torch"]
    assert "torch" in v.standins_imported
    assert any("torch.cuda" in n for n in v.notes)


def test_a_missing_pure_python_package_fails_instead_of_being_stubbed(replay_db):
    (v,) = run(replay_db, "needs_pure", at="v0.6.3", modes=["nonstream"]).versions
    (err,) = mode(v, "nonstream").errors
    assert "ModuleNotFoundError" in err and "zz_replay_pure_helper_not_installed" in err
    assert "zz_replay_pure_helper_not_installed" not in v.standins_imported


def test_split_sensitive_parser(replay_db):
    (v,) = run(
        replay_db,
        "split_tag",
        at="v0.6.3",
        text="Calling CALL: get_weather",
        splits=["token", "interval:50"],
        modes=["stream"],
    ).versions
    token, whole = mode(v, "stream:token"), mode(v, "stream:interval:50")
    assert not token.calls and token.content == "Calling CALL: get_weather"
    assert [c.name for c in whole.calls] == ["get_weather"]
    assert v.split_sensitive


def test_char_split_keeps_special_tokens_whole(replay_db):
    """A stream never delivers part of a special token: split by characters, <call> still comes whole, and
    the parser (which looks for its id) finds it."""
    (v,) = run(replay_db, "fixture_json", at="v0.11.1", splits=["char"], modes=["stream"]).versions
    m = mode(v, "stream:char")
    assert m.deltas == len(CALL) - len("<call>") - len("</call>") + 2
    assert [(c.name, c.arguments) for c in m.calls] == [("get_weather", {"city": "Paris"})]


def test_exact_deltas_from_a_log(replay_db):
    deltas = [
        {"text": "<call>", "ids": None},
        {"text": '{"name": "get_weather", "arguments": {}}', "ids": None},
        {"text": "</call>", "ids": None},
    ]
    r = run(replay_db, "fixture_json", at="v0.11.1", text=None, deltas=deltas, modes=["stream"])
    (v,) = r.versions
    assert r.modes == ["stream:given"]
    assert [(c.name, c.arguments) for c in mode(v, "stream:given").calls] == [("get_weather", {})]


def test_timeout_kills_the_worker(replay_db):
    (v,) = run(replay_db, "spins", at="v0.6.3", modes=["nonstream"], timeout=2).versions
    assert v.status == "timeout" and "killed" in v.error


def test_memory_limit(replay_db):
    (v,) = run(replay_db, "hog", at="v0.6.3", modes=["nonstream"]).versions
    assert "MemoryError" in mode(v, "nonstream").errors[0]


def test_not_registered_versions_are_reported_not_run(replay_db):
    r = run(replay_db, "needs_torch", tags="v0.6.3..", modes=["nonstream"])
    assert [v.status for v in r.versions] == ["ok", "not-registered", "not-registered"]
    assert [(c.version, c.after) for c in r.changes] == [("v0.11.1", "not-registered")]


def test_trees_are_materialized_once_with_only_what_imports_need(replay_db, cache):
    notices = []
    run(replay_db, "fixture_json", at="v0.11.1", modes=["nonstream"], notice=notices.append)
    (tree,) = [p for p in (cache / "trees").iterdir() if p.name.startswith("v0.11.1-")]
    files = {
        str(p.relative_to(tree)) for p in tree.rglob("*") if p.is_file() and "__pycache__" not in p.parts
    }
    assert files - {".complete", ".manifest.json"} == {p for p in files if p.startswith("vllm/")}
    assert "vllm/tool_parsers/fixture_tool_parser.py" in files
    again = []
    run(replay_db, "fixture_json", at="v0.11.1", modes=["nonstream"], notice=again.append)
    assert not any("materializing" in n for n in again)


def test_vllm_never_runs_in_tpindex_process(replay_db):
    run(replay_db, "fixture_json", at="v0.6.3", modes=["nonstream"])
    assert not any(m == "vllm" or m.startswith("vllm.") for m in sys.modules)


def test_no_module_of_tpindex_imports_vllm_by_statement():
    root = Path(__file__).resolve().parent.parent / "indexer"
    offenders = [
        str(p)
        for p in root.rglob("*.py")
        if re.search(r"^\s*(import vllm|from vllm)\b", p.read_text(encoding="utf-8"), re.M)
    ]
    assert offenders == []


def test_usage_errors(replay_db, tmp_path):
    out = tmp_path / "out.txt"
    out.write_text(CALL)
    res = tpindex("replay", "fixture_json", "--text", out, "--deltas", out, "--db", replay_db, ok=False)
    assert res.exit_code == 2 and "Hint:" in res.output
    res = tpindex("replay", "fixture_json", "--text", out, "--split", "bytes", "--db", replay_db, ok=False)
    assert res.exit_code == 2 and "unknown split" in res.output
    res = tpindex("replay", "fixture_json", "--at", "v9.9.9", "--text", out, "--db", replay_db, ok=False)
    assert res.exit_code == 2 and "not indexed" in res.output


def test_mcp_tool_replay(replay_db, tmp_path):
    import os

    import anyio
    import jsonschema
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    exe = str(Path(sys.executable).parent / "tpindex")

    async def main():
        params = StdioServerParameters(
            command=exe, args=["mcp", "--db", str(replay_db)], env=dict(os.environ)
        )
        with open(tmp_path / "server.err", "w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                tool = {t.name: t for t in (await session.list_tools()).tools}["replay"]
                result = await session.call_tool(
                    "replay",
                    {"name": "fixture_json", "text": CALL, "version": "v0.11.1", "modes": ["nonstream"]},
                )
                assert not result.is_error, result.content
                jsonschema.Draft202012Validator(tool.output_schema).validate(result.structured_content)
                (v,) = result.structured_content["versions"]
                assert v["modes"][0]["calls"][0]["arguments"] == {"city": "Paris"}

    anyio.run(main)


def test_web_page(replay_db):
    from fixtures.serve import serve

    client = serve(replay_db)
    try:
        page = client.get("/-/replay")
        assert page.status_code == 200 and '<textarea name="text"' in page.text
        token = re.search(r'name="csrftoken" value="([^"]+)"', page.text).group(1)
        r = client.post(
            "/-/replay",
            data={
                "csrftoken": token,
                "text": CALL,
                "name": "fixture_json",
                "tags": "v0.6.3..",
                "splits": "token",
            },
            cookies=page.cookies,
        )
        assert r.status_code == 200, r.text[:500]
        assert "changes (first version with the new outcome):" in r.text
        assert re.search(r"stream:token\s+v0\.11\.1", r.text)
        assert "<call>" not in r.text.split("</textarea>", 1)[1]  # escaped
        r = client.post(
            "/-/replay",
            data={"csrftoken": token, "text": CALL, "name": "fixture_json", "tags": "v9.9.9"},
            cookies=page.cookies,
        )
        assert r.status_code == 200, r.text[:300]
        assert "unknown tag or ref" in r.text and "v9.9.9" in r.text
    finally:
        client.close()


def test_tokenizer_file_needs_the_tokenizers_package(replay_db, tmp_path):
    """The fixture interpreter has no `tokenizers`: the replay says so instead of tokenizing otherwise."""
    import importlib.util

    if importlib.util.find_spec("tokenizers") is not None:
        pytest.skip("this interpreter has the tokenizers package")
    tok = tmp_path / "tokenizer.json"
    tok.write_text("{}")
    (v,) = run(replay_db, "fixture_json", at="v0.6.3", modes=["nonstream"], tokenizer_file=str(tok)).versions
    assert v.status == "error" and "tokenizers package" in v.error


def test_special_tokens_given_replace_the_sentinels(replay_db):
    (v,) = run(replay_db, "fixture_json", at="v0.6.3", modes=["nonstream"], specials=["<call>"]).versions
    assert v.specials == ["<call>"]


def test_terminating_tpindex_ends_the_child_too(replay_db, tmp_path, cache):
    """SIGTERM to a replaying tpindex (here stuck on a parser that never returns) leaves no child behind: with
    no warm server (TPINDEX_REPLAY_IDLE=0), the server of the run, its session and the worker all end
    (tests/test_replay_server.py: with a warm server, the session and the worker)."""
    import os
    import signal
    import subprocess

    out = tmp_path / "out.txt"
    out.write_text(CALL)
    exe = str(Path(sys.executable).parent / "tpindex")
    proc = subprocess.Popen(
        [
            exe,
            "replay",
            "spins",
            "--at",
            "v0.6.3",
            "--text",
            str(out),
            "--db",
            str(replay_db),
            "--mode",
            "nonstream",
            "-q",
        ],
        env={**os.environ, "TPINDEX_REPLAY_IDLE": "0"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    main_py = str(Path(__file__).resolve().parent.parent / "indexer" / "replay" / "child" / "main.py")

    def children() -> list[int]:
        """The replay processes below this tpindex: the server, its session, the session's worker."""
        parent = {}
        for p in Path("/proc").iterdir():
            try:
                if p.name.isdigit() and main_py in (p / "cmdline").read_bytes().decode(errors="replace"):
                    parent[int(p.name)] = int((p / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
        out, frontier = [], {proc.pid}
        while frontier:
            frontier = {pid for pid, ppid in parent.items() if ppid in frontier}
            out += sorted(frontier)
        return out

    from fixtures.loopback import HANG, wait_until

    wait_until(lambda: len(children()) >= 3, "the server, its session and its worker at work")
    pids = children()
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=HANG)

    def running(pid):  # a killed process not yet reaped (a zombie) is not running
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except (OSError, IndexError):
            return False

    wait_until(lambda: not any(running(p) for p in pids), "the replay's processes ended")
