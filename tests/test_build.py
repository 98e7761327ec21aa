"""The core build: versions from git tags, blobs parsed once, incremental runs, bare repositories, and
the work tree left alone."""

from __future__ import annotations

import hashlib
import subprocess

import pytest
from fixtures.build import ABSTRACT, CROSSING, CROSSING_SCOPE, NEW, NEW_ABSTRACT, SHARED
from fixtures.helpers import build_tags, commit, git, make_repo, rows, tpindex

TP = "vllm/entrypoints/openai/tool_parsers"


def parser_file(name: str, cls: str, extra: str = "") -> str:
    return (
        f"from .abstract_tool_parser import ToolParser, ToolParserManager\n\n\n"
        f"@ToolParserManager.register_module({name!r})\n"
        f"class {cls}(ToolParser):\n    def extract_tool_calls(self, text):\n        return text{extra}\n"
    )


HISTORY = {
    "v0.6.3": {
        f"{TP}/abstract_tool_parser.py": ABSTRACT,
        f"{TP}/hermes_tool_parser.py": parser_file("hermes", "HermesToolParser"),
        "examples/tool_chat_template_hermes.jinja": "{{ messages }}\n",
        "docs/unrelated.md": "not in scope\n",
    },
    "v0.7.0rc1": {f"{TP}/mistral_tool_parser.py": parser_file("mistral", "MistralToolParser")},
    "v0.7.0": {f"{TP}/mistral_tool_parser.py": parser_file("mistral", "MistralToolParser", "  # final")},
    "nightly": {f"{TP}/llama_tool_parser.py": parser_file("llama3_json", "LlamaToolParser")},
    "v0.8.0": {
        f"{TP}/llama_tool_parser.py": parser_file("llama3_json", "LlamaToolParser"),
        "tests/tool_parsers/test_hermes.py": "def test_it():\n    pass\n",
    },
}


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path / "repo", HISTORY, annotated=("v0.7.0", "nightly"))


def registry_names(db, version):
    return [r[0] for r in rows(db, "select name from registry where version = ? order by name", [version])]


def test_multi_era_build_with_prerelease_and_non_version_tags(repo, db):
    stats = build_tags(repo, db, "v0.6.3..,v0.7.0rc1,nightly")
    assert rows(db, "select label, ord, status, registry from versions order by ord") == [
        ("v0.6.3", 0, "complete", "found"),
        ("v0.7.0rc1", 1, "complete", "found"),
        ("v0.7.0", 2, "complete", "found"),
        ("v0.8.0", 3, "complete", "found"),
        ("nightly", 4, "complete", "found"),
    ]
    assert registry_names(db, "v0.6.3") == ["hermes"]
    assert registry_names(db, "v0.7.0rc1") == ["hermes", "mistral"]
    assert registry_names(db, "nightly") == ["hermes", "llama3_json", "mistral"]
    assert stats.versions_added == ["v0.6.3", "v0.7.0rc1", "v0.7.0", "v0.8.0", "nightly"]
    # only in-scope files are mapped; templates and tests are recorded without being parsed
    files = rows(db, "select file, parse_status from version_files where version = 'v0.8.0' order by file")
    assert files == [
        ("examples/tool_chat_template_hermes.jinja", "not-parsed"),
        ("tests/tool_parsers/test_hermes.py", "not-parsed"),
        (f"{TP}/abstract_tool_parser.py", "ok"),
        (f"{TP}/hermes_tool_parser.py", "ok"),
        (f"{TP}/llama_tool_parser.py", "ok"),
        (f"{TP}/mistral_tool_parser.py", "ok"),
    ]
    assert rows(db, "select * from parse_errors") == []  # files recorded without parsing are not errors


def test_each_blob_parsed_once_and_incremental_runs(repo, db):
    first = build_tags(repo, db, "v0.6.3..v0.7.0")
    assert first.parses and set(first.parses.values()) == {1}
    # the blobs of v0.6.3 and v0.7.0: the unchanged files are shared, so parsed once
    assert len(first.parses) == 3
    second = build_tags(repo, db, "v0.6.3..v0.8.0,nightly,v0.7.0rc1")
    assert second.versions_skipped == ["v0.6.3", "v0.7.0"]
    assert second.versions_added == ["v0.7.0rc1", "v0.8.0", "nightly"]
    assert set(second.parses.values()) == {1}
    assert not set(second.parses) & set(first.parses)
    new_blobs = {
        git(repo, "rev-parse", f"v0.7.0rc1:{TP}/mistral_tool_parser.py"),
        git(repo, "rev-parse", f"v0.8.0:{TP}/llama_tool_parser.py"),
    }
    assert set(second.parses) == new_blobs  # nightly's llama file is the same blob as v0.8.0's
    third = build_tags(repo, db, "v0.6.3..v0.8.0,nightly,v0.7.0rc1")
    assert third.parses == {} and third.versions_added == [] and third.versions_reindexed == []
    assert sorted(third.versions_skipped) == sorted(["v0.6.3", "v0.7.0rc1", "v0.7.0", "v0.8.0", "nightly"])


def test_many_blobs_through_worker_processes_match_inline(tmp_path):
    files = {f"{TP}/p{i}_tool_parser.py": parser_file(f"p{i}", f"P{i}ToolParser") for i in range(40)}
    repo = make_repo(tmp_path / "repo", {"v1.0.0": files})
    pooled = build_tags(repo, tmp_path / "a.db", "v1.0.0", jobs=2)
    inline = build_tags(repo, tmp_path / "b.db", "v1.0.0", jobs=1)
    assert len(pooled.parses) == len(inline.parses) == 40
    sql = "select name, module, class, form, file, line from registry order by name"
    assert rows(tmp_path / "a.db", sql) == rows(tmp_path / "b.db", sql)
    assert len(rows(tmp_path / "a.db", sql)) == 40


def test_moved_tag_is_reindexed_and_its_rows_change(repo, db):
    build_tags(repo, db, "v0.6.3..v0.8.0")
    assert registry_names(db, "v0.8.0") == ["hermes", "llama3_json", "mistral"]
    git(repo, "checkout", "-q", "v0.8.0")
    sha = commit(
        repo,
        {
            f"{TP}/llama_tool_parser.py": None,
            f"{TP}/granite_tool_parser.py": parser_file("granite", "GraniteToolParser"),
        },
        tag="v0.8.0",
        force=True,
    )
    stats = build_tags(repo, db, "v0.6.3..v0.8.0")
    assert stats.versions_reindexed == ["v0.8.0"]
    assert sorted(stats.versions_skipped) == ["v0.6.3", "v0.7.0"]
    assert list(stats.parses) == [git(repo, "rev-parse", f"v0.8.0:{TP}/granite_tool_parser.py")]
    assert registry_names(db, "v0.8.0") == ["granite", "hermes", "mistral"]
    assert rows(db, "select commit_id from versions where label = 'v0.8.0'") == [(sha,)]
    assert rows(db, "select count(*) from versions") == [(3,)]
    assert rows(db, "select label from versions order by ord") == [("v0.6.3",), ("v0.7.0",), ("v0.8.0",)]


def test_bare_repository(repo, tmp_path, db):
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True)
    tpindex("build", "--repo", bare, "--tags", "v0.6.3..", "--db", db, "-q")
    assert rows(db, "select label from versions order by ord") == [("v0.6.3",), ("v0.7.0",), ("v0.8.0",)]
    assert registry_names(db, "v0.8.0") == ["hermes", "llama3_json", "mistral"]


def _state(repo):
    index = repo / ".git" / "index"
    return (
        git(repo, "status", "--porcelain", "--untracked-files=all"),
        git(repo, "rev-parse", "HEAD"),
        git(repo, "symbolic-ref", "-q", "HEAD"),
        index.stat().st_mtime_ns,
        hashlib.sha256(index.read_bytes()).hexdigest(),
        sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*") if ".git" not in p.parts),
    )


def test_work_tree_index_and_head_untouched(repo, db):
    (repo / TP / "hermes_tool_parser.py").write_text("# uncommitted edit\n")
    (repo / "scratch.py").write_text("x = 1\n")
    git(repo, "add", "scratch.py")
    (repo / "untracked.txt").write_text("u\n")
    before = _state(repo)
    tpindex("build", "--repo", repo, "--tags", "v0.6.3..,nightly", "--db", db, "-q")
    assert _state(repo) == before
    # the build read the tagged trees, not the edited work tree
    assert registry_names(db, "v0.8.0") == ["hermes", "llama3_json", "mistral"]


def test_cli_build_then_versions(repo, db):
    r = tpindex("build", "--repo", repo, "--tags", "v0.6.3..v0.7.0", "--db", db)
    assert "2 version(s) indexed" in r.output
    r = tpindex("build", "--repo", repo, "--tags", "v0.6.3..v0.7.0", "--db", db)
    assert "2 already indexed and skipped" in r.output and "0 blob(s) parsed" in r.output
    out = tpindex("versions", "--db", db).output.splitlines()
    assert [line.split()[0] for line in out[1:]] == ["v0.6.3", "v0.7.0"]


def test_not_a_repository_is_a_user_error(tmp_path, db):
    r = tpindex("build", "--repo", tmp_path, "--tags", "v1..", "--db", db, ok=False)
    assert r.exit_code == 2 and "not a git repository" in r.output and "Traceback" not in r.output


def test_version_with_no_registry_warns(tmp_path, db):
    repo = make_repo(
        tmp_path / "repo",
        {
            "v0.5.0": {f"{TP}/__init__.py": "# nothing registered yet\n"},
            "v0.6.3": {
                f"{TP}/abstract_tool_parser.py": ABSTRACT,
                f"{TP}/hermes_tool_parser.py": parser_file("h", "H"),
            },
        },
    )
    stats = build_tags(repo, db, "v0.5.0..")
    assert rows(db, "select label, registry from versions order by ord") == [
        ("v0.5.0", "none"),
        ("v0.6.3", "found"),
    ]
    assert len(stats.warnings) == 1 and stats.warnings[0].startswith("v0.5.0")
    r = tpindex("build", "--repo", repo, "--tags", "v0.5.0", "--db", tmp_path / "other.db", "-q")
    assert "warning: v0.5.0" in r.output


# -- content met first where it is only recorded, later where it is parsed ----------------------------------------


def crossing_build(repo, db, spec: str):
    from indexer.core.scope import Scope

    return build_tags(repo, db, spec, scope=Scope.named("default", CROSSING_SCOPE))


def test_content_first_recorded_is_parsed_where_it_is_parsed(tmp_path):
    """v1.0.0 holds a test file; v1.1.0 copies it into the parser package: built one version per run, the
    copy's class, registration and marker are there, exactly as when both are built at once."""
    from fixtures.crash import assert_same, dump

    repo = make_repo(tmp_path / "repo", CROSSING)
    together, apart = tmp_path / "together.db", tmp_path / "apart.db"
    crossing_build(repo, together, "v1.0.0..v1.1.0")
    crossing_build(repo, apart, "v1.0.0")
    crossing_build(repo, apart, "v1.1.0")
    assert rows(
        apart, "select class, file from classes_v where version = 'v1.1.0' and class = 'XToolParser'"
    ) == [("XToolParser", f"{NEW}/x_tool_parser.py")]
    assert rows(
        apart, "select kind, text from markers_v where version = 'v1.1.0' and file like 'vllm/%x_tool%'"
    ) == [("TODO", "TODO: handle partial JSON")]
    assert rows(apart, "select name from parser_map_v where version = 'v1.1.0'") == [("x",)]
    assert_same(dump(apart), dump(together), "one version per build")
    assert tpindex("diff", "v1.0.0", "v1.1.0", "--db", apart, ok=False).exit_code == 1


@pytest.mark.parametrize("trial", range(10))
def test_any_split_and_order_of_builds_gives_the_database_of_one_build(tmp_path, trial):
    """The tags built in random groups, in random order (seeded): the same rows as one build of all."""
    import random

    from fixtures.crash import assert_same, dump

    repo = make_repo(tmp_path / "repo", CROSSING)
    one = tmp_path / "one.db"
    crossing_build(repo, one, "v1.0.0..")
    rng = random.Random(1300 + trial)
    tags = list(CROSSING)
    rng.shuffle(tags)
    cuts = sorted(rng.sample(range(1, len(tags)), rng.randint(1, len(tags) - 1)))
    groups = [tags[a:b] for a, b in zip([0, *cuts], [*cuts, len(tags)], strict=True)]
    db = tmp_path / "split.db"
    for group in groups:
        crossing_build(repo, db, ",".join(group))
    assert_same(dump(db), dump(one), f"builds {groups}")
    tpindex("check", "--db", db)


# Content crossing between a module outside the parser packages (extracted without a parser's own kinds:
# sentinels, request settings, plants) and a parser package (every kind), both ways.
TOKENS = SHARED.replace("        return text", '        return text.split("<tool_call>")')
OUTSIDE = "vllm/entrypoints/helpers"
MODULES = {
    "v2.0.0": {f"{NEW}/abstract_tool_parser.py": NEW_ABSTRACT, f"{OUTSIDE}/copy.py": TOKENS},
    "v2.1.0": {f"{NEW}/x_tool_parser.py": TOKENS},
    "v2.2.0": {
        f"{OUTSIDE}/copy.py": None,
        f"{OUTSIDE}/other.py": TOKENS.replace('"x"', '"y"'),
        f"{NEW}/y_tool_parser.py": TOKENS.replace('"x"', '"y"'),
    },
    "v2.3.0": {f"{NEW}/x_tool_parser.py": None, f"{OUTSIDE}/copy.py": TOKENS},
}


def modules_build(repo, db, spec: str):
    from indexer.core.scope import Scope

    return build_tags(repo, db, spec, scope=Scope.named("default", (f"{OUTSIDE}/*.py",)))


@pytest.mark.parametrize(
    "order",
    [
        ["v2.0.0..v2.3.0"],
        ["v2.0.0", "v2.1.0", "v2.2.0", "v2.3.0"],
        ["v2.3.0", "v2.1.0", "v2.0.0,v2.2.0"],
        ["v2.2.0", "v2.1.0,v2.3.0", "v2.0.0"],
    ],
)
def test_a_module_outside_the_parser_packages_has_every_kind_but_a_parsers_own_whatever_the_order(
    tmp_path, order
):
    from fixtures.crash import assert_same, dump

    repo = make_repo(tmp_path / "repo", MODULES)
    one = tmp_path / "one.db"
    modules_build(repo, one, "v2.0.0..v2.3.0")
    for tag in MODULES:  # the copy outside the packages: class, registration and marker, not the sentinel
        for path in rows(
            one, "select file from version_files where version = ? and file like ?", [tag, f"{OUTSIDE}/%"]
        ):
            assert (
                rows(one, "select count(*) from classes_v where version = ? and file = ?", [tag, path[0]])[0][
                    0
                ]
                == 1
            )
            assert (
                rows(one, "select count(*) from registry where version = ? and file = ?", [tag, path[0]])[0][
                    0
                ]
                == 1
            )
            assert (
                rows(one, "select count(*) from markers_v where version = ? and file = ?", [tag, path[0]])[0][
                    0
                ]
                == 1
            )
            assert not rows(one, "select 1 from sentinels_v where version = ? and file = ?", [tag, path[0]])
    assert rows(
        one, "select value from sentinels_v where version = 'v2.1.0' and file like ?", [f"{NEW}/x_%"]
    ) == [("<tool_call>",)]
    db = tmp_path / "split.db"
    for spec in order:
        modules_build(repo, db, spec)
    assert_same(dump(db), dump(one), f"builds {order}")
    tpindex("check", "--db", db)


def as_an_older_tpindex_left_it(db, blob: str, version: str) -> None:
    """The state an older tpindex left after building the version that first had `blob` at a parsed path
    in a later run than the one that met it at a recorded path: stored as not parsed, no facts at any
    path, and the version resolved without them."""
    import sqlite3

    from indexer.store.database import FACT_TABLES

    conn = sqlite3.connect(db)
    conn.execute(
        "update blobs set status = 'not-parsed', size = 0, error_count = 0, first_error_line = null,"
        " error = null, facts = null where id = ?",
        [blob],
    )
    for table in FACT_TABLES:
        conn.execute(f"delete from {table} where unit_id in (select id from units where blob_id = ?)", [blob])
    vid = conn.execute("select id from versions where label = ?", [version]).fetchone()[0]
    conn.execute("delete from parser_hops where version_id = ?", [vid])
    conn.execute("delete from parser_map where version_id = ?", [vid])
    conn.execute("update versions set registry = 'none' where id = ?", [vid])
    conn.commit()
    conn.close()


def test_check_finds_facts_missing_as_an_older_tpindex_left_them_and_a_build_repairs_them(tmp_path):
    from fixtures.crash import assert_same, dump

    repo = make_repo(tmp_path / "repo", CROSSING)
    blob = git(repo, "rev-parse", f"v1.1.0:{NEW}/x_tool_parser.py")
    clean = tmp_path / "clean.db"
    crossing_build(repo, clean, "v1.0.0..v1.1.0")
    old = tmp_path / "old.db"
    old.write_bytes(clean.read_bytes())
    as_an_older_tpindex_left_it(old, blob, "v1.1.0")
    result = tpindex("check", "--db", old, ok=False)
    assert result.exit_code == 1, result.output
    assert f"never parsed, so their facts are missing (first: v1.1.0 {NEW}/x_tool_parser.py)" in result.output

    # a build of those versions re-indexes them
    repaired = tmp_path / "repaired.db"
    repaired.write_bytes(old.read_bytes())
    stats = crossing_build(repo, repaired, "v1.0.0..v1.1.0")
    assert stats.versions_reindexed == ["v1.1.0"] and stats.versions_skipped == ["v1.0.0"]
    assert_same(dump(repaired), dump(clean), "rebuilt")
    tpindex("check", "--db", repaired)

    # a build of another version holding that content at that path gives v1.1.0 its facts too
    crossing_build(repo, clean, "v1.4.0")
    crossing_build(repo, old, "v1.4.0")
    assert_same(dump(old), dump(clean), "another version built")
    tpindex("check", "--db", old)
    assert rows(old, "select name from parser_map_v where version = 'v1.1.0'") == [("x",)]
