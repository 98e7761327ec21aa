"""`tpindex where` (issue 17) on a fixture repository written here: four releases in which a file moves by
content (docs/guide.md), a module moves with edits (cli_args.py, found by the definitions it holds), a
function moves between two files that both stay (setup_env), a call moves to a new file (parse_delta,
only mentioned), a parser name is removed (beta) and one is added (gamma)."""

from __future__ import annotations

import json

import pytest
from fixtures.helpers import build_tags, line_of, tpindex
from fixtures.where import CLI_ARGS, CLI_ARGS_33, TP


def where(db, *args, ok=True):
    return tpindex("where", *args, "--db", db, ok=ok)


def test_a_symbol_at_the_newest_version(tree_db):
    out = where(tree_db, "make_arg_parser").output.splitlines()
    line = line_of(CLI_ARGS_33, "def make_arg_parser")
    assert out[0] == "make_arg_parser at v0.33.0: defined 1 time(s) in 1 file(s)"
    assert out[1].split()[:3] == [
        f"vllm/entrypoints/common/cli_args.py:{line}",
        "function",
        "make_arg_parser",
    ]


def test_a_symbol_across_versions_as_ranges(tree_db):
    out = where(tree_db, "make_arg_parser", "--all").output.splitlines()
    old, new = line_of(CLI_ARGS, "def make_arg_parser"), line_of(CLI_ARGS_33, "def make_arg_parser")
    assert [s.split()[:4] for s in out[1:]] == [
        ["v0.30.0", "-", "v0.32.0", f"vllm/entrypoints/launchers/cli_args.py:{old}"],
        ["v0.33.0", f"vllm/entrypoints/common/cli_args.py:{new}", "function", "make_arg_parser"],
    ]


def test_a_function_moved_between_two_files_that_both_stay(tree_db):
    out = where(tree_db, "setup_env", "--all").output
    assert "v0.30.0 - v0.31.0    vllm/entrypoints/serve/api_utils.py:" in out
    assert "v0.32.0 - v0.33.0    vllm/entrypoints/common/startup.py:" in out
    assert "removed" not in out


def test_a_removed_symbol_says_when(tree_db):
    out = where(tree_db, "BetaToolParser", "--all").output.splitlines()
    assert out[1].split()[:4] == ["v0.30.0", "-", "v0.32.0", f"{TP}/beta_tool_parser.py:4"]
    assert out[-1].strip() == "removed at v0.33.0"
    at = where(tree_db, "BetaToolParser", "--at", "v0.33.0").output
    assert "not defined (defined in v0.30.0 - v0.32.0)" in at


def test_a_symbol_only_used_is_found_where_it_is_mentioned(tree_db):
    out = where(tree_db, "parse_delta", "--at", "v0.32.0").output.splitlines()
    assert out[0] == "parse_delta at v0.32.0: not defined in any indexed version"
    assert out[1:] == ["  mentioned in 1 file(s) at v0.32.0:", "    vllm/entrypoints/chat/serving.py"]
    out = where(tree_db, "parse_delta").output
    assert "vllm/entrypoints/chat/stream.py" in out and "serving.py" not in out
    # in docs too (any text file), and case-sensitively
    assert "    docs/features/guide.md" in where(tree_db, "OperatorNotes").output.splitlines()
    assert "not mentioned in any file" in where(tree_db, "operatornotes").output


def test_dotted_and_file_qualified_names_pick_one_definition(tree_db):
    out = where(tree_db, "vllm.entrypoints.launchers.cli_args.make_arg_parser", "--at", "v0.31.0").output
    assert "defined 1 time(s)" in out and "launchers/cli_args.py" in out
    out = where(tree_db, f"{TP}/alpha_tool_parser.py:AlphaToolParser.extract_tool_calls").output
    assert f"{TP}/alpha_tool_parser.py:5  method AlphaToolParser.extract_tool_calls" in out
    out = where(
        tree_db, "ToolParser.extract_tool_calls"
    ).output  # a class-qualified method: only that class's
    assert "defined 1 time(s)" in out and "abstract_tool_parser.py" in out
    out = where(tree_db, "vllm.entrypoints.common").output  # a package is a path
    assert out == "vllm.entrypoints.common exists at v0.33.0 (a directory of 2 files)\n"
    out = where(tree_db, "vllm.entrypoints.common", "--all").output
    assert out.splitlines() == [
        "vllm.entrypoints.common",
        "  v0.30.0 - v0.31.0    absent",
        "  v0.32.0 - v0.33.0    present",
    ]


def test_a_name_defined_in_many_places_is_capped(tree_db):
    out = where(tree_db, "handle").output.splitlines()
    assert out == [
        "handle at v0.33.0: defined 45 time(s) in 1 file(s)",
        "  vllm/handlers.py  45: Handler0.handle:2, Handler1.handle:7, Handler2.handle:12, "
        "Handler3.handle:17, ...",
    ]
    out = where(tree_db, "extract_tool_calls").output.splitlines()  # few: one line each
    assert out[0] == "extract_tool_calls at v0.33.0: defined 3 time(s) in 3 file(s)" and len(out) == 4
    data = json.loads(where(tree_db, "handle", "--format", "json").output)
    assert len(data["definitions"]) == 45


def test_a_path_moved_by_content(tree_db):
    out = where(tree_db, "docs/guide.md", "--all").output.splitlines()
    assert out == [
        "docs/guide.md",
        "  v0.30.0 - v0.31.0    present",
        "  v0.32.0 - v0.33.0    moved at v0.32.0 to docs/features/guide.md (content)",
    ]


def test_a_path_moved_with_edits_is_found_by_its_definitions(tree_db):
    out = where(tree_db, "vllm/entrypoints/launchers/cli_args.py", "--at", "v0.33.0").output.splitlines()
    assert out[0] == "vllm/entrypoints/launchers/cli_args.py: not at v0.33.0"
    assert "moved at v0.33.0 to vllm/entrypoints/common/cli_args.py (definitions: 3 of its 3" in out[-1]


def test_a_removed_path_and_paths_that_exist(tree_db):
    out = where(tree_db, f"{TP}/beta_tool_parser.py", "--all").output.splitlines()
    assert out[-1].split() == ["v0.33.0", "absent", "(removed", "at", "v0.33.0)"]
    assert where(tree_db, "AGENTS.md").output == "AGENTS.md exists at v0.33.0\n"
    assert "a directory of" in where(tree_db, "vllm/entrypoints/", "--at", "v0.30.0").output
    out = where(tree_db, "cli_args.py", "--at", "v0.31.0").output  # a bare file name
    assert out.splitlines()[1:] == ["  vllm/entrypoints/launchers/cli_args.py"]
    out = where(tree_db, f"{TP}/<name>_tool_parser.py", "--at", "v0.33.0").output
    assert f"{TP}/gamma_tool_parser.py" in out and "beta" not in out


def test_json_has_the_ranges(tree_db):
    data = json.loads(where(tree_db, "setup_env", "--all", "--format", "json").output)
    assert [(h["first"], h["last"], [d["file"] for d in h["definitions"]]) for h in data["history"]] == [
        ("v0.30.0", "v0.31.0", ["vllm/entrypoints/serve/api_utils.py"]),
        ("v0.32.0", "v0.33.0", ["vllm/entrypoints/common/startup.py"]),
    ]


def test_where_needs_the_tree(where_repo, tmp_path):
    db = tmp_path / "plain.db"
    build_tags(where_repo, db, "v0.33.0")
    r = where(db, "make_arg_parser", ok=False)
    assert r.exit_code == 2 and "--tree" in r.output and "Traceback" not in r.output
    r = where(db, "x", "--at", "v0.33.0", "--all", ok=False)
    assert r.exit_code == 2 and "--at and --all" in r.output


@pytest.mark.parametrize(
    "args",
    [
        ["make_arg_parser"],
        ["make_arg_parser", "--all"],
        ["vllm/entrypoints/launchers/cli_args.py", "--all"],
        ["nowhere_defined_symbol"],
    ],
)
def test_where_json_follows_its_schema(tree_db, args):
    import json

    import jsonschema

    from indexer.schemas import load

    r = tpindex("where", *args, "--format", "json", "--db", tree_db, ok=False)
    if r.exit_code == 0:
        jsonschema.Draft202012Validator(load("where")).validate(json.loads(r.output))


@pytest.mark.parametrize(
    "args,name",
    [
        (("make_arg_parser", "--all"), "where_make_arg_parser_all.txt"),
        (("setup_env", "--all", "--format", "json"), "where_setup_env_all.json"),
        (("vllm/entrypoints/chat/serving.py", "--all"), "where_serving_all.txt"),
    ],
)
def test_where_is_golden(tree_db, args, name):
    from fixtures.golden import golden

    golden(name, where(tree_db, *args).output)


def test_where_and_check_doc_answer_typed_models_whose_schemas_are_generated(tree_db, tmp_path):
    """Issue 24, typed results: `Index.where` and `Index.check_doc` return data classes (answers/model.py)
    like every other answer, and their schemas are generated from those classes: closed objects (a key
    the model does not have is refused), each nested answer a defined model."""
    import jsonschema

    from indexer.answers.model import Model
    from indexer.api import Index
    from indexer.schemas import generate

    ix = Index(tree_db)
    answers = [
        ix.where("make_arg_parser"),
        ix.where("make_arg_parser", all_versions=True),
        ix.where("vllm/entrypoints/launchers/cli_args.py", all_versions=True),
        ix.check_doc("`vllm/entrypoints/launchers/cli_args.py` holds `make_arg_parser`.\n"),
    ]
    assert all(isinstance(a, Model) for a in answers), [type(a) for a in answers]
    schemas = generate()
    for name, a in zip(["where", "where", "where", "check-doc"], answers, strict=True):
        schema = schemas[name]
        assert schema["additionalProperties"] is False and schema["$defs"], name
        jsonschema.Draft202012Validator(schema).validate(a.to_json())
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.Draft202012Validator(schema).validate({**a.to_json(), "not_a_field": 1})
