"""The documentation pages' reading is made once per blob by the build and stored (table doc_pages), and the
answers read it from the store; a database of the schema before it gets it from its stored text when migrated;
and a version indexed with a scope that lacked a path (the reasoning page, before it entered the scope) is
re-indexed by the next build, though the scope's name is the same. The pages are the advice fixture's
(tests/fixtures/advice.py: the v0.8.5 docs era and the v0.11.1 one)."""

from __future__ import annotations

import sqlite3

import pytest
from fixtures.advice import history
from fixtures.helpers import build_tags, make_repo


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path / "repo", history())


def readings(db) -> dict[tuple[str, str], tuple[int, str]]:
    """(path, kind) -> (reader, facts) of every page the versions hold."""
    conn = sqlite3.connect(db)
    try:
        return {
            (p, k): (r, f)
            for p, k, r, f in conn.execute(
                "select distinct u.path, d.kind, d.reader, d.facts from doc_pages d"
                " join units u on u.blob_id = d.blob_id"
            )
        }
    finally:
        conn.close()


def test_the_build_reads_each_page_once_and_the_answers_read_the_store(repo, tmp_path, monkeypatch):
    from indexer.answers import docpairs
    from indexer.api import Index
    from indexer.extract.docpages import READER

    db = tmp_path / "t.db"
    build_tags(repo, db, "v0.8.5..")
    got = readings(db)
    assert set(got) == {
        ("docs/source/features/reasoning_outputs.md", "reasoning"),
        ("docs/source/features/tool_calling.md", "tool"),
        ("docs/features/reasoning_outputs.md", "reasoning"),
        ("docs/features/tool_calling.md", "tool"),
    }
    assert {r for r, _ in got.values()} == {READER}
    # the answers read the stored reading: reading a page's text is not needed (nor done) any more
    monkeypatch.setattr(docpairs, "_PAGES", {})

    def unread(text):
        raise AssertionError("a page read from its text at query time")

    monkeypatch.setattr(docpairs, "read_tool", unread)
    monkeypatch.setattr(docpairs, "read_reasoning", unread)
    for at in ("v0.8.5", "v0.11.1"):
        ans = Index(db).fit(model="orca-labs/Orca-3-8B", at=at, proof=False)
        assert (ans.pair.tool, ans.pair.reasoning) == ("tagjson", "patient"), at
        assert ans.documented.thinking == "on" and ans.documented.kwargs == ["enable_thinking=False"]


def test_a_database_of_the_schema_before_gets_the_readings_when_migrated(repo, tmp_path):
    from indexer.store import database as store
    from indexer.store import schema

    db = tmp_path / "t.db"
    build_tags(repo, db, "v0.8.5..")
    before = readings(db)
    conn = sqlite3.connect(db)
    conn.executescript(
        "drop table doc_pages; drop table version_scopes;"
        f" update meta set value = '{store.SCHEMA_VERSION - 1}' where key = 'schema_version';"
    )
    conn.close()
    store.connect(db, setup=schema.setup).conn.close()  # a build's connection migrates
    assert readings(db) == before
    # and the versions, indexed before their scope was recorded, are indexed again by the next build
    stats = build_tags(repo, db, "v0.8.5..")
    assert sorted(stats.versions_reindexed) == ["v0.11.1", "v0.8.5"]
    assert build_tags(repo, db, "v0.8.5..").versions_skipped == ["v0.8.5", "v0.11.1"]


def test_a_version_indexed_before_the_reasoning_page_entered_the_scope_is_indexed_again(repo, tmp_path):
    from indexer.core.scope import REASONING_DOCS, Scope

    default = Scope.named("default")
    before = Scope(tuple(p for p in default.patterns if p not in REASONING_DOCS), default.name)
    db = tmp_path / "t.db"
    build_tags(repo, db, "v0.8.5..", scope=before)
    assert {k for _, k in readings(db)} == {"tool"}
    stats = build_tags(repo, db, "v0.8.5..")  # the same scope name, one path more
    assert sorted(stats.versions_reindexed) == ["v0.11.1", "v0.8.5"]
    assert {k for _, k in readings(db)} == {"tool", "reasoning"}
    assert build_tags(repo, db, "v0.8.5..").versions_skipped == ["v0.8.5", "v0.11.1"]
