"""Tool-call markup in text: what a chat template renders for a tool call, the token strings in it, their
look-alikes, and the shape of the call (used by `fit` and by the card's chat templates).

- `render(template)`: a Jinja chat template rendered as Hugging Face's `apply_chat_template` does (a sandboxed
  environment with `raise_exception`, `strftime_now` and a `tojson` that keeps non-ASCII characters), on a
  small conversation with one tool, `get_weather(city="Paris")`. The call markup is the part of an assistant
  turn holding that tool call that differs from the same turn holding a plain reply (so the turn's header
  and end token, rendered both times, are not the call's); the tools prompt is the part of the prompt that
  differs when the tool is offered. A template that cannot render is read as text only.
- `tokens(text)`: the token strings in a text, by the rule sentinels are found with (extract/sentinels.py).
- `look_alike(value, text)`: where a text has a string that reads like `value` but is made of other code
  points (full-width vs ASCII pipes, U+2581 vs space or `_`, other confusables), and which ones.
- `shapes(text)`: the shape of the call markup: JSON objects with a name and arguments (inside tokens,
  bare, in a list, in a fenced block, after a name and a separator token), XML-like `<function=...>` /
  `<parameter=...>`, `<invoke name=...>` / `<parameter name=...>`, `<arg_key>` / `<arg_value>`, pythonic calls
  `[f(a=1)]`, `call:f{...}` blocks, channels addressed `to=f`.
- `char_diff(a, b)`: a character-level diff of two texts, as pieces.

Rendering costs a Jinja compile (tens of milliseconds for a large template): `render` keeps what each source
rendered for the life of the process.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
import unicodedata
from dataclasses import dataclass, field

from ..extract.tokens import TOKEN, is_token

TOOL_NAME, ARG, VALUE = "get_weather", "city", "Paris"
TOOL = {"type": "function", "function": {
    "name": TOOL_NAME, "description": "Get the current weather in a city",
    "parameters": {"type": "object", "properties": {ARG: {"type": "string", "description": "the city"}},
                   "required": [ARG]}}}
QUESTION = "What is the weather in Paris?"
REPLY = "It is sunny in Paris today."
THOUGHT = "The user asks about the weather."
CALL_ID = "call_0123456789"  # some templates keep the last 9 characters (a digit string)
MAX_TEMPLATE = 1 << 20  # a larger file is not rendered (read as text only)


# -- rendering ---------------------------------------------------------------------------------------------

@dataclass
class Rendered:
    """What a chat template renders around one tool call (empty strings where it renders none)."""

    call: str = ""  # the call markup: the tool-call turn's text that a plain reply's turn does not have
    reply: str = ""  # the plain reply's text in the same place (turn tokens outside it are shared)
    prompt: str = ""  # the tools prompt: what offering the tool adds to the prompt
    generation: str = ""  # the generation prompt (what the model continues from), after the user's turn
    reasoning: str = ""  # what a reply with reasoning renders beyond the plain reply (think markup)
    error: str | None = None  # why it could not be rendered
    notes: list[str] = field(default_factory=list)


@functools.cache
def _environment():
    """One sandboxed environment for the process (Jinja caches what it compiles in it)."""
    import datetime

    from jinja2 import ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message):
        from jinja2.exceptions import TemplateError

        raise TemplateError(message)

    def tojson(x, indent=None, separators=None, sort_keys=False, ensure_ascii=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[ext.loopcontrols, ext.do])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.datetime(2025, 1, 15, 12, 0).strftime(fmt)
    return env


def _common(a: str, b: str) -> tuple[int, int]:
    """The lengths of the common prefix and (after it) the common suffix of two strings."""
    p = 0
    n = min(len(a), len(b))
    while p < n and a[p] == b[p]:
        p += 1
    s = 0
    while s < n - p and a[len(a) - 1 - s] == b[len(b) - 1 - s]:
        s += 1
    return p, s


def _between(a: str, b: str) -> tuple[str, str]:
    """The parts of a and b between their common prefix and suffix."""
    p, s = _common(a, b)
    return a[p:len(a) - s], b[p:len(b) - s]


_RENDERED: dict[str, Rendered] = {}  # source -> what it renders (a shipped template is rendered once a process)


def render(source: str) -> Rendered:
    """The call markup, tools prompt and generation prompt a chat template renders (see the module); the same
    source is rendered once."""
    if source not in _RENDERED:
        if len(_RENDERED) > 256:
            _RENDERED.clear()
        _RENDERED[source] = _render(source)
    return _RENDERED[source]


def render_call(source: str) -> Rendered:
    """Only the call markup (and the plain reply beside it) a template renders: what the card shows, at the
    cost of one compile and a few renders (render() also renders the prompts)."""
    if source in _RENDERED:
        return _RENDERED[source]
    return _render(source, prompts=False)


def _render(source: str, prompts: bool = True) -> Rendered:
    out = Rendered()
    if len(source) > MAX_TEMPLATE:
        out.error = f"larger than {MAX_TEMPLATE} characters"
        return out
    try:
        template = _environment().from_string(source)
    except Exception as e:  # noqa: BLE001 - any template error is a finding, not a crash
        out.error = f"does not compile as Jinja: {type(e).__name__}: {e}"[:300]
        return out
    user = {"role": "user", "content": QUESTION}
    base = {"bos_token": "<s>", "eos_token": "</s>"}

    def run(messages, tools, generation=False) -> str:
        return template.render(messages=messages, tools=tools, add_generation_prompt=generation, **base)

    errors = []
    # arguments as a mapping (what vLLM and transformers pass) or as a JSON string (what some templates
    # concatenate); content None or empty
    for arguments in ({ARG: VALUE}, json.dumps({ARG: VALUE})):
        for content in (None, ""):
            call = {"role": "assistant", "content": content, "tool_calls": [
                {"id": CALL_ID, "type": "function", "function": {"name": TOOL_NAME, "arguments": arguments}}]}
            try:
                with_call = run([user, call], [TOOL])
                with_reply = run([user, {"role": "assistant", "content": REPLY}], [TOOL])
            except Exception as e:  # noqa: BLE001
                errors.append(f"{type(e).__name__}: {e}")
                continue
            out.call, out.reply = _between(with_call, with_reply)
            head = out.reply[:out.reply.find(REPLY)].strip() if REPLY in out.reply else ""
            if head and head in out.call:  # the turn's header, rendered both times but not at the same place
                out.call = out.call[out.call.index(head) + len(head):]
            if TOOL_NAME in out.call:
                break
        if TOOL_NAME in out.call:
            break
    else:
        if not out.call and errors and len(errors) == 4:
            out.error = f"does not render a tool call: {errors[0]}"[:300]
    if out.call and TOOL_NAME not in out.call:
        out.notes.append("the template renders no tool call of an assistant message (its call markup is read "
                         "from its tools prompt and text)")
        out.call = ""
    elif not out.call and out.error is None:
        out.notes.append("the template renders no tool call of an assistant message")
    if not prompts:
        return out
    try:
        thinking = {"role": "assistant", "content": REPLY, "reasoning_content": THOUGHT, "reasoning": THOUGHT}
        with_thought = run([user, thinking], [TOOL])
        with_reply = run([user, {"role": "assistant", "content": REPLY}], [TOOL])
        if THOUGHT in with_thought:
            out.reasoning, _ = _between(with_thought, with_reply)
    except Exception:  # noqa: BLE001 - a template without reasoning support
        pass
    try:
        offered = run([user], [TOOL], generation=True)
        plain = run([user], None, generation=True)
        out.prompt, _ = _between(offered, plain)
        without = run([user], None)
        p, _ = _common(plain, without)
        out.generation = plain[p:]
    except Exception as e:  # noqa: BLE001
        out.notes.append(f"its prompt does not render: {type(e).__name__}: {e}"[:200])
    return out


# -- tokens and look-alikes --------------------------------------------------------------------------------

def tokens(text: str) -> list[str]:
    """The token strings of a text, in order, each once (`<tool_call>`, `<|im_end|>`, `[TOOL_CALLS]`,
    `<function=`), by the rule of extract/sentinels.py."""
    return list(dict.fromkeys(t for t in TOKEN.findall(text) if is_token(t)))


# confusables that compatibility normalization (NFKC) leaves alone, folded to what they look like
_CONFUSABLE = {
    "\u2581": "_", " ": "_",  # SentencePiece's space marker, a space and an underscore: one word break
    "\u2502": "|", "\u01c0": "|", "\u2223": "|", "\u05c0": "|", "\u23d0": "|", "\u2758": "|", "\uffe8": "|",
    "\u2039": "<", "\u203a": ">", "\u3008": "<", "\u3009": ">", "\u27e8": "<", "\u27e9": ">", "\u2329": "<",
    "\u232a": ">", "\u02c2": "<", "\u02c3": ">", "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-",
    "\u2212": "-", "\u00a0": "_", "\u3000": "_", "\u2007": "_", "\u202f": "_",
}


@functools.lru_cache(maxsize=1 << 14)
def _fold(c: str) -> str:
    if c in _CONFUSABLE:
        return _CONFUSABLE[c]
    n = unicodedata.normalize("NFKC", c)
    n = _CONFUSABLE.get(n, n)
    return n if len(n) == 1 else c


def skeleton(text: str) -> str:
    """The text with each character folded to what it looks like (one character for one, so positions
    stay): full-width forms to ASCII, U+2581, spaces and `_` to `_`, other confusable pipes, angle brackets
    and dashes to ASCII (case is not folded: it shows)."""
    if text.isascii():
        return text.replace(" ", "_")
    return "".join(map(_fold, text))


def name(c: str) -> str:
    return f"U+{ord(c):04X} {unicodedata.name(c, '?')}"


@dataclass
class LookAlike:
    value: str  # what the parser looks for
    found: str  # what the text has instead
    differences: list[tuple[str, str]]  # (the parser's character, the text's), named

    def describe(self) -> str:
        return "; ".join(f"{ours} where the parser has {theirs}" for theirs, ours in self.differences)


def look_alike(value: str, text: str, folded: str | None = None) -> LookAlike | None:
    """A string of the text that reads like `value` but is not it (None when the text has `value` itself, or
    nothing like it)."""
    if not value.strip() or value in text:
        return None
    folded = skeleton(text) if folded is None else folded
    i = folded.find(skeleton(value))
    if i < 0:
        return None
    found = text[i:i + len(value)]
    diffs = list(dict.fromkeys((name(a), name(b)) for a, b in zip(value, found, strict=True) if a != b))
    return LookAlike(value, found, diffs) if diffs else None


def find_pattern(value: str, text: str) -> str | None:
    """A sentinel written as an f-string with run-time parts (`<tool_calls{self.suffix}>`): the first string
    of the text it matches, each part standing for a few characters that are not markup."""
    pieces = re.split(r"(\{[^{}]*\})", value)
    rx = "".join(r"[^<>\s|]{0,24}?" if p.startswith("{") and p.endswith("}") else re.escape(p) for p in pieces)
    m = re.search(rx, text)
    return m.group() if m else None


# -- shapes ------------------------------------------------------------------------------------------------

PRIMARY = ("json", "xml-function", "xml-invoke", "arg-key", "pythonic", "call-braces", "channel")
DESCRIBE = {
    "json": "JSON objects with a name and arguments",
    "xml-function": "XML-like <function=NAME> / <parameter=KEY> blocks",
    "xml-invoke": "XML-like <invoke name=\"NAME\"> / <parameter name=\"KEY\"> blocks",
    "arg-key": "<arg_key> / <arg_value> pairs after the function name",
    "pythonic": "pythonic calls [f(a=1)]",
    "call-braces": "call:NAME{key:value} blocks",
    "channel": "a message addressed to=NAME on a channel",
    "tagged": "inside tokens",
    "bare": "without tokens around them",
    "list": "in a JSON list",
    "fenced": "in a ```json block",
    "name-token": "after the function name and a separator token",
    "args-only": "the function name outside the JSON",
}

_XML_FUNCTION = re.compile(r"<(?:[^<>\s=]*[:|\uff5c])?function=")
_XML_PARAM = re.compile(r"<(?:[^<>\s=]*[:|\uff5c])?parameter=")
_XML_INVOKE = re.compile(r"<[^<>\s]*invoke[\s\u2581]+name\s*=")
_ARG_KEY = re.compile(r"<[^<>\s]*arg_key>")
_PYTHONIC = re.compile(r"\[\s*[A-Za-z_][\w.]*\((?:\s*[A-Za-z_]\w*\s*=[^\n]*?)?\)\s*"
                       r"(?:,\s*[A-Za-z_][\w.]*\((?:\s*[A-Za-z_]\w*\s*=[^\n]*?)?\)\s*)*\]", re.S)
_CALL_BRACES = re.compile(r"(?:^|[\s>:])call:[A-Za-z_][\w.\-]*\{")
_CHANNEL = re.compile(r"\bto=(?:functions\.)?[A-Za-z_][\w.\-]*")
_NAME_TOKEN = re.compile(r"[A-Za-z_][\w.:\-]*\s*(?:<[^<>\s]+>|\[[A-Z_]+\])\s*$")  # f<sep> right before the arguments
_ARGS_KEYS = ("arguments", "parameters", "args", "input", "params")


def _json_objects(text: str, calls_only: bool) -> list[tuple[int, int, dict]]:
    """(start, end, object) of each JSON object of the text (with calls_only, those with a string name and an
    argument key)."""
    out, dec, i = [], json.JSONDecoder(), 0
    while True:
        i = text.find("{", i)
        if i < 0:
            return out
        try:
            obj, end = dec.raw_decode(text, i)
        except ValueError:
            i += 1
            continue
        call = isinstance(obj, dict) and isinstance(obj.get("name"), str) and any(
            k in obj and not (isinstance(obj[k], dict) and "properties" in obj[k]) for k in _ARGS_KEYS)
        if isinstance(obj, dict) and (call or not calls_only):
            out.append((i, end, obj))
            i = end
        else:
            i += 1


def shapes(text: str) -> list[str]:
    """The shapes of the call markup in a text: the PRIMARY ones first, then qualifiers of the JSON one (see
    DESCRIBE), and for JSON calls the argument key (`args:parameters`)."""
    found: list[str] = []
    if _XML_FUNCTION.search(text) or _XML_PARAM.search(text):
        found.append("xml-function")
    if _XML_INVOKE.search(text):
        found.append("xml-invoke")
    if _ARG_KEY.search(text):
        found.append("arg-key")
    if _PYTHONIC.search(text):
        found.append("pythonic")
    if _CALL_BRACES.search(text):
        found.append("call-braces")
    if _CHANNEL.search(text) and TOKEN.search(text):
        found.append("channel")
    calls = _json_objects(text, calls_only=True)
    objects = calls or ([] if found else _json_objects(text, calls_only=False))
    if not objects:
        return found
    found.insert(0, "json")
    start, _, obj = objects[0]
    before = text[:start].rstrip()
    if before.endswith("["):
        before = before[:-1].rstrip()
        found.append("list")
    if before.endswith("```json") or before.endswith("```"):
        found.append("fenced")
    elif _NAME_TOKEN.search(before):
        found.append("name-token")
    elif before and TOKEN.search(before[-48:]) and before.endswith((">", "]")):
        found.append("tagged")
    elif not before:
        found.append("bare")
    if calls:
        found.append(f"args:{next(k for k in _ARGS_KEYS if k in obj)}")
    else:
        found.append("args-only")
    return found


def describe(shape_list: list[str]) -> str:
    primary = [s for s in shape_list if s in PRIMARY]
    quals = [s for s in shape_list if s not in PRIMARY]
    if not primary:
        return "no call markup recognised"
    words = [DESCRIBE[s] if s != "json" or "args-only" not in quals else "JSON arguments" for s in primary]
    extra = [DESCRIBE.get(q, f"with \"{q[5:]}\"" if q.startswith("args:") else q) for q in quals]
    return ", ".join(words) + (f" ({', '.join(extra)})" if extra else "")


# -- character diff ----------------------------------------------------------------------------------------

def char_diff(a: str, b: str) -> list[tuple[str, str]]:
    """(op, text) pieces turning a into b: op ' ' kept, '-' only in a, '+' only in b."""
    out: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            out.append((" ", a[i1:i2]))
            continue
        if i2 > i1:
            out.append(("-", a[i1:i2]))
        if j2 > j1:
            out.append(("+", b[j1:j2]))
    return out


def similarity(a: str, b: str) -> float:
    if not a and not b:
        return 1.0
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def one_line(text: str) -> str:
    """A text on one line, its line breaks and tabs written as \\n, \\r, \\t."""
    return text.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")


def inline(pieces: list[tuple[str, str]]) -> str:
    """A diff as one text: [-removed-]{+added+}, newlines as \\n."""
    show = {" ": "{}", "-": "[-{}-]", "+": "{{+{}+}}"}
    return "".join(show[op].format(t.replace("\n", "\\n")) for op, t in pieces)
