"""The tag-spec grammar of --tags (indexer/specs.py), alone and against a real repository's tags."""

from __future__ import annotations

import pytest
from fixtures.helpers import commit, make_repo, rows, tpindex

from indexer.core.specs import SpecError, parse_version, select, sort_key

TAGS = [
    "v0.9.0",
    "v0.10.0",
    "v0.2.0",
    "v0.6.1.post1",
    "v0.6.1",
    "v0.7.0rc1",
    "v0.7.0",
    "v0.7.1.dev3",
    "v0.8.0b1",
    "nightly",
    "v0.11.0a2",
    "v0.11.0",
]


def names(spec, pre=False, tags=TAGS, is_ref=lambda n: False):
    return select(spec, tags, pre=pre, is_ref=is_ref).names


def test_range_is_inclusive_and_in_pep440_order():
    assert names("v0.2.0..v0.10.0") == ["v0.2.0", "v0.6.1", "v0.6.1.post1", "v0.7.0", "v0.9.0", "v0.10.0"]
    assert names("v0.9.0..v0.9.0") == ["v0.9.0"]


def test_range_bounds_need_not_be_tags():
    assert names("v0.6.5..v0.9.5") == ["v0.7.0", "v0.9.0"]
    assert names("0.6.5..0.9.5") == ["v0.7.0", "v0.9.0"]


def test_open_ends():
    assert names("v0.9.0..") == ["v0.9.0", "v0.10.0", "v0.11.0"]
    assert names("..v0.6.1") == ["v0.2.0", "v0.6.1"]


def test_prereleases_left_out_of_ranges_and_globs_unless_pre():
    assert names("v0.7*") == ["v0.7.0"]
    assert names("v0.7*", pre=True) == ["v0.7.0rc1", "v0.7.0", "v0.7.1.dev3"]
    assert names("v0.7.0..v0.8.0") == ["v0.7.0"]
    assert names("v0.7.0..v0.8.0", pre=True) == ["v0.7.0", "v0.7.1.dev3", "v0.8.0b1"]
    assert names("v0.10.0..", pre=True) == ["v0.10.0", "v0.11.0a2", "v0.11.0"]


def test_prereleases_taken_when_named():
    assert names("v0.7.0rc1") == ["v0.7.0rc1"]
    assert names("v0.8.0b1,v0.7.0rc1,v0.11.0a2") == ["v0.7.0rc1", "v0.8.0b1", "v0.11.0a2"]


def test_lists_mix_forms_dedupe_and_sort():
    assert names(" v0.10.0 , v0.2.0..v0.6.1 ,v0.9*,v0.2.0") == ["v0.2.0", "v0.6.1", "v0.9.0", "v0.10.0"]


def test_globs_are_shell_globs():
    assert names("v0.?.0") == ["v0.2.0", "v0.7.0", "v0.9.0"]
    assert names("v0.1[01].0") == ["v0.10.0", "v0.11.0"]
    assert names("*") == [
        t for t in sorted(TAGS, key=sort_key) if not (parse_version(t) and parse_version(t).is_prerelease)
    ]


def test_non_version_tags_ignored_by_ranges_taken_when_named():
    sel = select("v0.2.0..", TAGS)
    assert "nightly" not in sel.names and sel.ignored == ["nightly"]
    assert names("nightly") == ["nightly"]
    assert names("nightly,v0.2.0") == ["v0.2.0", "nightly"]  # versions first, other names after


def test_explicit_refs_kept_in_order_given():
    sel = select("main,v0.9.0,abc1234", TAGS, is_ref=lambda n: n in ("main", "abc1234"))
    assert sel.names == ["v0.9.0"] and sel.refs == ["main", "abc1234"]
    assert select("v0.9.0", TAGS, is_ref=lambda n: True).refs == []  # a tag is a tag


def test_unknown_tag_names_closest_tags():
    with pytest.raises(SpecError) as e:
        select("v0.9.1", TAGS)
    assert "'v0.9.1'" in str(e.value) and "v0.9.0" in str(e.value)
    with pytest.raises(SpecError) as e:
        select("v0.2.0..v0.6.1,nightyl", TAGS)
    assert "nightly" in str(e.value)


@pytest.mark.parametrize("spec", ["v1.0.0..", "..v0.1.0", "v5*", "v0.7.1..v0.7.9"])
def test_empty_selection_is_an_error_naming_tags(spec):
    with pytest.raises(SpecError) as e:
        select(spec, TAGS)
    msg = str(e.value)
    assert "selects nothing" in msg and any(t in msg for t in TAGS)


@pytest.mark.parametrize("spec", ["v0.8*", "v0.7.0rc1..v0.7.0rc1", "v0.7.0a1..v0.7.0rc9"])
def test_empty_selection_of_prereleases_hints_at_pre(spec):
    with pytest.raises(SpecError, match="--pre"):
        select(spec, TAGS)


@pytest.mark.parametrize(
    "spec",
    [
        "a..b..c",
        "v0.2.0..v0.6.1..v0.9.0",
        ",",
        "",
        "  ",
        "v0.2.0,,v0.9.0",
        "v0.2.0,",
        "..",
        "nightly..v0.9.0",
        "v0.9.0..v0.2.0",
        "...",
        "v0.2.0 .. v0.9.0..",
        "v0.2.0..x",
    ],
)
def test_malformed_specs(spec):
    with pytest.raises(SpecError) as e:
        select(spec, TAGS)
    assert str(e.value) and "\n" not in str(e.value)


def test_spaces_around_range_ends():
    assert names("v0.9.0 .. v0.10.0") == ["v0.9.0", "v0.10.0"]


# -- against a repository: tags created out of commit order, branches, commits ----------------------------
@pytest.fixture
def repo(tmp_path):
    f = "vllm/entrypoints/openai/tool_parsers/x_tool_parser.py"
    return make_repo(
        tmp_path / "repo",
        {
            "v0.10.0": {f: "# 10\n"},
            "v0.9.0": {f: "# 9\n"},
            "v0.2.0": {f: "# 2\n"},
            "v0.7.0rc1": {f: "# 7rc1\n"},
            "v0.7.0": {f: "# 7\n"},
            "nightly": {f: "# nightly\n"},
            "_head": {f: "# head\n"},
        },
        annotated=("v0.9.0", "v0.7.0rc1"),
    )


def test_git_tags_in_version_order_not_commit_order(repo, db):
    tpindex("build", "--repo", repo, "--tags", "v0.2.0..v0.10.0", "--db", db, "-q")
    assert rows(db, "select label from versions order by ord") == [
        ("v0.2.0",),
        ("v0.7.0",),
        ("v0.9.0",),
        ("v0.10.0",),
    ]


def test_git_prerelease_by_name_and_with_pre(repo, db):
    tpindex("build", "--repo", repo, "--tags", "v0.7.0rc1", "--db", db, "-q")
    tpindex("build", "--repo", repo, "--tags", "v0.7*", "--pre", "--db", db, "-q")
    assert rows(db, "select label from versions order by ord") == [("v0.7.0rc1",), ("v0.7.0",)]


def test_git_branch_and_commit_labelled_by_the_ref(repo, db):
    from fixtures.helpers import git

    head = git(repo, "rev-parse", "HEAD")
    v9 = git(repo, "rev-parse", "v0.9.0^{commit}")
    git(repo, "branch", "feature", v9)
    short = head[:10]
    tpindex("build", "--repo", repo, "--tags", f"main,{short},feature,nightly", "--db", db, "-q")
    assert rows(db, "select label, ref, commit_id from versions order by label") == [
        (short, short, head),
        ("feature", "feature", v9),
        ("main", "main", head),
        ("nightly", "nightly", git(repo, "rev-parse", "nightly^{commit}")),
    ]


def test_git_unknown_tag_is_a_user_error(repo, db):
    r = tpindex("build", "--repo", repo, "--tags", "v0.9.1", "--db", db, ok=False)
    assert r.exit_code == 2
    assert "v0.9.0" in r.output and "Hint:" in r.output and "Traceback" not in r.output
    r = tpindex("build", "--repo", repo, "--tags", "a..b..c", "--db", db, ok=False)
    assert r.exit_code == 2 and "malformed" in r.output


def test_git_tags_not_on_commits_are_not_versions(repo, db):
    from fixtures.helpers import git

    tree = git(repo, "rev-parse", "HEAD^{tree}")
    git(repo, "tag", "v0.99.0", tree)  # a tag of a tree, not of a commit
    git(repo, "tag", "-a", "-m", "tag of a tag", "v0.98.0", "v0.9.0")  # v0.9.0 is annotated
    tpindex("build", "--repo", repo, "--tags", "v0.2.0..", "--db", db, "-q")
    labels = rows(db, "select label, commit_id from versions")
    assert ("v0.98.0", git(repo, "rev-parse", "v0.9.0^{commit}")) in labels
    assert "v0.99.0" not in [label for label, _ in labels]
    r = tpindex("build", "--repo", repo, "--tags", "v0.99.0", "--db", db, ok=False)
    assert r.exit_code == 2 and "unknown tag" in r.output


def test_git_moved_tag_changes_commit(repo, db):
    tpindex("build", "--repo", repo, "--tags", "v0.2.0", "--db", db, "-q")
    sha = commit(
        repo, {"vllm/entrypoints/openai/tool_parsers/x_tool_parser.py": "# moved\n"}, tag="v0.2.0", force=True
    )
    tpindex("build", "--repo", repo, "--tags", "v0.2.0", "--db", db, "-q")
    assert rows(db, "select label, commit_id from versions") == [("v0.2.0", sha)]
