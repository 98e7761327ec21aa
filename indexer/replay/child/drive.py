"""Child side: drive one version's own parser and serving code on a raw model output (one job, one process).

Everything of vLLM is reached through importlib inside the functions below, from the tree that
standins.install() made importable. The entry points follow the era the tree shows (found by what its
modules define, not by version numbers):

- the request is the tree's own ChatCompletionRequest (`vllm.entrypoints.openai.chat_completion.protocol`
  in later trees, `vllm.entrypoints.openai.protocol` before);
- a unified parser engine (`vllm.parser` with `ParserManager.get_parser`): the parser serving builds,
  `parse(...)` for the full output when it has one (else the tool parser's `extract_tool_calls`) and
  `parse_delta(...)` for each delta (`finished=` on the last one where it takes it);
- before that, the tool-parser registry (`vllm.tool_parsers`, earlier `vllm.entrypoints.openai.tool_parsers`):
  `adjust_request`, `extract_tool_calls(text, request)`, and `extract_tool_calls_streaming(previous_text,
  current_text, delta_text, previous_token_ids, current_token_ids, delta_token_ids, request)` per delta,
  the way those releases' serving loops call it; a reasoning parser, when asked, splits the full output
  first (`extract_reasoning[_content]`) as serving does;
- through serving: the release's own `OpenAIServingChat`, constructed with stand-in engine and model
  configuration objects, its full and stream generators driven by a synthetic engine output (one delta per
  step, then an EOS step with finish_reason="stop"), so finish_reason and the end-of-stream flush of
  unstreamed arguments come from that release's code.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import logging
import os
import re
import sys
import traceback
import types

import speed
import standins
import tokenizer as tk


def _has_module(name: str, tree: str) -> bool:
    base = os.path.join(tree, *name.split("."))
    return os.path.isfile(base + ".py") or os.path.isfile(os.path.join(base, "__init__.py"))


def call(fn, *args, **kwargs):
    """Call with the keyword arguments the function accepts (signatures change between releases)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return fn(*args, **kwargs)
    params = sig.parameters
    if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        kwargs = {k: v for k, v in kwargs.items() if k in params}
    return fn(*args, **kwargs)


def construct(cls, tokenizer, tools, **kwargs):
    """A parser as serving builds it: `cls(tokenizer)` in early releases, `cls(tokenizer, tools, ...)` once the
    constructor takes the tools (read from the signature)."""
    params = [p for p in inspect.signature(cls.__init__).parameters.values() if p.name != "self"]
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) >= 2 and positional[1].name == "tools":
        return call(cls, tokenizer, tools, **kwargs)
    if any(p.name == "tools" for p in params):
        return call(cls, tokenizer, tools=tools, **kwargs)
    return call(cls, tokenizer, **kwargs)


def error_of(e: BaseException, tree: str) -> dict:
    frames = traceback.extract_tb(e.__traceback__)
    where = None
    for f in reversed(frames):
        if f.filename.startswith(tree):
            where = f"{os.path.relpath(f.filename, tree)}:{f.lineno}"
            break
    lines = str(e).splitlines()
    msg = lines[0][:400] if lines else ""
    if len(lines) > 1 and _VALIDATION.match(lines[0]):
        # pydantic's first line only names the model: the field and what is wrong with it follow
        detail = [
            x.strip() for x in lines[1:5] if x.strip() and not x.strip().startswith("For further information")
        ]
        msg = ": ".join([lines[0], *detail])[:400]
    return {"type": type(e).__name__, "message": msg, "where": where}


_VALIDATION = re.compile(r"^\d+ validation errors? for ")


def _json_or_raw(s):
    if s is None:
        return None
    try:
        return json.loads(s)
    except (TypeError, ValueError):
        return s


def _call_of(tc) -> dict:
    fn = tc.get("function") or tc if isinstance(tc, dict) else getattr(tc, "function", None) or tc
    if isinstance(fn, dict):
        name, args = fn.get("name"), fn.get("arguments")
    else:
        name, args = getattr(fn, "name", None), getattr(fn, "arguments", None)
    if args is not None and not isinstance(args, str):
        args = json.dumps(args)
    return {"name": name, "arguments": _json_or_raw(args), "arguments_raw": args}


# -- the tree's pieces ------------------------------------------------------------------------------------


class Tree:
    def __init__(self, job: dict):
        self.job = job
        self.dir = job["tree"]
        self.kind = job.get("kind") or "tool"
        # the tool parser (None for a reasoning parser replayed on its own) and the reasoning parser
        self.name = job["name"] if self.kind == "tool" else None
        self.reasoning_name = job["name"] if self.kind == "reasoning" else job.get("reasoning_parser") or None
        later = "vllm.entrypoints.openai.chat_completion.protocol"
        self.protocol = importlib.import_module(
            later if _has_module(later, self.dir) else "vllm.entrypoints.openai.protocol"
        )
        # the API the serving mode replays: chat completions, or the Responses API (its serving module, which
        # imports the ResponsesRequest and context classes it uses, whichever module defines them)
        self.api = job.get("api") or "chat"
        self.responses = importlib.import_module(job["responses_module"]) if self.api == "responses" else None
        self.engine = None
        if _has_module("vllm.parser.parser_manager", self.dir):
            pm = importlib.import_module("vllm.parser.parser_manager")
            if hasattr(pm.ParserManager, "get_parser"):
                self.engine = pm.ParserManager
        self.tool_manager = None
        for mod in ("vllm.tool_parsers", "vllm.entrypoints.openai.tool_parsers"):
            if _has_module(mod, self.dir):
                m = importlib.import_module(mod)
                if hasattr(m, "ToolParserManager"):
                    self.tool_manager = m.ToolParserManager
                    break
        self.reasoning_manager = None
        if self.reasoning_name:
            for mod in ("vllm.reasoning", "vllm.entrypoints.openai.reasoning_parsers"):
                if _has_module(mod, self.dir):
                    m = importlib.import_module(mod)
                    if hasattr(m, "ReasoningParserManager"):
                        self.reasoning_manager = m.ReasoningParserManager
                        break

    def request_cls(self):
        """The request class of the API replayed: ChatCompletionRequest, or the Responses serving module's
        ResponsesRequest."""
        if self.responses is not None:
            return self.responses.ResponsesRequest
        return self.protocol.ChatCompletionRequest

    def request_fields(self) -> set[str] | None:
        """The fields this version's request class reads (pydantic's model fields, or the constructor's
        parameters); None when it takes any."""
        cls = self.request_cls()
        fields = getattr(cls, "model_fields", None)
        if isinstance(fields, dict):
            return set(fields)
        params = inspect.signature(cls.__init__).parameters
        if any(p.kind is p.VAR_KEYWORD for p in params.values()):
            return None
        return {p for p in params if p != "self"}

    def request(self):
        job = self.job
        responses = self.responses is not None
        prompt = job.get("prompt") or "What is the weather?"
        kwargs = {"model": "replay"}
        if responses:
            kwargs["input"] = prompt
        else:
            kwargs["messages"] = [{"role": "user", "content": prompt}]
        if self.kind == "tool" and job.get("tools") is not None:
            kwargs["tools"] = [_responses_tool(t) for t in job["tools"]] if responses else job["tools"]
        choice = (job.get("tool_choice") or "auto") if self.kind == "tool" else None
        if choice:
            kwargs["tool_choice"] = _named_choice(choice, responses)
        given = dict(job.get("request") or {})
        known = self.request_fields()
        unknown = [k for k in given if known is not None and k not in known]
        if unknown:
            raise RequestFieldError(
                f"request field{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
                f"{'are' if len(unknown) > 1 else 'is'} not read by this version's {self.request_cls().__name__}"
            )
        if isinstance(given.get("tool_choice"), str):
            given["tool_choice"] = _named_choice(given["tool_choice"], responses)
        if responses and isinstance(given.get("tools"), list):
            given["tools"] = [_responses_tool(t) for t in given["tools"]]
        kwargs.update(given)
        kwargs["stream"] = False
        return self.request_cls()(**kwargs)

    def template_kwargs(self, request) -> dict:
        """The request's chat_template_kwargs as serving hands them to the parsers ({} when none)."""
        return dict(getattr(request, "chat_template_kwargs", None) or {})

    def mistral_tokenizer_cls(self):
        """The tree's MistralTokenizer (vllm/tokenizers/mistral.py later, vllm/transformers_utils/... before)."""
        for mod in (
            "vllm.tokenizers.mistral",
            "vllm.transformers_utils.tokenizers.mistral",
            "vllm.transformers_utils.tokenizers",
        ):
            if _has_module(mod, self.dir):
                cls = getattr(importlib.import_module(mod), "MistralTokenizer", None)
                if cls is not None:
                    return cls
        raise LookupError("this tree has no MistralTokenizer (--tokenizer-mode mistral)")

    def tool_parser_cls(self):
        if self.name is None:
            return None
        if self.tool_manager is None:
            raise LookupError("no tool-parser registry in this tree")
        return self.tool_manager.get_tool_parser(self.name)

    def reasoning_parser_cls(self):
        r = self.reasoning_name
        if not r:
            return None
        if self.reasoning_manager is None:
            raise LookupError("no reasoning-parser registry in this tree")
        return self.reasoning_manager.get_reasoning_parser(r)

    def parser_class(self, **extra):
        """The engine's composed parser class, asked as serving asks it (the server arguments it reads too)."""
        kwargs = {
            "tool_parser_name": self.name,
            "reasoning_parser_name": self.reasoning_name,
            "enable_auto_tools": True,
            "model_name": "replay",
            "is_harmony": False,
        }
        kwargs.update({k: v for k, v in (self.job.get("server_args") or {}).items() if k in _GET_PARSER_ARGS})
        kwargs.update(extra)
        return call(self.engine.get_parser, **kwargs)

    def engine_parser(self, tokenizer, request):
        cls = self.parser_class()
        if cls is None:
            return None, None
        return cls, construct(
            cls,
            tokenizer,
            getattr(request, "tools", None),
            chat_template_kwargs=self.template_kwargs(request),
            model_config=None,
        )

    def tool_parser(self, tokenizer, request):
        cls = self.tool_parser_cls()
        return cls, construct(cls, tokenizer, request.tools)

    def reasoning_parser(self, tokenizer, request):
        rcls = self.reasoning_parser_cls()
        if rcls is None:
            return None
        return call(rcls, tokenizer, chat_template_kwargs=self.template_kwargs(request))


def _named_choice(choice: str, responses: bool):
    """A tool choice as the API takes it: auto, required, none, or a function named (chat completions nest the
    name under "function"; the Responses API does not)."""
    if choice in ("auto", "required", "none"):
        return choice
    return (
        {"type": "function", "name": choice}
        if responses
        else {"type": "function", "function": {"name": choice}}
    )


def _responses_tool(tool):
    """A chat-completions function tool ({type, function: {name, description, parameters}}) in the Responses
    API's shape ({type, name, description, parameters}); a tool already in that shape, or of another type, as
    given."""
    if (
        not isinstance(tool, dict)
        or tool.get("type") != "function"
        or not isinstance(tool.get("function"), dict)
    ):
        return tool
    return {"type": "function", **tool["function"]}


class RequestFieldError(ValueError):
    """A request field the version's ChatCompletionRequest does not define."""


# ParserManager.get_parser's keyword arguments a server argument may set (those it takes at that version)
_GET_PARSER_ARGS = ("tool_strict_level", "enable_auto_tools")


def _qualname(cls) -> str | None:
    return f"{cls.__module__}.{cls.__qualname__}" if cls is not None else None


# -- modes -----------------------------------------------------------------------------------------------


def non_streaming(
    tree: Tree, tokenizer, text: str, ids: list[int], prompt_ids: list[int] | None = None
) -> dict:
    request = tree.request()
    if tree.engine is not None:
        cls, parser = tree.engine_parser(tokenizer, request)
        if parser is not None and _real_method(parser, "parse"):
            request = _adjusted(parser, request)
            if prompt_ids is not None and _SET_PROMPT.search(serving_text(tree)):
                # as the release's full generator does before it parses the whole output
                call(parser.set_prompt_token_ids, list(prompt_ids))
            reasoning, content, tool_calls = call(
                parser.parse,
                text,
                request,
                enable_auto_tools=tree.name is not None,
                model_output_token_ids=ids,
            )
            calls = [_call_of(t) for t in tool_calls or []]
            return {
                "entry": f"{_qualname(type(parser))}.parse",
                "tools_called": bool(calls),
                "calls": calls,
                "content": content,
                "reasoning": reasoning,
            }
    reasoning = None
    rp = tree.reasoning_parser(tokenizer, request)
    if tree.name is None:  # a reasoning parser on its own: what serving's reasoning-only branch calls
        fn = _reasoning_fn(rp, streaming=False)
        reasoning, content = call(fn, text, request=request)
        return {
            "entry": f"{_qualname(type(rp))}.{fn.__name__}",
            "tools_called": False,
            "calls": [],
            "content": content,
            "reasoning": reasoning,
        }
    cls, parser = tree.tool_parser(tokenizer, request)
    request = _adjusted(parser, request)
    if rp is not None:
        reasoning, text = call(_reasoning_fn(rp, streaming=False), text, request=request)
        text = text or ""
    info = call(parser.extract_tool_calls, text, request=request, token_ids=ids)
    calls = [_call_of(t) for t in info.tool_calls or []]
    return {
        "entry": f"{_qualname(cls)}.extract_tool_calls",
        "tools_called": bool(info.tools_called),
        "calls": calls,
        "content": info.content,
        "reasoning": reasoning,
    }


def _reasoning_fn(rp, streaming: bool):
    """extract_reasoning[_streaming] (v0.10 on), extract_reasoning_content[_streaming] before."""
    suffix = "_streaming" if streaming else ""
    return getattr(rp, f"extract_reasoning{suffix}", None) or getattr(
        rp, f"extract_reasoning_content{suffix}"
    )


def _real_method(obj, name: str) -> bool:
    fn = getattr(type(obj), name, None)
    return fn is not None and not getattr(fn, "__isabstractmethod__", False)


def _adjusted(parser, request):
    adjust = getattr(parser, "adjust_request", None)
    if adjust is None:
        return request
    try:
        return adjust(request) or request
    except Exception as e:  # e.g. a structural tag that needs xgrammar: recorded, the replay goes on
        note = (
            f"adjust_request failed ({type(e).__name__}: {str(e)[:200]} at {error_of(e, standins.STATE.get('tree', os.sep))['where']}); "
            "the replay went on with the request as it was"
        )
        notes = standins.STATE.setdefault("notes", [])
        if note not in notes:
            notes.append(note)
        return request


class Collector:
    def __init__(self):
        self.content, self.reasoning = [], []
        self.calls: dict[int, dict] = {}
        self.messages = 0

    def add(self, msg):
        if msg is None:
            return
        self.messages += 1
        if isinstance(msg, dict):
            msg = types.SimpleNamespace(
                **{k: msg.get(k) for k in ("content", "reasoning", "reasoning_content", "tool_calls")}
            )
        if getattr(msg, "content", None):
            self.content.append(msg.content)
        r = getattr(msg, "reasoning", None) or getattr(msg, "reasoning_content", None)
        if r:
            self.reasoning.append(r)
        for tc in getattr(msg, "tool_calls", None) or []:
            get = tc.get if isinstance(tc, dict) else (lambda k, _tc=tc: getattr(_tc, k, None))
            idx = get("index")
            idx = len(self.calls) if idx is None else idx
            slot = self.calls.setdefault(idx, {"index": idx, "name": None, "chunks": 0, "arguments_raw": ""})
            fn = get("function")
            if fn is None:
                continue
            fget = fn.get if isinstance(fn, dict) else (lambda k, _fn=fn: getattr(_fn, k, None))
            if fget("name"):
                slot["name"] = (
                    (slot["name"] or "") + fget("name") if slot["name"] != fget("name") else slot["name"]
                )
            if fget("arguments"):
                slot["chunks"] += 1
                slot["arguments_raw"] += fget("arguments")

    def result(self) -> dict:
        calls = []
        for _, c in sorted(self.calls.items()):
            calls.append({**c, "arguments": _json_or_raw(c["arguments_raw"]) if c["arguments_raw"] else None})
        return {
            "calls": calls,
            "content": "".join(self.content) or None,
            "reasoning": "".join(self.reasoning) or None,
            "messages": self.messages,
        }


def streaming(tree: Tree, tokenizer, deltas: list[dict], prompt_ids: list[int] | None = None) -> dict:
    """`prompt_ids`: the rendered prompt's token ids (None: none given, the engine is handed [1] as before)."""
    request = tree.request()
    request.stream = True
    col = Collector()
    errors = []
    if tree.engine is not None:
        cls, parser = tree.engine_parser(tokenizer, request)
        if parser is not None and _real_method(parser, "parse_delta"):
            request = _adjusted(parser, request)
            for k, d in enumerate(deltas):
                try:
                    col.add(
                        call(
                            parser.parse_delta,
                            delta_text=d["text"],
                            delta_token_ids=d["ids"],
                            request=request,
                            prompt_token_ids=[1] if prompt_ids is None else list(prompt_ids),
                            finished=k == len(deltas) - 1,
                        )
                    )
                except Exception as e:
                    errors.append({"delta": k, **error_of(e, tree.dir)})
            return {
                "entry": f"{_qualname(type(parser))}.parse_delta",
                "deltas": len(deltas),
                **col.result(),
                "errors": errors,
            }
    rp = tree.reasoning_parser(tokenizer, request)
    parser = None
    if tree.name is not None:
        cls, parser = tree.tool_parser(tokenizer, request)
        request = _adjusted(parser, request)
        entry = f"{_qualname(cls)}.extract_tool_calls_streaming"
    rfn = _reasoning_fn(rp, streaming=True) if rp is not None else None
    if parser is None:
        entry = f"{_qualname(type(rp))}.{rfn.__name__}"
    elif rp is not None:
        entry += f" after {_qualname(type(rp))}.{rfn.__name__}"
    # serving's loop before the parser engine (its form read from the serving module: stream_form): a reasoning
    # parser alone; a tool parser alone; or both, the reasoning parser until a delta's ids (or the prompt's, where
    # the loop reads them) end the reasoning, then the tool parser, its text and ids started again from the
    # content after the reasoning: on the next delta, or on the same one where the loop reads it there
    form = stream_form(tree) if rp is not None else {}
    prompt_ends = bool(prompt_ids) and rp is not None and form.get("prompt") and _ends(rp, prompt_ids)
    alone_content = parser is None and prompt_ends and form.get("alone_prompt")
    same_delta = bool(form.get("same_delta"))
    reasoning_ended, handed_over = rp is None, False
    prev_text, prev_ids = "", []
    for k, d in enumerate(deltas):
        delta_text, delta_ids = d["text"], list(d["ids"])
        cur_text, cur_ids = prev_text + delta_text, prev_ids + delta_ids
        try:
            msg = None
            if parser is None:
                msg = (
                    types.SimpleNamespace(content=delta_text)
                    if alone_content
                    else rfn(prev_text, cur_text, delta_text, prev_ids, cur_ids, delta_ids)
                )
                col.add(msg)
                prev_text, prev_ids = cur_text, cur_ids
                continue
            ended_before = reasoning_ended
            if not reasoning_ended:
                if prompt_ends and same_delta:  # ended before the reasoning parser reads anything
                    reasoning_ended, cur_ids = True, delta_ids
                else:
                    msg = rfn(prev_text, cur_text, delta_text, prev_ids, cur_ids, delta_ids)
                    ends = []
                    if prompt_ends:  # after the reasoning parser has read the delta: what it called content
                        ends.append(delta_ids)
                    if getattr(rp, "is_reasoning_end", None) and rp.is_reasoning_end(delta_ids):
                        ends.append(rp.extract_content_ids(delta_ids))
                    for content_ids in ends:
                        reasoning_ended, cur_ids = True, content_ids
                        if msg is not None and getattr(msg, "content", None):
                            cur_text, msg.content = msg.content, None
                        else:
                            cur_text = ""
            if reasoning_ended if same_delta else ended_before:
                p_text, p_ids, d_text, d_ids = prev_text, prev_ids, delta_text, delta_ids
                if rp is not None and not handed_over:
                    handed_over = True
                    p_text, p_ids, d_text, d_ids = "", [], cur_text, cur_ids
                msg = parser.extract_tool_calls_streaming(
                    previous_text=p_text,
                    current_text=cur_text,
                    delta_text=d_text,
                    previous_token_ids=p_ids,
                    current_token_ids=cur_ids,
                    delta_token_ids=d_ids,
                    request=request,
                )
            col.add(msg)
        except Exception as e:
            errors.append({"delta": k, **error_of(e, tree.dir)})
        prev_text, prev_ids = cur_text, cur_ids
    return {"entry": entry, "deltas": len(deltas), **col.result(), "errors": errors}


def _ends(rp, prompt_ids: list[int]) -> bool:
    """Whether the reasoning parser reads the prompt's ids as ending the reasoning (False: it cannot tell)."""
    check = getattr(rp, "is_reasoning_end", None)
    try:
        return bool(check and check(list(prompt_ids)))
    except Exception:  # noqa: BLE001 - a parser that cannot read them: the loop's check would fail the same way
        return False


# What the release's chat stream loop does with the prompt, read from its serving module's code:
# - `prompt`: it asks the reasoning parser whether the prompt's ids end the reasoning (`res.prompt_token_ids`);
# - `same_delta`: the tool parser reads the delta the reasoning ended in (its turn is `if reasoning_end_arr[i]:`
#   after the reasoning's, not the `else` of it), and a prompt that ends the reasoning ends it before the
#   reasoning parser reads anything;
# - `alone_prompt`: a reasoning parser served alone passes each delta as content once the prompt ended it.
_PROMPT_CHECK = re.compile(r"is_reasoning_end\(\s*(?:list\(\s*)?res\.prompt_token_ids")
_SAME_DELTA = re.compile(r"^\s*if reasoning_end_arr\[i\]:", re.M)
_ALONE_PROMPT = re.compile(
    r"if prompt_is_reasoning_end_arr\[i\]:\s*\n(?:\s*#[^\n]*\n)*\s*delta_message = DeltaMessage\(content=delta_text\)"
)
_SET_PROMPT = re.compile(r"\.set_prompt_token_ids\(")


def serving_text(tree: Tree) -> str:
    """The text of the release's chat-completion serving module ("" when it has none)."""
    for mod in ("vllm.entrypoints.openai.chat_completion.serving", "vllm.entrypoints.openai.serving_chat"):
        path = os.path.join(tree.dir, *mod.split(".")) + ".py"
        if os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                return f.read()
    return ""


def stream_form(tree: Tree) -> dict:
    text = serving_text(tree)
    return {
        "prompt": bool(_PROMPT_CHECK.search(text)),
        "same_delta": bool(_SAME_DELTA.search(text)),
        "alone_prompt": bool(_ALONE_PROMPT.search(text)),
    }


def prompt_line(tree: Tree, tokenizer, prompt_ids: list[int]) -> str:
    """What the prompt is to this version: its tokens, whether the reasoning parser reads them as ending the
    reasoning, and where this version's code reads them."""
    head = f"{len(prompt_ids)} tokens"
    if tree.reasoning_name is None:
        return head + "; no reasoning parser reads them"
    try:
        rp = tree.reasoning_parser(tokenizer, tree.request())
    except Exception as e:  # noqa: BLE001 - the modes say why
        return head + f"; the reasoning parser cannot be built ({type(e).__name__})"
    ends = _ends(rp, prompt_ids)
    head += f"; {tree.reasoning_name}'s is_reasoning_end on them: {'true' if ends else 'false'}"
    if tree.engine is not None:
        delta = getattr(tree.parser_class(), "parse_delta", None)
        if delta is not None and not getattr(delta, "__isabstractmethod__", False):
            return head + " (the parser engine's parse_delta is handed them)"
    form = stream_form(tree)
    if tree.name is None:
        how = (
            "a reasoning parser alone passes every delta as content when they end the reasoning"
            if form["alone_prompt"]
            else "a reasoning parser alone does not read them"
        )
    elif not form["prompt"]:
        how = "this version's stream loop does not read them"
    elif form["same_delta"]:
        how = "this version's stream loop ends the reasoning before the reasoning parser reads a delta"
    else:
        how = "this version's stream loop ends the reasoning after the reasoning parser has read the first delta"
    return f"{head} ({how})"


# -- through serving --------------------------------------------------------------------------------------


class Fake:
    """A stand-in engine / model configuration: every attribute another Fake, falsy, callable, iterable."""

    def __init__(self, **known):
        self.__dict__.update(known)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Fake()

    def __call__(self, *a, **k):
        return Fake()

    def __bool__(self):
        return False

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __await__(self):
        async def _none():
            return None

        return _none().__await__()


def serving_module(tree: Tree):
    if _has_module("vllm.entrypoints.openai.chat_completion.serving", tree.dir):
        return importlib.import_module("vllm.entrypoints.openai.chat_completion.serving")
    return importlib.import_module("vllm.entrypoints.openai.serving_chat")


def _serving_obj(tree: Tree, tokenizer, cls=None):
    """The release's serving object (OpenAIServingChat, or `cls`: OpenAIServingResponses) constructed as the
    server constructs it, with stand-in engine and model configuration objects."""
    cls = cls or serving_module(tree).OpenAIServingChat
    hf = Fake(model_type="replay", architectures=["ReplayForCausalLM"])
    model_config = Fake(
        model="replay",
        served_model_name="replay",
        max_model_len=1 << 16,
        hf_config=hf,
        hf_text_config=hf,
        tokenizer="replay",
        logits_processor_pattern=None,
        runner_type="generate",
        generation_config="vllm",
        get_diff_sampling_param=lambda: {},
        skip_tokenizer_init=False,
        allowed_local_media_path="",
        encoder_config=None,
        multimodal_config=None,
        is_multimodal_model=False,
        renderer_num_workers=1,
        io_processor_plugin=None,
    )

    async def get_tokenizer(*a, **k):
        return tokenizer

    async def get_model_config(*a, **k):
        return model_config

    engine = Fake(
        model_config=model_config,
        get_tokenizer=get_tokenizer,
        get_model_config=get_model_config,
        errored=False,
        is_running=True,
        dead_error=None,
        renderer=Fake(tokenizer=tokenizer, get_tokenizer=lambda: tokenizer),
        io_processor=None,
        input_processor=Fake(tokenizer=tokenizer),
        vllm_config=Fake(model_config=model_config),
    )
    base_path = types.SimpleNamespace(name="replay", model_path="replay")
    models = Fake(
        base_model_paths=[base_path],
        model_config=model_config,
        engine_client=engine,
        lora_requests={},
        is_base_model=lambda n: True,
        model_name=lambda lora=None: "replay",
        renderer=engine.renderer,
        input_processor=engine.input_processor,
        io_processor=None,
    )
    known = {
        "engine_client": engine,
        "model_config": model_config,
        "models": models,
        "base_model_paths": [base_path],
        "served_model_names": ["replay"],
        "response_role": "assistant",
        "request_logger": None,
        "chat_template": None,
        "chat_template_content_format": "auto",
        "lora_modules": None,
        "prompt_adapters": None,
        "return_tokens_as_token_ids": False,
        "enable_auto_tools": tree.name is not None,
        "tool_parser": tree.name,
        "reasoning_parser": tree.reasoning_name or "",
        "enable_reasoning": bool(tree.reasoning_name),
        "enable_prompt_tokens_details": False,
        "enable_force_include_usage": False,
        "enable_log_outputs": False,
        "exclude_tools_when_tool_choice_none": False,
        "tool_server": None,
        "log_error_stack": False,
        "trust_request_chat_template": False,
        "default_chat_template_kwargs": None,
        "openai_serving_render": Fake(),
        "enable_log_deltas": False,
    }
    params = inspect.signature(cls.__init__).parameters
    known.update({k: v for k, v in (tree.job.get("server_args") or {}).items() if k in params})
    args, kwargs = [], {}
    for p in list(params.values())[1:]:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name in known:
            value = known[p.name]
        elif p.default is not p.empty:
            continue
        else:
            value = Fake()
        if p.kind is p.POSITIONAL_ONLY:
            args.append(value)
        else:
            kwargs[p.name] = value
    return cls(*args, **kwargs)


class _Record(types.SimpleNamespace):
    """A synthetic engine output: the fields given, None for any other a release reads."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return None


def _outputs(deltas: list[dict], eos: int, stream: bool, prompt: tuple[str, list[int]] | None = None):
    """The engine's outputs; `prompt`: the rendered prompt's (text, ids) they carry (default "" and [1])."""
    text = "".join(d["text"] for d in deltas)
    ids = [i for d in deltas for i in d["ids"]]
    prompt_text, prompt_ids = prompt if prompt is not None else ("", [1])

    def out(t, i, finish):
        comp = _Record(
            index=0,
            text=t,
            token_ids=i,
            cumulative_logprob=None,
            logprobs=None,
            finish_reason=finish,
            stop_reason=None,
            lora_request=None,
        )
        return _Record(
            request_id="replay",
            prompt=prompt_text,
            prompt_token_ids=list(prompt_ids),
            prompt_logprobs=None,
            outputs=[comp],
            finished=finish is not None,
            num_cached_tokens=0,
            encoder_prompt=None,
            encoder_prompt_token_ids=None,
            metrics=None,
            kv_transfer_params=None,
            lora_request=None,
        )

    async def gen():
        if stream:
            for d in deltas:
                yield out(d["text"], list(d["ids"]), None)
            yield out("", [eos], "stop")
        else:
            yield out(text, ids + [eos], "stop")

    return gen()


async def _drain(agen):
    out = []
    async for item in agen:
        out.append(item)
    return out


def serving(tree: Tree, tokenizer, deltas: list[dict], eos_id: int, capture=None, prompt=None) -> dict:
    obj = _serving_obj(tree, tokenizer)
    result = {"entry": f"{_qualname(type(obj))}"}
    for kind in ("full", "stream"):
        if capture is not None:
            capture.take()
        request = tree.request()
        request.stream = kind == "stream"
        try:
            meta_cls = getattr(tree.protocol, "RequestResponseMetadata", None)
            meta = meta_cls(request_id="replay") if meta_cls else Fake()
            kw = dict(
                request=request,
                result_generator=_outputs(deltas, eos_id, kind == "stream", prompt),
                request_id="chatcmpl-replay",
                model_name="replay",
                conversation=[],
                tokenizer=tokenizer,
                request_metadata=meta,
                enable_force_include_usage=False,
                reasoning_parser=None,
            )
            gen = (
                obj.chat_completion_full_generator if kind == "full" else obj.chat_completion_stream_generator
            )
            template_kwargs = _effective_template_kwargs(tree, obj, request)
            # from v0.20.0 create_chat_completion hands the stream generator the effective chat_template_kwargs
            # it builds the parsers with (the generator does not read the request's)
            kw["chat_template_kwargs"] = template_kwargs
            takes = inspect.signature(gen).parameters
            if "parser" in takes and getattr(obj, "parser_cls", None) is not None:
                # later releases build the parser in create_chat_completion and hand it to the generators
                make = getattr(obj, "_make_parser", None)
                parser = (
                    call(make, request, tokenizer, chat_template_kwargs=template_kwargs)
                    if make
                    else construct(
                        obj.parser_cls,
                        tokenizer,
                        getattr(request, "tools", None),
                        chat_template_kwargs=template_kwargs,
                        model_config=None,
                    )
                )
                kw["request"] = request = _adjusted(parser, request)
                kw["parser"] = parser
            if "reasoning_parser" in takes and getattr(obj, "reasoning_parser_cls", None) is not None:
                # v0.16..: create_chat_completion builds the reasoning parser and hands it to the generators
                kw["reasoning_parser"] = call(
                    obj.reasoning_parser_cls, tokenizer, chat_template_kwargs=template_kwargs
                )
            if kind == "full":
                res = asyncio.run(call(obj.chat_completion_full_generator, **kw))
                result["full"] = _full_result(res)
            else:
                chunks = asyncio.run(_drain(call(obj.chat_completion_stream_generator, **kw)))
                result["stream"] = _stream_result(chunks)
        except Exception as e:
            result[kind] = {"error": error_of(e, tree.dir)}
        if capture is not None:
            result[kind]["logged"] = capture.take()
    return result


def _dump(obj):
    if hasattr(obj, "model_dump"):
        return obj.model_dump()
    if isinstance(obj, str):
        return json.loads(obj)
    return obj


def _full_result(res) -> dict:
    d = _dump(res)
    if "choices" not in d:
        return {"error": {"type": "ErrorResponse", "message": json.dumps(d)[:400], "where": None}}
    choice = d["choices"][0]
    msg = choice.get("message") or {}
    calls = [_call_of(tc) for tc in msg.get("tool_calls") or []]
    return {
        "finish_reason": choice.get("finish_reason"),
        "calls": calls,
        "content": msg.get("content"),
        "reasoning": msg.get("reasoning") or msg.get("reasoning_content"),
    }


def _stream_result(chunks: list[str]) -> dict:
    col = Collector()
    finish, errors = None, []
    for c in chunks:
        for line in str(c).splitlines():
            if not line.startswith("data: ") or line.strip() == "data: [DONE]":
                continue
            data = json.loads(line[6:])
            if "error" in data or "choices" not in data:
                errors.append({"type": "error chunk", "message": json.dumps(data)[:400], "where": None})
                continue
            for ch in data["choices"]:
                col.add(ch.get("delta") or {})
                finish = ch.get("finish_reason") or finish
    return {"finish_reason": finish, **col.result(), "errors": errors}


# -- through the Responses API ------------------------------------------------------------------------------


def _build(cls, **known):
    """An instance of a release's class, its constructor's parameters from `known` (None for any other it
    requires): engine outputs whose fields change between releases."""
    kwargs = {}
    for p in list(inspect.signature(cls).parameters.values()):
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name in known:
            kwargs[p.name] = known[p.name]
        elif p.default is p.empty:
            kwargs[p.name] = None
    return cls(**kwargs)


def _request_outputs(deltas: list[dict], eos: int, kind: str, prompt: tuple[str, list[int]] | None = None):
    """The engine's outputs as the release's own RequestOutput / CompletionOutput (its Responses contexts check
    the type), fed as the request's sampling parameters ask: DELTA one per delta then the EOS step,
    CUMULATIVE the text so far at each step, FINAL_ONLY (the default) one output with the whole text."""
    outputs = importlib.import_module("vllm.outputs")
    text = "".join(d["text"] for d in deltas)
    ids = [i for d in deltas for i in d["ids"]]
    prompt_text, prompt_ids = prompt if prompt is not None else ("", [1])

    def out(t, i, finish):
        comp = _build(
            outputs.CompletionOutput,
            index=0,
            text=t,
            token_ids=list(i),
            cumulative_logprob=None,
            logprobs=None,
            finish_reason=finish,
            stop_reason=None,
        )
        return _build(
            outputs.RequestOutput,
            request_id="replay",
            prompt=prompt_text,
            prompt_token_ids=list(prompt_ids),
            prompt_logprobs=None,
            outputs=[comp],
            finished=finish is not None,
            num_cached_tokens=0,
        )

    if kind == "DELTA":
        return [out(d["text"], d["ids"], None) for d in deltas] + [out("", [eos], "stop")]
    if kind == "CUMULATIVE":
        steps, t, i = [], "", []
        for d in deltas:
            t, i = t + d["text"], i + list(d["ids"])
            steps.append(out(t, i, None))
        return steps + [out(t, i + [eos], "stop")]
    return [out(text, ids + [eos], "stop")]


def _output_kind(sampling) -> str:
    kind = getattr(sampling, "output_kind", None)
    return getattr(kind, "name", None) or "FINAL_ONLY"


async def _through_context(outputs: list, context):
    """What the serving's engine loop hands its generators: each output appended to the request's context,
    the context yielded (no context, before the Responses API had one: the outputs themselves)."""
    for o in outputs:
        if context is None:
            yield o
        else:
            context.append_output(o)
            yield context


def _effective_template_kwargs(tree: Tree, obj, request) -> dict:
    """The chat_template_kwargs the serving object builds its parsers with: its own
    `_effective_chat_template_kwargs(request)` where it has one (the request's merged with the server's
    defaults), else the request's."""
    effective = getattr(obj, "_effective_chat_template_kwargs", None)
    if effective is not None:
        try:
            return dict(effective(request) or {})
        except Exception as e:  # noqa: BLE001 - recorded; the request's own kwargs then
            note = (
                f"_effective_chat_template_kwargs failed ({type(e).__name__}: {str(e)[:200]}); "
                "the parsers were given the request's chat_template_kwargs"
            )
            notes = standins.STATE.setdefault("notes", [])
            if note not in notes:
                notes.append(note)
    return tree.template_kwargs(request)


def _responses_context(tree: Tree, obj, request, tokenizer):
    """The request's context as that version's create_responses builds it without harmony: its SimpleContext,
    given the parser made for the request where the serving object makes one (`_make_response_parser`)."""
    ctx_cls = getattr(tree.responses, "SimpleContext", None)
    if ctx_cls is None:
        return None
    template_kwargs = _effective_template_kwargs(tree, obj, request)
    make = getattr(obj, "_make_response_parser", None)
    parser = call(make, request, tokenizer, chat_template_kwargs=template_kwargs) if make else None
    if parser is not None:
        request = _adjusted(parser, request)
    return call(
        ctx_cls,
        response_parser=parser,
        parser_cls=getattr(obj, "parser", None),
        tokenizer=tokenizer,
        request=request,
        chat_template_kwargs=template_kwargs,
    )


def responses(tree: Tree, tokenizer, deltas: list[dict], eos_id: int, capture=None, prompt=None) -> dict:
    """The release's own OpenAIServingResponses: its full generator on a non-streaming request, its stream
    generator on a streaming one (the events a client reads, and the final response.completed)."""
    obj = _serving_obj(tree, tokenizer, tree.responses.OpenAIServingResponses)
    result = {"entry": f"{_qualname(type(obj))}"}
    for kind in ("full", "stream"):
        if capture is not None:
            capture.take()
        if kind == "stream" and not hasattr(obj, "responses_stream_generator"):
            why = "this version's OpenAIServingResponses has no stream generator (a streaming request is refused)"
            result["stream"] = result["completed"] = {"unsupported": why, "entry": None}
            continue
        try:
            request = tree.request()
            request.stream = kind == "stream"
            sampling = request.to_sampling_params(1 << 12, {})
            context = _responses_context(tree, obj, request, tokenizer)
            meta_cls = getattr(tree.responses, "RequestResponseMetadata", None)
            kw = dict(
                request=request,
                sampling_params=sampling,
                result_generator=_through_context(
                    _request_outputs(deltas, eos_id, _output_kind(sampling), prompt), context
                ),
                context=context,
                model_name="replay",
                tokenizer=tokenizer,
                request_metadata=meta_cls(request_id="replay") if meta_cls else Fake(),
            )
            if kind == "full":
                result["full"] = _response_result(asyncio.run(call(obj.responses_full_generator, **kw)))
            else:
                events = asyncio.run(_drain(call(obj.responses_stream_generator, **kw)))
                result["stream"], result["completed"] = _events_result(events)
        except Exception as e:
            result[kind] = {"error": error_of(e, tree.dir)}
            if kind == "stream":
                result["completed"] = result["stream"]
        if capture is not None:
            logged = capture.take()
            result[kind]["logged"] = logged
    return result


def _plain(obj):
    """A release's pydantic object (or dict, or list of them) as plain data."""
    if hasattr(obj, "model_dump"):
        try:
            return obj.model_dump(mode="json")
        except TypeError:
            return obj.model_dump()
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


def _texts(parts) -> str:
    return "".join(p.get("text") or "" for p in parts or [] if isinstance(p, dict))


def _response_result(res) -> dict:
    """A ResponsesResponse as a mode's result: its output items (reasoning, message text, function calls), its
    status as the finish reason; an ErrorResponse as an error."""
    d = _plain(res)
    if not isinstance(d, dict) or "output" not in d:
        return {
            "error": {"type": "ErrorResponse", "message": json.dumps(d, default=str)[:400], "where": None}
        }
    content, reasoning, calls = [], [], []
    for item in d.get("output") or []:
        t = item.get("type")
        if t == "message":
            content.append(_texts(item.get("content")))
        elif t == "reasoning":
            reasoning.append(_texts(item.get("content")) or item.get("text") or _texts(item.get("summary")))
        elif t == "function_call":
            calls.append(_call_of({"name": item.get("name"), "arguments": item.get("arguments")}))
    return {
        "finish_reason": d.get("status"),
        "calls": calls,
        "content": "".join(content) or None,
        "reasoning": "".join(reasoning) or None,
    }


def _events_result(events: list) -> tuple[dict, dict]:
    """The stream's events as a client reads them: text and reasoning deltas, each function call's item
    (added, with its name) and argument deltas, errors; and its final response (response.completed or
    .incomplete) as a result of its own."""
    col = Collector()
    errors, final, status = [], None, None
    slots: dict = {}
    for e in events:
        d = _plain(e)
        if isinstance(d, str):  # an SSE line, as some releases yield
            d = json.loads(d.split("data: ", 1)[-1]) if "{" in d else {}
        t = d.get("type") or ""
        col.messages += 1
        if t in ("response.completed", "response.incomplete", "response.failed"):
            final = d.get("response")
            status = t.rsplit(".", 1)[1]
        elif t == "error" or t.endswith(".error"):
            errors.append({"type": "error event", "message": json.dumps(d, default=str)[:400], "where": None})
        elif t == "response.output_item.added" and (d.get("item") or {}).get("type") == "function_call":
            item = d["item"]
            slots[d.get("output_index")] = idx = len(slots)
            col.calls[idx] = {"index": idx, "name": item.get("name"), "chunks": 0, "arguments_raw": ""}
            if item.get("arguments"):
                col.calls[idx]["chunks"] += 1
                col.calls[idx]["arguments_raw"] += item["arguments"]
        elif t.endswith(".delta") and "function_call_arguments" in t:
            idx = slots.setdefault(d.get("output_index"), len(slots))
            slot = col.calls.setdefault(idx, {"index": idx, "name": None, "chunks": 0, "arguments_raw": ""})
            slot["chunks"] += 1
            slot["arguments_raw"] += d.get("delta") or ""
        elif t.endswith(".delta") and "reasoning" in t:
            col.reasoning.append(d.get("delta") or "")
        elif t.endswith(".delta") and "output_text" in t:
            col.content.append(d.get("delta") or "")
    stream = {"finish_reason": status, **col.result(), "errors": errors}
    completed = (
        _response_result(final)
        if final is not None
        else {
            "error": {
                "type": "NoFinalResponse",
                "message": "the stream ended without a response",
                "where": None,
            }
        }
    )
    return stream, completed


# -- one job ----------------------------------------------------------------------------------------------


def _defer_schemas() -> None:
    """Pydantic models build their validators at first use instead of at class creation (pydantic's
    `defer_build`): a tree's protocol defines hundreds of models and a replay validates a few; this halves
    a worker's time and changes no result (the same schema is built, later). A module's own top-level
    `model_rebuild()` of its models is deferred too, to their first use (speed.defer_rebuilds)."""
    try:
        from pydantic._internal import _config

        _config.config_defaults["defer_build"] = True
    except (ImportError, AttributeError, TypeError):
        return
    speed.defer_rebuilds()


def _tokenizer(job: dict, tree: Tree, specials: list[str]):
    """(what the parsers are given, text -> (piece, id) pairs, its special tokens, its EOS id, a description)."""
    path, eos = job.get("tokenizer_file"), job.get("eos")
    mode = job.get("tokenizer_mode") or "auto"
    if path and (mode == "mistral" or (mode == "auto" and tk.is_mistral_file(path))):
        cls = tree.mistral_tokenizer_cls()
        tok, mistral, wrapped = tk.mistral_tokenizer(cls, path)
        pieces = tk.MistralPieces(mistral)
        raw = mistral.instruct_tokenizer.tokenizer
        eos_id = raw.eos_id if not eos else pieces.specials.get(eos)
        if eos_id is None:
            raise ValueError(f"--eos {eos!r} is not a special token of {os.path.basename(path)}")
        described = (
            f"mistral: {os.path.basename(path)} through mistral_common ({type(raw).__name__} "
            f"{getattr(getattr(raw, 'version', None), 'value', '?')}), as {_qualname(cls)}"
            + (" (transformers' wrapper answered by replay's adapter over mistral_common)" if wrapped else "")
        )
        found = [t for t in pieces.specials if len(t) > 1]
        return tok, pieces, found, eos_id, described
    if path:
        try:
            tok = tk.FileTokenizer(path, specials, eos)
        except ImportError:
            raise RuntimeError("--tokenizer needs the tokenizers package in the replay environment") from None
        described = f"file: {os.path.basename(path)} (the tokenizers package)"
    else:
        tok = tk.SyntheticTokenizer(specials, eos)
        described = (
            "synthetic (special tokens whole; other text in word-like pieces, digits grouped: "
            "--tokenizer gives the model's own splits)"
        )
    return tok, (lambda text: tk.tokens(tok, text)), list(tok.special_tokens), tok.eos_token_id, described


class LogCapture(logging.Handler):
    """What vLLM's loggers emit while a mode runs (INFO and above, and any record carrying an exception): a
    record per line, the same record repeated counted once."""

    def __init__(self, tree: str):
        super().__init__(logging.DEBUG)
        self.tree = tree
        self.records: list[dict] = []

    def emit(self, record):
        if record.levelno < logging.INFO and not record.exc_info:
            return
        if not (record.name == "vllm" or record.name.startswith("vllm.")):
            return
        try:
            message = record.getMessage()
        except Exception:  # a bad format string in the release's own call: its template, as logged
            message = str(record.msg)
        exc = record.exc_info[1] if record.exc_info and record.exc_info[1] else None
        where = error_of(exc, self.tree)["where"] if exc is not None else None
        if where is None and record.pathname.startswith(self.tree):
            where = f"{os.path.relpath(record.pathname, self.tree)}:{record.lineno}"
        entry = {
            "level": record.levelname,
            "logger": record.name,
            "message": message.splitlines()[0][:400] if message else "",
            "exception": f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}".rstrip(
                ": "
            )
            if exc is not None
            else None,
            "where": where,
            "count": 1,
        }
        last = self.records[-1] if self.records else None
        if last and all(last[k] == entry[k] for k in ("level", "logger", "message", "exception", "where")):
            last["count"] += 1
        else:
            self.records.append(entry)

    def take(self) -> list[dict]:
        out, self.records = self.records, []
        return out


def _logged(capture: LogCapture, fn):
    capture.take()
    result = fn()
    if isinstance(result, dict):
        result["logged"] = capture.take()
    return result


def _startup(tree: Tree, tok) -> dict:
    """Whether this version's server would start with the parser(s) and tokenizer: from the release whose
    ParserManager.get_parser takes the tokenizer (v0.32.0), the composed parser is constructed at start and a
    failure refuses to start; before, the server starts and builds the parser per request, so a parser the
    tokenizer cannot serve fails every chat request instead."""
    try:
        if tree.engine is not None and "tokenizer" in inspect.signature(tree.engine.get_parser).parameters:
            tree.parser_class(tokenizer=tok)
            checked = "starts (ParserManager.get_parser checked the parser against the tokenizer at start)"
        else:
            tree.tool_parser_cls()
            tree.reasoning_parser_cls()
            checked = None
    except Exception as e:
        return {"starts": False, "detail": "refused at start", "error": error_of(e, tree.dir)}
    try:
        request = tree.request()
        if tree.engine is not None:
            tree.engine_parser(tok, request)
        else:
            if tree.name is not None:
                tree.tool_parser(tok, request)
            tree.reasoning_parser(tok, request)
    except Exception as e:
        return {
            "starts": True,
            "detail": "starts; building the parser for a request fails (every chat request answers 500)",
            "error": error_of(e, tree.dir),
        }
    return {"starts": True, "detail": checked or "starts (the parser is built per request)", "error": None}


def _server_env(job: dict) -> None:
    """Environment variables a server argument set (VLLM_...), before the tree's modules read them."""
    for k, v in (job.get("server_env") or {}).items():
        os.environ[k] = str(v)


def _check_server_args(tree: Tree) -> None:
    """Each server argument must be one this version's serving code reads: a parameter of its
    OpenAIServingChat, of ParserManager.get_parser, or a VLLM_ variable its envs.py defines."""
    args = tree.job.get("server_args") or {}
    env = tree.job.get("server_env") or {}
    if not args and not env:
        return
    cls = tree.responses.OpenAIServingResponses if tree.responses else serving_module(tree).OpenAIServingChat
    read = set(inspect.signature(cls.__init__).parameters)
    if tree.engine is not None:
        read |= set(inspect.signature(tree.engine.get_parser).parameters) & set(_GET_PARSER_ARGS)
    unknown = [k for k in args if k not in read]
    envs = os.path.join(tree.dir, "vllm", "envs.py")
    text = open(envs, encoding="utf-8").read() if os.path.isfile(envs) else ""
    unknown += [k for k in env if f'"{k}"' not in text]
    if unknown:
        raise ServerArgError(
            f"server argument{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
            f"{'are' if len(unknown) > 1 else 'is'} not read by this version's serving code ({cls.__name__})"
        )


class ServerArgError(ValueError):
    """A server argument the version's serving code does not read."""


def run(job: dict) -> dict:
    speed.install()  # done by the fork server before forking; here for a worker run alone
    if not job.get("eager_schemas"):
        _defer_schemas()
    _server_env(job)
    recorder = standins.install(job["tree"], job["version"])
    standins.STATE["tree"] = job["tree"]
    out: dict = {"version": job["version"], "modes": {}}
    try:
        tree = Tree(job)
        missing = [
            what
            for what, manager, wanted in (
                ("tool-parser", tree.tool_manager, True),
                ("reasoning-parser", tree.reasoning_manager, bool(job.get("reasoning_parser"))),
            )
            if wanted and manager is None
        ]
        if missing:  # nothing of the version's to ask for the parser: not its failure, replay's limit
            out["not_replayable"] = (
                f"no {' or '.join(missing)} registry in this tree to ask for the parser by its name (its"
                " serving code picks a parser class itself)"
            )
            return out
        tree.request()  # an unknown request field refuses the version before anything runs
        if "serving" in job["modes"] or job.get("server_args") or job.get("server_env"):
            _check_server_args(tree)
        specials = list(job.get("specials") or [])
        specials += _resolved_specials(job.get("unresolved_specials") or [])
        tok, pieces, special_tokens, eos_id, described = _tokenizer(job, tree, specials)
        if job.get("deltas") is not None:
            deltas = [
                {
                    "text": d["text"],
                    "ids": d["ids"] if d.get("ids") is not None else [i for _, i in pieces(d["text"])],
                }
                for d in job["deltas"]
            ]
            split_deltas = {"given": deltas}
            text = "".join(d["text"] for d in deltas)
        else:
            text = job["text"]
            toks = pieces(text)
            split_deltas = {s: tk.split(toks, s, frozenset(special_tokens)) for s in job["splits"]}
        ids = [i for d in next(iter(split_deltas.values())) for i in d["ids"]]
        # the rendered prompt (--prompt), tokenized after the output (the output's ids are those without it)
        prompt = None
        if job.get("prompt_text") is not None:
            prompt = (job["prompt_text"], [i for _, i in pieces(job["prompt_text"])])
        out["tokens"] = len(ids)
        out["specials"] = [s for s in special_tokens if s != tk.EOS]
        out["tokenizer"] = described
        out["eos_id"] = eos_id
    except (RequestFieldError, ServerArgError) as e:
        out["error"] = {"type": type(e).__name__, "message": str(e), "where": None}
        out["standins"] = standins.report()
        return out
    except Exception as e:
        out["error"] = error_of(e, job["tree"])
        out["standins"] = standins.report()
        return out
    modes = job["modes"]
    # Import what the modes will run before the replay starts, so that `touched` means used by the replay,
    # not by some module's top level; a failure here shows again, in its mode.
    for prepare in (
        tree.tool_parser_cls,
        tree.reasoning_parser_cls,
        lambda: tree.engine and tree.parser_class(),
        (lambda: serving_module(tree)) if "serving" in modes and tree.responses is None else (lambda: None),
    ):
        try:
            prepare()
        except Exception:  # noqa: S110 - the mode that needs it reports it
            pass
    capture = LogCapture(job["tree"])
    logging.getLogger().addHandler(capture)
    vllm_logger = logging.getLogger("vllm")
    vllm_logger.setLevel(logging.DEBUG)
    vllm_logger.disabled = False
    standins.STATE["phase"] = "replay"
    out["startup"] = _logged(capture, lambda: _startup(tree, tok))
    if prompt is not None:
        try:
            out["prompt"] = prompt_line(tree, tok, prompt[1])
        except Exception as e:  # noqa: BLE001 - the modes replay with the prompt all the same
            out["prompt"] = f"{len(prompt[1])} tokens ({_err_text(error_of(e, job['tree']))})"
    prompt_ids = prompt[1] if prompt is not None else None
    if "nonstream" in modes:
        out["modes"]["nonstream"] = _logged(
            capture, lambda: _guard(lambda: non_streaming(tree, tok, text, ids, prompt_ids), job["tree"])
        )
    if "stream" in modes:
        out["modes"]["stream"] = {
            s: _logged(capture, lambda d=d: _guard(lambda: streaming(tree, tok, d, prompt_ids), job["tree"]))
            for s, d in split_deltas.items()
        }
    if "serving" in modes:
        first = next(iter(split_deltas.values()))
        if tree.responses is not None:
            out["modes"]["responses"] = _guard(
                lambda: responses(tree, tok, first, eos_id, capture, prompt), job["tree"]
            )
        else:
            out["modes"]["serving"] = _guard(
                lambda: serving(tree, tok, first, eos_id, capture, prompt), job["tree"]
            )
    out["standins"] = standins.report()
    out["notes"] = standins.STATE.get("notes", [])
    out["tree_modules"] = sorted(set(recorder.asked))
    return out


def _err_text(e: dict) -> str:
    return f"{e['type']}: {e['message']}" + (f" at {e['where']}" if e.get("where") else "")


def _guard(fn, tree: str) -> dict:
    try:
        return fn()
    except Exception as e:
        return {"error": error_of(e, tree)}


def _resolved_specials(written: list[str]) -> list[str]:
    """Sentinels the index saw only as an expression (`SpecialTokens.tool_calls.value`): their value from the
    installed mistral_common, the package that defines them."""
    out = []
    for w in written:
        parts = w.split(".")
        if len(parts) == 3 and parts[0] == "SpecialTokens" and parts[2] == "value":
            try:
                base = importlib.import_module("mistral_common.tokens.tokenizers.base")
                out.append(getattr(base.SpecialTokens, parts[1]).value)
            except (ImportError, AttributeError):
                pass
    return out


if __name__ == "__main__":
    result = run(json.load(sys.stdin))
    with open(sys.argv[1], "w") as f:
        json.dump(result, f, default=str)
