"""Reliability IV (issue 38): what an adversarial pass over fit, replay, history, the build and the server broke,
each stated as what must happen instead. Hostile repositories are built here, from hand-written files (no
vLLM code); the servers of these items are driven for real in test_hostile_server.py.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

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


# -- 11. a version label with a space; 18. a --path DIR edited since; 19. not-replayable ------------------------


@pytest.fixture
def replay_cache(tmp_path, monkeypatch):
    """A replay cache of the test's own; the fixture trees need no third-party package: the test interpreter is
    the replay interpreter, without a warm server (nothing outlives the test)."""
    import sys

    root = tmp_path / "replay-cache"
    monkeypatch.setenv("TPINDEX_REPLAY_CACHE", str(root))
    monkeypatch.setenv("TPINDEX_REPLAY_PYTHON", sys.executable)
    monkeypatch.setenv("TPINDEX_REPLAY_IDLE", "0")
    return root


def write_tree(root: Path, files: dict[str, str | None]) -> Path:
    for path, text in files.items():
        if text is not None:
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text)
    return root


def test_a_directory_version_whose_label_has_a_space_replays_and_leaves_no_temporary_directory(
    tmp_path, replay_cache, monkeypatch
):
    import tempfile

    from fixtures.replay_trees import CALL, history

    from indexer.api import Index

    tree = write_tree(tmp_path / "tree", history()["v0.6.3"])
    db = tmp_path / "t.db"
    tpindex("build", "--path", tree, "--label", "v0.6.3 local", "--db", db, "-q")
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    (v,) = Index(db).replay("fixture_json", at="v0.6.3 local", text=CALL, modes=["nonstream"]).versions
    assert v.version == "v0.6.3 local" and v.status == "ok", v.error
    assert [(c.name, c.arguments) for c in v.modes[0].calls] == [("get_weather", {"city": "Paris"})]
    assert list(temp.iterdir()) == []  # the run's work directory is gone


def test_replay_refuses_a_directory_whose_indexed_files_changed_since(tmp_path, replay_cache):
    from fixtures.replay_trees import CALL, history

    from indexer.api import Index
    from indexer.core.problems import Problem

    tree = write_tree(tmp_path / "tree", history()["v0.6.3"])
    db = tmp_path / "t.db"
    tpindex("build", "--path", tree, "--label", "v0.6.3", "--db", db, "-q")
    parser = tree / "vllm/entrypoints/openai/tool_parsers/fixture_tool_parser.py"
    parser.write_text(parser.read_text().replace("def extract_tool_calls(", "def extract_tool_calls_edited("))
    with pytest.raises(Problem) as e:
        Index(db).replay("fixture_json", at="v0.6.3", text=CALL, modes=["nonstream"])
    assert "changed since" in e.value.message and "fixture_tool_parser.py" in e.value.message
    assert "tpindex build --path" in e.value.hint
    (tmp_path / "out.txt").write_text(CALL)
    result = tpindex(
        "replay", "fixture_json", "--at", "v0.6.3", "--text", tmp_path / "out.txt", "--db", db, ok=False
    )
    assert result.exit_code == 2 and "changed since" in result.output and "Traceback" not in result.output


def no_registry_tree() -> dict[str, str | None]:
    """The v0.6.3 fixture tree as the era before the registry had it: the parser undecorated, no manager in
    the package, the CLI's choices naming it, the serving code picking the class by its name."""
    from fixtures.replay_trees import ABSTRACT, JSON_PARSER, history

    tp = "vllm/entrypoints/openai/tool_parsers/"
    files = dict(history()["v0.6.3"])
    for path in list(
        files
    ):  # every other parser of the fixture's tree: the era had one class, named by the CLI
        if (
            path.startswith(tp)
            and path.endswith("_tool_parser.py")
            and not path.endswith("/fixture_tool_parser.py")
        ):
            files[path] = None
    files[tp + "__init__.py"] = "from .fixture_tool_parser import FixtureJsonToolParser\n"
    files[tp + "abstract_tool_parser.py"] = ABSTRACT[: ABSTRACT.index("class ToolParserManager")]
    files[tp + "fixture_tool_parser.py"] = JSON_PARSER.replace(
        '@ToolParserManager.register_module("fixture_json")\n', ""
    ).replace("ToolParser, ToolParserManager", "ToolParser")
    files["vllm/entrypoints/openai/cli_args.py"] = (
        "def make_arg_parser(parser):\n"
        '    parser.add_argument("--tool-call-parser", type=str, choices=["fixture_json"], default=None)\n'
        "    return parser\n"
    )
    files["vllm/entrypoints/openai/serving_chat.py"] = (
        "from vllm.entrypoints.openai.tool_parsers import FixtureJsonToolParser\n\n\n"
        "class OpenAIServingChat:\n"
        "    def __init__(self, tool_parser):\n"
        '        if tool_parser == "fixture_json":\n'
        "            self.tool_parser = FixtureJsonToolParser\n"
    )
    return files


def test_a_tree_without_a_registry_is_not_replayable_not_an_error_of_its_code(tmp_path, replay_cache):
    from fixtures.replay_trees import CALL

    from indexer.api import Index

    repo = make_repo(tmp_path / "repo", {"v0.6.0": no_registry_tree()})
    db = tmp_path / "t.db"
    tpindex("build", "--repo", repo, "--tags", "v0.6.0", "--db", db, "-q")
    assert rows(db, "select name from parser_map where kind = 'tool'") == [("fixture_json",)]
    (v,) = Index(db).replay("fixture_json", at="v0.6.0", text=CALL).versions
    assert v.status == "not-replayable" and "no tool-parser registry" in v.error, (v.status, v.error)
    assert v.modes == []
    (tmp_path / "out.txt").write_text(CALL)
    out = tpindex(
        "replay", "fixture_json", "--at", "v0.6.0", "--text", tmp_path / "out.txt", "--db", db
    ).output
    assert "not-replayable" in out and "LookupError" not in out


# -- 11. where on what is no name; check-plugin on a long chain; 21. bases defined later or cyclic --------------


@pytest.mark.parametrize("query", ["tool-call-parser", "foo bar", 'a"b', "\x00", "vllm/x.py:foo-bar"])
def test_where_says_in_one_line_that_a_query_is_neither_a_name_nor_a_path(tree_db, query):
    from indexer.api import Index
    from indexer.core.problems import Problem

    with pytest.raises(Problem) as e:
        Index(tree_db).where(query)
    assert "neither a Python name nor a path" in e.value.message and "tpindex grep" in e.value.hint
    fails("where", query, "--db", tree_db, words=["neither a Python name nor a path"])


@pytest.fixture(scope="module")
def plugin_db(tmp_path_factory):
    from fixtures.helpers import build_tags
    from fixtures.plugin_eras import history

    root = tmp_path_factory.mktemp("plugin")
    db = root / "i.db"
    build_tags(make_repo(root / "repo", history()), db, "v0.10.0..")
    return db


IMPORT_BASE = """try:
    from vllm.tool_parsers import ToolParser
except ImportError:
    from vllm.entrypoints.openai.tool_parsers import ToolParser
"""


def test_check_plugin_follows_a_chain_of_a_thousand_classes(plugin_db):
    from indexer.api import Index

    chain = (
        IMPORT_BASE
        + "\n\nclass C0(ToolParser):\n    def extract_tool_calls(self, text, request):\n        return None\n"
    )
    chain += "".join(f"\n\nclass C{i}(C{i - 1}):\n    pass\n" for i in range(1, 1000))
    report = Index(plugin_db).check_plugin(chain.encode())
    assert report.compatible and not report.broken
    last = [f for v in report.versions for f in v.findings if f.subject.startswith("C999(")]
    assert last and all(f.status == "ok" for f in last)


@pytest.mark.parametrize(
    ("source", "subject", "words"),
    [
        ("class A(B):\n    pass\n\n\nclass B(ToolParser):\n    pass\n", "A(B)", "B, defined after it"),
        ("class A(B):\n    pass\n\n\nclass B(A):\n    pass\n", "A(B)", "B, defined after it"),
        ("class S(S):\n    pass\n", "S(S)", "derives from itself"),
    ],
)
def test_check_plugin_calls_a_base_defined_later_or_cyclic_broken(plugin_db, source, subject, words):
    from indexer.api import Index

    report = Index(plugin_db).check_plugin((IMPORT_BASE + "\n\n" + source).encode())
    assert not report.compatible and report.broken
    for v in report.versions:
        (f,) = [f for f in v.findings if f.subject == subject and f.what == "base"]
        assert f.status == "broken" and words in f.message and "NameError" in f.message


# -- 12. every link built from the upstream takes the one validated path ----------------------------------------


@pytest.mark.parametrize(
    "stored", ["git@github.com:vllm-project/vllm.git", "file:///srv/vllm", "javascript:x"]
)
def test_every_page_of_a_clone_built_database_with_history_answers_whatever_upstream_is_stored(
    hostile_history, tmp_path, stored
):
    """A database built from a clone (its history stored) whose stored upstream is not an http(s) URL (an
    older tpindex, or written by hand): pages, log and contains answer, without links upstream."""
    from fixtures.serve import serve

    _, built, _ = hostile_history
    db = tmp_path / "t.db"
    db.write_bytes(built.read_bytes())
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("insert or replace into meta(key, value) values ('upstream', ?)", [stored])
    conn.close()
    client = serve(db)
    try:
        for page in ("/-/parser/tool/hermes", "/-/parser/tool/hermes?v=v0.6.3", "/-/version/v0.7.1", "/"):
            r = client.get(page)
            assert r.status_code == 200, (page, r.status_code, r.text[-2000:])
            assert stored not in r.text
    finally:
        client.close()
    log = json.loads(tpindex("log", "hermes", "v0.6.3", "v0.7.1", "--db", db, "--format", "json").output)
    assert [(c["url"], c["pr_url"]) for k in log["kinds"] for c in k["commits"]] == [(None, None)]
    assert "fix" in tpindex("log", "hermes", "v0.6.3", "v0.7.1", "--db", db, "--format", "markdown").output


# -- 13. every third-party module the package imports comes from a declared dependency ----------------------


def test_every_third_party_module_the_package_imports_is_a_declared_dependency():
    """Read with ast (imports inside functions too): each top-level module outside the standard library comes
    from a distribution that pyproject.toml's dependencies (not an extra) bring, directly or through theirs
    (pygments came only through the test extra's pytest: a plain install served 500 on /-/source)."""
    import ast
    import importlib.metadata as md
    import re
    import sys
    import tomllib

    from packaging.requirements import Requirement

    root = Path(__file__).resolve().parents[1]
    imported = set()
    for path in (root / "indexer").rglob("*.py"):
        if "child" in path.relative_to(root / "indexer").parts:  # run by the replay interpreter
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                imported.add(node.module.split(".")[0])
    third_party = sorted(m for m in imported if m not in sys.stdlib_module_names and m != "indexer")

    def norm(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    declared = tomllib.loads((root / "pyproject.toml").read_text())["project"]["dependencies"]
    brought, todo = set(), [Requirement(r).name for r in declared]
    while todo:
        name = norm(todo.pop())
        if name in brought:
            continue
        brought.add(name)
        for r in md.requires(name) or []:
            req = Requirement(r)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    dists = md.packages_distributions()
    missing = {m: dists.get(m) for m in third_party if not {norm(d) for d in dists.get(m, [])} & brought}
    assert not missing, f"imported but not brought by a declared dependency: {missing}"


# -- 15. check verifies grep's index and where's words ----------------------------------------------------------


def test_check_finds_a_file_whose_postings_grep_reads_are_gone(hostile_history, tmp_path):
    from indexer.store import code

    _, built, _ = hostile_history
    db = tmp_path / "t.db"
    db.write_bytes(built.read_bytes())
    conn = sqlite3.connect(db)
    row, packed = conn.execute(
        "select t.id, t.lines from code_texts t join units u on u.blob_id = t.blob_id"
        " where u.path like '%mistral_tool_parser.py'"
    ).fetchone()
    with conn:
        conn.execute(
            "insert into code_postings(code_postings, rowid, lines) values ('delete', ?, ?)",
            [row, code.document(code.unpack_ids(packed))],
        )
    conn.close()
    assert "class Mistral" in tpindex("show", f"{TP}/mistral_tool_parser.py", "--db", db).output
    assert "mistral_tool_parser.py" not in tpindex("grep", "class Mistral", "--db", db, ok=False).output
    result = tpindex("check", "--db", db, ok=False)
    assert result.exit_code != 0 and "grep's index (code_postings)" in result.output, result.output


def test_check_finds_a_file_whose_words_where_reads_are_gone(tree_db, tmp_path):
    db = tmp_path / "t.db"
    db.write_bytes(tree_db.read_bytes())
    assert tpindex("check", "--db", db).exit_code == 0
    conn = sqlite3.connect(db)
    key = conn.execute("select max(id) from tree_words_docsize").fetchone()[0]
    with conn:  # what a lost document of a contentless index leaves: no row of it anywhere
        conn.execute("insert into tree_words(tree_words) values ('delete-all')")
        conn.execute("insert into tree_words(rowid, words) values (?, 'x')", [key])
        conn.execute("insert into tree_words(tree_words, rowid, words) values ('delete', ?, 'x')", [key])
    conn.close()
    result = tpindex("check", "--db", db, ok=False)
    assert result.exit_code != 0 and "where's words (tree_words) hold nothing" in result.output, result.output


# -- 16. a timed-out search is never kept by the response cache ------------------------------------------------


def test_a_search_stopped_at_its_time_limit_is_answered_503_and_never_cached(built):
    from urllib.parse import quote

    from fixtures.serve import serve

    from indexer.serve import cache

    client = serve(built, time_limit_ms=100)
    try:
        url = f"/-/grep?q={quote('(.|.)*[#][@]')}"
        for _ in range(2):
            r = client.get(url)
            assert r.status_code == 503 and "took longer than its time limit" in r.text
        stats = cache.of(client.ds).stats()
        assert stats["entries"] == 0 and stats["hits"] == 0 and stats["misses"] == 2, stats
    finally:
        client.close()


# -- 17. a served database replaced by mv is read from its new file ----------------------------------------------


def test_a_served_database_replaced_by_mv_is_served_from_the_new_file(hostile_history, built, tmp_path):
    import os

    from fixtures.loopback import get, serving

    _, three, _ = hostile_history  # v0.6.3, v0.7.0, v0.7.1
    served = tmp_path / "served.db"
    served.write_bytes(built.read_bytes())  # v0.6.3, v0.7.0
    for cache in ("0", "64"):  # with and without the response cache
        with serving(served, "--cache-mb", cache) as (url, _):
            status, page = get(url + "/tpindex/versions.json?_shape=array")
            assert status == 200 and "v0.7.1" not in page
            assert get(url + "/-/version/v0.7.1")[0] == 404
            new = tmp_path / "new.db"
            new.write_bytes(three.read_bytes())
            os.replace(new, served)  # what `mv new.db served.db` does
            status, page = get(url + "/tpindex/versions.json?_shape=array")
            assert status == 200 and "v0.7.1" in page, page
            assert get(url + "/-/version/v0.7.1")[0] == 200
            assert "v0.7.1" in get(url + "/-/parser/tool/hermes")[1]
        served.write_bytes(built.read_bytes())


# -- 7. answers bounded: a parser page and MCP's log on a long history ------------------------------------------


@pytest.fixture(scope="module")
def long_history(tmp_path_factory):
    """hermes's file changed by 30 commits between v0.7.0 and v0.7.1, built from the clone."""
    root = tmp_path_factory.mktemp("long")
    repo = make_repo(root / "repo", HISTORY)
    text = (repo / TP / "hermes_tool_parser.py").read_text()
    for i in range(30):  # its streaming method returns another value each time
        changed = text.replace("return None", f"return {i}")
        commit(repo, {f"{TP}/hermes_tool_parser.py": changed}, message=f"change {i} (#{1000 + i})")
    commit(repo, {}, tag="v0.7.1")
    db = root / "index.db"
    tpindex("build", "--repo", repo, "--tags", "v0.6.3..", "--db", db, "-q")
    return db


def test_the_parser_page_lists_at_most_its_share_of_a_changes_commits(long_history, monkeypatch):
    from fixtures.serve import serve

    from indexer.answers import pages

    monkeypatch.setattr(pages, "PAGE_COMMITS", 5)
    client = serve(long_history, cache_bytes=0)
    try:
        page = client.html("/-/parser/tool/hermes")
    finally:
        client.close()
    assert "change 29" in page and "change 0 " not in page and "change 24" not in page
    assert "and 25 earlier commits" in page and "tpindex log hermes v0.7.0 v0.7.1" in page


def test_mcp_log_lists_at_most_its_share_of_commits_and_says_so(long_history, monkeypatch):
    from types import SimpleNamespace

    from indexer.api import Index
    from indexer.mcp import tools

    monkeypatch.setattr(tools, "MAX_LOG_COMMITS", 10)
    args = SimpleNamespace(
        name="hermes", a="v0.7.0", b="v0.7.1", kind=None, framework=False, all_parents=False
    )
    ans = tools._log(Index(long_history), args)
    (k,) = ans.kinds
    assert [c.subject.split(" (")[0] for c in k.commits] == [f"change {i}" for i in range(20, 30)]
    assert "the 20 oldest commits are not listed" in ans.note
