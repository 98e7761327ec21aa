"""Golden tests of the answers people read: `which`, `diff` (every format, exit codes) and `export`
(every format), on the unified-era fixture of test_resolve. Set UPDATE_GOLDEN=1 to rewrite the golden
files after an intended change, then read the diff."""

from __future__ import annotations

import json

import pytest
from fixtures.golden import golden
from fixtures.helpers import tpindex


@pytest.fixture(scope="module")
def db(unified_db):  # noqa: F811 (the fixture imported above)
    return unified_db


def test_which_at_a_version(db):
    out = tpindex("which", "beta", "--at", "v0.25.0", "--db", db).output
    golden("which_beta_v0.25.0.txt", out)


def test_which_defaults_to_the_newest_version(db):
    assert "at v0.27.0: name-check" in tpindex("which", "beta", "--db", db).output


def test_which_all_collapses_equal_versions_into_ranges(db):
    golden("which_alpha_all.txt", tpindex("which", "alpha", "--all", "--db", db).output)
    golden("which_beta_all.txt", tpindex("which", "beta", "--all", "--db", db).output)


def test_which_json(db):
    data = json.loads(tpindex("which", "delta", "--at", "v0.24.0", "--format", "json", "--db", db).output)
    assert [h["hop"] for h in data["parsers"][0]["hops"]] == [
        "registered",
        "class",
        "base",
        "adapter",
        "real",
    ]


def test_which_unknown_name_suggests_close_names(db):
    r = tpindex("which", "alpah", "--db", db, ok=False)
    assert r.exit_code == 2
    assert "no parser named 'alpah'" in r.output and "alpha" in r.output.splitlines()[-1]


def test_which_unknown_version(db):
    r = tpindex("which", "alpha", "--at", "v0.26.0", "--db", db, ok=False)
    assert r.exit_code == 2 and "v0.26.0 is not indexed" in r.output


@pytest.mark.parametrize("fmt,ext", [("text", "txt"), ("json", "json"), ("markdown", "md")])
def test_diff_formats_and_exit_status(db, fmt, ext):
    r = tpindex("diff", "v0.24.0", "v0.25.0", "--format", fmt, "--db", db, ok=False)
    assert r.exit_code == 1, r.output
    golden(f"diff_v0.24.0_v0.25.0.{ext}", r.output)


def test_diff_without_changes_exits_0(db):
    r = tpindex("diff", "v0.25.0", "v0.25.0", "--db", db, ok=False)
    assert r.exit_code == 0 and r.output.startswith("no changes")


def test_diff_reads_each_classes_bases_as_the_class_hierarchy_view_gives_them(db):
    """diff's bases of every class at a version (read from that version's files only, not through the view,
    whose join of base files runs over every version) are the view's, in every indexed version."""
    import sqlite3

    from indexer.answers.diff import _bases
    from indexer.store.database import Reader

    conn = sqlite3.connect(db)
    try:
        view = (
            "select file, class, group_concat(coalesce(base, base_written), ', '), min(line) from"
            " (select * from class_hierarchy where version = ? order by file, class, pos) group by file, class"
        )
        versions = [r[0] for r in conn.execute("select label from versions order by ord")]
        assert versions
        for v in versions:
            want = {(r[0], r[1]): (r[2], r[3]) for r in conn.execute(view, [v])}
            assert want and _bases(Reader(conn), v) == want, v
    finally:
        conn.close()


def test_a_known_name_is_checked_without_listing_every_name(db):
    """check_name lists every name (for close-name suggestions) only when the name is not found."""
    import sqlite3

    from indexer.answers.versions import AnswerError
    from indexer.answers.which import check_name
    from indexer.store.database import Reader

    conn = sqlite3.connect(db)
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        assert check_name(Reader(conn), "alpha") == ["tool"]
        assert not [s for s in seen if "distinct name" in s]
        with pytest.raises(AnswerError, match="no parser named 'alphx'") as e:
            check_name(Reader(conn), "alphx")
        assert "alpha" in (e.value.hint or "")
    finally:
        conn.close()


def test_diff_of_a_version_not_indexed_exits_2(db):
    r = tpindex("diff", "v0.24.0", "v9.9.9", "--db", db, ok=False)
    assert r.exit_code == 2 and "v9.9.9 is not indexed" in r.output


@pytest.mark.parametrize("fmt,ext", [("json", "json"), ("csv", "csv"), ("markdown", "md")])
def test_export_formats_are_golden_and_stable(db, fmt, ext):
    first = tpindex("export", "--at", "v0.25.0", "--format", fmt, "--db", db).output
    assert first == tpindex("export", "--at", "v0.25.0", "--format", fmt, "--db", db).output
    golden(f"export_v0.25.0.{ext}", first)


@pytest.mark.parametrize(
    "args,name",
    [
        (("card", "alpha", "--at", "v0.24.0"), "card_alpha_v0.24.0.txt"),
        (("card", "delta", "--at", "v0.24.0", "--format", "json"), "card_delta_v0.24.0.json"),
        (("card", "beta", "--format", "markdown"), "card_beta.md"),
        (("card", "--all", "--at", "v0.25.0", "--format", "markdown"), "card_all_v0.25.0.md"),
    ],
)
def test_card_is_golden(db, args, name):
    golden(name, tpindex(*args, "--db", db).output)


@pytest.mark.parametrize(
    "args,name",
    [
        (("grep", "class .*Parser", "--color", "never"), "grep_class_parser.txt"),
        (
            ("grep", "def ", "-F", "--path", "vllm/tool_parsers", "--format", "json"),
            "grep_def_tool_parsers.json",
        ),
    ],
)
def test_grep_is_golden(db, args, name):
    golden(name, tpindex(*args, "--db", db).output)


@pytest.mark.parametrize(
    "args,name",
    [
        (("show", "alpha", "--at", "v0.24.0", "--color", "never"), "show_alpha_v0.24.0.txt"),
        (("show", "delta", "--at", "v0.24.0", "--format", "json"), "show_delta_v0.24.0.json"),
        (
            ("show", "vllm/tool_parsers/__init__.py:1-8", "--at", "v0.25.0", "--color", "never"),
            "show_init_v0.25.0.txt",
        ),
    ],
)
def test_show_is_golden(db, args, name):
    golden(name, tpindex(*args, "--db", db).output)
