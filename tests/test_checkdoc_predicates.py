"""check-doc reads what a sentence says about a path, name or version (issue 40): its predicate (is loaded, is where
the code lives, is gone, must not be used, existed before V, is registered from F), its tense and its negation, not
the words around it ("legacy", "old", "default"). Each mistake class of the issue's table is stated here with
sentences written for this test, on the registry eras of tests/fixtures/registry_eras.py (the tool-parser package
under vllm/entrypoints/openai/ until v0.11.1, moved to vllm/tool_parsers/ at v0.13.0 leaving a shim whose module
`__getattr__` only re-exports, the shim gone at v0.14.0, vllm/parser/ from v0.16.0) with a few files of its own: a
CONTRIBUTING.md first at v0.13.0, and a set-up function that leaves its module for another directory at v0.14.0.
"""

from __future__ import annotations

import json

import pytest
from fixtures.helpers import build_tags, make_repo, tpindex
from fixtures.registry_eras import HISTORY, OLD

OLD_HERMES = f"{OLD}/hermes_tool_parser.py"
NEW_HERMES = "vllm/tool_parsers/hermes_tool_parser.py"
NEWEST = "v0.16.0"

STARTUP = """
def prepare_server(args):
    return args


def log_startup(args):
    print(args)
"""

STARTUP_14 = """
def log_startup(args):
    print(args)
"""

ENGINE_STARTUP = """
import os


def prepare_server(args):
    os.environ.setdefault("X", "1")
    return args
"""


def _history() -> dict:
    own = {
        "v0.6.0": {"vllm/entrypoints/openai/startup.py": STARTUP},
        "v0.13.0": {"CONTRIBUTING.md": "Run the tests before you send a change.\n"},
        "v0.14.0": {
            "vllm/entrypoints/openai/startup.py": STARTUP_14,
            "vllm/engine/startup.py": ENGINE_STARTUP,
        },
    }
    return {v: {**files, **own.get(v, {})} for v, files in HISTORY.items()}


@pytest.fixture(scope="module")
def eras_db(tmp_path_factory):
    from indexer.core.scope import Scope

    root = tmp_path_factory.mktemp("predicates")
    repo = make_repo(root / "repo", _history())
    db = root / "eras.db"
    build_tags(repo, db, f"v0.6.0..{NEWEST}", scope=Scope.named("default", tree=True), jobs=2)
    return db


def check(db, tmp_path, text: str, *at: str) -> list[list[tuple[str, str, str, str]]]:
    """(kind, claim, status, message) of every claim, per version checked (the JSON follows its schema)."""
    import jsonschema

    from indexer.schemas import load

    doc = tmp_path / "doc.md"
    doc.write_text(text)
    r = tpindex(
        "check-doc", doc, "--format", "json", *[a for v in at for a in ("--at", v)], "--db", db, ok=False
    )
    assert r.exit_code in (0, 1), r.output
    data = json.loads(r.output)
    jsonschema.Draft202012Validator(load("check-doc")).validate(data)
    return [
        [(c["kind"], c["claim"], c["status"], c["message"]) for c in v["results"]] for v in data["versions"]
    ]


def one(results, kind: str, fragment: str = "") -> tuple[str, str]:
    """(status, message) of the one claim of that kind whose text holds the fragment."""
    [hit] = [(s, m) for k, c, s, m in results if k == kind and fragment in c]
    return hit


# -- the table, row by row ----------------------------------------------------------------------------


def test_legacy_is_not_the_past_tense_the_sentence_says_it_is_loaded(eras_db, tmp_path):
    text = f"The legacy parser at `{OLD_HERMES}` is what the server loads.\n"
    [res] = check(eras_db, tmp_path, text, NEWEST)
    status, message = one(res, "path")
    assert status == "stale" and message.startswith(f"moved to {NEW_HERMES} at v0.13.0"), res


def test_a_legacy_location_in_parentheses_is_still_said_to_be_loaded(eras_db, tmp_path):
    text = f"The server loads `{OLD_HERMES}` (legacy location).\n"
    [res] = check(eras_db, tmp_path, text, NEWEST)
    assert one(res, "path")[0] == "stale", res


def test_a_path_the_sentence_says_is_gone_is_ok_where_it_is_gone(eras_db, tmp_path):
    text = f"Do not import from `{OLD}/` any more: it is gone.\n"
    v13, v16 = check(eras_db, tmp_path, text, "v0.13.0", NEWEST)
    status, message = one(v16, "path")
    assert status == "ok" and "removed at v0.14.0 (last at v0.13.0)" in message, v16
    # at v0.13.0 the shim is still there: the sentence is ahead of that release
    status, message = one(v13, "path")
    assert status == "too-new" and "absent from v0.14.0" in message, v13


def test_a_shim_that_only_re_exports_is_not_where_the_parsers_live(eras_db, tmp_path):
    text = f"Before v0.13.0 the parsers lived in `{OLD}/`.\n\nThe parsers live in `{OLD}/`.\n"
    v11, v13 = check(eras_db, tmp_path, text, "v0.11.1", "v0.13.0")
    status, message = one(v13, "version")
    assert status == "ok" and "code there last at v0.11.1; from v0.13.0 on only a shim" in message, v13
    # said in the present tense: true while the package held the parsers, not once it is only a shim
    assert one(v11, "path")[0] == "ok"
    status, message = one(v13, "path")
    assert status == "stale" and message.startswith("only a shim at v0.13.0: "), v13
    assert f"{OLD}/__init__.py defines no class or function of its own" in message
    assert "(code there last at v0.11.1)" in message


def test_a_name_said_to_live_in_a_shim_is_not_there_a_name_said_to_be_in_it_is(eras_db, tmp_path):
    text = f"`ToolParserManager` lives in `{OLD}/`.\n\n`ToolParserManager` is in `{OLD}/`.\n"
    [res] = check(eras_db, tmp_path, text, "v0.13.0")
    lives, is_in = [(s, m) for k, _, s, m in res if k == "symbol"]
    assert lives[0] == "stale" and "only re-exported there at v0.13.0 by a shim" in lives[1], res
    assert "at v0.13.0 defined at vllm/tool_parsers/abstract_tool_parser.py" in lives[1]
    assert is_in == ("ok", f"mentioned in {OLD}/__init__.py"), res


def test_advice_after_a_past_clause_is_in_the_present_tense(eras_db, tmp_path):
    text = f"The old package `{OLD}/` was removed at v0.14.0; import from `vllm/tool_parsers/` instead.\n"
    [res] = check(eras_db, tmp_path, text, NEWEST)
    assert one(res, "version") == ("ok", "removed at v0.14.0 (last at v0.13.0)"), res
    assert one(res, "path", "`vllm/tool_parsers/`")[0] == "ok", res


def test_a_parser_name_beside_the_file_it_is_registered_from_is_a_registration_claim(eras_db, tmp_path):
    text = (
        "The `hermes` parser is registered from `hermes_tool_parser.py`.\n\n"
        "The `hermes` parser is registered from `mistral_tool_parser.py`.\n\n"
        "The `glm` parser is registered in `vllm/parser/__init__.py`.\n"
    )
    [res] = check(eras_db, tmp_path, text, NEWEST)
    assert not [r for r in res if r[0] == "symbol"], res
    assert one(res, "parser", "from `hermes_tool_parser.py`") == (
        "ok",
        f"registered from {NEW_HERMES} (tool; listed in vllm/tool_parsers/__init__.py)",
    )
    status, message = one(res, "parser", "from `mistral_tool_parser.py`")
    assert status == "wrong" and f"hermes is registered from {NEW_HERMES} at {NEWEST}" in message, res
    assert one(res, "parser", "`glm`")[0] == "ok", res


# -- the claims it no longer found ----------------------------------------------------------------------------


def test_a_version_claim_in_a_long_cell_is_found_as_in_a_short_one(eras_db, tmp_path):
    text = (
        "| name | file | notes |\n|---|---|---|\n"
        "| `glm` | `vllm/parser/glm_parser.py` | (v0.16.0+) |\n"
        "| `glm` | `vllm/parser/glm_parser.py` | GLM models; the default engine for GLM checkpoints, XML calls "
        "(v0.16.0+; needs its chat template) |\n"
        "| `glm` | `vllm/parser/glm_parser.py` | GLM models, v0.16.0 and later; the default engine |\n"
        "| `mistral` | `vllm/tool_parsers/mistral_tool_parser.py` | Mistral models, tokenizer-based calls since "
        "v0.13.0 (the default template, through v0.14.0) |\n"
    )
    [res] = check(eras_db, tmp_path, text, NEWEST)
    versions = [(c, s, m) for k, c, s, m in res if k == "version"]
    assert versions == [
        ("`glm` (v0.16.0+)", "ok", "first at v0.16.0 (absent at v0.14.0)"),
        ("`glm` v0.16.0+", "ok", "first at v0.16.0 (absent at v0.14.0)"),
        ("`glm` v0.16.0 and later", "ok", "first at v0.16.0 (absent at v0.14.0)"),
        (
            "`mistral` since v0.13.0",
            "wrong",
            "already at v0.6.0 (first indexed version with it); parser name mistral",
        ),
        ("`mistral` through v0.14.0", "wrong", "still present at v0.16.0"),
    ], res


def test_a_file_said_to_appear_a_release_late_is_found_in_a_cell_and_a_bold_sentence(eras_db, tmp_path):
    text = (
        "| part | where |\n|---|---|\n"
        "| Contributing | `CONTRIBUTING.md` (v0.14.0+), required reading |\n\n"
        "**Read `CONTRIBUTING.md` (v0.14.0+) before you change the default parser.** Then run the tests.\n"
    )
    [res] = check(eras_db, tmp_path, text, NEWEST)
    versions = [(s, m.split(";")[0]) for k, _, s, m in res if k == "version"]
    assert versions == [("wrong", "already at v0.13.0 (first indexed version with it)")] * 2, res


def test_a_grep_pointer_is_stale_where_the_name_left_for_another_directory(eras_db, tmp_path):
    text = "For the legacy set-up, grep `prepare_server` in file `vllm/entrypoints/openai/startup.py`.\n"
    v13, v16 = check(eras_db, tmp_path, text, "v0.13.0", NEWEST)
    assert one(v13, "symbol")[0] == "ok", v13
    status, message = one(v16, "symbol")
    assert status == "stale", v16
    assert message.startswith("not in vllm/entrypoints/openai/startup.py since v0.14.0 (last at v0.13.0)")
    assert f"at {NEWEST} defined at vllm/engine/startup.py:4" in message


# -- negation ---------------------------------------------------------------------------------------------------


def test_there_is_no_path_is_true_where_the_path_is_absent(eras_db, tmp_path):
    text = (
        "There is no `vllm/tool_parsers/registry.py` and no `vllm/plugins/*_hook.py`.\n\n"
        "There is no `vllm/entrypoints/openai/cli_args.py` any more.\n\n"
        f"There is no `{NEW_HERMES}`.\n"
    )
    [res] = check(eras_db, tmp_path, text, NEWEST)
    assert [(c, s) for k, c, s, _ in res] == [
        ("`vllm/tool_parsers/registry.py`", "ok"),
        ("`vllm/plugins/*_hook.py`", "ok"),
        ("`vllm/entrypoints/openai/cli_args.py`", "wrong"),
        (f"`{NEW_HERMES}`", "stale"),
    ], res
    assert "there at v0.16.0 and in every indexed version" in res[2][3]
    assert res[3][3].startswith("absent until v0.11.1, there at v0.16.0"), res


def test_a_bare_no_before_a_path_is_a_negation_only_where_it_qualifies_nothing_else(eras_db, tmp_path):
    text = "No `vllm/tool_parsers/__init__.py` changes are needed, and no `vllm/parser/registry.py` either.\n"
    [res] = check(eras_db, tmp_path, text, NEWEST)
    assert [(c, s, m) for _, c, s, m in res] == [
        ("`vllm/tool_parsers/__init__.py`", "ok", "exists"),
        ("`vllm/parser/registry.py`", "ok", "in no indexed version (v0.6.0 - v0.16.0), as the sentence says"),
    ], res


def test_a_parser_name_said_to_be_gone_is_true_where_it_is_not_registered(eras_db, tmp_path):
    # mistral_v2 is registered by a decorator from v0.6.3 and no longer from v0.11.1
    text = (
        "Use `--tool-call-parser mistral` instead: `--tool-call-parser mistral_v2` is no longer registered.\n\n"
        "The `--tool-call-parser hermes` name is not registered.\n"
    )
    v8, v16 = check(eras_db, tmp_path, text, "v0.8.3", NEWEST)
    assert [(c, s) for _, c, s, _ in v16] == [
        ("`mistral` (tool parser)", "ok"),
        ("`mistral_v2` (tool parser)", "ok"),
        ("`hermes` (tool parser)", "wrong"),
    ], v16
    assert v16[1][3] == "not at v0.16.0: removed at v0.11.1 (last at v0.8.3)"
    assert v16[2][3].startswith("registered at v0.16.0 and in every indexed version")
    assert v8[1][2:] == (
        "too-new",
        "still registered at v0.8.3 (parser name mistral_v2); absent from v0.11.1",
    )


def test_a_path_the_sentence_advises_against_is_not_stale_where_it_is_gone(eras_db, tmp_path):
    text = f"Use `{NEW_HERMES}` instead of `{OLD_HERMES}`.\n\nReplace imports of `{OLD}/` with `vllm/tool_parsers/`.\n"
    [res] = check(eras_db, tmp_path, text, NEWEST)
    assert [s for _, _, s, _ in res] == ["ok"] * 4, res
    assert "the sentence advises against it" in res[1][3] and "the sentence advises against it" in res[2][3]


def test_the_past_tense_is_read_in_the_clause_of_the_path(eras_db, tmp_path):
    # the first clause speaks of the past (lenient), the second of now (strict)
    text = f"The parsers used to live in `{OLD}/`, but the server now loads `{OLD_HERMES}`.\n"
    [res] = check(eras_db, tmp_path, text, NEWEST)
    assert [(c, s) for _, c, s, _ in res] == [(f"`{OLD}/`", "ok"), (f"`{OLD_HERMES}`", "stale")], res
