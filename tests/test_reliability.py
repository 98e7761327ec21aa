"""Reliability III (issue 22): what an adversarial review broke, each stated as what must happen instead.

The fixture is a small history of hand-written files (no vLLM code) whose lines are long enough for the
catastrophic patterns of the review to take minutes with a backtracking matcher.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import make_repo, tpindex
from test_crash import assert_user_error

TP = "vllm/tool_parsers"
ABSTRACT = "class ToolParser:\n    pass\n\n\nclass ToolParserManager:\n    pass\n"


def parser(name: str, cls: str, extra: str = "") -> str:
    return (f"from vllm.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager\n\n\n"
            f"@ToolParserManager.register_module({name!r})\nclass {cls}(ToolParser):\n"
            f"    def extract_tool_calls_streaming(self, previous_text, current_text, delta_text):\n"
            f"        return None  # the streaming method of this fixture parser, a long enough line\n{extra}")


HISTORY = {
    "v0.6.3": {f"{TP}/abstract_tool_parser.py": ABSTRACT, f"{TP}/hermes_tool_parser.py": parser("hermes", "Hermes")},
    "v0.7.0": {f"{TP}/mistral_tool_parser.py": parser("mistral", "Mistral", "    # TODO: a marker\n")},
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return make_repo(tmp_path_factory.mktemp("rel") / "repo", HISTORY)


@pytest.fixture(scope="module")
def built(repo, tmp_path_factory):
    db = tmp_path_factory.mktemp("built") / "index.db"
    tpindex("build", "--repo", repo, "--tags", "v0.6.3..", "--db", db, "-q")
    return db


def fails(*args, words=()):
    result = tpindex(*args, ok=False)
    assert_user_error(result, *words)
    return result


def copy(db: Path, to: Path) -> Path:
    to.write_bytes(db.read_bytes())
    return to


# -- 16. empty labels ------------------------------------------------------------------------------------------

def test_an_empty_version_label_is_refused_with_a_hint_that_works(built):
    for args in (["diff", "", ""], ["diff", "v0.6.3", " "], ["which", "hermes", "--at", " "],
                 ["card", "hermes", "--at", " "], ["show", f"{TP}/hermes_tool_parser.py", "--at", " "]):
        r = fails(*args, "--db", built, words=("empty",))
        assert "--tags ''" not in r.output and "--tags ' '" not in r.output, r.output
        assert "tpindex versions" in r.output


# -- 13. invalid bracket ranges ---------------------------------------------------------------------------------

@pytest.mark.parametrize("pattern", ["[[:alpha:]-z]", "[[:digit:]-9]", "[a-c-e]", "[a-[:digit:]]", "[z-a]"])
def test_invalid_range_ends_are_refused_as_git_grep_refuses_them(built, pattern):
    r = fails("grep", "--db", built, "--", pattern, words=("range",))
    assert "Traceback" not in r.output


@pytest.mark.parametrize("pattern", ["[a-]", "[--z]", "[[:alpha:]-]", "[a-c-]", "[---]", "[%--]"])
def test_ranges_git_grep_accepts_still_search(built, pattern):
    r = tpindex("grep", "--db", built, "--", pattern, ok=False)
    assert r.exit_code in (0, 1), r.output


# -- 10. deep nesting, 3. patterns whose translation is huge --------------------------------------------------------

@pytest.mark.parametrize("pattern", ["(" * 250 + "a" + ")" * 250, "(" * 2000 + "a" + ")" * 2000,
                                     "((a|b)*" * 200 + ")" * 200])
def test_a_deeply_nested_pattern_is_one_line_not_a_recursion_error(built, pattern):
    fails("grep", "--db", built, "--", pattern, words=("nested",))


@pytest.mark.parametrize("pattern", ["\\b" * 3000, "\\w" * 20_000, "[[:alpha:]]" * 5000, "a" * 100_000])
def test_a_pattern_too_large_to_translate_is_refused_at_once(built, pattern):
    import resource

    t0 = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    fails("grep", "--db", built, "--", pattern, words=("too large",))
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # kB: no gigabytes compiled
    assert time.monotonic() - t0 < 30  # not the minutes of compiling a 25 M-character expression


def test_a_pattern_just_under_the_caps_still_searches(built):
    from indexer.answers.ere import MAX_PATTERN

    r = tpindex("grep", "--db", built, "--", "\\bextract_tool_calls_streaming\\b", ok=False)
    assert r.exit_code == 0, r.output
    r = tpindex("grep", "--db", built, "--", "x" * (MAX_PATTERN - 8) + "|extract", ok=False)
    assert r.exit_code == 0, r.output


# -- 9. input that is not UTF-8 ----------------------------------------------------------------------------------

def run_cli(*args: str | bytes, timeout: float = 60) -> subprocess.CompletedProcess:
    exe = str(Path(sys.executable).parent / "tpindex")
    return subprocess.run([exe, *args], capture_output=True, timeout=timeout)


@pytest.mark.parametrize("args", [[b"grep", b"\xff\xfe"], [b"grep", b"-F", b"\xff\xfe"], [b"where", b"\xff\xfe"],
                                  [b"which", b"\xff\xfe"], [b"diff", b"v0.6.3", b"v\xff"]])
def test_arguments_that_are_not_utf8_get_one_line(built, args):
    r = run_cli(*args, b"--db", str(built).encode())
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode in (1, 2) and "Traceback" not in err and "UnicodeEncodeError" not in err, err


def test_a_database_whose_file_name_is_not_utf8(built, tmp_path):
    import os

    odd = os.path.join(os.fsencode(tmp_path), b"caf\xe9.db")
    with open(odd, "wb") as f:
        f.write(built.read_bytes())
    for args in ([b"versions"], [b"which", b"hermes"], [b"grep", b"extract"], [b"check"]):
        r = run_cli(*args, b"--db", odd)
        err = r.stderr.decode("utf-8", "replace")
        assert r.returncode == 0 and "Traceback" not in err, err
    r = run_cli(b"which", b"nothere", b"--db", odd)
    assert r.returncode == 2 and "Traceback" not in r.stderr.decode("utf-8", "replace")


# -- 8. old schemas --------------------------------------------------------------------------------------------

def test_readers_refuse_a_schema_they_cannot_read_and_say_how_to_migrate(built, tmp_path):
    db = copy(built, tmp_path / "old.db")
    conn = sqlite3.connect(db)
    conn.execute("update meta set value = '1' where key = 'schema_version'")
    conn.execute("drop view parser_map_v")  # as schema 1 had it: no wrapper columns
    conn.execute("alter table parser_map drop column wrapper_class")
    conn.commit()
    conn.close()
    for cmd in (["which", "hermes"], ["diff", "v0.6.3", "v0.7.0"], ["export"], ["diff", "v0.6.3", "v0.7.0", "--code",
                "hermes"], ["card", "hermes"], ["grep", "x"], ["show", "hermes"], ["serve", "--port", "1"],
                ["mcp"], ["versions"]):
        fails(*cmd, "--db", db, words=("older tpindex", "schema 1", "tpindex build"))
    r = tpindex("check", "--db", db, ok=False)
    assert r.exit_code == 1 and "schema version 1" in r.output, r.output

    from indexer.api import Index
    from indexer.problems import Problem

    with pytest.raises(Problem, match="schema 1"):
        Index(db)
