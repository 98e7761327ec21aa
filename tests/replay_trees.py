"""Runnable fixture trees for replay (issue 25), written for these tests (no vLLM code copied): small
imitations of each era's interfaces, enough to be driven the way replay drives a release.

- v0.6.3  decorator era: `vllm/entrypoints/openai/protocol.py`, the tool-parser package under
          vllm/entrypoints/openai/tool_parsers/ with `@ToolParserManager.register_module(...)`, and a
          serving module whose generators call the parser and flush unstreamed arguments at the end.
          Its `fixture_json` streams the name but never the arguments (the flush must fill them in).
          Also: `needs_torch` (imports and uses torch: a stand-in), `split_tag` (sees its marker only when one
          delta holds it whole: split-sensitive), `spins` (never returns: a timeout), `needs_pure` (imports a
          pure-Python package that is not installed, when it runs: must fail, not be stubbed), `hog` (allocates past the
          memory limit).
- v0.11.1 lazy registry: vllm/tool_parsers/__init__.py with `_TOOL_PARSERS_TO_REGISTER`; `fixture_json`
          now streams its arguments.
- v0.24.0 engine era: as v0.11.1 plus vllm/parser/parser_manager.py whose `ParserManager.get_parser` gives
          an engine parser with `parse` and `parse_delta(..., finished=)`; the protocol moved to
          vllm/entrypoints/openai/chat_completion/protocol.py. Its parse_delta emits the arguments in one
          chunk at `finished`.
"""

from __future__ import annotations

INIT_THAT_MUST_NOT_RUN = '''
raise RuntimeError("a release's own vllm/__init__.py must not run under replay")
'''

PROTOCOL = '''
from dataclasses import asdict, dataclass, field


@dataclass
class FunctionCall:
    name: str
    arguments: str


@dataclass
class ToolCall:
    function: FunctionCall
    id: str = "call_0"
    type: str = "function"


@dataclass
class DeltaFunctionCall:
    name: str | None = None
    arguments: str | None = None


@dataclass
class DeltaToolCall:
    index: int
    function: DeltaFunctionCall | None = None
    id: str | None = None
    type: str | None = None


@dataclass
class DeltaMessage:
    content: str | None = None
    tool_calls: list = field(default_factory=list)


@dataclass
class ExtractedToolCallInformation:
    tools_called: bool
    tool_calls: list
    content: str | None = None


class ChatCompletionRequest:
    def __init__(self, model, messages, tools=None, tool_choice="auto", stream=False, **extra):
        self.model, self.messages, self.tools, self.tool_choice, self.stream = model, messages, tools, tool_choice, stream


class Response:
    def __init__(self, **data):
        self.data = data

    def model_dump(self):
        return self.data


def plain(obj):
    return asdict(obj)
'''

ABSTRACT = '''
from vllm.entrypoints.openai.protocol import DeltaMessage


class ToolParser:
    def __init__(self, tokenizer):
        self.model_tokenizer = tokenizer
        self.prev_tool_call_arr = []
        self.streamed_args_for_tool = []

    @property
    def vocab(self):
        return self.model_tokenizer.get_vocab()

    def adjust_request(self, request):
        return request


class ToolParserManager:
    tool_parsers = {}

    @classmethod
    def get_tool_parser(cls, name):
        return cls.tool_parsers[name]

    @classmethod
    def register_module(cls, name):
        def register(module):
            for n in ([name] if isinstance(name, str) else name):
                cls.tool_parsers[n] = module
            return module
        return register
'''

JSON_PARSER = '''
import json

from vllm.entrypoints.openai.protocol import (DeltaFunctionCall, DeltaMessage, DeltaToolCall,
                                              ExtractedToolCallInformation, FunctionCall, ToolCall)
from vllm.entrypoints.openai.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager


@ToolParserManager.register_module("fixture_json")
class FixtureJsonToolParser(ToolParser):
    start = "<call>"
    end = "</call>"

    def __init__(self, tokenizer):
        super().__init__(tokenizer)
        self.start_id = self.vocab.get(self.start)

    def extract_tool_calls(self, model_output, request):
        if self.start not in model_output:
            return ExtractedToolCallInformation(False, [], model_output)
        body = model_output.split(self.start, 1)[1].split(self.end, 1)[0]
        call = json.loads(body)
        return ExtractedToolCallInformation(True, [ToolCall(FunctionCall(call["name"], json.dumps(call["arguments"])))],
                                            model_output.split(self.start, 1)[0] or None)

    def extract_tool_calls_streaming(self, previous_text, current_text, delta_text, previous_token_ids,
                                     current_token_ids, delta_token_ids, request):
        if self.start_id not in current_token_ids:
            return DeltaMessage(content=delta_text)
        body = current_text.split(self.start, 1)[1]
        if self.end in body and not self.prev_tool_call_arr:
            call = json.loads(body.split(self.end, 1)[0])
            self.prev_tool_call_arr.append({"name": call["name"], "arguments": call["arguments"]})
            self.streamed_args_for_tool.append("")
            return DeltaMessage(tool_calls=[DeltaToolCall(0, DeltaFunctionCall(name=call["name"]))])
        return None
'''

JSON_PARSER_STREAMS_ARGS = JSON_PARSER.replace(
    '''            self.streamed_args_for_tool.append("")
            return DeltaMessage(tool_calls=[DeltaToolCall(0, DeltaFunctionCall(name=call["name"]))])''',
    '''            self.streamed_args_for_tool.append(json.dumps(call["arguments"]))
            return DeltaMessage(tool_calls=[DeltaToolCall(0, DeltaFunctionCall(
                name=call["name"], arguments=json.dumps(call["arguments"])))])''').replace(
    "from vllm.entrypoints.openai.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager",
    "from vllm.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager").replace(
    '@ToolParserManager.register_module("fixture_json")\n', "")

TORCH_PARSER = '''
import torch

from vllm.entrypoints.openai.protocol import DeltaMessage, ExtractedToolCallInformation
from vllm.entrypoints.openai.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager


@ToolParserManager.register_module("needs_torch")
class NeedsTorchToolParser(ToolParser):
    def extract_tool_calls(self, model_output, request):
        torch.cuda.synchronize()
        return ExtractedToolCallInformation(False, [], model_output)

    def extract_tool_calls_streaming(self, previous_text, current_text, delta_text, *args, **kwargs):
        return DeltaMessage(content=delta_text)
'''

SPLIT_PARSER = '''
from vllm.entrypoints.openai.protocol import (DeltaFunctionCall, DeltaMessage, DeltaToolCall,
                                              ExtractedToolCallInformation, FunctionCall, ToolCall)
from vllm.entrypoints.openai.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager


@ToolParserManager.register_module("split_tag")
class SplitTagToolParser(ToolParser):
    """Calls the function named after CALL: (ordinary text, no special token); streaming, it looks for the
    marker in each delta alone, so it finds it only when one delta holds it whole."""

    tag = "CALL:"

    def extract_tool_calls(self, model_output, request):
        if self.tag not in model_output:
            return ExtractedToolCallInformation(False, [], model_output)
        name = model_output.split(self.tag, 1)[1].strip()
        return ExtractedToolCallInformation(True, [ToolCall(FunctionCall(name, "{}"))], None)

    def extract_tool_calls_streaming(self, previous_text, current_text, delta_text, *args, **kwargs):
        if self.tag in delta_text:
            name = current_text.split(self.tag, 1)[1].strip()
            return DeltaMessage(tool_calls=[DeltaToolCall(0, DeltaFunctionCall(name=name or "unnamed",
                                                                                arguments="{}"))])
        return DeltaMessage(content=delta_text)
'''

SPIN_PARSER = '''
from vllm.entrypoints.openai.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager


@ToolParserManager.register_module("spins")
class SpinningToolParser(ToolParser):
    def extract_tool_calls(self, model_output, request):
        while True:
            pass

    def extract_tool_calls_streaming(self, *args, **kwargs):
        while True:
            pass
'''

PURE_PARSER = '''
from vllm.entrypoints.openai.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager


@ToolParserManager.register_module("needs_pure")
class NeedsPureToolParser(ToolParser):
    def extract_tool_calls(self, model_output, request):
        import zz_replay_pure_helper_not_installed

        return zz_replay_pure_helper_not_installed.parse(model_output)
'''

HOG_PARSER = '''
from vllm.entrypoints.openai.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager


@ToolParserManager.register_module("hog")
class HogToolParser(ToolParser):
    def extract_tool_calls(self, model_output, request):
        return bytearray(64 << 30)
'''

DECORATOR_INIT = '''
from .abstract_tool_parser import ToolParser, ToolParserManager
from .fixture_tool_parser import FixtureJsonToolParser
from .hog_tool_parser import HogToolParser
from .split_tool_parser import SplitTagToolParser
from .spin_tool_parser import SpinningToolParser
from .pure_tool_parser import NeedsPureToolParser
from .torch_tool_parser import NeedsTorchToolParser
'''

SERVING = '''
import json

from vllm.entrypoints.openai.protocol import Response, plain
from vllm.entrypoints.openai.tool_parsers import ToolParserManager


class OpenAIServingChat:
    def __init__(self, engine_client, model_config, served_model_names, response_role, *, request_logger,
                 chat_template, enable_auto_tools=False, tool_parser=None):
        self.enable_auto_tools = enable_auto_tools
        self.tool_parser = ToolParserManager.get_tool_parser(tool_parser) if enable_auto_tools else None

    async def chat_completion_full_generator(self, request, result_generator, request_id, model_name, conversation,
                                             tokenizer, request_metadata):
        final = None
        async for res in result_generator:
            final = res
        out = final.outputs[0]
        info = self.tool_parser(tokenizer).extract_tool_calls(out.text, request)
        calls = [plain(c) for c in info.tool_calls]
        return Response(choices=[{"message": {"role": "assistant", "content": info.content, "tool_calls": calls},
                                  "finish_reason": "tool_calls" if info.tools_called else out.finish_reason}])

    async def chat_completion_stream_generator(self, request, result_generator, request_id, model_name,
                                               conversation, tokenizer, request_metadata):
        parser = self.tool_parser(tokenizer)
        previous, previous_ids = "", []
        async for res in result_generator:
            out = res.outputs[0]
            current, current_ids = previous + out.text, previous_ids + list(out.token_ids)
            msg = parser.extract_tool_calls_streaming(previous, current, out.text, previous_ids, current_ids,
                                                      list(out.token_ids), request)
            previous, previous_ids = current, current_ids
            delta = plain(msg) if msg is not None else {}
            finish = out.finish_reason
            if finish is not None and parser.prev_tool_call_arr:
                # the end-of-stream flush: what the parser found but did not stream
                expected = json.dumps(parser.prev_tool_call_arr[-1]["arguments"])
                sent = parser.streamed_args_for_tool[-1]
                if expected != sent:
                    delta = {"tool_calls": [{"index": 0, "function": {"arguments": expected[len(sent):]}}]}
                finish = "tool_calls"
            if delta or finish:
                yield "data: " + json.dumps({"choices": [{"delta": delta, "finish_reason": finish}]}) + "\\n\\n"
        yield "data: [DONE]\\n\\n"
'''

LAZY_ABSTRACT = ABSTRACT.replace('''    @classmethod
    def register_module''', '''    lazy_parsers = {}

    @classmethod
    def register_lazy_module(cls, name, module_path, class_name):
        cls.lazy_parsers[name] = (module_path, class_name)

    @classmethod
    def get_tool_parser(cls, name):
        if name not in cls.tool_parsers and name in cls.lazy_parsers:
            import importlib

            module_path, class_name = cls.lazy_parsers[name]
            cls.tool_parsers[name] = getattr(importlib.import_module(module_path), class_name)
        return cls.tool_parsers[name]

    @classmethod
    def register_module''', 1)

LAZY_INIT = '''
from vllm.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager

_TOOL_PARSERS_TO_REGISTER = {
    "fixture_json": ("fixture_tool_parser", "FixtureJsonToolParser"),
}


def register_lazy_tool_parsers():
    for name, (file_name, class_name) in _TOOL_PARSERS_TO_REGISTER.items():
        ToolParserManager.register_lazy_module(name, f"vllm.tool_parsers.{file_name}", class_name)


register_lazy_tool_parsers()
'''

LAZY_SERVING = SERVING.replace("from vllm.entrypoints.openai.tool_parsers import ToolParserManager",
                               "from vllm.tool_parsers import ToolParserManager")

ENGINE_MANAGER = '''
import json

from vllm.entrypoints.openai.chat_completion.protocol import (DeltaFunctionCall, DeltaMessage, DeltaToolCall,
                                                              FunctionCall)
from vllm.tool_parsers import ToolParserManager


class Parser:
    tool_parser_cls = None

    def __init__(self, tokenizer, tools=None, **kwargs):
        self.tool_parser = self.tool_parser_cls(tokenizer)
        self.text = ""

    def parse(self, text, request, enable_auto_tools=True, model_output_token_ids=None):
        info = self.tool_parser.extract_tool_calls(text, request)
        return None, info.content, [c.function for c in info.tool_calls]

    def parse_delta(self, delta_text, delta_token_ids, request, prompt_token_ids=None, finished=False):
        self.text += delta_text
        if not finished:
            return None
        info = self.tool_parser.extract_tool_calls(self.text, request)
        if not info.tools_called:
            return DeltaMessage(content=self.text)
        fn = info.tool_calls[0].function
        return DeltaMessage(tool_calls=[DeltaToolCall(0, DeltaFunctionCall(name=fn.name, arguments=fn.arguments))])


class ParserManager:
    @classmethod
    def get_parser(cls, tool_parser_name=None, reasoning_parser_name=None, enable_auto_tools=False, model_name=None):
        if not tool_parser_name:
            return None
        return type("EngineParser", (Parser,), {"tool_parser_cls": ToolParserManager.get_tool_parser(tool_parser_name)})
'''

ENGINE_PARSER = JSON_PARSER_STREAMS_ARGS.replace("vllm.entrypoints.openai.protocol",
                                                 "vllm.entrypoints.openai.chat_completion.protocol")


def history() -> dict[str, dict[str, str | None]]:
    """The fixture repository: one tag per era."""
    tp = "vllm/entrypoints/openai/tool_parsers/"
    return {
        "v0.6.3": {
            "vllm/__init__.py": INIT_THAT_MUST_NOT_RUN,
            "vllm/entrypoints/__init__.py": "",
            "vllm/entrypoints/openai/__init__.py": "",
            "vllm/entrypoints/openai/protocol.py": PROTOCOL,
            "vllm/entrypoints/openai/serving_chat.py": SERVING,
            tp + "__init__.py": DECORATOR_INIT,
            tp + "abstract_tool_parser.py": ABSTRACT,
            tp + "fixture_tool_parser.py": JSON_PARSER,
            tp + "torch_tool_parser.py": TORCH_PARSER,
            tp + "split_tool_parser.py": SPLIT_PARSER,
            tp + "spin_tool_parser.py": SPIN_PARSER,
            tp + "pure_tool_parser.py": PURE_PARSER,
            tp + "hog_tool_parser.py": HOG_PARSER,
            "docs/tool_calling.md": "# not needed by any import: never materialized\n",
        },
        "v0.11.1": {
            **{tp + f: None for f in ("__init__.py", "abstract_tool_parser.py", "fixture_tool_parser.py",
                                      "torch_tool_parser.py", "split_tool_parser.py", "spin_tool_parser.py",
                                      "pure_tool_parser.py", "hog_tool_parser.py")},
            "vllm/tool_parsers/__init__.py": LAZY_INIT,
            "vllm/tool_parsers/abstract_tool_parser.py": LAZY_ABSTRACT,
            "vllm/tool_parsers/fixture_tool_parser.py": JSON_PARSER_STREAMS_ARGS,
            "vllm/entrypoints/openai/serving_chat.py": LAZY_SERVING,
        },
        "v0.24.0": {
            "vllm/entrypoints/openai/protocol.py": None,
            "vllm/entrypoints/openai/chat_completion/__init__.py": "",
            "vllm/entrypoints/openai/chat_completion/protocol.py": PROTOCOL,
            "vllm/entrypoints/openai/serving_chat.py": LAZY_SERVING.replace(
                "vllm.entrypoints.openai.protocol", "vllm.entrypoints.openai.chat_completion.protocol"),
            "vllm/tool_parsers/abstract_tool_parser.py": LAZY_ABSTRACT.replace(
                "vllm.entrypoints.openai.protocol", "vllm.entrypoints.openai.chat_completion.protocol"),
            "vllm/tool_parsers/fixture_tool_parser.py": ENGINE_PARSER,
            "vllm/parser/__init__.py": "",
            "vllm/parser/parser_manager.py": ENGINE_MANAGER,
        },
    }
