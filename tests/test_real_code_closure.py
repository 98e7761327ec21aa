"""The code that runs for a name, on real releases (issue 23, items 1 and 2): v0.31.0, v0.32.0 and v0.33.0
from their source archives on the package index (cached).

What the expectations rest on, read in those releases by hand: in v0.33.0 `qwen3_config` in
vllm/parser/qwen3.py gained an argument-value extender (`_qwen3_arg_value_extender`, built on the new
`_param_value_extender`); `SeedOssParser` and `Step3p5Parser`, subclasses of `Qwen3Parser`, run it through
the inherited `__init__`; `Ling3Parser.__init__` calls `glm47_moe_config` (imported from
vllm/parser/glm47_moe.py, also changed); `MiMoParser` imports `_param_value_extender` from vllm/parser/qwen3.py.
From v0.31.0 to v0.32.0 most tool parser files only moved their import of `make_tool_call_id` to
`vllm.renderers.chat_utils`.
"""

from __future__ import annotations

import json

import pytest
from fixtures.helpers import tpindex

pytestmark = pytest.mark.network


@pytest.fixture(scope="session")
def closure_db(pypi, tmp_path_factory):  # noqa: F811
    db = tmp_path_factory.mktemp("real-closure") / "real.db"
    tpindex("build", "--from-pypi", "--tags", "v0.31.0,v0.32.0,v0.33.0", "--db", db, "-q")
    return db


def code_changes(db, a, b) -> dict[tuple[str, str], dict]:
    out = tpindex("diff", a, b, "--format", "json", "--db", db, ok=False).output
    return {(c["name"], c["kind"]): c for c in json.loads(out)["changes"] if c["type"] == "code-changed"}


def names(change: dict, part: str) -> set[str]:
    return {n for p in change["parts"] if p["part"] == part for n in p["names"]}


@pytest.mark.parametrize("name", ["seed_oss", "ling3", "step3p5", "mimo"])
@pytest.mark.parametrize("kind", ["tool", "reasoning"])
def test_v0_33_0_changes_the_config_functions_these_names_run(closure_db, name, kind):
    changes = code_changes(closure_db, "v0.32.0", "v0.33.0")
    assert (name, kind) in changes, f"{name} ({kind}) is not code-changed"
    functions = names(changes[(name, kind)], "functions")
    config = "glm47_moe_config" if name == "ling3" else "qwen3_config"
    assert config in functions
    if name == "mimo":  # imports the new helper from qwen3.py
        assert "_param_value_extender" in functions
        assert "_param_value_extender" in names(changes[(name, kind)], "imports")
    assert config in changes[(name, kind)]["detail"]


def test_mimos_tool_card_lists_qwen3_py_among_its_code_files(closure_db):
    card = json.loads(
        tpindex(
            "card", "mimo", "--kind", "tool", "--at", "v0.33.0", "--format", "json", "--db", closure_db
        ).output
    )["cards"][0]
    files = {f["file"]: f for f in card["code_files"]}
    assert "vllm/parser/qwen3.py" in files and not files["vllm/parser/qwen3.py"]["shared"]


def test_diff_code_seed_oss_tool_shows_qwen3_py(closure_db):
    r = tpindex(
        "diff",
        "v0.32.0",
        "v0.33.0",
        "--code",
        "seed_oss",
        "--kind",
        "tool",
        "--format",
        "json",
        "--db",
        closure_db,
        ok=False,
    )
    assert r.exit_code == 1
    assert "vllm/parser/qwen3.py" in [f["path_b"] for f in json.loads(r.output)["files"]]


def test_the_moved_make_tool_call_id_import_is_imports_only(closure_db):
    changes = code_changes(closure_db, "v0.31.0", "v0.32.0")
    hermes = changes[("hermes", "tool")]
    assert [p["part"] for p in hermes["parts"]] == ["imports"]
    assert hermes["parts"][0]["names"] == ["make_tool_call_id"]
    assert hermes["detail"].startswith("imports only")
