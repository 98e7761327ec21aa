"""Chat templates rendered: what a Jinja chat template makes of one tool call. The build stores the call markup
of every template blob (table template_renders: `call`, `reply`, `error`, `notes`) so that `fit` and the card
read it without compiling the template again; `fit` renders the template it is given in full.

A template is rendered as Hugging Face's `apply_chat_template` does (a sandboxed environment with
`raise_exception`, `strftime_now` and a `tojson` that keeps non-ASCII characters) on a small conversation with
one tool, `get_weather(city="Paris")`:

- `call`: the part of an assistant turn holding that tool call that differs from the same turn holding a plain
  reply (so the turn's header and end token, rendered both times, are not the call's); `reply`: the plain
  reply's part in the same place;
- `prompt`: what offering the tool adds to the prompt (the tools prompt); `generation`: the generation prompt
  after the user's turn; `reasoning`: what a reply with reasoning content adds (think markup);
- `error` when it cannot be rendered (it is then read as text only), `notes` for what it does not render.

This is a fact kind without a pattern file: the bytes of a template are not Python. A Jinja compile costs tens
of milliseconds for a large template, so each unique template is rendered once per database, in the build's
worker processes; `render` also keeps what each source rendered for the life of the process.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field

TOOL_NAME, ARG, VALUE = "get_weather", "city", "Paris"
TOOL = {
    "type": "function",
    "function": {
        "name": TOOL_NAME,
        "description": "Get the current weather in a city",
        "parameters": {
            "type": "object",
            "properties": {ARG: {"type": "string", "description": "the city"}},
            "required": [ARG],
        },
    },
}
QUESTION = "What is the weather in Paris?"
REPLY = "It is sunny in Paris today."
THOUGHT = "The user asks about the weather."
CALL_ID = "call_0123456789"  # some templates keep the last 9 characters (a digit string)
MAX_TEMPLATE = 1 << 20  # a larger file is not rendered (read as text only)
MAX_RENDERED = 1 << 20  # characters one render may produce (a real conversation renders a few thousand)
MAX_VALUE = 1 << 20  # items a string, list or number made by * or ** in a template may hold (digits for **)
RENDER_SECONDS = 20.0  # a template's renders, in a child process (render_bounded): a loop is stopped
RENDER_MEMORY = 1 << 30  # ... and the memory they may take


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
    # what the model emits for an assistant turn with the tool call, continuing from the generation prompt (the
    # turn's end token left out, as vLLM stops before it): {what, state, text}, with and without reasoning,
    # under the template's own switches of the generation prompt too (`turns`)
    turns: list[dict] = field(default_factory=list)


@functools.cache
def environment():
    """One sandboxed environment for the process (Jinja caches what it compiles in it)."""
    import datetime

    from jinja2 import ext
    from jinja2.exceptions import SecurityError
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message):
        from jinja2.exceptions import TemplateError

        raise TemplateError(message)

    def tojson(x, indent=None, separators=None, sort_keys=False, ensure_ascii=False):
        return json.dumps(
            x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
        )

    # optimized=False: Jinja's compile-time constant folding left out. The build compiles each template once
    # and renders it a few times, so folding never pays: without it a compile takes 0.80 of the time (its code
    # generation 0.65), and every template of the 64 releases renders the same (issue 45, measured)
    class Environment(ImmutableSandboxedEnvironment):
        """Jinja's sandbox (no attribute of Python's internals, no mutation of what it is given, ranges of at
        most 100000), and no `*` or `**` making a value of more than MAX_VALUE items: `"a" * 1500000000`
        took a render to 5.9 GB, `9 ** 9 ** 9` computes for hours in one C call."""

        intercepted_binops = frozenset({"*", "**"})

        def call_binop(self, context, operator, left, right):
            if operator == "*":
                for seq, n in ((left, right), (right, left)):
                    if (
                        isinstance(seq, (str, list, tuple))
                        and isinstance(n, int)
                        and len(seq) * n > MAX_VALUE
                    ):
                        raise SecurityError(f"the template repeats a value into more than {MAX_VALUE} items")
            elif isinstance(left, int) and isinstance(right, int) and abs(left) > 1 and right > 64:
                if right * max(abs(left), 2).bit_length() > MAX_VALUE:
                    raise SecurityError(f"the template raises a number past {MAX_VALUE} bits")
            return super().call_binop(context, operator, left, right)

    env = Environment(
        trim_blocks=True, lstrip_blocks=True, extensions=[ext.loopcontrols, ext.do], optimized=False
    )
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
    return a[p : len(a) - s], b[p : len(b) - s]


_RENDERED: dict[
    str, Rendered
] = {}  # source -> what it renders (a shipped template is rendered once a process)


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
        template = environment().from_string(source)
    except Exception as e:  # noqa: BLE001 - any template error is a finding, not a crash
        out.error = f"does not compile as Jinja: {type(e).__name__}: {e}"[:300]
        return out
    user = {"role": "user", "content": QUESTION}
    base = {"bos_token": "<s>", "eos_token": "</s>"}

    def run(messages, tools, generation=False) -> str:
        pieces, size = [], 0
        for piece in template.generate(
            messages=messages, tools=tools, add_generation_prompt=generation, **base
        ):
            size += len(piece)
            if size > MAX_RENDERED:
                from jinja2.exceptions import TemplateError

                raise TemplateError(f"the template renders more than {MAX_RENDERED} characters")
            pieces.append(piece)
        return "".join(pieces)

    errors = []
    with_reply = None  # the plain reply's turn: the same for every attempt, rendered once it renders
    # arguments as a mapping (what vLLM and transformers pass) or as a JSON string (what some templates
    # concatenate); content None or empty
    for arguments in ({ARG: VALUE}, json.dumps({ARG: VALUE})):
        for content in (None, ""):
            call = {
                "role": "assistant",
                "content": content,
                "tool_calls": [
                    {
                        "id": CALL_ID,
                        "type": "function",
                        "function": {"name": TOOL_NAME, "arguments": arguments},
                    }
                ],
            }
            try:
                with_call = run([user, call], [TOOL])
                if with_reply is None:
                    with_reply = run([user, {"role": "assistant", "content": REPLY}], [TOOL])
            except Exception as e:  # noqa: BLE001
                errors.append(f"{type(e).__name__}: {e}")
                continue
            out.call, out.reply = _between(with_call, with_reply)
            head = out.reply[: out.reply.find(REPLY)].strip() if REPLY in out.reply else ""
            if head and head in out.call:  # the turn's header, rendered both times but not at the same place
                out.call = out.call[out.call.index(head) + len(head) :]
            if TOOL_NAME in out.call:
                break
        if TOOL_NAME in out.call:
            break
    else:
        if not out.call and errors and len(errors) == 4:
            out.error = f"does not render a tool call: {errors[0]}"[:300]
    if out.call and TOOL_NAME not in out.call:
        out.notes.append(
            "the template renders no tool call of an assistant message (its call markup is read "
            "from its tools prompt and text)"
        )
        out.call = ""
    elif not out.call and out.error is None:
        out.notes.append("the template renders no tool call of an assistant message")
    if not prompts:
        return out
    try:
        thinking = {"role": "assistant", "content": REPLY, "reasoning_content": THOUGHT, "reasoning": THOUGHT}
        with_thought = run([user, thinking], [TOOL])
        if with_reply is None:
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
    if TOOL_NAME in out.call:
        try:
            out.turns = turns(template, source)
        except Exception as e:  # noqa: BLE001 - a template that renders no turn: the proof says so
            out.notes.append(
                f"its assistant turn does not render as an output: {type(e).__name__}: {e}"[:200]
            )
    return out


WITH_CALL = "a tool call"
WITH_REASONING = "reasoning and a tool call"
_BOUNDARY = "\n>]"  # where a generation prompt may be cut: after a newline or a token's closing bracket


def _switches(template, source: str, run) -> list[tuple[str, bool]]:
    """The template's own variables (beyond what is passed to it) whose value, True or False, changes the end of
    its generation prompt after the user's turn: its thinking switches, found by rendering, not by name."""
    from jinja2 import meta

    passed = {"messages", "tools", "add_generation_prompt", "bos_token", "eos_token"}
    names = sorted(meta.find_undeclared_variables(environment().parse(source)) - passed)
    base = run(None)
    tail = base[base.rfind(QUESTION) :] if QUESTION in base else base
    out = []
    for name in names[:16]:
        for value in (False, True):
            got = run({name: value})
            if (got[got.rfind(QUESTION) :] if QUESTION in got else got) != tail:
                out.append((name, value))
    return out


def _continuation(full: str, generation: str) -> str:
    """What follows the generation prompt in a rendered conversation: after their common start, cut back to a
    boundary (a newline or a token's end) when the prompt is not all of it (`<think>` is no `<tool_call>`)."""
    return full[_cut(full, generation) :]


def _cut(full: str, generation: str) -> int:
    """Where the continuation of `generation` starts in `full` (see _continuation)."""
    p = 0
    n = min(len(full), len(generation))
    while p < n and full[p] == generation[p]:
        p += 1
    if p < len(generation):
        cut = max(generation.rfind(c, 0, p) for c in _BOUNDARY)
        p = cut + 1 if cut >= 0 else 0
    return p


_EMPTY_BLOCK = re.compile(r"\s*<([^<>/\s]+)>\s*</\1>\s*")


def _follows(unshown: str) -> int:
    """How well a rendered turn follows a generation prompt, from what the prompt holds that the turn does not
    show (the prompt after the turn's cut): 0 nothing (the turn continues the prompt), 1 an empty block the prompt
    opens and closes (a think block a template renders with thinking off, and drops from the turns it shows),
    2 anything else (a block the prompt leaves open that the turn never closes: the model would close it)."""
    if not unshown.strip():
        return 0
    return 1 if _EMPTY_BLOCK.fullmatch(unshown) else 2


def turns(template, source: str) -> list[dict]:
    """The outputs a template shows the model emitting for the tool call (see Rendered.turns): the assistant turn
    rendered after the user's, from where its generation prompt ends; the plain reply's ending (its end-of-turn
    token) cut off. Each under the default and under each switch that changes the generation prompt; an output
    rendered the same under several is the one of the state whose generation prompt it follows best (_follows:
    the call alone after the prompt that closes an empty think block, not after the one that opens the block),
    the first such state on a tie. Each turn carries that state's whole generation prompt (`prompt`) and the
    switch as the request's chat_template_kwargs would set it (`kwargs`): what serving renders and reads."""
    user = {"role": "user", "content": QUESTION}
    base = {"bos_token": "<s>", "eos_token": "</s>"}
    call = [{"id": CALL_ID, "type": "function", "function": {"name": TOOL_NAME, "arguments": {ARG: VALUE}}}]

    def run(messages, extra=None, generation=False) -> str:
        return template.render(
            messages=messages, tools=[TOOL], add_generation_prompt=generation, **base, **(extra or {})
        )

    states: list[tuple[str, dict | None]] = [("", None)]
    states += [(f"{k}={v}", {k: v}) for k, v in _switches(template, source, lambda x: run([user], x, True))]
    found: dict[tuple[str, str], tuple[int, dict]] = {}
    for state, extra in states:
        gen = run([user], extra, True)
        plain = run([user, {"role": "assistant", "content": REPLY}], extra)
        after = _continuation(plain, gen)
        ending = after[after.find(REPLY) + len(REPLY) :].strip() if REPLY in after else ""
        for what, msg in (
            (WITH_CALL, {"role": "assistant", "content": "", "tool_calls": call}),
            (
                WITH_REASONING,
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": call,
                    "reasoning_content": THOUGHT,
                    "reasoning": THOUGHT,
                },
            ),
        ):
            full = run([user, msg], extra)
            cut = _cut(full, gen)
            text = full[cut:]
            if what == WITH_REASONING and THOUGHT not in text:
                continue  # it renders no reasoning (in this state)
            if ending and ending in text:
                text = text[: text.rindex(ending)]
            text = text.rstrip()
            if TOOL_NAME not in text:
                continue
            fit = _follows(gen[cut:])
            if (what, text) not in found or fit < found[(what, text)][0]:
                found[(what, text)] = (
                    fit,
                    {
                        "what": what,
                        "state": state,
                        "text": text,
                        "generation": gen[-80:],
                        "prompt": gen,
                        "kwargs": dict(extra or {}),
                    },
                )
    return [t for _, t in found.values()]


def render_bounded(source: str, prompts: bool = False) -> Rendered:
    """What render_call (or, with `prompts`, render) gives, computed in a child process stopped after
    RENDER_SECONDS or past RENDER_MEMORY (core/bounded.py): a template from a repository (a build's, a
    card's) may loop for hours. Stopped, it is a template that does not render (its `error` says why)."""
    from ..core import bounded
    from ..core.problems import Problem

    if source in _RENDERED:
        return _RENDERED[source]
    try:
        return bounded.run(
            _render_safely,
            (source, prompts),
            RENDER_SECONDS,
            "rendering the template",
            memory=RENDER_MEMORY,
            hint="the template loops, or builds values too large to render",
        )
    except Problem as e:
        return Rendered(error=f"does not render: {e.message}"[:300])


def _render_safely(source: str, prompts: bool) -> Rendered:
    try:
        return _render(source, prompts)
    except Exception as e:  # noqa: BLE001 - a template that breaks the renderer is a finding, not a failed build
        return Rendered(error=f"does not render: {type(e).__name__}: {e}"[:300])


def facts(data: bytes) -> dict:
    """The row a template blob gets (a build's worker: bytes -> the template_renders columns), rendered where
    it can be stopped (render_bounded). Never raises."""
    r = render_bounded(data.decode("utf-8", errors="replace"))
    return {"call": r.call, "reply": r.reply, "error": r.error, "notes": json.dumps(r.notes)}


def from_row(row) -> Rendered:
    """A stored row (a mapping of the template_renders columns) as what render() gives."""
    return Rendered(
        call=row["call"] or "",
        reply=row["reply"] or "",
        error=row["error"],
        notes=json.loads(row["notes"] or "[]"),
    )


def render_batch(items: list[bytes]) -> list[dict]:
    """Worker: facts() of a batch of template blobs."""
    return [facts(data) for data in items]
