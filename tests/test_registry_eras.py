"""Registry rows for every layout era of DESIGN.md section 2, built from one multi-era repository.

The fixture files imitate the layouts with small hand-written code; each era's expected rows are exact.
"""

from __future__ import annotations

import pytest
from fixtures.helpers import build_tags, commit, line_of, make_repo, rows
from fixtures.registry_eras import (
    ABSTRACT,
    CLI_ARGS,
    DECO_DEEPSEEK,
    DECO_HERMES,
    DECO_LLAMA,
    DECO_MISTRAL,
    HISTORY,
    LAZY_REASONING_INIT,
    LAZY_TOOL_INIT,
    LEFTOVER_MISTRAL,
    NEW,
    OLD,
    OLD_R,
    PARSER_INIT,
    PLAIN_MISTRAL,
)

SQL = (
    "select version, kind, name, module, class, form, file, line from registry where version = ?"
    " order by kind, name, form, file"
)


@pytest.fixture(scope="module")
def eras(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("eras")
    repo = make_repo(tmp / "repo", HISTORY, annotated=("v0.7.1", "v0.13.0"))
    db = tmp / "eras.db"
    stats = build_tags(repo, db, "v0.6.0..")
    return db, stats


def registry(db, version):
    return rows(db, SQL, [version])


def test_v060_hard_coded_dispatch_lists_cli_choices(eras):
    db, stats = eras
    f = "vllm/entrypoints/openai/cli_args.py"
    assert registry(db, "v0.6.0") == [
        ("v0.6.0", "tool", "hermes", None, None, "cli-choices", f, line_of(CLI_ARGS, "choices=")),
        ("v0.6.0", "tool", "mistral", None, None, "cli-choices", f, line_of(CLI_ARGS, "choices=")),
    ]
    assert rows(db, "select registry from versions where label = 'v0.6.0'") == [("found",)]


def test_v063_decorators_in_every_argument_shape(eras):
    db, _ = eras
    mod = "vllm.entrypoints.openai.tool_parsers"
    assert registry(db, "v0.6.3") == [
        (
            "v0.6.3",
            "tool",
            "PlainToolParser",
            f"{mod}.llama_tool_parser",
            "PlainToolParser",
            "decorator",
            f"{OLD}/llama_tool_parser.py",
            line_of(DECO_LLAMA, "register_module()"),
        ),
        (
            "v0.6.3",
            "tool",
            "hermes",
            f"{mod}.hermes_tool_parser",
            "Hermes2ProToolParser",
            "decorator",
            f"{OLD}/hermes_tool_parser.py",
            line_of(DECO_HERMES, "@ToolParserManager"),
        ),
        (
            "v0.6.3",
            "tool",
            "llama3_json",
            f"{mod}.llama_tool_parser",
            "Llama3JsonToolParser",
            "decorator",
            f"{OLD}/llama_tool_parser.py",
            line_of(DECO_LLAMA, "llama3_json"),
        ),
        (
            "v0.6.3",
            "tool",
            "mistral",
            f"{mod}.mistral_tool_parser",
            "MistralToolParser",
            "decorator",
            f"{OLD}/mistral_tool_parser.py",
            line_of(DECO_MISTRAL, "@ToolParserManager"),
        ),
        (
            "v0.6.3",
            "tool",
            "mistral_v2",
            f"{mod}.mistral_tool_parser",
            "MistralToolParser",
            "decorator",
            f"{OLD}/mistral_tool_parser.py",
            line_of(DECO_MISTRAL, "@ToolParserManager"),
        ),
    ]


def test_reasoning_decorators_in_both_packages(eras):
    db, _ = eras
    deco = line_of(DECO_DEEPSEEK, "@Reasoning")
    old = registry(db, "v0.7.1")
    assert [r for r in old if r[1] == "reasoning"] == [
        (
            "v0.7.1",
            "reasoning",
            "deepseek_r1",
            "vllm.entrypoints.openai.reasoning_parsers.deepseek_r1_reasoning_parser",
            "DeepSeekR1ReasoningParser",
            "decorator",
            f"{OLD_R}/deepseek_r1_reasoning_parser.py",
            deco,
        )
    ]
    new = registry(db, "v0.8.3")
    assert [r for r in new if r[1] == "reasoning"] == [
        (
            "v0.8.3",
            "reasoning",
            "deepseek_r1",
            "vllm.reasoning.deepseek_r1_reasoning_parser",
            "DeepSeekR1ReasoningParser",
            "decorator",
            "vllm/reasoning/deepseek_r1_reasoning_parser.py",
            deco,
        )
    ]
    # docstring examples in the managers register nothing
    assert not [r for r in old + new if r[2] == "example" or "abs_reasoning" in r[6] or "abstract" in r[6]]


def test_v0111_lazy_dicts_and_a_leftover_decorator(eras):
    db, _ = eras
    init = LAZY_TOOL_INIT.format(pkg=OLD.replace("/", "."))
    mod = "vllm.entrypoints.openai.tool_parsers"
    assert registry(db, "v0.11.1") == [
        (
            "v0.11.1",
            "reasoning",
            "deepseek_r1",
            "vllm.reasoning.deepseek_r1_reasoning_parser",
            "DeepSeekR1ReasoningParser",
            "lazy-dict",
            "vllm/reasoning/__init__.py",
            line_of(LAZY_REASONING_INIT, '"deepseek_r1":'),
        ),
        (
            "v0.11.1",
            "tool",
            "hermes",
            f"{mod}.hermes_tool_parser",
            "Hermes2ProToolParser",
            "lazy-dict",
            f"{OLD}/__init__.py",
            line_of(init, '"hermes":'),
        ),
        (
            "v0.11.1",
            "tool",
            "mistral",
            f"{mod}.mistral_tool_parser",
            "MistralToolParser",
            "decorator",
            f"{OLD}/mistral_tool_parser.py",
            line_of(LEFTOVER_MISTRAL, "@ToolParserManager"),
        ),
        (
            "v0.11.1",
            "tool",
            "mistral",
            f"{mod}.mistral_tool_parser",
            "MistralToolParser",
            "lazy-dict",
            f"{OLD}/__init__.py",
            line_of(init, '"mistral":'),
        ),
    ]


def test_v0130_new_package_registers_and_the_shim_does_not(eras):
    db, _ = eras
    init = LAZY_TOOL_INIT.format(pkg="vllm.tool_parsers")
    expected = [
        (
            "hermes",
            "vllm.tool_parsers.hermes_tool_parser",
            "Hermes2ProToolParser",
            line_of(init, '"hermes":'),
        ),
        (
            "mistral",
            "vllm.tool_parsers.mistral_tool_parser",
            "MistralToolParser",
            line_of(init, '"mistral":'),
        ),
    ]
    for version in ("v0.13.0", "v0.14.0"):
        tool = [r for r in registry(db, version) if r[1] == "tool"]
        assert tool == [
            (version, "tool", n, m, c, "lazy-dict", f"{NEW}/__init__.py", line) for n, m, c, line in expected
        ]
    assert rows(
        db, "select file from version_files where version = 'v0.13.0' and file like ?", [f"{OLD}/%"]
    ) == [(f"{OLD}/__init__.py",)]
    assert rows(
        db, "select count(*) from version_files where version = 'v0.14.0' and file like ?", [f"{OLD}/%"]
    ) == [(0,)]


def test_v0160_parser_package_dict_and_explicit_calls(eras):
    db, _ = eras
    engine = [r for r in registry(db, "v0.16.0") if r[1] == "engine"]
    f = "vllm/parser/__init__.py"
    assert engine == [
        (
            "v0.16.0",
            "engine",
            "glm",
            "vllm.parser.glm_parser",
            "GlmParser",
            "lazy-call",
            f,
            line_of(PARSER_INIT, '"glm"'),
        ),
        (
            "v0.16.0",
            "engine",
            "minimax_m2",
            "vllm.parser.minimax_m2_parser",
            "MiniMaxM2Parser",
            "lazy-call",
            f,
            line_of(PARSER_INIT, "ParserManager.register_lazy_module("),
        ),
        (
            "v0.16.0",
            "engine",
            "minimax_m2",
            "vllm.parser.minimax_m2_parser",
            "MiniMaxM2Parser",
            "lazy-dict",
            f,
            line_of(PARSER_INIT, '"minimax_m2":'),
        ),
    ]


def test_every_era_in_one_run(eras):
    db, stats = eras
    assert rows(db, "select label from versions order by ord") == [(t,) for t in HISTORY]
    assert rows(db, "select count(*) from versions where status != 'complete' or registry != 'found'") == [
        (0,)
    ]
    assert stats.warnings == []


def test_lazy_dict_module_follows_the_f_string_package(tmp_path):
    """The loop's f-string names the package of the module files, even when it is not the dict's own."""
    init = LAZY_TOOL_INIT.format(pkg="vllm.tool_parsers")
    repo = make_repo(tmp_path / "repo", {"v1.0.0": {f"{OLD}/__init__.py": init}})
    build_tags(repo, tmp_path / "db", "v1.0.0")
    assert rows(tmp_path / "db", "select name, module, file from registry order by name") == [
        ("hermes", "vllm.tool_parsers.hermes_tool_parser", f"{OLD}/__init__.py"),
        ("mistral", "vllm.tool_parsers.mistral_tool_parser", f"{OLD}/__init__.py"),
    ]


def test_lazy_dict_without_f_string_uses_its_own_package(tmp_path):
    init = (
        '_TOOL_PARSERS_TO_REGISTER = {"hermes": ("hermes_tool_parser", "Hermes2ProToolParser")}\n'
        "for name, (file_name, class_name) in _TOOL_PARSERS_TO_REGISTER.items():\n"
        "    ToolParserManager.register_lazy_module(name, __name__ + '.' + file_name, class_name)\n"
    )
    repo = make_repo(tmp_path / "repo", {"v1.0.0": {f"{NEW}/__init__.py": init}})
    build_tags(repo, tmp_path / "db", "v1.0.0")
    assert rows(tmp_path / "db", "select name, module, class, form from registry") == [
        ("hermes", "vllm.tool_parsers.hermes_tool_parser", "Hermes2ProToolParser", "lazy-dict")
    ]


def test_docstring_and_comment_examples_register_nothing(tmp_path):
    text = '''
    """Module docstring.

    @ToolParserManager.register_module("in_docstring")
    class A(ToolParser): ...

    ToolParserManager.register_lazy_module("in_docstring2", "m", "C")
    _TOOL_PARSERS_TO_REGISTER = {"in_docstring3": ("f", "C")}
    """

    # @ToolParserManager.register_module("in_comment")


    class Documented:
        """Example: ToolParserManager.register_module("in_class_docstring", module=Documented)"""

        def f(self):
            """@ToolParserManager.register_module("in_method_docstring")"""
            example = 'ToolParserManager.register_lazy_module("in_string", "m", "C")'
            return example
    '''
    repo = make_repo(tmp_path / "repo", {"v1.0.0": {f"{NEW}/example.py": text}})
    stats = build_tags(repo, tmp_path / "db", "v1.0.0")
    assert rows(tmp_path / "db", "select * from registry") == []
    assert rows(tmp_path / "db", "select registry from versions") == [("none",)]
    assert [w for w in stats.warnings if w.startswith("v1.0.0")], stats.warnings


def test_call_form_with_module_keyword(tmp_path):
    text = """
    from vllm.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager


    class AParser(ToolParser):
        pass


    ToolParserManager.register_module("a", module=AParser)
    ToolParserManager.register_module(["b", "c"], True, AParser)
    """
    repo = make_repo(tmp_path / "repo", {"v1.0.0": {f"{NEW}/a_parser.py": text}})
    build_tags(repo, tmp_path / "db", "v1.0.0")
    f = f"{NEW}/a_parser.py"
    assert rows(
        tmp_path / "db", "select name, module, class, form, file, line from registry order by name"
    ) == [
        ("a", "vllm.tool_parsers.a_parser", "AParser", "call", f, line_of(text, '("a"')),
        ("b", "vllm.tool_parsers.a_parser", "AParser", "call", f, line_of(text, '(["b"')),
        ("c", "vllm.tool_parsers.a_parser", "AParser", "call", f, line_of(text, '(["b"')),
    ]


def test_version_without_registry_is_marked_and_warned(tmp_path):
    repo = make_repo(
        tmp_path / "repo",
        {
            "v0.5.0": {"README.md": "no vllm here\n"},
            "v0.6.0": {"vllm/entrypoints/openai/cli_args.py": CLI_ARGS},
        },
    )
    stats = build_tags(repo, tmp_path / "db", "v0.5.0..v0.6.0")
    assert rows(tmp_path / "db", "select label, registry from versions order by ord") == [
        ("v0.5.0", "none"),
        ("v0.6.0", "found"),
    ]
    assert len(stats.warnings) == 1 and "v0.5.0" in stats.warnings[0]


def test_registry_rows_follow_a_tag_moved_between_builds(tmp_path):
    """A leftover decorator removed and the tag moved: the re-indexed version loses that row."""
    files = {p: t for p, t in HISTORY["v0.11.1"].items() if t is not None}
    repo = make_repo(tmp_path / "repo", {"v0.11.1": files | {f"{OLD}/abstract_tool_parser.py": ABSTRACT}})
    db = tmp_path / "db"
    build_tags(repo, db, "v0.11.1")
    before = rows(db, "select name, form from registry where name = 'mistral' order by form")
    assert before == [("mistral", "decorator"), ("mistral", "lazy-dict")]
    commit(repo, {f"{OLD}/mistral_tool_parser.py": PLAIN_MISTRAL}, tag="v0.11.1", force=True)
    stats = build_tags(repo, db, "v0.11.1")
    assert stats.versions_reindexed == ["v0.11.1"]
    assert rows(db, "select name, form from registry where name = 'mistral'") == [("mistral", "lazy-dict")]
