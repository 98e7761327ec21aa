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
import os
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
    msg = str(e).splitlines()[0][:400] if str(e) else ""
    return {"type": type(e).__name__, "message": msg, "where": where}


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
        self.name = job["name"]
        later = "vllm.entrypoints.openai.chat_completion.protocol"
        self.protocol = importlib.import_module(
            later if _has_module(later, self.dir) else "vllm.entrypoints.openai.protocol"
        )
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
        if job.get("reasoning_parser"):
            for mod in ("vllm.reasoning", "vllm.entrypoints.openai.reasoning_parsers"):
                if _has_module(mod, self.dir):
                    m = importlib.import_module(mod)
                    if hasattr(m, "ReasoningParserManager"):
                        self.reasoning_manager = m.ReasoningParserManager
                        break

    def request(self):
        job = self.job
        kwargs = {
            "model": "replay",
            "messages": [{"role": "user", "content": job.get("prompt") or "What is the weather?"}],
        }
        if job.get("tools") is not None:
            kwargs["tools"] = job["tools"]
        choice = job.get("tool_choice") or "auto"
        if choice not in ("auto", "required", "none"):
            choice = {"type": "function", "function": {"name": choice}}
        kwargs["tool_choice"] = choice
        kwargs["stream"] = False
        return self.protocol.ChatCompletionRequest(**kwargs)

    def tool_parser_cls(self):
        if self.tool_manager is None:
            raise LookupError("no tool-parser registry in this tree")
        return self.tool_manager.get_tool_parser(self.name)

    def reasoning_parser_cls(self):
        r = self.job.get("reasoning_parser")
        if not r:
            return None
        if self.reasoning_manager is None:
            raise LookupError("no reasoning-parser registry in this tree")
        return self.reasoning_manager.get_reasoning_parser(r)

    def engine_parser(self, tokenizer, request):
        cls = call(
            self.engine.get_parser,
            tool_parser_name=self.name,
            reasoning_parser_name=self.job.get("reasoning_parser") or None,
            enable_auto_tools=True,
            model_name="replay",
            is_harmony=False,
        )
        if cls is None:
            return None, None
        return cls, construct(cls, tokenizer, request.tools, chat_template_kwargs={}, model_config=None)

    def tool_parser(self, tokenizer, request):
        cls = self.tool_parser_cls()
        return cls, construct(cls, tokenizer, request.tools)


def _qualname(cls) -> str | None:
    return f"{cls.__module__}.{cls.__qualname__}" if cls is not None else None


# -- modes -----------------------------------------------------------------------------------------------


def non_streaming(tree: Tree, tokenizer, text: str, ids: list[int]) -> dict:
    request = tree.request()
    if tree.engine is not None:
        cls, parser = tree.engine_parser(tokenizer, request)
        if parser is not None and _real_method(parser, "parse"):
            request = _adjusted(parser, request)
            reasoning, content, tool_calls = call(
                parser.parse, text, request, enable_auto_tools=True, model_output_token_ids=ids
            )
            calls = [_call_of(t) for t in tool_calls or []]
            return {
                "entry": f"{_qualname(type(parser))}.parse",
                "tools_called": bool(calls),
                "calls": calls,
                "content": content,
                "reasoning": reasoning,
            }
    cls, parser = tree.tool_parser(tokenizer, request)
    request = _adjusted(parser, request)
    reasoning = None
    rcls = tree.reasoning_parser_cls()
    if rcls is not None:
        rp = call(rcls, tokenizer)
        fn = getattr(rp, "extract_reasoning", None) or rp.extract_reasoning_content
        reasoning, text = fn(text, request=request)
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


def streaming(tree: Tree, tokenizer, deltas: list[dict]) -> dict:
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
                            prompt_token_ids=[1],
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
    cls, parser = tree.tool_parser(tokenizer, request)
    request = _adjusted(parser, request)
    prev_text, prev_ids = "", []
    for k, d in enumerate(deltas):
        cur_text, cur_ids = prev_text + d["text"], prev_ids + list(d["ids"])
        try:
            col.add(
                parser.extract_tool_calls_streaming(
                    previous_text=prev_text,
                    current_text=cur_text,
                    delta_text=d["text"],
                    previous_token_ids=prev_ids,
                    current_token_ids=cur_ids,
                    delta_token_ids=list(d["ids"]),
                    request=request,
                )
            )
        except Exception as e:
            errors.append({"delta": k, **error_of(e, tree.dir)})
        prev_text, prev_ids = cur_text, cur_ids
    out = {
        "entry": f"{_qualname(cls)}.extract_tool_calls_streaming",
        "deltas": len(deltas),
        **col.result(),
        "errors": errors,
    }
    if tree.job.get("reasoning_parser"):
        out["note"] = (
            "stream: the tool parser alone (before the parser engine, serving composes the reasoning "
            "parser with it in its stream loop: see serving-stream)"
        )
    return out


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


def _serving_obj(tree: Tree, tokenizer):
    cls = serving_module(tree).OpenAIServingChat
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
        "enable_auto_tools": True,
        "tool_parser": tree.name,
        "reasoning_parser": tree.job.get("reasoning_parser") or "",
        "enable_reasoning": bool(tree.job.get("reasoning_parser")),
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


def _outputs(deltas: list[dict], eos: int, stream: bool):
    text = "".join(d["text"] for d in deltas)
    ids = [i for d in deltas for i in d["ids"]]

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
            prompt="",
            prompt_token_ids=[1],
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


def serving(tree: Tree, tokenizer, deltas: list[dict]) -> dict:
    obj = _serving_obj(tree, tokenizer)
    result = {"entry": f"{_qualname(type(obj))}"}
    for kind in ("full", "stream"):
        request = tree.request()
        request.stream = kind == "stream"
        try:
            meta_cls = getattr(tree.protocol, "RequestResponseMetadata", None)
            meta = meta_cls(request_id="replay") if meta_cls else Fake()
            kw = dict(
                request=request,
                result_generator=_outputs(deltas, tokenizer.eos_token_id, kind == "stream"),
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
            if "parser" in inspect.signature(gen).parameters and getattr(obj, "parser_cls", None) is not None:
                # later releases build the parser in create_chat_completion and hand it to the generators
                make = getattr(obj, "_make_parser", None)
                parser = (
                    call(make, request, tokenizer, chat_template_kwargs={})
                    if make
                    else construct(
                        obj.parser_cls, tokenizer, request.tools, chat_template_kwargs={}, model_config=None
                    )
                )
                kw["request"] = request = _adjusted(parser, request)
                kw["parser"] = parser
            if kind == "full":
                res = asyncio.run(call(obj.chat_completion_full_generator, **kw))
                result["full"] = _full_result(res)
            else:
                chunks = asyncio.run(_drain(call(obj.chat_completion_stream_generator, **kw)))
                result["stream"] = _stream_result(chunks)
        except Exception as e:
            result[kind] = {"error": error_of(e, tree.dir)}
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


def run(job: dict) -> dict:
    speed.install()  # done by the fork server before forking; here for a worker run alone
    if not job.get("eager_schemas"):
        _defer_schemas()
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
        specials = list(job.get("specials") or [])
        specials += _resolved_specials(job.get("unresolved_specials") or [])
        if job.get("tokenizer_file"):
            try:
                tok = tk.FileTokenizer(job["tokenizer_file"], specials)
            except ImportError:
                raise RuntimeError(
                    "--tokenizer needs the tokenizers package in the replay environment"
                ) from None
        else:
            tok = tk.SyntheticTokenizer(specials)
        if job.get("deltas") is not None:
            deltas = [
                {"text": d["text"], "ids": d["ids"] if d.get("ids") is not None else tok.encode(d["text"])}
                for d in job["deltas"]
            ]
            split_deltas = {"given": deltas}
            text = "".join(d["text"] for d in deltas)
        else:
            text = job["text"]
            toks = tk.tokens(tok, text)
            split_deltas = {s: tk.split(toks, s, frozenset(tok.special_tokens)) for s in job["splits"]}
        ids = [i for d in next(iter(split_deltas.values())) for i in d["ids"]]
        out["tokens"] = len(ids)
        out["specials"] = [s for s in tok.special_tokens if s != tk.EOS]
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
        lambda: (
            tree.engine
            and call(
                tree.engine.get_parser,
                tool_parser_name=tree.name,
                reasoning_parser_name=job.get("reasoning_parser") or None,
                enable_auto_tools=True,
                model_name="replay",
                is_harmony=False,
            )
        ),
        (lambda: serving_module(tree)) if "serving" in modes else (lambda: None),
    ):
        try:
            prepare()
        except Exception:  # noqa: S110 - the mode that needs it reports it
            pass
    standins.STATE["phase"] = "replay"
    if "nonstream" in modes:
        out["modes"]["nonstream"] = _guard(lambda: non_streaming(tree, tok, text, ids), job["tree"])
    if "stream" in modes:
        out["modes"]["stream"] = {
            s: _guard(lambda d=d: streaming(tree, tok, d), job["tree"]) for s, d in split_deltas.items()
        }
    if "serving" in modes:
        first = next(iter(split_deltas.values()))
        out["modes"]["serving"] = _guard(lambda: serving(tree, tok, first), job["tree"])
    out["standins"] = standins.report()
    out["notes"] = standins.STATE.get("notes", [])
    out["tree_modules"] = sorted(set(recorder.asked))
    return out


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
