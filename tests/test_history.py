"""History from a clone (issue 31): the commits between the indexed tags, stored at build time, answer
`log NAME A B` (the commits that touched a name's own code), `contains COMMIT|#PR` (the first indexed
release holding it, and every one that does), and the commits listed under code changes in `diff`.

The fixture repository is written here and imitates how vLLM's history is made: pull requests squashed
into one commit whose subject ends in "(#N)", a branch merged with a merge commit ("Merge pull request #N
from ..."), a patch release cut from a release branch that carries a cherry-pick of a fix made on main
(the same subject, the same PR number), a parser moved onto the parser engine (its code moves from
vllm/tool_parsers/alpha_tool_parser.py to vllm/parser/alpha.py), a change of a shared framework file,
and a branch never merged into any tag.
"""

from __future__ import annotations

import json
import shutil

import pytest
from fixtures.eras import (
    PLAIN_ABSTRACT,
    engine_adapters,
    engine_stub,
    lazy_registry,
    registered_adapters,
    tool_names,
)
from fixtures.helpers import build_tags, commit, git, rows, tpindex

INIT = lazy_registry("tool", tool_names("alpha", "beta"))

ALPHA_1 = """
from vllm.tool_parsers.abstract_tool_parser import ToolParser


class AlphaToolParser(ToolParser):
    def extract_tool_calls(self, text):
        return [text]
"""
ALPHA_2 = ALPHA_1.replace("return [text]", "return [text.strip()]")
ALPHA_3 = (
    ALPHA_2
    + """
    def extract_tool_calls_streaming(self, previous, current, delta):
        return delta
"""
)
ALPHA_4 = ALPHA_3.replace("return delta", "return delta or None")
ALPHA_5 = ALPHA_4.replace("return [text.strip()]", "return [text.strip()] if text else []")

BETA_1 = """
from vllm.tool_parsers.abstract_tool_parser import ToolParser


class BetaToolParser(ToolParser):
    def extract_tool_calls(self, text):
        return []
"""
BETA_2 = BETA_1.replace("return []", "return [] if text else None")

ALPHA_MODEL_1 = """
class AlphaParser:
    def parse(self, text):
        return [text.strip()]
"""
ALPHA_MODEL_2 = ALPHA_MODEL_1.replace("return [text.strip()]", "return [text.strip()] if text else []")
ALPHA_MODEL_WIP = ALPHA_MODEL_2.replace("if text else []", "if text else [None]")

ENGINE = """
class ParserEngine:
    def parse(self, text):
        return text
"""
ADAPTERS_1 = engine_adapters(ENGINE, "")
ADAPTERS_2 = ADAPTERS_1.replace(
    "return self._parser_engine.extract_reasoning(text, request)",
    "return self._parser_engine.extract_reasoning(text, request=request)",
)

TP = "vllm/tool_parsers"
ALPHA_FILE, BETA_FILE = f"{TP}/alpha_tool_parser.py", f"{TP}/beta_tool_parser.py"
ALPHA_MODEL, ADAPTERS = "vllm/parser/alpha.py", "vllm/parser/engine/adapters.py"
TAGS = ("v0.20.0", "v0.21.0", "v0.21.1", "v0.22.0")


def day(n: int) -> str:
    return f"2025-01-{n:02d}T10:00:00+00:00"


def write_history(repo) -> dict[str, str]:
    """The fixture repository; -> name -> commit id of each commit that matters."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    c = {}
    c["init"] = commit(repo, {"README.md": "a project\n"}, message="Initial commit", date=day(1))
    c["v0.20.0"] = commit(
        repo,
        {
            f"{TP}/__init__.py": INIT,
            f"{TP}/abstract_tool_parser.py": PLAIN_ABSTRACT,
            ALPHA_FILE: ALPHA_1,
            BETA_FILE: BETA_1,
        },
        "v0.20.0",
        message="Add the alpha and beta tool parsers (#100)",
        date=day(2),
    )
    c["c1"] = commit(
        repo, {ALPHA_FILE: ALPHA_2}, message="[Bugfix] alpha: strip whitespace (#101)", date=day(3)
    )
    git(repo, "checkout", "-q", "-b", "feature")
    c["s1"] = commit(repo, {ALPHA_FILE: ALPHA_3}, message="alpha: stream partial calls", date=day(4))
    c["s2"] = commit(repo, {ALPHA_FILE: ALPHA_4}, message="alpha: cover empty deltas", date=day(6))
    git(repo, "checkout", "-q", "main")
    c["c2"] = commit(
        repo, {"README.md": "a project with alpha\n"}, message="[Doc] mention alpha (#102)", date=day(5)
    )
    c["c3"] = commit(
        repo, {BETA_FILE: BETA_2}, message="[Bugfix] beta: handle empty output (#103)", date=day(7)
    )
    c["c7"] = commit(
        repo, {"vllm/config.py": "DEFAULT = 1\n"}, message="[Core] a new config default (#109)", date=day(7)
    )
    dates = {"GIT_AUTHOR_DATE": day(8), "GIT_COMMITTER_DATE": day(8)}
    git(
        repo,
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "Merge pull request #104 from dev/alpha-streaming",
        "feature",
        env=dates,
    )
    c["m1"] = git(repo, "rev-parse", "HEAD")
    git(repo, "tag", "v0.21.0")
    git(repo, "checkout", "-q", "-b", "releases/v0.21", "v0.21.0")
    c["p1"] = commit(
        repo, {ALPHA_FILE: ALPHA_5}, "v0.21.1", message="[Bugfix] alpha: fix empty input (#107)", date=day(12)
    )
    git(repo, "checkout", "-q", "main")
    c["c4"] = commit(
        repo,
        {
            "vllm/parser/__init__.py": "",
            "vllm/parser/engine/__init__.py": "",
            ADAPTERS: ADAPTERS_1,
            "vllm/parser/engine/registered_adapters.py": registered_adapters("alpha", "AlphaParser"),
            ALPHA_MODEL: ALPHA_MODEL_1,
            ALPHA_FILE: engine_stub("AlphaToolParser", "AlphaParserToolAdapter"),
        },
        message="[Core] Move alpha onto the parser engine (#106)",
        date=day(9),
    )
    c["c5"] = commit(
        repo, {ALPHA_MODEL: ALPHA_MODEL_2}, message="[Bugfix] alpha: fix empty input (#107)", date=day(10)
    )
    c["c6"] = commit(
        repo,
        {ADAPTERS: ADAPTERS_2},
        "v0.22.0",
        message="[Core] adapters: pass the request by name (#108)",
        date=day(11),
    )
    git(repo, "checkout", "-q", "-b", "wip")
    c["u1"] = commit(
        repo, {ALPHA_MODEL: ALPHA_MODEL_WIP}, message="WIP: alpha experiment (#999)", date=day(13)
    )
    git(repo, "checkout", "-q", "main")
    return c


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    base = tmp_path_factory.mktemp("history")
    repo = base / "repo"
    shas = write_history(repo)
    db = base / "index.db"
    build_tags(repo, db, "v0.20.0..")
    return repo, db, shas


def log_json(db, *args) -> dict:
    return json.loads(tpindex("log", *args, "--format", "json", "--db", db).output)


def shas_of(kind_log: dict) -> list[str]:
    return [c["sha"] for c in kind_log["commits"]]


def git_log(repo, a: str, b: str, files: list[str], *options: str) -> list[str]:
    out = git(repo, "log", "--reverse", "--format=%H", *options, f"{a}..{b}", "--", *files)
    return out.split() if out else []


# -- what is stored, and when ------------------------------------------------------------------------------


def stored(db) -> dict:
    """The stored history with commit ids for row ids, comparable across databases."""
    sha = dict(rows(db, "select id, sha from commits"))
    return {
        "commits": rows(
            db, "select sha, parents is null, date, author, subject, pr from commits order by sha"
        ),
        "parents": sorted(
            (sha[i], [sha[int(p)] for p in parents.split()])
            for i, parents in rows(db, "select id, parents from commits where parents is not null")
        ),
        "files": sorted(
            (sha[i], *rest)
            for i, *rest in rows(db, "select commit_id, path, added, removed, own from commit_files")
        ),
        "tips": rows(db, "select sha from history_tips order by sha"),
        "base": rows(db, "select value from meta where key = 'history_base'"),
    }


def test_only_the_parsed_paths_are_stored_each_commit_once(clone):
    repo, db, c = clone
    got = stored(db)
    assert len({r[0] for r in got["commits"]}) == len(got["commits"])
    # the commits after v0.20.0 (the base), at the parsed paths only: not README.md
    assert {r[1] for r in got["files"]} == {
        ALPHA_FILE,
        BETA_FILE,
        ALPHA_MODEL,
        ADAPTERS,
        "vllm/parser/__init__.py",
        "vllm/parser/engine/__init__.py",
        "vllm/parser/engine/registered_adapters.py",
    }
    below = {r[0] for r in got["commits"] if r[1]}
    assert below == {c["init"], c["v0.20.0"]}  # at and below the tags' common base: listed, no graph
    assert c["u1"] not in {r[0] for r in got["commits"]}  # in no indexed tag's history


@pytest.mark.parametrize(
    "order",
    [("v0.20.0..v0.21.0", "v0.21.1.."), ("v0.21.0..", "v0.20.0"), ("v0.22.0", "v0.21.1", "v0.20.0..v0.21.0")],
)
def test_builds_in_any_order_store_the_same_history(clone, tmp_path, order):
    repo, db, c = clone
    split = tmp_path / "split.db"
    for spec in order:
        build_tags(repo, split, spec)
    assert stored(split) == stored(db)


@pytest.mark.parametrize("first", ["v0.20.0..", "v0.20.0..v0.21.0"])  # then every tag, new ones too
def test_a_wider_scope_adds_its_paths_to_the_stored_commits(clone, tmp_path, first):
    from indexer.core.scope import Scope

    repo, db, c = clone
    widened, wide = tmp_path / "widened.db", tmp_path / "wide.db"
    build_tags(repo, widened, first)
    assert "vllm/config.py" not in {r[1] for r in stored(widened)["files"]}
    build_tags(repo, widened, "v0.20.0..", scope=Scope.named("all"))
    build_tags(repo, wide, "v0.20.0..", scope=Scope.named("all"))
    assert stored(widened) == stored(wide)
    assert (c["c7"], "vllm/config.py", 1, 0, None) in stored(wide)["files"]


def test_a_commit_message_that_is_not_utf8_is_stored_readable(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(
        repo,
        {f"{TP}/__init__.py": INIT, f"{TP}/abstract_tool_parser.py": PLAIN_ABSTRACT, ALPHA_FILE: ALPHA_1},
        "v0.20.0",
    )
    (repo / ALPHA_FILE).write_text(ALPHA_2.lstrip("\n"))
    (repo / "message").write_bytes(b"[Bugfix] caf\xe9 parser (#7)\n")  # Latin-1, no encoding header
    git(repo, "commit", "-q", "-a", "-F", "message")
    git(repo, "tag", "v0.21.0")
    db = tmp_path / "index.db"
    build_tags(repo, db, "v0.20.0..")
    # as git log shows it (git reads the bytes that are not UTF-8 as Latin-1)
    assert rows(db, "select subject, pr from commits where pr is not null") == [
        (git(repo, "log", "-1", "--format=%s"), 7)
    ]
    assert "caf" in rows(db, "select subject from commits where pr = 7")[0][0]


def test_a_database_built_before_history_gets_it_on_the_next_build(clone, tmp_path):
    repo, db, c = clone
    old = tmp_path / "old.db"
    shutil.copy(db, old)
    import sqlite3

    conn = sqlite3.connect(old)
    with conn:
        for table in ("commit_files", "commits", "history_tips"):
            conn.execute(f"delete from {table}")
        conn.execute("delete from meta where key like 'history_%'")
    conn.close()
    stats = build_tags(repo, old, "v0.20.0..")
    assert stats.versions_added == [] and stats.versions_reindexed == []
    assert stored(old) == stored(db)


# -- log ---------------------------------------------------------------------------------------------------


def test_log_lists_squashed_prs_and_a_merge_on_the_first_parent_line(clone):
    repo, db, c = clone
    data = log_json(db, "alpha", "v0.20.0", "v0.21.0")
    assert (data["name"], data["a"], data["b"], data["first_parent"]) == ("alpha", "v0.20.0", "v0.21.0", True)
    (tool,) = data["kinds"]
    assert tool["kind"] == "tool" and tool["files_a"] == tool["files_b"] == [ALPHA_FILE]
    assert tool["registered_a"] is tool["registered_b"] is True
    assert shas_of(tool) == [c["c1"], c["m1"]]  # the README and beta commits touched none of its files
    assert shas_of(tool) == git_log(repo, "v0.20.0", "v0.21.0", [ALPHA_FILE], "--first-parent")
    fix, merge = tool["commits"]
    assert (fix["subject"], fix["pr"], fix["merge"], fix["date"]) == (
        "[Bugfix] alpha: strip whitespace (#101)",
        101,
        False,
        day(3),
    )
    assert fix["files"] == [{"file": ALPHA_FILE, "added": 1, "removed": 1}]
    assert fix["url"] == f"https://github.com/vllm-project/vllm/commit/{c['c1']}"
    assert fix["pr_url"] == "https://github.com/vllm-project/vllm/pull/101"
    # the merge, against its first parent: everything the branch brought to the file
    assert (merge["pr"], merge["merge"]) == (104, True)
    assert merge["files"] == [{"file": ALPHA_FILE, "added": 3, "removed": 0}]


def test_log_all_parents_lists_the_branch_commits_instead_of_the_merge(clone):
    repo, db, c = clone
    (tool,) = log_json(db, "alpha", "v0.20.0", "v0.21.0", "--all-parents")["kinds"]
    assert shas_of(tool) == [c["c1"], c["s1"], c["s2"]]
    assert shas_of(tool) == git_log(repo, "v0.20.0", "v0.21.0", [ALPHA_FILE])
    assert [x["pr"] for x in tool["commits"]] == [101, None, None]  # branch commits name no PR
    assert [x["files"][0]["added"] for x in tool["commits"]] == [1, 3, 1]


def test_log_follows_the_code_when_it_moves_to_another_file(clone):
    repo, db, c = clone
    (tool,) = log_json(db, "alpha", "v0.21.0", "v0.22.0")["kinds"]
    assert tool["files_a"] == [ALPHA_FILE]
    assert tool["files_b"] == [
        ALPHA_MODEL,
        ALPHA_FILE,
    ]  # the engine class's file, and the stub still registered
    assert shas_of(tool) == [c["c4"], c["c5"]]  # not the shared adapters change
    assert shas_of(tool) == git_log(repo, "v0.21.0", "v0.22.0", [ALPHA_FILE, ALPHA_MODEL], "--first-parent")
    move = tool["commits"][0]
    assert [f["file"] for f in move["files"]] == [ALPHA_MODEL, ALPHA_FILE]
    assert move["files"][0]["removed"] == 0 and move["files"][0]["added"] == len(
        ALPHA_MODEL_1.strip().splitlines()
    )
    # from the patch release: its cherry-pick is not in v0.22.0's history
    (tool,) = log_json(db, "alpha", "v0.21.1", "v0.22.0")["kinds"]
    assert shas_of(tool) == [c["c4"], c["c5"]]
    (tool,) = log_json(db, "alpha", "v0.21.0", "v0.21.1")["kinds"]
    assert shas_of(tool) == [c["p1"]]


def test_log_framework_adds_the_shared_framework_files(clone):
    repo, db, c = clone
    (tool,) = log_json(db, "alpha", "v0.21.0", "v0.22.0", "--framework")["kinds"]
    assert ADAPTERS in tool["files_b"]
    assert shas_of(tool) == [c["c4"], c["c5"], c["c6"]]
    assert [f["file"] for f in tool["commits"][2]["files"]] == [ADAPTERS]


def test_log_text_and_markdown(clone):
    repo, db, c = clone
    out = tpindex("log", "alpha", "v0.20.0", "v0.21.0", "--db", db).output
    lines = out.splitlines()
    assert (
        lines[0] == "alpha (tool parser): 2 commits from v0.20.0 to v0.21.0 (first parent) touching its code"
    )
    assert f"{c['c1'][:10]}  2025-01-03  [Bugfix] alpha: strip whitespace (#101)" in out
    assert f"{ALPHA_FILE} +1 -1" in out
    assert "Merge pull request #104 from dev/alpha-streaming (merge)" in out
    md = tpindex("log", "alpha", "v0.20.0", "v0.21.0", "--format", "markdown", "--db", db).output
    assert f"[{c['c1'][:10]}](https://github.com/vllm-project/vllm/commit/{c['c1']})" in md
    assert "[#101](https://github.com/vllm-project/vllm/pull/101)" in md
    out = tpindex("log", "beta", "v0.21.0", "v0.22.0", "--db", db).output
    assert "no commit from v0.21.0 to v0.22.0 touched its code" in out


def test_log_errors_say_what_to_ask(clone):
    repo, db, c = clone
    r = tpindex("log", "alpah", "v0.20.0", "v0.21.0", "--db", db, ok=False)
    assert r.exit_code == 2 and "did you mean: alpha" in r.output
    r = tpindex("log", "alpha", "v0.20.0", "v0.99.0", "--db", db, ok=False)
    assert r.exit_code == 2 and "v0.99.0 is not indexed" in r.output and "Hint:" in r.output
    r = tpindex("log", "alpha", "v0.20.0", "v0.21.0", "--kind", "reasoning", "--db", db, ok=False)
    assert r.exit_code == 2 and "not a reasoning parser" in r.output


def test_log_json_follows_its_schema(clone):
    import jsonschema

    from indexer.schemas import load

    repo, db, c = clone
    jsonschema.Draft202012Validator(load("log")).validate(
        log_json(db, "alpha", "v0.20.0", "v0.22.0", "--framework")
    )


# -- contains ----------------------------------------------------------------------------------------------


def contains_json(db, target: str, ok=True) -> dict:
    r = tpindex("contains", target, "--format", "json", "--db", db, ok=False)
    assert r.exit_code == (0 if ok else 1), r.output
    return json.loads(r.output)


def test_contains_a_branch_commit_merged_later(clone):
    repo, db, c = clone
    data = contains_json(db, c["s1"])
    (found,) = data["commits"]
    assert (found["commit"]["sha"], found["commit"]["subject"]) == (c["s1"], "alpha: stream partial calls")
    assert data["first"] == "v0.21.0"
    assert data["versions"] == ["v0.21.0", "v0.21.1", "v0.22.0"]
    assert data["not_containing"] == ["v0.20.0"]
    assert data["without_history"] == []
    # an abbreviated id, as people paste them
    assert contains_json(db, c["s1"][:8])["first"] == "v0.21.0"


def test_contains_a_pr_found_by_its_subject_on_main_and_on_a_release_branch(clone):
    repo, db, c = clone
    data = contains_json(db, "#107")
    assert [f["commit"]["sha"] for f in data["commits"]] == [c["c5"], c["p1"]]
    assert [(f["first"], f["versions"]) for f in data["commits"]] == [
        ("v0.22.0", ["v0.22.0"]),
        ("v0.21.1", ["v0.21.1"]),
    ]
    assert data["first"] == "v0.21.1"  # the patch release, first in version order
    assert data["versions"] == ["v0.21.1", "v0.22.0"] and data["not_containing"] == ["v0.20.0", "v0.21.0"]
    # a merged pull request, by its merge commit's subject
    assert contains_json(db, "#104")["versions"] == ["v0.21.0", "v0.21.1", "v0.22.0"]
    out = tpindex("contains", "#107", "--db", db).output
    assert "#107: first in v0.21.1" in out.splitlines()[0]
    assert f"{c['p1'][:10]}  2025-01-12  [Bugfix] alpha: fix empty input (#107)" in out


def test_contains_a_commit_in_no_indexed_tag(clone):
    repo, db, c = clone
    data = contains_json(db, c["u1"], ok=False)
    assert data["first"] is None and data["versions"] == []
    assert data["not_containing"] == list(TAGS)
    r = tpindex("contains", c["u1"], "--db", db, ok=False)
    assert r.exit_code == 1 and "in no indexed version" in r.output
    data = contains_json(db, "#555", ok=False)
    assert data["commits"] == [] and data["versions"] == []


def test_contains_a_commit_older_than_every_indexed_tag(clone):
    repo, db, c = clone
    for sha in (c["init"], c["v0.20.0"]):
        data = contains_json(db, sha)
        assert data["first"] == "v0.20.0" and data["versions"] == list(TAGS)


def test_contains_refuses_what_is_neither_a_commit_nor_a_pr(clone):
    repo, db, c = clone
    r = tpindex("contains", "not-a-sha", "--db", db, ok=False)
    assert r.exit_code == 2 and "Hint:" in r.output
    r = tpindex("contains", "abc", "--db", db, ok=False)  # too short to be one commit
    assert r.exit_code == 2 and "at least 4" in r.output


def test_contains_json_follows_its_schema(clone):
    import jsonschema

    from indexer.schemas import load

    repo, db, c = clone
    jsonschema.Draft202012Validator(load("contains")).validate(contains_json(db, "#107"))


def test_the_python_api_answers_like_the_cli(clone):
    from indexer.api import Index

    repo, db, c = clone
    ix = Index(db)
    assert ix.log("alpha", "v0.21.0", "v0.22.0", framework=True).to_json() == log_json(
        db, "alpha", "v0.21.0", "v0.22.0", "--framework"
    )
    assert ix.contains("#107").to_json() == contains_json(db, "#107")


def test_answers_come_from_the_database_when_the_clone_is_gone(tmp_path):
    repo = tmp_path / "repo"
    c = write_history(repo)
    db = tmp_path / "index.db"
    build_tags(repo, db, "v0.20.0..")
    shutil.rmtree(repo)
    (tool,) = log_json(db, "alpha", "v0.20.0", "v0.21.0")["kinds"]
    assert shas_of(tool) == [c["c1"], c["m1"]]
    assert contains_json(db, c["s2"])["first"] == "v0.21.0"


# -- databases without commits -----------------------------------------------------------------------------


def test_a_directory_database_says_why_it_cannot_answer(tmp_path):
    tree = tmp_path / "site" / "vllm"
    (tree / "tool_parsers").mkdir(parents=True)
    (tree / "__init__.py").write_text("")
    (tree / "tool_parsers" / "__init__.py").write_text(INIT.lstrip("\n"))
    (tree / "tool_parsers" / "abstract_tool_parser.py").write_text(PLAIN_ABSTRACT.lstrip("\n"))
    (tree / "tool_parsers" / "alpha_tool_parser.py").write_text(ALPHA_1.lstrip("\n"))
    db = tmp_path / "dir.db"
    tpindex("build", "--path", tree, "--label", "v0.20.0", "--db", db, "-q", "-j", "1")
    r = tpindex("contains", "#101", "--db", db, ok=False)
    assert r.exit_code == 2
    assert "no commits" in r.output and "v0.20.0 (a directory)" in r.output
    assert (
        "Hint: build them from a vLLM clone: tpindex build --repo PATH/TO/vllm --tags v0.20.0 --replace"
        in r.output
    )
    r = tpindex("log", "alpha", "v0.20.0", "v0.20.0", "--db", db, ok=False)
    assert r.exit_code == 2 and "no commits" in r.output and "--tags v0.20.0" in r.output


def test_a_package_index_database_says_why_it_cannot_answer(monkeypatch, tmp_path):
    from fixtures.pypi import FakeIndex, cli_build

    fake = FakeIndex()
    import http.server
    import threading

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), fake.handler())
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/simple"
    try:
        for v in ("0.30.0", "0.32.0"):
            fake.add(v)
        db = tmp_path / "pypi.db"
        r = cli_build(monkeypatch, fake, "--tags", "v0.30.0..", "--cache-dir", tmp_path / "cache", "--db", db)
        assert r.exit_code == 0, r.output
    finally:
        server.shutdown()
        server.server_close()
    for args in (["contains", "#52418"], ["log", "alpha", "v0.30.0", "v0.32.0"]):
        r = tpindex(*args, "--db", db, ok=False)
        assert r.exit_code == 2, r.output
        assert "v0.30.0, v0.32.0 (the package index)" in r.output and "no commits" in r.output
        assert "--tags v0.30.0,v0.32.0" in r.output
    # through the query layer and MCP alike
    from indexer.api import Index
    from indexer.core.problems import Problem

    with pytest.raises(Problem) as e:
        Index(db).contains("#52418")
    assert "no commits" in e.value.message


def test_a_database_of_the_schema_before_history_is_refused_until_a_build_migrates_it(clone, tmp_path):
    import sqlite3

    repo, db, c = clone
    old = tmp_path / "old.db"
    shutil.copy(db, old)
    conn = sqlite3.connect(old)
    with conn:
        for table in ("commit_files", "commits", "history_tips"):
            conn.execute(f"drop table {table}")
        conn.execute("update meta set value = '6' where key = 'schema_version'")
    conn.close()
    # readers refuse a schema they cannot read, naming the build that migrates it (issue 22)
    for args in (
        ["log", "alpha", "v0.20.0", "v0.21.0"],
        ["contains", "#101"],
        ["diff", "v0.20.0", "v0.21.0"],
    ):
        r = tpindex(*args, "--db", old, ok=False)
        assert r.exit_code == 2 and "built by an older tpindex (schema 6" in r.output, r.output
        assert f"Hint: run tpindex build --db {old}" in r.output
    stats = build_tags(repo, old, "v0.20.0..")  # migrates and walks, re-indexes nothing
    assert stats.versions_added == stats.versions_reindexed == [] and stats.commits == len(
        stored(db)["commits"]
    )
    assert stored(old) == stored(db)


def test_a_mixed_database_answers_for_its_clone_versions_and_names_the_others(clone, tmp_path):
    repo, db, c = clone
    tree = tmp_path / "site" / "vllm"
    (tree / "tool_parsers").mkdir(parents=True)
    (tree / "__init__.py").write_text("")
    for path, text in (
        (f"{TP}/__init__.py", INIT),
        (f"{TP}/abstract_tool_parser.py", PLAIN_ABSTRACT),
        (ALPHA_FILE, ALPHA_1),
    ):
        (tree.parent / path).write_text(text.lstrip("\n"))
    mixed = tmp_path / "mixed.db"
    shutil.copy(db, mixed)
    tpindex("build", "--path", tree, "--label", "v0.23.0+local", "--db", mixed, "-q", "-j", "1")
    data = contains_json(mixed, c["c1"])
    assert data["versions"] == ["v0.21.0", "v0.21.1", "v0.22.0"] and data["without_history"] == [
        "v0.23.0+local"
    ]


# -- diff and the parser page ------------------------------------------------------------------------------


def test_diff_lists_the_commits_of_each_code_changed_name(clone):
    repo, db, c = clone
    changes = json.loads(
        tpindex("diff", "v0.20.0", "v0.21.0", "--format", "json", "--db", db, ok=False).output
    )["changes"]
    by_name = {ch["name"]: ch for ch in changes if ch["type"] == "code-changed"}
    assert [x["sha"] for x in by_name["alpha"]["commits"]] == [c["c1"], c["m1"]]
    assert [(x["subject"], x["pr"]) for x in by_name["beta"]["commits"]] == [
        ("[Bugfix] beta: handle empty output (#103)", 103)
    ]
    moved = [
        ch
        for ch in json.loads(
            tpindex("diff", "v0.21.0", "v0.22.0", "--format", "json", "--db", db, ok=False).output
        )["changes"]
        if ch["name"] == "alpha"
    ]
    assert moved[0]["type"] == "impl-changed" and [x["sha"] for x in moved[0]["commits"]] == [
        c["c4"],
        c["c5"],
    ]
    text = tpindex("diff", "v0.20.0", "v0.21.0", "--db", db, ok=False).output
    assert f"commit {c['c1'][:10]} [Bugfix] alpha: strip whitespace (#101)" in text
    md = tpindex("diff", "v0.20.0", "v0.21.0", "--format", "markdown", "--db", db, ok=False).output
    assert f"[{c['c3'][:10]}](https://github.com/vllm-project/vllm/commit/{c['c3']})" in md
    assert "[#103](https://github.com/vllm-project/vllm/pull/103)" in md


def test_diff_json_with_commits_follows_its_schema(clone):
    import jsonschema

    from indexer.schemas import load

    repo, db, c = clone
    data = json.loads(tpindex("diff", "v0.20.0", "v0.22.0", "--format", "json", "--db", db, ok=False).output)
    jsonschema.Draft202012Validator(load("diff")).validate(data)


def test_parser_page_lists_the_commits_of_each_code_change(clone):
    from fixtures.serve import serve

    repo, db, c = clone
    client = serve(db)
    try:
        page = client.html("/-/parser/tool/alpha")
        assert f"https://github.com/vllm-project/vllm/commit/{c['c1']}" in page
        assert "[Bugfix] alpha: strip whitespace (#101)" in page
        assert "https://github.com/vllm-project/vllm/pull/106" in page
    finally:
        client.close()
