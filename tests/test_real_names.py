"""Issue 23 items 6-9 on real vLLM releases (the package index's source archives, cached): moves followed to
the end, short version labels, tests under tests/tool_use/, name-check lines, the hard-coded era, renames and
successors.

The expected values were established by reading the release trees by hand (`git ls-tree` / `git show` of the
tags, whose files are the archives'): vllm/entrypoints/openai/cli_args.py is at v0.28.0, gone at v0.29.0 where
vllm/entrypoints/launchers/cli_args.py is, which is gone at v0.33.0 where vllm/entrypoints/common/cli_args.py
is; vllm/renderers/chat_utils.py (v0.32.0) is the package vllm/renderers/chat_utils/ at v0.33.0, with
make_tool_call_id in its tool_call.py; CohereCommand3ToolParser is at line 13 of
vllm/tool_parsers/cohere_command_tool_parser.py and CohereCommand3ReasoningParser at line 55 of
vllm/reasoning/cohere_command_reasoning_parser.py at v0.32.0; vllm/tool_parsers/response_template_tool_parser.py
is one import of ResponseTemplateToolParser from vllm/parser/response_template.py (and __all__); v0.6.0's
serving_chat.py picks Hermes2ProToolParser at line 83 (`elif tool_parser == "hermes":`); the decorator on
Glm4MoeModelToolParser says "glm4_moe" at v0.10.0 and "glm45" at v0.10.1; minimax (minimax_tool_parser.py)
is in v0.23.0's registry and not in v0.24.0's, where minimax_m2 and minimax_m3 are.
"""

from __future__ import annotations

import json
import shlex

import pytest
from fixtures.helpers import tpindex

pytestmark = pytest.mark.network

OLD, MID, NEW = (
    "vllm/entrypoints/openai/cli_args.py",
    "vllm/entrypoints/launchers/cli_args.py",
    "vllm/entrypoints/common/cli_args.py",
)


@pytest.fixture(scope="session")
def moves_db(pypi, tmp_path_factory):  # noqa: F811
    """Four releases around the moves, with --tree (where / check-doc)."""
    db = tmp_path_factory.mktemp("real-moves") / "tree.db"
    tpindex("build", "--from-pypi", "--tree", "--tags", "v0.28.0,v0.29.0,v0.32.0,v0.33.0", "--db", db, "-q")
    return db


@pytest.fixture(scope="session")
def names_db(pypi, tmp_path_factory):  # noqa: F811
    db = tmp_path_factory.mktemp("real-names") / "names.db"
    tpindex(
        "build",
        "--from-pypi",
        "--tags",
        "v0.6.0,v0.10.0,v0.10.1,v0.23.0,v0.24.0,v0.31.0,v0.32.0,v0.33.0",
        "--db",
        db,
        "-q",
    )
    return db


def js(*args):
    r = tpindex(*args, "--format", "json", ok=False)
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.output)


# -- item 6 ------------------------------------------------------------------------------------------------


def test_cli_args_is_followed_to_its_final_location(moves_db):
    out = tpindex("where", OLD, "--all", "--db", moves_db).output
    assert f"moved at v0.29.0 to {MID} (definitions:" in out
    assert f"then at v0.33.0 to {NEW} (definitions:" in out and out.rstrip().endswith(f"now at {NEW}")
    move = js("where", OLD, "--all", "--db", moves_db)["history"][-1]["moves"][0]
    assert (move["to"], move["final"], [h["to"] for h in move["then"]]) == (MID, NEW, [NEW])


def test_a_module_that_became_a_package_is_a_move(moves_db):
    out = tpindex("where", "vllm/renderers/chat_utils.py", "--all", "--db", moves_db).output
    assert (
        "moved at v0.33.0 to vllm/renderers/chat_utils/ (package: same import path vllm.renderers.chat_utils"
        in out
    )
    assert "tool_call.py (" in out and "removed" not in out


def test_check_doc_gives_the_final_path(moves_db, tmp_path):
    doc = tmp_path / "runbook.md"
    doc.write_text(f"Flags are in `{OLD}`.\n`make_tool_call_id` is in `vllm/renderers/chat_utils.py`.\n")
    results = js("check-doc", doc, "--db", moves_db)["versions"][0]["results"]
    old = next(r for r in results if r["claim"].strip("`") == OLD)
    assert old["status"] == "stale" and old["message"].startswith(f"moved to {NEW} (at v0.29.0 to {MID}")
    sym = next(r for r in results if r["kind"] == "symbol")
    assert "moved to vllm/renderers/chat_utils/ at v0.33.0" in sym["message"]
    assert "vllm/renderers/chat_utils/tool_call.py" in sym["message"]


# -- item 7 ------------------------------------------------------------------------------------------------


def test_a_short_label_resolves_to_the_one_equal_release(names_db, tmp_path):
    d = js("diff", "v0.31", "v0.32.0", "--db", names_db)
    assert (d["a"], d["b"]) == ("v0.31.0", "v0.32.0")
    assert js("which", "hermes", "--at", "0.10.1", "--db", names_db)["version"] == "v0.10.1"
    r = tpindex("which", "hermes", "--at", "v0.30", "--db", names_db, ok=False)
    assert r.exit_code == 2 and "v0.24.0, v0.31.0" in r.output.split("nearest indexed: ")[1].splitlines()[0]
    cmd = shlex.split(r.output.split("Hint: index it first: ", 1)[1].split("  (", 1)[0])
    copy = tmp_path / "copy.db"
    copy.write_bytes(names_db.read_bytes())
    cmd[cmd.index(str(names_db))] = str(copy)
    tpindex(*cmd[1:], "-q")  # build --from-pypi --tags v0.30, as the hint writes it
    assert js("which", "hermes", "--at", "v0.30", "--db", copy)["version"] == "v0.30.0"


# -- item 8 ------------------------------------------------------------------------------------------------


def export(db, version) -> dict[tuple[str, str], dict]:
    return {(p["kind"], p["name"]): p for p in js("export", "--at", version, "--db", db)["parsers"]}


def test_tests_under_tests_tool_use_are_matched(names_db):
    ex = export(names_db, "v0.33.0")
    assert "tests/tool_use/test_kimi_k3_tool_parser.py" in ex[("tool", "kimi_k3")]["tests"]
    assert "tests/tool_use/mistral/test_mistral_tool_calls.py" in ex[("tool", "mistral")]["tests"]
    assert {"tests/tool_use/test_muse_glimmer.py", "tests/tool_use/test_muse_glimmer_parse_delta.py"} <= set(
        ex[("tool", "muse_glimmer")]["tests"]
    )


def test_name_checks_keep_the_registered_class_line_and_hop(names_db):
    ex = export(names_db, "v0.32.0")
    assert ex[("tool", "cohere_command3")]["registered_line"] == 13
    assert ex[("reasoning", "cohere_command3")]["registered_line"] == 55
    assert ex[("tool", "hf")]["reexport"] is True and ex[("reasoning", "hf")]["reexport"] is True
    out = tpindex("which", "cohere_command3", "--at", "v0.32.0", "--kind", "tool", "--db", names_db).output
    assert [s.split()[0] for s in out.splitlines()[1:5]] == ["registered", "class", "name-check", "real"]
    assert "vllm/tool_parsers/cohere_command_tool_parser.py:13" in out
    assert (
        "vllm/tool_parsers/cohere_command_tool_parser.py:13"
        in tpindex("card", "cohere_command3", "--at", "v0.32.0", "--kind", "tool", "--db", names_db).output
    )


def test_the_hard_coded_era_names_the_dispatching_line(names_db):
    out = tpindex("which", "hermes", "--at", "v0.6.0", "--db", names_db).output
    assert "?" not in out
    assert (
        "'hermes' -> Hermes2ProToolParser, picked by name at vllm/entrypoints/openai/serving_chat.py:83"
        in out
    )


# -- item 9 ------------------------------------------------------------------------------------------------


def test_glm4_moe_is_renamed_to_glm45(names_db):
    changes = js("diff", "v0.10.0", "v0.10.1", "--db", names_db)["changes"]
    renamed = {(c["kind"], c["name"], c["after"]) for c in changes if c["type"] == "name-renamed"}
    assert {("tool", "glm4_moe", "glm45"), ("reasoning", "glm4_moe", "glm45")} <= renamed
    assert not [
        c
        for c in changes
        if c["name"] in ("glm4_moe", "glm45") and c["type"] in ("name-added", "name-removed")
    ]
    life = js("which", "glm4_moe", "--all", "--kind", "tool", "--db", names_db)["kinds"][0]["lifecycle"]
    assert life["renamed_to"] == "glm45"
    assert (
        "renamed to glm45"
        in tpindex("card", "glm4_moe", "--at", "v0.10.0", "--kind", "tool", "--db", names_db).output
    )


def test_minimax_names_its_successors(names_db):
    changes = js("diff", "v0.23.0", "v0.24.0", "--db", names_db)["changes"]
    mm = next(
        c for c in changes if c["type"] == "name-removed" and c["name"] == "minimax" and c["kind"] == "tool"
    )
    assert mm["successors"] == ["minimax_m2", "minimax_m3"] and mm["successors_by"] == "family"
