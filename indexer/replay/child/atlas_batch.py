"""Child side of the behaviour atlas (issue 44): one worker runs many (parser name, case) replays of ONE version's
tree, so the tree's protocol and serving modules are imported once for all of them.

A job is {"version", "tree", "items": [{"id", "name", "specials", "unresolved_specials", "extra_specials",
"reasoning_specials", "cases": [CASE]}], "partial"} (the tokenizer's special tokens: `item_specials`) where
CASE is {"case", "modes", "tools", "reasoning_parser", and either "text" (the raw output) or
"template" (a chat template's source, rendered here with "messages": what the model wrote is the assistant
turn's text, see `render`), "think" (a think block written before an output showing no reasoning), "keep" (tokens the output
keeps at its end), "require" ({"names", "content", "reasoning"}: what the rendered output must show, else
the case is not applicable, or "fallback" ({"text"}) is run instead)}.

Each case runs through drive.run (the replay of one text), under a CPU-time limit of its own (`CASE_CPU`
seconds, an interval timer: a parser that spins ends its case, not the worker). Every finished item is
appended to job["partial"] as one JSON line, so that a worker killed by its wall-clock limit loses only the
item it was on; the result (job["out"]) is {"version", "items": {item id: {case id: {"text", "na",
"result"}}}}.

Templates are rendered as the build renders them (indexer/extract/templates.py, loaded from its file: the
sandboxed environment with `raise_exception`, `strftime_now` and a `tojson` keeping non-ASCII characters).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import sys
import types

import drive
import standins

CASE_CPU = 20.0  # CPU seconds one case may take (all its modes)
MARK = "\u2063\u00a7reply\u00a7\u2063"  # a plain reply's content: starts and ends with what no markup has
# a token the turn ends with (the engine stops on it: it is not in the output text)
_END_TOKEN = re.compile(
    r"(?:<\|[^<>|\s]{1,40}\|>|<\uff5c[^<>\s]{1,40}\uff5c>|</s>|<eos>|<end_of_turn>|\[/?[A-Z_]{2,20}\])\s*$"
)


class CaseTimeout(BaseException):
    """Raised by the interval timer: a BaseException, so that drive's guards (Exception) let it through."""


def _templates():
    """indexer/extract/templates.py (it imports only the standard library and, when rendering, jinja2)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "extract", "templates.py")
    spec = importlib.util.spec_from_file_location("tpindex_templates", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


_TEMPLATES = []
_COMPILED: dict = {}  # template source -> compiled template (or why it does not compile)


def _common(a: str, b: str) -> tuple[int, int]:
    if not _TEMPLATES:
        _TEMPLATES.append(_templates())
    return _TEMPLATES[0]._common(a, b)


def render(case: dict) -> tuple[str | None, str | None]:
    """(the model's output for the case's assistant turn, why it cannot be rendered). The conversation (the
    user's question, then the case's assistant turn) is rendered, and so is the same conversation with a plain
    reply (MARK); the output is what differs between them: the turn's header and end, rendered both times,
    are not the model's. A token ending the output that the plain reply's turn ends with too is the end of turn
    (the engine stops on it)."""
    if not _TEMPLATES:
        _TEMPLATES.append(_templates())
    source = case["template"]
    if source not in _COMPILED:  # a template is compiled once a worker (every case of a name renders it)
        try:
            _COMPILED[source] = _TEMPLATES[0].environment().from_string(source)
        except Exception as e:  # noqa: BLE001 - a template that does not compile is the case's finding
            _COMPILED[source] = f"the template does not compile ({type(e).__name__}: {str(e)[:200]})"
    template = _COMPILED[source]
    if isinstance(template, str):
        return None, template
    user, turn = case["messages"]
    base = {"bos_token": "<s>", "eos_token": "</s>", "add_generation_prompt": False}
    tools = case.get("tools")
    errors, shortfalls = [], []
    try:  # what the model continues from: the prompt with the generation prompt
        gen = template.render(messages=[user], tools=tools, **{**base, "add_generation_prompt": True})
    except Exception:  # noqa: BLE001 - the plain difference below then
        gen = None
    # arguments as a mapping (what vLLM passes templates), then as JSON text; a turn without content as None,
    # then as "" (templates concatenating it)
    tries = [(as_text, empty) for as_text in (False, True) for empty in (False, True)]
    seen = set()
    for as_text, empty in tries:
        tried = (as_text and bool(turn.get("tool_calls")), empty and turn.get("content") is None)
        if tried in seen:
            continue
        seen.add(tried)
        msg = dict(turn)
        if empty and msg.get("content") is None:
            msg["content"] = ""
        if as_text and msg.get("tool_calls"):
            msg["tool_calls"] = [
                {**c, "function": {**c["function"], "arguments": json.dumps(c["function"]["arguments"])}}
                for c in msg["tool_calls"]
            ]
        try:
            full = template.render(messages=[user, msg], tools=tools, **base)
            plain = template.render(
                messages=[user, {"role": "assistant", "content": MARK}], tools=tools, **base
            )
        except Exception as e:  # noqa: BLE001
            errors.append(f"{type(e).__name__}: {str(e)[:200]}")
            continue
        if MARK not in plain:
            return None, "the template renders no plain reply of an assistant turn"
        out, reply = _generated(full, plain, gen)
        m = _END_TOKEN.search(out)
        if m and not reply.endswith(MARK) and m.group().strip() not in case.get("keep", ()):
            out = out[
                : m.start()
            ]  # the turn ends otherwise after a call (<|eom_id|>): the engine stops there
        require = dict(case.get("require") or {})
        if require.get("reasoning") and require["reasoning"] not in out and case.get("think"):
            out = case["think"] + out  # the template renders no reasoning: the parser's think block before
        missing = _missing(out, require)
        if missing:
            shortfalls.append(missing)
            continue
        return out, None
    if shortfalls:  # it renders the turn, without all the case holds
        return None, shortfalls[0]
    return None, f"the template does not render the turn ({errors[0]})" if errors else "no output"


def _generated(full: str, plain: str, gen: str | None) -> tuple[str, str]:
    """(what the model generated in the rendered conversation `full`, the plain reply's part likewise): what
    follows the generation prompt `gen` (a think block the generation prompt closes is not generated; where
    the template lays the conversation out with other whitespace than the prompt, its whitespace around the
    output is left out), up to the turn's end (what `full` and the plain reply's `plain` end with alike);
    without a generation prompt it starts with, what differs between `full` and `plain`."""
    p, s = _common(full, plain)
    cut = _after(full, gen) if gen else None
    if cut is None or cut[0] > len(full) - s:
        return full[p : len(full) - s], plain[p : len(plain) - s]
    out = full[cut[0] : len(full) - s]
    return (out if cut[1] else out.strip()), plain[p : len(plain) - s]


def _after(full: str, gen: str) -> tuple[int, bool] | None:
    """(where `gen` ends in `full`, exactly): `full` starts with it, or with it but for whitespace."""
    if full.startswith(gen):
        return len(gen), True
    i = 0
    for ch in gen:
        if ch.isspace():
            continue
        while i < len(full) and full[i].isspace():
            i += 1
        if i >= len(full) or full[i] != ch:
            return None
        i += 1
    return i, False


def _missing(out: str, require: dict) -> str | None:
    names = require.get("names") or []
    found = [n for n in names if n in out]
    if len(found) < len(names):
        if not found:
            return f"the template renders none of the {len(names)} call{'s' if len(names) > 1 else ''}"
        return f"the template renders {len(found)} of the {len(names)} calls"
    if require.get("content") and require["content"] not in out:
        return "the template renders no content beside the tool calls"
    if require.get("reasoning") and require["reasoning"] not in out:
        return "the template renders no reasoning"
    return None


def _on_alarm(signum, frame):
    raise CaseTimeout()


_RECORDER = []


def _install_once(install):
    """drive.run installs the tree's light `vllm` package and the stand-ins; a worker running many replays of
    one tree does so once (the modules imported stay imported)."""

    def once(tree, version):
        if not _RECORDER:
            _RECORDER.append(install(tree, version))
        return _RECORDER[0]

    return once


def _text_of(case: dict) -> tuple[str | None, dict, str | None, str | None]:
    """(the case's raw output, the case as run (its fallback's tools when the fallback runs), why not
    applicable, why the fallback runs)."""
    if case.get("text") is not None:
        return case["text"], case, None, None
    text, na = render(case)
    if na and case.get("fallback"):  # the next source of the case (a test file's literal, the writer)
        return case["fallback"]["text"], {**case, **case["fallback"]}, None, na
    return text, case, na, None


def item_specials(item: dict, texts: list[str]) -> list[str]:
    """The synthetic tokenizer's special tokens for a case of a name: its tokens (sentinels) that the case's
    output holds (a tokenizer has the tokens of the format its model writes: a parser finding one of another
    format in the vocabulary, mistral's [ARGS], switches to that format), all of them when it holds none, and
    those of the reasoning parser paired with it."""
    resolve = getattr(drive, "_resolved_specials", lambda written: [])  # SpecialTokens.x.value -> its value
    tokens = list(item.get("specials") or []) + resolve(item.get("unresolved_specials") or [])
    held = [t for t in tokens if any(t in x for x in texts)]
    extra = [t for t in item.get("extra_specials") or [] if any(t in x for x in texts)]
    return list(dict.fromkeys((held or tokens) + extra + list(item.get("reasoning_specials") or [])))


def _one(item: dict, case: dict, text: str, job: dict, specials: list[str]) -> dict:
    sub = {
        "version": job["version"],
        "tree": job["tree"],
        "name": item["name"],
        "text": text,
        "splits": case.get("splits") or ["token", "char"],
        "modes": case["modes"],
        "tools": case.get("tools"),
        "tool_choice": "auto",
        "reasoning_parser": case.get("reasoning_parser"),
        "specials": specials,
        "unresolved_specials": [],  # resolved in item_specials, kept when the output holds them
    }
    standins.STATE["touched"] = {}
    standins.STATE["notes"] = []
    standins.STATE["phase"] = "import"
    signal.setitimer(signal.ITIMER_PROF, CASE_CPU)
    try:
        result = drive.run(sub)
    except CaseTimeout:
        result = {
            "version": job["version"],
            "status": "timeout",
            "error": {
                "type": "Timeout",
                "message": f"the case ran over {CASE_CPU:g} CPU seconds",
                "where": None,
            },
            "modes": {},
        }
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    result.pop("tree_modules", None)
    return result


def _signatures_once(call):
    """drive.call reads the signature of the function it calls, each call (a parser's streaming method is
    called once per delta); the signature of one function is the same each time: read once."""
    import functools
    import inspect

    @functools.lru_cache(maxsize=4096)
    def signature(fn):
        return inspect.signature(fn)

    def cached(fn, *args, **kwargs):
        target = getattr(fn, "__func__", fn)
        if not isinstance(target, types.FunctionType):  # a class, a builtin, a callable object: as drive does
            return call(fn, *args, **kwargs)
        try:
            params = signature(target).parameters
        except (TypeError, ValueError):
            return call(fn, *args, **kwargs)
        if target is not fn:  # a bound method: its first parameter is bound
            params = dict(list(params.items())[1:])
        if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
            kwargs = {k: v for k, v in kwargs.items() if k in params}
        return fn(*args, **kwargs)

    return cached if getattr(call, "__name__", "") == "call" else call


def run(job: dict) -> dict:
    signal.signal(signal.SIGPROF, _on_alarm)
    standins.install = _install_once(standins.install)
    drive.call = _signatures_once(drive.call)
    out: dict = {"version": job["version"], "items": {}}
    partial = job.get("partial")
    for item in job["items"]:
        done, ready = {}, []
        for case in item["cases"]:
            text, run_as, na, fallback = _text_of(case)
            if na:
                done[case["case"]] = {"text": None, "na": na, "result": None}
            else:
                ready.append((case, run_as, text, fallback))
        for case, run_as, text, fallback in ready:
            try:
                result = _one(item, run_as, text, job, item_specials(item, [text]))
            except Exception as e:  # noqa: BLE001 - one case's failure is its cell's error, not the worker's
                result = {"version": job["version"], "error": drive.error_of(e, job["tree"]), "modes": {}}
            done[case["case"]] = {"text": text, "na": None, "result": result, "fallback": fallback}
        out["items"][item["id"]] = done
        if partial:
            with open(partial, "a", encoding="utf-8") as f:
                f.write(json.dumps({"id": item["id"], "cases": done}, default=str) + "\n")
    return out


if __name__ == "__main__":  # a job run alone (debugging): python atlas_batch.py JOB.json OUT.json
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    with open(sys.argv[1], encoding="utf-8") as f:
        result = run(json.load(f))
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(result, f, default=str)
