"""check-doc on prose written the way people write runbooks (issue 26): each kind of mistake the checker made
on a real operator reference, stated on the fixture repository of test_where (v0.30.0..v0.33.0: a module
moved at v0.33.0, a function moved at v0.32.0, the streaming call moved to a new file at v0.33.0, `beta`
removed at v0.33.0, `gamma` added at v0.31.0), and on a small repository whose file moved twice.

The documents are written here. A verdict of "wrong" or "stale" must be one a runbook owner can trust:
when the checker cannot tell what a phrase is about, the claim is unchecked.
"""

from __future__ import annotations

import json

import pytest
from fixtures.helpers import build_tags, make_repo, tpindex


def check(db, tmp_path, text: str, *at: str) -> list[list[tuple[str, str, str, str]]]:
    """(kind, claim, status, message) of every claim, per version checked; the JSON follows its schema."""
    import jsonschema

    from indexer.schemas import load

    doc = tmp_path / "doc.md"
    doc.write_text(text)
    args = [a for v in at for a in ("--at", v)]
    r = tpindex("check-doc", doc, "--format", "json", *args, "--db", db, ok=False)
    assert r.exit_code in (0, 1), r.output
    data = json.loads(r.output)
    jsonschema.Draft202012Validator(load("check-doc")).validate(data)
    return [
        [(c["kind"], c["claim"], c["status"], c["message"]) for c in v["results"]] for v in data["versions"]
    ]


def by_kind(results, kind: str):
    return [r for r in results if r[0] == kind]


# -- a version phrase qualifies the nearest predicate, not every name of the sentence -------------------------


def test_a_version_phrase_after_a_same_class_claim_is_not_about_the_second_name(tree_db, tmp_path):  # noqa: F811
    # `alpha` is registered from v0.30.0: the phrase is about alpha_too's sharing (or alpha_too), not alpha
    [res] = check(
        tree_db, tmp_path, "`alpha_too` is the same class as `alpha` (new in v0.31.0).\n", "v0.31.0"
    )
    assert by_kind(res, "alias")[0][2] == "ok"
    assert [(s, "same class" in m) for _, _, s, m in by_kind(res, "version")] == [("unchecked", True)]
    assert not [r for r in res if r[2] == "wrong"]


def test_since_with_a_predicate_is_about_the_predicate(tree_db, tmp_path):  # noqa: F811
    # "Since v0.31.0, `alpha` is unified": alpha existed before, the claim is about becoming unified
    [res] = check(tree_db, tmp_path, "Since v0.31.0, `alpha` is unified.\n", "v0.31.0")
    assert [(s, "unified" in m) for _, _, s, m in by_kind(res, "version")] == [("unchecked", True)]


def test_a_version_cell_with_a_predicate_is_not_about_the_rows_name(tree_db, tmp_path):  # noqa: F811
    text = (
        "| name | file | notes |\n|---|---|---|\n"
        "| `alpha` | `vllm/tool_parsers/alpha_tool_parser.py` | own class v0.31.0+ |\n"
    )
    [res] = check(tree_db, tmp_path, text, "v0.30.0")
    assert [(s, "own class" in m) for _, _, s, m in by_kind(res, "version")] == [("unchecked", True)]
    # the row's other claims are not "about v0.31.0 and later": the phrase is about the class
    assert [s for _, _, s, _ in by_kind(res, "path")] == ["ok"]


def test_through_about_sharing_a_class_is_not_about_the_name(tree_db, tmp_path):  # noqa: F811
    [res] = check(
        tree_db,
        tmp_path,
        "`beta` shares no class with others (`alpha_too` too, through v0.31.0).\n",
        "v0.31.0",
    )
    assert [s for _, _, s, _ in by_kind(res, "version")] == ["unchecked"]


def test_a_version_phrase_with_no_predicate_is_still_checked(tree_db, tmp_path):  # noqa: F811
    [res] = check(
        tree_db,
        tmp_path,
        "`gamma` is new in v0.31.0. `alpha` has been registered since v0.31.0.\n",
        "v0.31.0",
    )
    assert [(s, m.split(";")[0]) for _, _, s, m in by_kind(res, "version")] == [
        ("ok", "first at v0.31.0 (absent at v0.30.0)"),
        ("wrong", "already at v0.30.0 (first indexed version with it)"),
    ]


# -- counts of a qualified set ---------------------------------------------------------------------------------


def test_a_count_of_a_qualified_set_counts_that_set_or_is_unchecked(tree_db, tmp_path):  # noqa: F811
    text = (
        "Except for the 0 names on the unified-parser path (v0.31.0), every name is standalone.\n\n"
        "The 2 names that share a class (v0.30.0) are listed below.\n\n"
        "There are 4 tool parser names at v0.31.0.\n"
    )
    [res] = check(tree_db, tmp_path, text, "v0.31.0")
    assert [(k, c, s) for k, c, s, _ in res] == [
        ("count", "0 unified names at v0.31.0", "ok"),
        ("unreadable", "2 names at v0.30.0", "unchecked"),
        ("count", "4 tool parser names at v0.31.0", "ok"),
    ]
    assert "qualified" in res[1][3]


# -- placeholders ----------------------------------------------------------------------------------------------


def test_placeholders_are_never_wrong(tree_db, tmp_path):  # noqa: F811
    text = (
        "Each parser is `vllm/tool_parsers/X_tool_parser.py`.\n\n"
        'Find your own with `grep -lE "<your_sentinel>" vllm/tool_parsers/`.\n\n'
        "Or `grep -rn your_marker vllm/tool_parsers/` and put yours in `vllm/tool_parsers/your_parser.py`.\n"
    )
    [res] = check(tree_db, tmp_path, text, "v0.31.0")
    assert not [r for r in res if r[2] == "wrong"], res
    assert res[0][:3] == ("path", "`vllm/tool_parsers/X_tool_parser.py`", "ok")


# -- bare file names -------------------------------------------------------------------------------------------


def test_a_bare_file_name_is_resolved_the_same_way_in_every_claim(tree_db, tmp_path):  # noqa: F811
    text = "`gamma_tool_parser.py` (v0.31.0+) holds the parser.\n\n`GammaToolParser` is in `gamma_tool_parser.py`.\n"
    [res] = check(tree_db, tmp_path, text, "v0.31.0")
    assert [(k, s) for k, _, s, _ in res] == [("version", "ok"), ("symbol", "ok"), ("path", "ok")], res
    assert "vllm/tool_parsers/gamma_tool_parser.py" in res[1][3]


# -- references to the row or sentence before ------------------------------------------------------------------


def test_same_file_refers_to_the_file_of_the_row_before(tree_db, tmp_path):  # noqa: F811
    text = (
        "| part | where |\n|---|---|\n"
        "| Chat serving | `vllm/entrypoints/chat/serving.py` |\n"
        "| Streaming loop | same file — grep `parse_delta` |\n"
    )
    v32, v33 = check(tree_db, tmp_path, text, "v0.32.0", "v0.33.0")
    assert [(k, c, s) for k, c, s, _ in v32] == [
        ("path", "`vllm/entrypoints/chat/serving.py`", "ok"),
        ("symbol", "grep `parse_delta` in `vllm/entrypoints/chat/serving.py`", "ok"),
    ]
    assert v33[1][2] == "stale" and "at v0.33.0 in vllm/entrypoints/chat/stream.py" in v33[1][3]


def test_there_refers_to_the_file_of_the_sentence_before(tree_db, tmp_path):  # noqa: F811
    text = "The chat server is `vllm/entrypoints/chat/serving.py`. `ChatServing` is defined there.\n"
    [res] = check(tree_db, tmp_path, text, "v0.32.0")
    assert [(k, c, s) for k, c, s, _ in res] == [
        ("path", "`vllm/entrypoints/chat/serving.py`", "ok"),
        ("symbol", "`ChatServing` in `vllm/entrypoints/chat/serving.py`", "ok"),
    ]


# -- tense -----------------------------------------------------------------------------------------------------


def test_deprecated_is_not_past_tense(tree_db, tmp_path):  # noqa: F811
    text = (
        "The flags: grep `make_arg_parser` in `vllm/entrypoints/launchers/cli_args.py` "
        "(`vllm/entrypoints/serve/api_utils.py` is a deprecated shim).\n"
    )
    [res] = check(tree_db, tmp_path, text, "v0.33.0")
    got = {c: (s, m) for _, c, s, m in res}
    assert got["`vllm/entrypoints/launchers/cli_args.py`"][0] == "stale"
    assert (
        "moved to vllm/entrypoints/common/cli_args.py" in got["`vllm/entrypoints/launchers/cli_args.py`"][1]
    )
    assert got["`vllm/entrypoints/serve/api_utils.py`"][0] == "ok"


# -- too new is not stale --------------------------------------------------------------------------------------


def test_a_claim_about_a_later_version_is_too_new_not_stale(tree_db, tmp_path):  # noqa: F811
    text = "`setup_env` is in `vllm/entrypoints/common/startup.py`.\n\nUse `--tool-call-parser gamma`.\n"
    [res] = check(tree_db, tmp_path, text, "v0.30.0")
    assert [(k, s) for k, _, s, _ in res] == [
        ("symbol", "too-new"),
        ("path", "too-new"),
        ("parser", "too-new"),
    ]
    assert "first at v0.32.0" in res[1][3] and "first at v0.31.0" in res[2][3]
    out = tpindex("check-doc", tmp_path / "doc.md", "--at", "v0.30.0", "--db", tree_db, ok=False).output
    assert out.splitlines()[0].endswith("3 claim(s): 0 ok, 0 stale, 3 too-new, 0 wrong, 0 unchecked")


# -- move advice gives the final location ----------------------------------------------------------------------

GUIDE = "# Guide\n\n" + "".join(
    f"Step {i}: read the parser notes and run the checks again.\n" for i in range(12)
)


@pytest.fixture(scope="module")
def twice_db(tmp_path_factory):
    from indexer.core.scope import Scope

    root = tmp_path_factory.mktemp("twice")
    history = {
        "v0.30.0": {"vllm/tool_parsers/__init__.py": "", "docs/guide.md": GUIDE},
        "v0.31.0": {"docs/guide.md": None, "docs/usage/guide.md": GUIDE},
        "v0.32.0": {"docs/usage/guide.md": None, "docs/features/guide.md": GUIDE},
    }
    repo_ = make_repo(root / "repo", history)
    db = root / "t.db"
    build_tags(repo_, db, "v0.30.0..v0.32.0", scope=Scope.named("default", tree=True))
    return db


def test_move_advice_gives_the_final_location(twice_db, tmp_path):
    text = "Read `docs/guide.md`.\n\n`docs/guide.md` moved to `docs/usage/guide.md` at v0.31.0.\n"
    [res] = check(twice_db, tmp_path, text, "v0.32.0")
    assert res[0][2] == "stale" and res[0][3].startswith("moved to docs/features/guide.md"), res
    assert res[1][2] == "ok" and "now at docs/features/guide.md" in res[1][3], res


# -- what vLLM's own pages write -------------------------------------------------------------------------------


def test_paths_in_a_command_span_are_claims(tree_db, tmp_path):  # noqa: F811
    text = "Flags: `--tool-call-parser alpha --chat-template examples/tool_chat_template_alpha.jinja`\n"
    [res] = check(tree_db, tmp_path, text, "v0.31.0")
    assert [(k, c, s) for k, c, s, _ in res] == [
        ("parser", "`alpha` (tool parser)", "ok"),
        ("path", "`examples/tool_chat_template_alpha.jinja`", "ok"),
    ]


def test_a_relative_link_from_the_docs_is_a_repository_path(tree_db, tmp_path):  # noqa: F811
    text = "Write one like [the alpha parser](../../vllm/tool_parsers/alpha_tool_parser.py).\n"
    [res] = check(tree_db, tmp_path, text, "v0.31.0")
    assert [(k, c, s) for k, c, s, _ in res] == [("path", "`vllm/tool_parsers/alpha_tool_parser.py`", "ok")]


def test_the_claim_limit_says_where_reading_stopped(tree_db, tmp_path):  # noqa: F811
    doc = tmp_path / "big.md"
    doc.write_text("".join(f"Line {i}: `vllm/x{i}.py`.\n\n" for i in range(2100)))
    r = tpindex("check-doc", doc, "--db", tree_db, ok=False)
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "more than 2000 claims" in r.output and "line 4001" in r.output, r.output


def test_a_parser_names_column_of_a_reasoning_page_names_reasoning_parsers(tmp_path):
    from indexer.answers.docclaims import Knowledge, read

    text = (
        "# Reasoning outputs\n\n## Supported models\n\n| Model | Parser Name |\n|---|---|\n| M | `alpha` |\n"
    )
    [claim] = read(text, Knowledge({"vllm"}, {"alpha"}))
    assert (claim.kind, claim.data["name"], claim.data["kind"]) == ("parser", "alpha", "reasoning")


def test_a_path_shortened_with_dots_is_the_file_ending_so(tree_db, tmp_path):  # noqa: F811
    # "grep `x` in `.../serve/api_utils.py`": the one file of the tree whose path ends with serve/api_utils.py
    text = "To find it, grep `setup_env` in `.../serve/api_utils.py` (a deprecated shim re-exports it).\n"
    v31, v33 = check(tree_db, tmp_path, text, "v0.31.0", "v0.33.0")
    assert [(k, c, s) for k, c, s, _ in v31] == [
        ("symbol", "grep `setup_env` in `.../serve/api_utils.py`", "ok"),
        ("path", "`.../serve/api_utils.py`", "ok"),
    ]
    assert v31[0][3].startswith("mentioned in vllm/entrypoints/serve/api_utils.py")
    assert v33[0][2] == "stale" and "since v0.32.0 (last at v0.31.0)" in v33[0][3], v33


def test_a_symbol_the_sentence_only_may_pair_with_a_file_is_never_stale(tree_db, tmp_path):  # noqa: F811
    # vLLM's reasoning page: "You can add a new `ReasoningParser` similar to [vllm/reasoning/...](...)" says
    # nothing of where ReasoningParser is; parse_delta leaves serving.py at v0.33.0, the sentence stays true
    text = "A parser's `parse_delta` is called as in [the server](vllm/entrypoints/chat/serving.py).\n"
    v32, v33 = check(tree_db, tmp_path, text, "v0.32.0", "v0.33.0")
    assert [(k, s) for k, _, s, _ in v32] == [("symbol", "ok"), ("path", "ok")]
    assert [(k, s) for k, _, s, _ in v33] == [("symbol", "unchecked"), ("path", "ok")]
    assert "since v0.33.0" in v33[0][3] and "the sentence may not pair them" in v33[0][3]
