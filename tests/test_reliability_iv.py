"""Reliability IV (issue 38): what an adversarial pass over fit, replay, history, the build and the server broke,
each stated as what must happen instead. Hostile repositories are built here, from hand-written files (no
vLLM code); the servers of these items are driven for real in test_hostile_server.py.
"""

from __future__ import annotations

import json

import pytest
from fixtures.helpers import commit, make_repo, rows, tpindex
from fixtures.small import HISTORY, TP, fails

# -- 8. a pull request number no integer column holds; 20. terminal escapes in subjects ---------------------

OSC = "\x1b]0;pwned\x07"  # sets the terminal's title (OSC 52 would write the clipboard)
CSI = "\x1b[2J"  # clears the screen
SGR = "\x1b[31m"  # a colour of the repository's own


@pytest.fixture(scope="module")
def hostile_history(tmp_path_factory):
    """The small history, then a commit whose subject names an impossible pull request and carries escape
    sequences, then one whose file name does too; built from the clone (history stored)."""
    root = tmp_path_factory.mktemp("hostile")
    repo = make_repo(root / "repo", HISTORY)
    hermes = (repo / TP / "hermes_tool_parser.py").read_text()
    commit(
        repo,
        {f"{TP}/hermes_tool_parser.py": hermes + "# one more line\n"},
        tag="v0.7.1",
        message=f"fix {OSC}the {CSI}parser {SGR}red (#99999999999999999999999)",
    )
    db = root / "index.db"
    result = tpindex("build", "--repo", repo, "--tags", "v0.6.3..", "--db", db, "-q", ok=False)
    return repo, db, result


def test_a_subject_naming_an_impossible_pull_request_does_not_stop_the_history(hostile_history):
    _, db, result = hostile_history
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    (subject, pr), *_ = rows(db, "select subject, pr from commits where subject like 'fix %'")
    assert "(#99999999999999999999999)" in subject and pr is None  # no pull request stored for it
    log = tpindex("log", "hermes", "v0.6.3", "v0.7.1", "--db", db, "--format", "json")
    assert [c["pr"] for k in json.loads(log.output)["kinds"] for c in k["commits"]] == [None]


@pytest.mark.parametrize("digits", [30, 5000])
def test_contains_refuses_a_pull_request_number_no_commit_can_have_in_one_line(hostile_history, digits):
    _, db, _ = hostile_history
    result = fails("contains", "#" + "9" * digits, "--db", db, words=["pull request"])
    assert len(result.output) < 400  # the number is not echoed whole


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_log_and_contains_print_no_control_sequence_from_a_subject(hostile_history, fmt):
    _, db, _ = hostile_history
    sha = rows(db, "select sha from commits where subject like 'fix %'")[0][0]
    outputs = [
        tpindex("log", "hermes", "v0.6.3", "v0.7.1", "--db", db, "--format", fmt).output,
        tpindex("contains", sha[:12], "--db", db).output,
    ]
    for out in outputs:
        assert "\x1b" not in out and "\x07" not in out, out
        assert "the" in out and "red (#99999999999999999999999)" in out  # the rest of the subject is shown


def test_json_keeps_the_subject_as_stored(hostile_history):
    _, db, _ = hostile_history
    log = json.loads(tpindex("log", "hermes", "v0.6.3", "v0.7.1", "--db", db, "--format", "json").output)
    (subject,) = [c["subject"] for k in log["kinds"] for c in k["commits"]]
    assert OSC in subject and CSI in subject and SGR in subject


# -- 9. a path that is not UTF-8 ------------------------------------------------------------------------------

BAD_NAME = f"{TP}/bad\udcff_tool_parser.py"  # the byte 0xff in a file name, as the file system gives it


@pytest.mark.parametrize("tree", [False, True])
def test_a_path_that_is_not_utf8_is_stored_escaped_and_later_versions_are_built(tmp_path, tree):
    from fixtures.small import parser

    repo = make_repo(tmp_path / "repo", HISTORY)
    commit(repo, {BAD_NAME: parser("bad", "Bad"), "docs/odd\udcfe.md": "a page\n"}, tag="v0.7.1")
    commit(repo, {f"{TP}/hermes_tool_parser.py": parser("hermes", "Hermes2")}, tag="v0.7.2")
    db = tmp_path / "t.db"
    result = tpindex(
        "build", "--repo", repo, "--tags", "v0.6.3..", "--db", db, *(["--tree"] if tree else []), ok=False
    )
    assert result.exit_code == 0, result.output
    assert "path(s) not UTF-8, stored with their bytes escaped" in result.output
    assert rows(db, "select label from versions where status = 'complete' order by ord") == [
        ("v0.6.3",),
        ("v0.7.0",),
        ("v0.7.1",),
        ("v0.7.2",),
    ]
    which = json.loads(tpindex("which", "bad", "--at", "v0.7.2", "--db", db, "--format", "json").output)
    assert which["parsers"][0]["real_file"] == f"{TP}/bad\\xff_tool_parser.py"
    assert (
        json.loads(tpindex("which", "hermes", "--at", "v0.7.2", "--db", db, "--format", "json").output)[
            "parsers"
        ][0]["real_class"]
        == "Hermes2"
    )
    if tree:
        assert "exists at v0.7.2" in tpindex("where", "docs/odd\\xfe.md", "--db", db).output


# -- 10. the build is linear in module-level names --------------------------------------------------------------


def test_the_names_of_a_module_binding_many_are_found_in_one_pass_over_it(monkeypatch):
    """A module binding 20000 names (a generated table): the file's bytes are read for them once, not once per
    name (264 s for 100k assignments). Counted: the passes over the file, whatever searches it."""
    from indexer.build.pipeline import parse_and_locate
    from indexer.extract import uses

    passes = []

    class Counting:
        def __init__(self, pattern):
            self.pattern = pattern

        def finditer(self, data, *args):
            passes.append(len(data))
            return self.pattern.finditer(data, *args)

    real_short, real_spans = uses._short_pattern, uses._spans_of
    monkeypatch.setattr(uses, "_short_pattern", lambda name: Counting(real_short(name)))
    monkeypatch.setattr(uses, "_WORD", Counting(uses._WORD), raising=False)

    def spans(data, word, end):
        passes.append(len(data))
        return real_spans(data, word, end)

    monkeypatch.setattr(uses, "_spans_of", spans)
    n = 20_000
    source = "".join(f"name_{i} = {i}\n" for i in range(n)) + "\n\ndef f():\n    return name_1 + name_19999\n"
    res = parse_and_locate(source.encode(), f"{TP}/table_tool_parser.py")
    assert len(passes) == 1, len(passes)
    (f,) = [u for t, _, vals in res["rows"] if t == "uses" for u in vals if "f" in u]
    assert "name_1" in str(f) and "name_19999" in str(f)
