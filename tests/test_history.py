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
from conftest import build_tags, commit, git, rows, tpindex
from eras import PLAIN_ABSTRACT, engine_adapters, engine_stub, lazy_registry, registered_adapters, tool_names

INIT = lazy_registry("tool", tool_names("alpha", "beta"))

ALPHA_1 = '''
from vllm.tool_parsers.abstract_tool_parser import ToolParser


class AlphaToolParser(ToolParser):
    def extract_tool_calls(self, text):
        return [text]
'''
ALPHA_2 = ALPHA_1.replace("return [text]", "return [text.strip()]")
ALPHA_3 = ALPHA_2 + '''
    def extract_tool_calls_streaming(self, previous, current, delta):
        return delta
'''
ALPHA_4 = ALPHA_3.replace("return delta", "return delta or None")
ALPHA_5 = ALPHA_4.replace("return [text.strip()]", "return [text.strip()] if text else []")

BETA_1 = '''
from vllm.tool_parsers.abstract_tool_parser import ToolParser


class BetaToolParser(ToolParser):
    def extract_tool_calls(self, text):
        return []
'''
BETA_2 = BETA_1.replace("return []", "return [] if text else None")

ALPHA_MODEL_1 = '''
class AlphaParser:
    def parse(self, text):
        return [text.strip()]
'''
ALPHA_MODEL_2 = ALPHA_MODEL_1.replace("return [text.strip()]", "return [text.strip()] if text else []")
ALPHA_MODEL_WIP = ALPHA_MODEL_2.replace("if text else []", "if text else [None]")

ENGINE = '''
class ParserEngine:
    def parse(self, text):
        return text
'''
ADAPTERS_1 = engine_adapters(ENGINE, "")
ADAPTERS_2 = ADAPTERS_1.replace("return self._parser_engine.extract_reasoning(text, request)",
                                "return self._parser_engine.extract_reasoning(text, request=request)")

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
    c["v0.20.0"] = commit(repo, {f"{TP}/__init__.py": INIT, f"{TP}/abstract_tool_parser.py": PLAIN_ABSTRACT,
                                 ALPHA_FILE: ALPHA_1, BETA_FILE: BETA_1},
                          "v0.20.0", message="Add the alpha and beta tool parsers (#100)", date=day(2))
    c["c1"] = commit(repo, {ALPHA_FILE: ALPHA_2}, message="[Bugfix] alpha: strip whitespace (#101)", date=day(3))
    git(repo, "checkout", "-q", "-b", "feature")
    c["s1"] = commit(repo, {ALPHA_FILE: ALPHA_3}, message="alpha: stream partial calls", date=day(4))
    c["s2"] = commit(repo, {ALPHA_FILE: ALPHA_4}, message="alpha: cover empty deltas", date=day(6))
    git(repo, "checkout", "-q", "main")
    c["c2"] = commit(repo, {"README.md": "a project with alpha\n"}, message="[Doc] mention alpha (#102)", date=day(5))
    c["c3"] = commit(repo, {BETA_FILE: BETA_2}, message="[Bugfix] beta: handle empty output (#103)", date=day(7))
    c["c7"] = commit(repo, {"vllm/config.py": "DEFAULT = 1\n"}, message="[Core] a new config default (#109)",
                     date=day(7))
    dates = {"GIT_AUTHOR_DATE": day(8), "GIT_COMMITTER_DATE": day(8)}
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge pull request #104 from dev/alpha-streaming", "feature", env=dates)
    c["m1"] = git(repo, "rev-parse", "HEAD")
    git(repo, "tag", "v0.21.0")
    git(repo, "checkout", "-q", "-b", "releases/v0.21", "v0.21.0")
    c["p1"] = commit(repo, {ALPHA_FILE: ALPHA_5}, "v0.21.1", message="[Bugfix] alpha: fix empty input (#107)",
                     date=day(12))
    git(repo, "checkout", "-q", "main")
    c["c4"] = commit(repo, {"vllm/parser/__init__.py": "", "vllm/parser/engine/__init__.py": "",
                            ADAPTERS: ADAPTERS_1,
                            "vllm/parser/engine/registered_adapters.py": registered_adapters("alpha", "AlphaParser"),
                            ALPHA_MODEL: ALPHA_MODEL_1, ALPHA_FILE: engine_stub("AlphaToolParser", "AlphaParserToolAdapter")},
                     message="[Core] Move alpha onto the parser engine (#106)", date=day(9))
    c["c5"] = commit(repo, {ALPHA_MODEL: ALPHA_MODEL_2}, message="[Bugfix] alpha: fix empty input (#107)", date=day(10))
    c["c6"] = commit(repo, {ADAPTERS: ADAPTERS_2}, "v0.22.0", message="[Core] adapters: pass the request by name (#108)",
                     date=day(11))
    git(repo, "checkout", "-q", "-b", "wip")
    c["u1"] = commit(repo, {ALPHA_MODEL: ALPHA_MODEL_WIP}, message="WIP: alpha experiment (#999)", date=day(13))
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
        "commits": rows(db, "select sha, parents is null, date, author, subject, pr from commits order by sha"),
        "parents": sorted((sha[i], [sha[int(p)] for p in parents.split()])
                          for i, parents in rows(db, "select id, parents from commits where parents is not null")),
        "files": sorted((sha[i], *rest) for i, *rest in rows(db, "select commit_id, path, added, removed, own"
                                                                 " from commit_files")),
        "tips": rows(db, "select sha from history_tips order by sha"),
        "base": rows(db, "select value from meta where key = 'history_base'"),
    }


def test_only_the_parsed_paths_are_stored_each_commit_once(clone):
    repo, db, c = clone
    got = stored(db)
    assert len({r[0] for r in got["commits"]}) == len(got["commits"])
    # the commits after v0.20.0 (the base), at the parsed paths only: not README.md
    assert {r[1] for r in got["files"]} == {ALPHA_FILE, BETA_FILE, ALPHA_MODEL, ADAPTERS, "vllm/parser/__init__.py",
                                            "vllm/parser/engine/__init__.py",
                                            "vllm/parser/engine/registered_adapters.py"}
    below = {r[0] for r in got["commits"] if r[1]}
    assert below == {c["init"], c["v0.20.0"]}  # at and below the tags' common base: listed, no graph
    assert c["u1"] not in {r[0] for r in got["commits"]}  # in no indexed tag's history


@pytest.mark.parametrize("order", [("v0.20.0..v0.21.0", "v0.21.1.."), ("v0.21.0..", "v0.20.0"),
                                   ("v0.22.0", "v0.21.1", "v0.20.0..v0.21.0")])
def test_builds_in_any_order_store_the_same_history(clone, tmp_path, order):
    repo, db, c = clone
    split = tmp_path / "split.db"
    for spec in order:
        build_tags(repo, split, spec)
    assert stored(split) == stored(db)


def test_a_wider_scope_adds_its_paths_to_the_stored_commits(clone, tmp_path):
    from indexer.scope import Scope

    repo, db, c = clone
    widened, wide = tmp_path / "widened.db", tmp_path / "wide.db"
    build_tags(repo, widened, "v0.20.0..")
    assert "vllm/config.py" not in {r[1] for r in stored(widened)["files"]}
    build_tags(repo, widened, "v0.20.0..", scope=Scope.named("all"))
    build_tags(repo, wide, "v0.20.0..", scope=Scope.named("all"))
    assert stored(widened) == stored(wide)
    assert (c["c7"], "vllm/config.py", 1, 0, None) in stored(wide)["files"]


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
