"""The proof of a serve line: the outputs a model emits, replayed through a (tool parser, reasoning parser) pair by
the version's own code (indexer/replay/, in its child process, through the `replay` callable the `Index` passes:
this module never imports replay).

The outputs (`Output`) come from the model's chat template when there is one (extract/templates.py `turns`: its
assistant turn with the tool call, with and without reasoning where it renders reasoning, continuing from its
generation prompt, under each of its own switches of that prompt), else from a raw output given as is. Each is
replayed after the generation prompt it follows, with that state's switch as the request's chat_template_kwargs
(the call alone after a prompt rendered with thinking off, whose ids end the reasoning where the version's serving
reads them; the reasoning after the prompt that opens it), non-streaming, streamed one token per delta, and through
serving (the full and the streaming generators); a mode passes when:

- **the call comes back intact**: the template's call (get_weather with its argument) and nothing else, its
  arguments equal as JSON; for a raw output, at least one call, and the same names in every mode;
- **finish_reason** is `tool_calls` (the serving modes: the others give none);
- **the reasoning is separated**: an output with reasoning gives that reasoning in `reasoning` and none of it in
  the content; one without gives no reasoning (every mode: the stream mode composes the reasoning parser with the
  tool parser as the release's stream loop does);
- no call markup is left in the content (the function's name).

A pair passes when every mode of every output passes. A replay that cannot run the version's code at all is no
proof either way (`status` error), and says why.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from ..extract.templates import ARG, THOUGHT, TOOL_NAME, VALUE, WITH_REASONING
from .plain import Model

MODES = ["nonstream", "stream", "serving"]  # what the replay runs (stream: one token per delta)


@dataclass
class ProofMode(Model):
    """One mode of one output: what the pair's code made of it, and what is wrong when it does not pass."""

    mode: str  # nonstream | stream:token | serving-full | serving-stream
    ok: bool
    calls: list[str]  # name(arguments as JSON)
    finish_reason: str | None
    reasoning: str | None
    content: str | None
    why: str | None = None  # what failed


@dataclass
class ProofOutput(Model):
    """An output the model emits (from its template, or the raw output given) and how the pair did on it."""

    what: str  # a tool call | reasoning and a tool call | the raw output
    state: str  # the template's switch it was rendered under (name=value), "" for its default
    text: str
    ok: bool
    modes: list[ProofMode] = field(default_factory=list)


@dataclass
class ProofRun(Model):
    """One (tool, reasoning) pair replayed on the outputs."""

    tool: str
    reasoning: str | None
    status: str  # ok (it ran) | error (the version's code could not be run: no proof either way)
    ok: bool
    error: str | None
    outputs: list[ProofOutput]

    def failure(self) -> str:
        """What failed, in a few words."""
        if self.status != "ok":
            return f"could not be run ({self.error})"
        for o in self.outputs:
            bad = [m for m in o.modes if not m.ok]
            if bad:
                where = f" (its switch {o.state})" if o.state else ""
                return f"on the output with {o.what}{where}, {bad[0].mode}: {bad[0].why}"
        return "passed"


@dataclass
class Proof(Model):
    """The serve line's pair replayed (`ok`), with the pairs tried before it that failed."""

    version: str
    ok: bool | None  # null: not run (`skipped` says why)
    tool: str | None
    reasoning: str | None
    outputs: list[ProofOutput]
    tried: list[ProofRun]  # every pair replayed, in the order tried (the proven one among them)
    skipped: str | None = None


@dataclass
class Output:
    what: str
    state: str
    text: str
    expected: bool  # the call (and the reasoning) are known: rendered by a template
    # the template's generation prompt the output follows (its state's), and the state's switch as the request's
    # chat_template_kwargs: replayed with them, as serving renders the prompt and hands the kwargs to the parsers
    prompt: str | None = None
    kwargs: dict | None = None


def outputs_of(turns: list[dict]) -> list[Output]:
    return [
        Output(t["what"], t.get("state") or "", t["text"], True, t.get("prompt"), t.get("kwargs") or None)
        for t in turns
    ]


def _call(c) -> tuple[str | None, object]:
    args = c.arguments
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            pass
    return c.name, args


def _said(c) -> str:
    name, args = _call(c)
    return f"{name}({json.dumps(args, sort_keys=True, ensure_ascii=False) if not isinstance(args, str) else args})"


def judge(m, out: Output) -> ProofMode:
    """Whether one mode's result passes (the module docstring's rules)."""
    calls = [_call(c) for c in m.calls]
    why = None
    content = (m.content or "").strip()
    reasoning = (m.reasoning or "").strip()
    if m.errors and not calls:
        why = f"error: {m.errors[0]}"
    elif not calls:
        why = "no tool call" + (
            " (the whole output is reasoning)" if reasoning and TOOL_NAME in reasoning else ""
        )
    elif out.expected and calls != [(TOOL_NAME, {ARG: VALUE})]:
        why = "the call is not the template's: " + ", ".join(_said(c) for c in m.calls)
    elif m.mode.startswith("serving") and m.finish_reason != "tool_calls":
        why = f"finish_reason {m.finish_reason!r}, not 'tool_calls'"
    elif TOOL_NAME in content:
        why = "call markup left in the content"
    elif out.expected:
        if out.what == WITH_REASONING and reasoning != THOUGHT:
            why = "the reasoning is not separated" + (
                f" (reasoning {reasoning[:60]!r})" if reasoning else " (no reasoning)"
            )
        elif out.what == WITH_REASONING and THOUGHT in content:
            why = "the reasoning is left in the content"
        elif out.what != WITH_REASONING and reasoning:
            why = f"reasoning where there is none: {reasoning[:60]!r}"
    return ProofMode(
        mode=m.mode,
        ok=why is None,
        calls=[_said(c) for c in m.calls],
        finish_reason=m.finish_reason,
        reasoning=m.reasoning,
        content=m.content,
        why=why,
    )


def run_pair(
    replay: Callable, version: str, tool: str, reasoning: str | None, outputs: list[Output]
) -> ProofRun:
    """Replay every output through one pair. `replay(tool, version, text, reasoning, prompt=, chat_template_kwargs=)`
    -> a Replay answer (an output's prompt and kwargs: those of the template's state it follows)."""
    done: list[ProofOutput] = []
    for out in outputs:
        answer = replay(
            tool, version, out.text, reasoning, prompt=out.prompt, chat_template_kwargs=out.kwargs
        )
        (v,) = answer.versions
        if v.status != "ok":
            return ProofRun(tool, reasoning, "error", False, v.error or v.status, done)
        modes = [judge(m, out) for m in v.modes]
        if not out.expected:  # a raw output: the same call names in every mode
            names = {tuple(c.split("(", 1)[0] for c in m.calls) for m in modes if m.ok}
            if len(names) > 1:
                for m in modes:
                    if m.ok and m.mode != "nonstream":
                        m.ok, m.why = False, "other calls than the non-streaming result"
        done.append(ProofOutput(out.what, out.state, out.text, all(m.ok for m in modes), modes))
    return ProofRun(tool, reasoning, "ok", all(o.ok for o in done), None, done)
