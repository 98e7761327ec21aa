"""A fixture history of the parser contract across the eras a plugin author lives through (issue 28), and
plugins written against it. Every text is hand-written to imitate the layout of each era (never copied):

- v0.10.0  the old package vllm/entrypoints/openai/tool_parsers/ with decorator registration; the base's
           constructor takes (tokenizer); serving constructs `self.tool_parser(tokenizer)`
- v0.13.0  the package moves to vllm/tool_parsers/ (lazy registry, register_lazy_module added); the old
           package is a shim whose module __getattr__ re-exports ToolParser and ToolParserManager
- v0.14.0  the old package is gone
- v0.19.0  the constructor becomes (tokenizer, tools=None) and serving passes request.tools; the request type
           moves to vllm/entrypoints/openai/chat_completion/protocol.py; import_tool_parser is removed
- v0.20.0  extract_tool_calls renames its first parameter (model_output -> text), serving passes it by
           keyword; adjust_request is removed
"""

from __future__ import annotations

from eras import lazy_registry, tool_names

OLD = "vllm/entrypoints/openai/tool_parsers"
NEW = "vllm/tool_parsers"
SERVING = "vllm/entrypoints/openai/serving_chat.py"


def abstract(protocol: str = "vllm.entrypoints.openai.protocol", init: str = "tokenizer", lazy: bool = False,
             importer: bool = True, first: str = "model_output", adjust: bool = True) -> str:
    lazy_method = '''
    @classmethod
    def register_lazy_module(cls, name: str, module_path: str, class_name: str) -> None:
        cls.lazy_parsers[name] = (module_path, class_name)
''' if lazy else ""
    import_method = '''
    @classmethod
    def import_tool_parser(cls, plugin_path: str) -> None:
        pass
''' if importer else ""
    adjust_method = '''
    def adjust_request(self, request: ChatCompletionRequest) -> ChatCompletionRequest:
        return request
''' if adjust else ""
    return f'''
from vllm.entrypoints.openai.protocol import DeltaMessage, ExtractedToolCallInformation
from {protocol} import ChatCompletionRequest


class ToolParser:
    """The base every tool parser derives from."""

    supports_required_and_named: bool = True

    def __init__(self, {init}):
        self.model_tokenizer = tokenizer
        self.prev_tool_call_arr: list[dict] = []
{adjust_method}
    def extract_tool_calls(self, {first}: str, request: ChatCompletionRequest) -> ExtractedToolCallInformation:
        raise NotImplementedError

    def extract_tool_calls_streaming(self, previous_text: str, current_text: str, delta_text: str,
                                     request: ChatCompletionRequest) -> DeltaMessage | None:
        raise NotImplementedError


class ToolParserManager:
    tool_parsers: dict[str, type] = {{}}
    lazy_parsers: dict[str, tuple[str, str]] = {{}}

    @classmethod
    def get_tool_parser(cls, name: str) -> type:
        return cls.tool_parsers[name]

    @classmethod
    def register_module(cls, name: str | list[str] | None = None, force: bool = True, module: type | None = None):
        def _register(module):
            cls.tool_parsers[name] = module
            return module

        return _register if module is None else _register(module)
{lazy_method}{import_method}'''


def parser(name: str, package: str, decorated: bool, body: str = "") -> str:
    cls = f"{name.capitalize()}ToolParser"
    deco = f'@ToolParserManager.register_module("{name}")\n' if decorated else ""
    imported = "ToolParser, ToolParserManager" if decorated else "ToolParser"
    return f'''
from {package}.abstract_tool_parser import {imported}


{deco}class {cls}(ToolParser):
    def extract_tool_calls(self, model_output, request):
        return model_output{body}
'''


UTILS = '''
def find_common_prefix(s1: str, s2: str) -> str:
    return ""


def partial_json_loads(input_str: str, flags) -> tuple:
    return None, 0
'''

OLD_INIT = '''
from .abstract_tool_parser import ToolParser, ToolParserManager
from .alpha_tool_parser import AlphaToolParser
from .beta_tool_parser import BetaToolParser

__all__ = ["ToolParser", "ToolParserManager", "AlphaToolParser", "BetaToolParser"]
'''

SHIM = '''
import warnings


def __getattr__(name: str):
    if name == "ToolParser":
        from vllm.tool_parsers import ToolParser

        warnings.warn("moved to vllm.tool_parsers", DeprecationWarning, stacklevel=2)
        return ToolParser
    if name == "ToolParserManager":
        from vllm.tool_parsers import ToolParserManager

        warnings.warn("moved to vllm.tool_parsers", DeprecationWarning, stacklevel=2)
        return ToolParserManager
    raise AttributeError(name)
'''


def serving(construct: str = "self.tool_parser(tokenizer)", extract: str = "output, request=request") -> str:
    return f'''
class OpenAIServingChat:
    def __init__(self, tool_parser_name):
        self.tool_parser = ToolParserManager.get_tool_parser(tool_parser_name)

    def full(self, tokenizer, request, output):
        tool_parser = {construct}
        return tool_parser.extract_tool_calls({extract})
'''


PROTOCOL = '''
class ChatCompletionRequest:
    tools: list | None = None


class DeltaMessage:
    content: str | None = None


class ExtractedToolCallInformation:
    tools_called: bool = False
'''

PROTOCOL_WITHOUT_REQUEST = '''
class DeltaMessage:
    content: str | None = None


class ExtractedToolCallInformation:
    tools_called: bool = False
'''

CHAT_PROTOCOL = '''
class ChatCompletionRequest:
    tools: list | None = None
'''


def history() -> dict[str, dict[str, str | None]]:
    new_files = {f"{NEW}/{n}_tool_parser.py": parser(n, "vllm.tool_parsers", decorated=False) for n in ("alpha", "beta")}
    return {
        "v0.10.0": {
            f"{OLD}/__init__.py": OLD_INIT,
            f"{OLD}/abstract_tool_parser.py": abstract(),
            f"{OLD}/alpha_tool_parser.py": parser("alpha", "vllm.entrypoints.openai.tool_parsers", decorated=True),
            f"{OLD}/beta_tool_parser.py": parser("beta", "vllm.entrypoints.openai.tool_parsers", decorated=True),
            f"{OLD}/utils.py": UTILS,
            SERVING: serving(),
            "vllm/entrypoints/openai/protocol.py": PROTOCOL,
        },
        "v0.13.0": {
            f"{OLD}/abstract_tool_parser.py": None, f"{OLD}/alpha_tool_parser.py": None,
            f"{OLD}/beta_tool_parser.py": None, f"{OLD}/utils.py": None,
            f"{OLD}/__init__.py": SHIM,
            f"{NEW}/__init__.py": lazy_registry("tool", tool_names("alpha", "beta"), call=True),
            f"{NEW}/abstract_tool_parser.py": abstract(lazy=True),
            f"{NEW}/utils.py": UTILS,
            **new_files,
        },
        "v0.14.0": {f"{OLD}/__init__.py": None},
        "v0.19.0": {
            f"{NEW}/abstract_tool_parser.py": abstract(protocol="vllm.entrypoints.openai.chat_completion.protocol",
                                                       init="tokenizer, tools=None", lazy=True, importer=False),
            SERVING: serving(construct="self.tool_parser(tokenizer, request.tools)"),
            "vllm/entrypoints/openai/protocol.py": PROTOCOL_WITHOUT_REQUEST,
            "vllm/entrypoints/openai/chat_completion/protocol.py": CHAT_PROTOCOL,
        },
        "v0.20.0": {
            f"{NEW}/abstract_tool_parser.py": abstract(protocol="vllm.entrypoints.openai.chat_completion.protocol",
                                                       init="tokenizer, tools=None", lazy=True, importer=False,
                                                       first="text", adjust=False),
            SERVING: serving(construct="self.tool_parser(tokenizer, request.tools)",
                             extract="text=output, request=request"),
        },
    }


# -- plugins, as their authors write them ---------------------------------------------------------------------

# Written for v0.10: the old package path, decorator registration under a built-in's name, (tokenizer).
PLUGIN_V10 = '''
from vllm.entrypoints.openai.protocol import ChatCompletionRequest, ExtractedToolCallInformation
from vllm.entrypoints.openai.tool_parsers import ToolParser, ToolParserManager


@ToolParserManager.register_module("alpha")
class MyAlphaToolParser(ToolParser):
    def __init__(self, tokenizer):
        super().__init__(tokenizer)
        self.buffer = ""

    def adjust_request(self, request: ChatCompletionRequest) -> ChatCompletionRequest:
        return request

    def extract_tool_calls(self, model_output: str, request: ChatCompletionRequest) -> ExtractedToolCallInformation:
        return ExtractedToolCallInformation()
'''

# Written for the new package: vllm.tool_parsers, (tokenizer, tools), its own name.
PLUGIN_NEW = '''
from vllm.tool_parsers import ToolParser, ToolParserManager


@ToolParserManager.register_module(name="acme")
class AcmeToolParser(ToolParser):
    def __init__(self, tokenizer, tools=None):
        super().__init__(tokenizer, tools)

    def extract_tool_calls(self, text, request):
        return None
'''

# Written defensively: both package paths, any constructor arguments passed on, positional use only.
PLUGIN_ANYWHERE = '''
try:
    from vllm.tool_parsers import ToolParser, ToolParserManager
except ImportError:
    from vllm.entrypoints.openai.tool_parsers import ToolParser, ToolParserManager


class SteadyToolParser(ToolParser):
    def __init__(self, tokenizer, *args, **kwargs):
        super().__init__(tokenizer, *args, **kwargs)

    def extract_tool_calls(self, text, request):
        return None


ToolParserManager.register_module("steady", module=SteadyToolParser)
'''
