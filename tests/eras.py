"""Framework files of vLLM's lazy-registry and parser-engine eras (v0.11.1 on: vllm/tool_parsers,
vllm/reasoning, vllm/parser), shared by the tests whose fixture repositories imitate those eras.

Everything here is hand-written to imitate the layout (never copied from vLLM). What a test depends on
(its parser names, the body of its abstract class or its engine) stays in the test and is passed in;
only the text that is the same in every fixture lives here. `commit` (conftest) dedents the texts and
drops their leading newline, so each is written as the file reads.
"""

from __future__ import annotations

# kind -> (package, module defining the manager, names the registry imports from it, prefix of the
# dict and of the function that registers it)
_REGISTRIES = {
    "tool": ("vllm.tool_parsers", "abstract_tool_parser", "ToolParser, ToolParserManager", "TOOL_"),
    "reasoning": ("vllm.reasoning", "abs_reasoning_parsers", "ReasoningParserManager", "REASONING_"),
    "engine": ("vllm.parser", "parser_manager", "ParserManager", ""),
}


def tool_names(*names: str) -> dict[str, tuple[str, str]]:
    """Registry entries named the usual way: "zeta" -> ("zeta_tool_parser", "ZetaToolParser")."""
    return {name: (f"{name}_tool_parser", f"{name.capitalize()}ToolParser") for name in names}


def lazy_registry(kind: str, names: dict[str, tuple[str, str]], *, call: bool = False, inline: bool = False,
                  imports: str | None = None) -> str:
    """The `__init__.py` of a lazy registry: a dict of name -> (file, class) registered by a loop over
    an f-string module path; `call` adds the module-level call of the loop, `inline` writes the f-string
    in the call instead of a `module_path` variable, `imports` replaces the names imported. For kind "tool":

        from vllm.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager

        _TOOL_PARSERS_TO_REGISTER = {
            "zeta": ("zeta_tool_parser", "ZetaToolParser"),
        }


        def register_lazy_tool_parsers():
            for name, (file_name, class_name) in _TOOL_PARSERS_TO_REGISTER.items():
                module_path = f"vllm.tool_parsers.{file_name}"
                ToolParserManager.register_lazy_module(name, module_path, class_name)

    kind "reasoning" is the same in vllm/reasoning (ReasoningParserManager), kind "engine" in vllm/parser
    (_PARSERS_TO_REGISTER, ParserManager)."""
    package, module, imported, prefix = _REGISTRIES[kind]
    imported = imports or imported
    manager = imported.split(", ")[-1]
    entries = "".join(f'    "{name}": ("{file}", "{cls}"),\n' for name, (file, cls) in names.items())
    path = f'f"{package}.{{file_name}}"'
    register = (f"        {manager}.register_lazy_module(name, {path}, class_name)\n" if inline else
                f"        module_path = {path}\n        {manager}.register_lazy_module(name, module_path, class_name)\n")
    text = (f"from {package}.{module} import {imported}\n\n"
            f"_{prefix}PARSERS_TO_REGISTER = {{\n{entries}}}\n\n\n"
            f"def register_lazy_{prefix.lower()}parsers():\n"
            f"    for name, (file_name, class_name) in _{prefix}PARSERS_TO_REGISTER.items():\n{register}")
    return text + f"\n\nregister_lazy_{prefix.lower()}parsers()\n" if call else text


def lazy_manager(name: str) -> str:
    """A manager class whose register_lazy_module does nothing (the index reads the calls, not the class)."""
    return f'''
class {name}:
    @classmethod
    def register_lazy_module(cls, name, module_path, class_name):
        pass
'''


def abstract_module(base: str, manager: str) -> str:
    """An abstract_tool_parser.py / abs_reasoning_parsers.py: the test's base class, then its lazy manager."""
    return base + "\n" + lazy_manager(manager)


# vllm/tool_parsers/abstract_tool_parser.py at its plainest: one contract method, no streaming.
PLAIN_ABSTRACT = abstract_module('''
class ToolParser:
    def extract_tool_calls(self, text):
        raise NotImplementedError
''', "ToolParserManager")

# vllm/reasoning/abs_reasoning_parsers.py of the engine era.
ABS_REASONING = abstract_module('''
class ReasoningParser:
    def extract_reasoning(self, text, request):
        raise NotImplementedError
''', "ReasoningParserManager")


def engine_adapters(engine: str, tool_adapter: str, imports: str = "") -> str:
    """vllm/parser/engine/adapters.py: the test's ParserEngine class (`engine`), the reasoning adapter,
    the tool adapter with the test's methods (`tool_adapter`) before its streaming one, and make_adapters;
    `imports` goes before the imports of the two base classes."""
    return f'''
{imports}from vllm.tool_parsers.abstract_tool_parser import ToolParser
from vllm.reasoning.abs_reasoning_parsers import ReasoningParser

{engine}

class ParserEngineReasoningAdapter(ReasoningParser):
    def extract_reasoning(self, text, request):
        return self._parser_engine.extract_reasoning(text, request)


class ParserEngineToolAdapter(ToolParser):
    engine_based_streaming = True
{tool_adapter}
    def extract_tool_calls_streaming(self, previous, current, delta):
        return self._parser_engine.extract_tool_calls_streaming(previous, current, delta)


def make_adapters(parser_engine_cls):
    return parser_engine_cls, parser_engine_cls
'''


def registered_adapters(module: str, model: str) -> str:
    """vllm/parser/engine/registered_adapters.py binding the two adapters of one engine class."""
    return f'''
from vllm.parser.engine.adapters import make_adapters
from vllm.parser.{module} import {model}

({model}ReasoningAdapter, {model}ToolAdapter) = make_adapters({model})
'''


def engine_stub(cls: str, adapter: str, body: str = "pass") -> str:
    """A registered parser file that is only a stub over an adapter from registered_adapters.py."""
    return f'''
from vllm.parser.engine.registered_adapters import {adapter}


class {cls}({adapter}):
    {body}
'''
