"""Registry rows for every layout era of DESIGN.md section 2, built from one multi-era repository.

The fixture files imitate the layouts with small hand-written code; each era's expected rows are exact.
"""

from __future__ import annotations

import pytest
from conftest import build_tags, commit, line_of, make_repo, rows

OLD = "vllm/entrypoints/openai/tool_parsers"
OLD_R = "vllm/entrypoints/openai/reasoning_parsers"
NEW = "vllm/tool_parsers"

ABSTRACT = '''
class ToolParser:
    """Base class of tool parsers.

    Register a subclass like this (an example, not a registration):

        @ToolParserManager.register_module("example")
        class ExampleToolParser(ToolParser):
            pass

    or lazily: ToolParserManager.register_lazy_module("example", "pkg.example", "ExampleToolParser")
    and _TOOL_PARSERS_TO_REGISTER = {"example": ("example", "ExampleToolParser")}
    """

    def extract_tool_calls_streaming(self, delta):
        raise NotImplementedError


class ToolParserManager:
    tool_parsers = {}

    @classmethod
    def register_module(cls, name=None, force=True, module=None):
        """Decorator: `@ToolParserManager.register_module(["a", "b"])`."""
        def wrap(module):
            cls._register_module(module=module, module_name=name, force=force)
            return module
        return wrap
'''

# v0.6.0: no registry; the CLI lists the names and the serving code picks the class.
CLI_ARGS = '''
def make_arg_parser(parser):
    parser.add_argument("--enable-auto-tool-choice", action="store_true")
    parser.add_argument(
        "--tool-call-parser",
        type=str,
        choices=["mistral", "hermes"],
        default=None,
        help="Which parser to use.")
    return parser
'''
SERVING_CHAT = '''
from vllm.entrypoints.openai.tool_parsers import Hermes2ProToolParser, MistralToolParser


class OpenAIServingChat:
    def __init__(self, tool_parser):
        if tool_parser == "mistral":
            self.tool_parser = MistralToolParser
        elif tool_parser == "hermes":
            self.tool_parser = Hermes2ProToolParser
'''
V060_INIT = '''
from .abstract_tool_parser import ToolParser
from .hermes_tool_parser import Hermes2ProToolParser
from .mistral_tool_parser import MistralToolParser

__all__ = ["ToolParser", "Hermes2ProToolParser", "MistralToolParser"]
'''
PLAIN_HERMES = '''
from vllm.entrypoints.openai.tool_parsers.abstract_tool_parser import ToolParser


class Hermes2ProToolParser(ToolParser):
    def extract_tool_calls_streaming(self, delta):
        return delta
'''
PLAIN_MISTRAL = PLAIN_HERMES.replace("Hermes2Pro", "Mistral")

# v0.6.3: decorators, in each of their argument shapes.
DECO_HERMES = '''
from vllm.entrypoints.openai.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager


@ToolParserManager.register_module("hermes")
class Hermes2ProToolParser(ToolParser):
    pass
'''
DECO_MISTRAL = '''
from vllm.entrypoints.openai.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager


@ToolParserManager.register_module(["mistral", "mistral_v2"])
class MistralToolParser(ToolParser):
    pass
'''
DECO_LLAMA = '''
from .abstract_tool_parser import ToolParser, ToolParserManager


@ToolParserManager.register_module(name="llama3_json")
class Llama3JsonToolParser(ToolParser):
    pass


@ToolParserManager.register_module()
class PlainToolParser(ToolParser):
    pass
'''

# v0.7.1 / v0.8.3: reasoning parsers with the same decorator form.
ABS_REASONING = '''
class ReasoningParser:
    pass


class ReasoningParserManager:
    reasoning_parsers = {}

    @classmethod
    def register_module(cls, name=None, force=True, module=None):
        """Use `@ReasoningParserManager.register_module("deepseek_r1")` on a class."""
        return lambda m: m
'''
DECO_DEEPSEEK = '''
from {pkg}.abs_reasoning_parsers import ReasoningParser, ReasoningParserManager


@ReasoningParserManager.register_module("deepseek_r1")
class DeepSeekR1ReasoningParser(ReasoningParser):
    pass
'''

# v0.11.1: lazy dicts registered by a loop over an f-string module path.
LAZY_TOOL_INIT = '''
from {pkg}.abstract_tool_parser import ToolParser, ToolParserManager

__all__ = ["ToolParser", "ToolParserManager"]

_TOOL_PARSERS_TO_REGISTER = {{
    "hermes": ("hermes_tool_parser", "Hermes2ProToolParser"),
    "mistral": (  # name
        "mistral_tool_parser",  # file
        "MistralToolParser",  # class
    ),
}}


def register_lazy_tool_parsers():
    for name, (file_name, class_name) in _TOOL_PARSERS_TO_REGISTER.items():
        module_path = f"{pkg}.{{file_name}}"
        ToolParserManager.register_lazy_module(name, module_path, class_name)


register_lazy_tool_parsers()
'''
LAZY_REASONING_INIT = '''
from vllm.reasoning.abs_reasoning_parsers import ReasoningParser, ReasoningParserManager

_REASONING_PARSERS_TO_REGISTER = {
    "deepseek_r1": ("deepseek_r1_reasoning_parser", "DeepSeekR1ReasoningParser"),
}


def register_lazy_reasoning_parsers():
    for name, (file_name, class_name) in _REASONING_PARSERS_TO_REGISTER.items():
        module_path = f"vllm.reasoning.{file_name}"
        ReasoningParserManager.register_lazy_module(
            name=name, module_path=module_path, class_name=class_name)


register_lazy_reasoning_parsers()
'''
# a leftover decorator that duplicates the lazy dict's "mistral" entry
LEFTOVER_MISTRAL = DECO_MISTRAL.replace('(["mistral", "mistral_v2"])', '("mistral")')

# v0.13.0: the old package is a shim that only re-exports.
SHIM = '''
import warnings


def __getattr__(name):
    if name == "ToolParserManager":
        from vllm.tool_parsers import ToolParserManager

        warnings.warn("moved to vllm.tool_parsers", DeprecationWarning, stacklevel=2)
        return ToolParserManager
    raise AttributeError(name)
'''

# v0.16.0: vllm/parser/ with its own dict and explicit calls (keyword and positional).
PARSER_INIT = '''
from vllm.parser.parser_manager import ParserManager

_PARSERS_TO_REGISTER = {
    "minimax_m2": ("minimax_m2_parser", "MiniMaxM2Parser"),
}

ParserManager.register_lazy_module(
    name="minimax_m2",
    module_path="vllm.parser.minimax_m2_parser",
    class_name="MiniMaxM2Parser",
)
ParserManager.register_lazy_module("glm", "vllm.parser.glm_parser", "GlmParser")


def register_lazy_parsers():
    for name, (file_name, class_name) in _PARSERS_TO_REGISTER.items():
        module_path = f"vllm.parser.{file_name}"
        ParserManager.register_lazy_module(name, module_path, class_name)


register_lazy_parsers()
'''
PARSER_MANAGER = '''
class ParserManager:
    """Register with ParserManager.register_lazy_module(name="x", module_path="m", class_name="C")."""

    parsers = {}

    @classmethod
    def register_lazy_module(cls, name, module_path, class_name):
        cls.parsers[name] = (module_path, class_name)
'''

HISTORY = {
    "v0.6.0": {
        "vllm/entrypoints/openai/cli_args.py": CLI_ARGS,
        "vllm/entrypoints/openai/serving_chat.py": SERVING_CHAT,
        f"{OLD}/__init__.py": V060_INIT,
        f"{OLD}/abstract_tool_parser.py": ABSTRACT,
        f"{OLD}/hermes_tool_parser.py": PLAIN_HERMES,
        f"{OLD}/mistral_tool_parser.py": PLAIN_MISTRAL,
    },
    "v0.6.3": {
        "vllm/entrypoints/openai/cli_args.py": CLI_ARGS.replace('choices=["mistral", "hermes"],\n', ""),
        f"{OLD}/hermes_tool_parser.py": DECO_HERMES,
        f"{OLD}/mistral_tool_parser.py": DECO_MISTRAL,
        f"{OLD}/llama_tool_parser.py": DECO_LLAMA,
    },
    "v0.7.1": {
        f"{OLD_R}/__init__.py": "",
        f"{OLD_R}/abs_reasoning_parsers.py": ABS_REASONING,
        f"{OLD_R}/deepseek_r1_reasoning_parser.py": DECO_DEEPSEEK.format(pkg=OLD_R.replace("/", ".")),
    },
    "v0.8.3": {
        f"{OLD_R}/__init__.py": None,
        f"{OLD_R}/abs_reasoning_parsers.py": None,
        f"{OLD_R}/deepseek_r1_reasoning_parser.py": None,
        "vllm/reasoning/__init__.py": "",
        "vllm/reasoning/abs_reasoning_parsers.py": ABS_REASONING,
        "vllm/reasoning/deepseek_r1_reasoning_parser.py": DECO_DEEPSEEK.format(pkg="vllm.reasoning"),
    },
    "v0.11.1": {
        f"{OLD}/__init__.py": LAZY_TOOL_INIT.format(pkg=OLD.replace("/", ".")),
        f"{OLD}/hermes_tool_parser.py": PLAIN_HERMES,
        f"{OLD}/mistral_tool_parser.py": LEFTOVER_MISTRAL,
        f"{OLD}/llama_tool_parser.py": None,
        "vllm/reasoning/__init__.py": LAZY_REASONING_INIT,
        "vllm/reasoning/deepseek_r1_reasoning_parser.py":
            DECO_DEEPSEEK.format(pkg="vllm.reasoning").replace('@ReasoningParserManager.register_module("deepseek_r1")\n', ""),
    },
    "v0.13.0": {
        f"{OLD}/__init__.py": SHIM,
        f"{OLD}/abstract_tool_parser.py": None,
        f"{OLD}/hermes_tool_parser.py": None,
        f"{OLD}/mistral_tool_parser.py": None,
        f"{NEW}/__init__.py": LAZY_TOOL_INIT.format(pkg="vllm.tool_parsers"),
        f"{NEW}/abstract_tool_parser.py": ABSTRACT,
        f"{NEW}/hermes_tool_parser.py": PLAIN_HERMES.replace(OLD.replace("/", "."), "vllm.tool_parsers"),
        f"{NEW}/mistral_tool_parser.py": PLAIN_MISTRAL.replace(OLD.replace("/", "."), "vllm.tool_parsers"),
    },
    "v0.14.0": {f"{OLD}/__init__.py": None},
    "v0.16.0": {
        "vllm/parser/__init__.py": PARSER_INIT,
        "vllm/parser/parser_manager.py": PARSER_MANAGER,
        "vllm/parser/minimax_m2_parser.py": "class MiniMaxM2Parser:\n    pass\n",
        "vllm/parser/glm_parser.py": "class GlmParser:\n    pass\n",
    },
}

SQL = ("select version, kind, name, module, class, form, file, line from registry where version = ?"
       " order by kind, name, form, file")


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
        ("v0.6.3", "tool", "PlainToolParser", f"{mod}.llama_tool_parser", "PlainToolParser", "decorator",
         f"{OLD}/llama_tool_parser.py", line_of(DECO_LLAMA, "register_module()")),
        ("v0.6.3", "tool", "hermes", f"{mod}.hermes_tool_parser", "Hermes2ProToolParser", "decorator",
         f"{OLD}/hermes_tool_parser.py", line_of(DECO_HERMES, "@ToolParserManager")),
        ("v0.6.3", "tool", "llama3_json", f"{mod}.llama_tool_parser", "Llama3JsonToolParser", "decorator",
         f"{OLD}/llama_tool_parser.py", line_of(DECO_LLAMA, "llama3_json")),
        ("v0.6.3", "tool", "mistral", f"{mod}.mistral_tool_parser", "MistralToolParser", "decorator",
         f"{OLD}/mistral_tool_parser.py", line_of(DECO_MISTRAL, "@ToolParserManager")),
        ("v0.6.3", "tool", "mistral_v2", f"{mod}.mistral_tool_parser", "MistralToolParser", "decorator",
         f"{OLD}/mistral_tool_parser.py", line_of(DECO_MISTRAL, "@ToolParserManager")),
    ]


def test_reasoning_decorators_in_both_packages(eras):
    db, _ = eras
    deco = line_of(DECO_DEEPSEEK, "@Reasoning")
    old = registry(db, "v0.7.1")
    assert [r for r in old if r[1] == "reasoning"] == [
        ("v0.7.1", "reasoning", "deepseek_r1", "vllm.entrypoints.openai.reasoning_parsers.deepseek_r1_reasoning_parser",
         "DeepSeekR1ReasoningParser", "decorator", f"{OLD_R}/deepseek_r1_reasoning_parser.py", deco)]
    new = registry(db, "v0.8.3")
    assert [r for r in new if r[1] == "reasoning"] == [
        ("v0.8.3", "reasoning", "deepseek_r1", "vllm.reasoning.deepseek_r1_reasoning_parser",
         "DeepSeekR1ReasoningParser", "decorator", "vllm/reasoning/deepseek_r1_reasoning_parser.py", deco)]
    # docstring examples in the managers register nothing
    assert not [r for r in old + new if r[2] == "example" or "abs_reasoning" in r[6] or "abstract" in r[6]]


def test_v0111_lazy_dicts_and_a_leftover_decorator(eras):
    db, _ = eras
    init = LAZY_TOOL_INIT.format(pkg=OLD.replace("/", "."))
    mod = "vllm.entrypoints.openai.tool_parsers"
    assert registry(db, "v0.11.1") == [
        ("v0.11.1", "reasoning", "deepseek_r1", "vllm.reasoning.deepseek_r1_reasoning_parser",
         "DeepSeekR1ReasoningParser", "lazy-dict", "vllm/reasoning/__init__.py",
         line_of(LAZY_REASONING_INIT, '"deepseek_r1":')),
        ("v0.11.1", "tool", "hermes", f"{mod}.hermes_tool_parser", "Hermes2ProToolParser", "lazy-dict",
         f"{OLD}/__init__.py", line_of(init, '"hermes":')),
        ("v0.11.1", "tool", "mistral", f"{mod}.mistral_tool_parser", "MistralToolParser", "decorator",
         f"{OLD}/mistral_tool_parser.py", line_of(LEFTOVER_MISTRAL, "@ToolParserManager")),
        ("v0.11.1", "tool", "mistral", f"{mod}.mistral_tool_parser", "MistralToolParser", "lazy-dict",
         f"{OLD}/__init__.py", line_of(init, '"mistral":')),
    ]


def test_v0130_new_package_registers_and_the_shim_does_not(eras):
    db, _ = eras
    init = LAZY_TOOL_INIT.format(pkg="vllm.tool_parsers")
    expected = [
        ("hermes", "vllm.tool_parsers.hermes_tool_parser", "Hermes2ProToolParser", line_of(init, '"hermes":')),
        ("mistral", "vllm.tool_parsers.mistral_tool_parser", "MistralToolParser", line_of(init, '"mistral":')),
    ]
    for version in ("v0.13.0", "v0.14.0"):
        tool = [r for r in registry(db, version) if r[1] == "tool"]
        assert tool == [(version, "tool", n, m, c, "lazy-dict", f"{NEW}/__init__.py", line)
                        for n, m, c, line in expected]
    assert rows(db, "select file from version_files where version = 'v0.13.0' and file like ?",
                [f"{OLD}/%"]) == [(f"{OLD}/__init__.py",)]
    assert rows(db, "select count(*) from version_files where version = 'v0.14.0' and file like ?",
                [f"{OLD}/%"]) == [(0,)]


def test_v0160_parser_package_dict_and_explicit_calls(eras):
    db, _ = eras
    engine = [r for r in registry(db, "v0.16.0") if r[1] == "engine"]
    f = "vllm/parser/__init__.py"
    assert engine == [
        ("v0.16.0", "engine", "glm", "vllm.parser.glm_parser", "GlmParser", "lazy-call", f,
         line_of(PARSER_INIT, '"glm"')),
        ("v0.16.0", "engine", "minimax_m2", "vllm.parser.minimax_m2_parser", "MiniMaxM2Parser", "lazy-call", f,
         line_of(PARSER_INIT, "ParserManager.register_lazy_module(")),
        ("v0.16.0", "engine", "minimax_m2", "vllm.parser.minimax_m2_parser", "MiniMaxM2Parser", "lazy-dict", f,
         line_of(PARSER_INIT, '"minimax_m2":')),
    ]


def test_every_era_in_one_run(eras):
    db, stats = eras
    assert rows(db, "select label from versions order by ord") == [(t,) for t in HISTORY]
    assert rows(db, "select count(*) from versions where status != 'complete' or registry != 'found'") == [(0,)]
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
    init = ('_TOOL_PARSERS_TO_REGISTER = {"hermes": ("hermes_tool_parser", "Hermes2ProToolParser")}\n'
            "for name, (file_name, class_name) in _TOOL_PARSERS_TO_REGISTER.items():\n"
            "    ToolParserManager.register_lazy_module(name, __name__ + '.' + file_name, class_name)\n")
    repo = make_repo(tmp_path / "repo", {"v1.0.0": {f"{NEW}/__init__.py": init}})
    build_tags(repo, tmp_path / "db", "v1.0.0")
    assert rows(tmp_path / "db", "select name, module, class, form from registry") == [
        ("hermes", "vllm.tool_parsers.hermes_tool_parser", "Hermes2ProToolParser", "lazy-dict")]


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
    text = '''
    from vllm.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager


    class AParser(ToolParser):
        pass


    ToolParserManager.register_module("a", module=AParser)
    ToolParserManager.register_module(["b", "c"], True, AParser)
    '''
    repo = make_repo(tmp_path / "repo", {"v1.0.0": {f"{NEW}/a_parser.py": text}})
    build_tags(repo, tmp_path / "db", "v1.0.0")
    f = f"{NEW}/a_parser.py"
    assert rows(tmp_path / "db", "select name, module, class, form, file, line from registry order by name") == [
        ("a", "vllm.tool_parsers.a_parser", "AParser", "call", f, line_of(text, '("a"')),
        ("b", "vllm.tool_parsers.a_parser", "AParser", "call", f, line_of(text, '(["b"')),
        ("c", "vllm.tool_parsers.a_parser", "AParser", "call", f, line_of(text, '(["b"')),
    ]


def test_version_without_registry_is_marked_and_warned(tmp_path):
    repo = make_repo(tmp_path / "repo", {
        "v0.5.0": {"README.md": "no vllm here\n"},
        "v0.6.0": {"vllm/entrypoints/openai/cli_args.py": CLI_ARGS},
    })
    stats = build_tags(repo, tmp_path / "db", "v0.5.0..v0.6.0")
    assert rows(tmp_path / "db", "select label, registry from versions order by ord") == [
        ("v0.5.0", "none"), ("v0.6.0", "found")]
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
