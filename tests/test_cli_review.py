"""The command line reviewed by an operator (issue 15): lifecycles said over the indexed versions only,
--kind, hints that work as written, no silent replacement of a release, diff entries that carry data,
one vocabulary, widths and help. On the fixtures of test_resolve and test_logic, and small repos here."""

from __future__ import annotations

import json
import shlex

import pytest
from click.testing import CliRunner
from fixtures.helpers import build_tags, line_of, make_repo, rows, tpindex
from fixtures.logic import TREE as LOGIC_TREE
from fixtures.logic import V2 as LOGIC_V2


@pytest.fixture(scope="module")
def logic(tmp_path_factory):
    """The test_logic fixture with a reasoning-only name, built from a repo whose path the hints name."""
    base = tmp_path_factory.mktemp("review")
    repo = make_repo(base / "repo", {"v0.30.0": LOGIC_TREE, "v0.31.0": LOGIC_V2, "v0.32.0": {}})
    db = base / "index.db"
    build_tags(repo, db, "v0.31.0..")
    return repo, db


def test_lifecycle_is_said_over_the_indexed_versions(logic):
    _, db = logic
    out = tpindex("which", "engined", "--all", "--db", db).output
    life = next(line for line in out.splitlines() if "lifecycle:" in line)
    assert "among the indexed versions v0.31.0 – v0.32.0" in life
    assert "since v0.31.0 or before" in life and "still in v0.32.0" in life
    assert "unified since v0.31.0 or before" in life
    assert "first v0.31.0" not in life and "unified from v0.31.0" not in life


def test_a_name_asked_with_the_wrong_kind_says_its_kind(logic):
    _, db = logic
    for extra in ([], ["--all"]):
        r = tpindex("which", "declared", "--kind", "tool", *extra, "--db", db, ok=False)
        assert r.exit_code == 2, r.output
        assert "'declared' is a reasoning parser, not a tool parser" in r.output
        assert "--kind reasoning" in r.output


def test_not_registered_at_a_version_gives_the_versions_of_that_kind(tmp_path):
    init = LOGIC_TREE["vllm/tool_parsers/__init__.py"]
    without = init.replace("""    "quiet": ("quiet_tool_parser", "QuietToolParser"),\n""", "")
    repo = make_repo(
        tmp_path / "repo",
        {
            "v1": LOGIC_TREE,
            "v2": {"vllm/tool_parsers/__init__.py": without},
            "v3": {"vllm/tool_parsers/__init__.py": init},
        },
    )
    db = tmp_path / "x.db"
    build_tags(repo, db, "v1,v2,v3")
    r = tpindex("which", "quiet", "--kind", "tool", "--at", "v2", "--db", db, ok=False)
    assert r.exit_code == 2 and "'quiet' (tool) is not registered at v2; it is in v1, v3" in r.output


def test_hint_for_a_version_not_indexed_works_as_written(logic, tmp_path):
    repo, db = logic
    r = tpindex("which", "engined", "--at", "v0.30.0", "--db", db, ok=False)
    assert r.exit_code == 2
    assert "nearest indexed: v0.31.0, v0.32.0" in r.output
    hint = r.output.split("Hint: ", 1)[1].split("  (", 1)[0]
    cmd = shlex.split(hint.removeprefix("index it first: "))
    assert cmd[:2] == ["tpindex", "build"] and str(repo.resolve()) in cmd and str(db) in cmd
    copy = tmp_path / "copy.db"
    copy.write_bytes(db.read_bytes())
    cmd[cmd.index(str(db))] = str(copy)
    tpindex(*cmd[1:], "-q")
    assert ("v0.30.0",) in rows(copy, "select label from versions")


def test_nearest_versions_are_chosen_in_version_order():
    from indexer.answers.versions import nearest

    labels = ["v0.20.0", "v0.21.0", "v0.29.0", "v0.31.0"]
    assert nearest("v0.19.0", labels) == ["v0.20.0", "v0.21.0", "v0.29.0"]
    assert nearest("v0.30.0", labels) == ["v0.21.0", "v0.29.0", "v0.31.0"]


def test_a_directory_does_not_replace_a_release_silently(logic, tmp_path):
    repo, db = logic
    copy = tmp_path / "copy.db"
    copy.write_bytes(db.read_bytes())
    tree = tmp_path / "tree"
    (tree / "vllm").mkdir(parents=True)
    (tree / "vllm" / "__init__.py").write_text("")
    (tree / "vllm" / "_version.py").write_text('__version__ = "0.32.0"\n')
    r = tpindex("build", "--path", tree, "--db", copy, ok=False)
    assert r.exit_code == 2 and "already indexed from git" in r.output and "--label v0.32.0+local" in r.output
    assert rows(copy, "select source from versions where label = 'v0.32.0'") == [("git",)]
    tpindex("build", "--path", tree, "--label", "v0.32.0+local", "--db", copy, "-q")
    tpindex("build", "--path", tree, "--replace", "--db", copy, "-q")
    assert rows(copy, "select source from versions where label = 'v0.32.0'") == [("dir",)]


MOVED_V1 = """
from vllm.tool_parsers.abstract_tool_parser import ToolParser


def get_parser():
    class _Picked(ToolParser):
        pass

    return _Picked


class KeptToolParser(ToolParser):
    # TODO: handle nested calls
    def extract_tool_calls(self, text, request):
        return []
"""

MOVED_V2 = MOVED_V1.replace("def get_parser():", "def _compose_parser():").replace(
    "# TODO: handle nested calls", "# TODO: handle nested calls\n    # HACK: strip the sentinel first"
)


def test_diff_entries_carry_data_without_doubled_or_empty_changes(tmp_path):
    from fixtures.logic import ABSTRACT

    init = LOGIC_TREE["vllm/tool_parsers/__init__.py"]
    repo = make_repo(
        tmp_path / "repo",
        {
            "v1": {
                "vllm/tool_parsers/__init__.py": init,
                "vllm/tool_parsers/abstract_tool_parser.py": ABSTRACT,
                "vllm/tool_parsers/kept.py": MOVED_V1,
            },
            "v2": {"vllm/tool_parsers/kept.py": MOVED_V2},
        },
    )
    db = tmp_path / "x.db"
    build_tags(repo, db, "v1,v2")
    changes = json.loads(tpindex("diff", "v1", "v2", "--format", "json", "--db", db, ok=False).output)[
        "changes"
    ]
    by_type = {c["type"]: c for c in changes}
    moved = by_type["class-moved"]
    assert (moved["before"], moved["after"]) == (
        "get_parser.<locals>._Picked",
        "_compose_parser.<locals>._Picked",
    )
    assert "class-removed" not in by_type and "class-added" not in by_type
    marker = by_type["marker-added"]
    assert marker["detail"] == "HACK: strip the sentinel first" and marker["after"] == marker["detail"]
    assert marker["file"] == "vllm/tool_parsers/kept.py" and marker["line"] == line_of(MOVED_V2, "HACK")
    for c in changes:
        assert set(c) >= {"type", "kind", "name", "before", "after", "file", "line", "detail"}


def test_impl_change_without_a_new_real_file_says_no_file_change(unified_db):  # noqa: F811
    changes = json.loads(
        tpindex("diff", "v0.25.0", "v0.27.0", "--format", "json", "--db", unified_db, ok=False).output
    )["changes"]
    for c in changes:
        if c["type"] == "impl-changed" and "real file" in c["detail"]:
            before, after = c["detail"].split("(real file ", 1)[1].rstrip(")").split(" -> ")
            assert before != after


def test_one_vocabulary_in_which_export_and_diff(unified_db):  # noqa: F811
    which = json.loads(
        tpindex("which", "alpha", "--at", "v0.24.0", "--format", "json", "--db", unified_db).output
    )
    p = which["parsers"][0]
    assert {"registered_file", "registered_class", "real_file", "aliases", "stub", "reexport"} <= set(p)
    assert not {k for k in p if k.startswith("reg_") or k in ("sig", "version_ord", "alias_of")}
    assert p["stub"] is False and p["reexport"] is False and p["aliases"] == ["alpha_too"]
    export = json.loads(tpindex("export", "--at", "v0.24.0", "--db", unified_db).output)
    row = next(r for r in export["parsers"] if r["name"] == "alpha")
    assert {k: row[k] for k in row if k in p} == {k: p[k] for k in row if k in p}
    csv = tpindex("export", "--at", "v0.24.0", "--format", "csv", "--db", unified_db).output
    assert ",false," in csv and "False" not in csv and ",0,0," not in csv


def test_which_all_json_links_the_last_version_of_a_range(logic):
    _, db = logic
    h = json.loads(tpindex("which", "quiet", "--all", "--format", "json", "--db", db).output)
    (rng,) = h["kinds"][0]["ranges"]
    assert (rng["first"], rng["last"], rng["parser"]["version"]) == ("v0.31.0", "v0.32.0", "v0.32.0")
    assert "sig" not in json.dumps(h) and "version_ord" not in json.dumps(h)


def test_lines_fit_a_terminal_and_stay_whole_in_a_pipe(unified_db, monkeypatch):  # noqa: F811
    import indexer.render.text as textfmt

    piped = tpindex("which", "beta", "--at", "v0.25.0", "--db", unified_db).output
    assert max(len(line) for line in piped.splitlines()) > 100  # the registered hop, whole
    monkeypatch.setattr(textfmt, "output_width", lambda: 100)
    for args in (
        ["which", "beta", "--at", "v0.25.0"],
        ["which", "beta", "--all"],
        ["diff", "v0.24.0", "v0.27.0"],
    ):
        out = tpindex(*args, "--db", unified_db, ok=False).output
        assert max(len(line) for line in out.splitlines()) <= 100, out
    monkeypatch.setattr(textfmt, "output_width", lambda: 60)
    out = tpindex("which", "beta", "--at", "v0.25.0", "--db", unified_db).output
    assert max(len(line) for line in out.splitlines()) <= 60, out


def test_shorten_middle_keeps_the_file_name():
    from indexer.render.text import shorten_middle

    s = shorten_middle("vllm/entrypoints/openai/tool_parsers/hermes_tool_parser.py", 40)
    assert len(s) == 40 and s.endswith("hermes_tool_parser.py") and "…" in s


def test_help_lists_each_command_once_with_whole_descriptions():
    out = tpindex("--help").output
    commands = out.split("Commands:", 1)[1]
    for name in ("build", "check", "diff", "export", "serve", "versions", "which"):
        assert out.count(f"  {name} ") == 1, name
    assert "..." not in commands


def test_a_mistyped_command_suggests_the_closest():
    r = tpindex("whch", "hermes", ok=False)
    assert r.exit_code == 2 and "did you mean which?" in r.output


def test_tpindex_db_sets_the_default_database(unified_db):  # noqa: F811
    from indexer.cli.main import main

    r = CliRunner().invoke(main, ["versions"], env={"TPINDEX_DB": str(unified_db)})
    assert r.exit_code == 0 and "v0.25.0" in r.output
    assert "TPINDEX_DB" in tpindex("which", "--help").output


def test_progress_names_the_version_being_written(tmp_path):
    from fixtures.logic import TREE

    from indexer.build.pipeline import build
    from indexer.core.scope import Scope
    from indexer.sources.git import GitSource

    repo = make_repo(tmp_path / "repo", {"v1": TREE, "v2": {}})
    source = GitSource(repo)
    seen = []
    build(
        tmp_path / "x.db",
        source,
        [source.ref("v1"), source.ref("v2")],
        Scope.named("default"),
        jobs=1,
        progress=lambda label, done: seen.append((label, done)),
    )
    assert seen == [("v1", 0), ("v1", 1), ("v2", 0), ("v2", 1)]


def test_versions_json(unified_db):  # noqa: F811
    got = json.loads(tpindex("versions", "--format", "json", "--db", unified_db).output)
    assert [v["version"] for v in got] == ["v0.24.0", "v0.25.0", "v0.27.0"]
    assert set(got[0]) == {"version", "source", "origin", "files", "tool", "reasoning", "engine", "status"}
