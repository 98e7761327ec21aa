"""The text of `which`: a name's chain of hops, and its history across versions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..answers.which import (
    _streaming_elsewhere,
    describe,
    init_text,
    lifecycle_facts,
    rebinding_elsewhere,
    registered_text,
)
from . import text as textfmt

if (
    TYPE_CHECKING
):  # the answers' classes, built by the answers that make them (`which` at one version needs few)
    from ..answers.lifecycle_model import History
    from ..answers.which_model import Parser


def format_chain(p: Parser, width: int | None = None) -> list[str]:
    lines = [f"{p.name} ({p.kind} parser) at {p.version}: {p.impl}"]
    rows = []
    for h in p.hops:
        where = f"{h.file}:{h.line}" if h.file else "(no file)"
        what = h.class_ or ""
        if h.hop == "registered":
            what = registered_text(p, h)
        elif h.hop == "init":
            where, what = f"{where}-{h.end_line}", init_text(h)
        rows.append((h.hop, where, what))
    lines += textfmt.table(rows, width)
    if p.impl == "unresolved":
        lines += textfmt.hanging("  unresolved: ", p.reason or "?", width)
    else:
        lines += textfmt.hanging(
            "  => really implemented in ",
            f"{p.real_file} ({p.real_class}){rebinding_elsewhere(p)}{_streaming_elsewhere(p)}",
            width,
        )
    notes = list(p.notes)
    if p.stub:
        notes.append("registered file is a stub (no methods of its own)")
    if p.reexport:
        notes.append("registered module only re-exports the class")
    if p.aliases:
        notes.append(f"same class as: {', '.join(p.aliases)}")
    if p.parent_class:
        notes.append(f"subclasses parser {p.parent_class} ({p.parent_file})")
    for n in notes:
        lines += textfmt.hanging("  note: ", n, width)
    return lines


def format_history(h: History, width: int | None = None) -> list[str]:
    lines = []
    for k in h.kinds:
        lines.append(f"{h.name} ({k.kind} parser)")
        rows = []
        for r in k.ranges:
            span = r.first if r.first == r.last else f"{r.first} – {r.last}"
            rows.append((span, ("code changed; " if r.code_changed else "") + describe(r.parser)))
        lines += textfmt.table(rows, width)
        if k.lifecycle:
            lines += textfmt.hanging("  lifecycle: ", "; ".join(lifecycle_facts(k.lifecycle)), width)
    return lines


def format_models(w) -> list[str]:
    """The documentation's pairings with the name (`which qwen3`: the Qwen3 series uses --tool-call-parser
    hermes), each with the serve line's flags and the lines that say it."""
    from ..answers.serveline import command

    out = [f"documented at {w.version} (the model families vLLM's documentation pairs with {w.name}):"]
    for p in w.models:
        flags = command(p.tool, p.reasoning, p.chat_template).removeprefix("vllm serve MODEL").strip()
        where = ", ".join(f"{e.file}:{e.line}" for e in p.evidence[:3])
        extra = "; tool calling with this reasoning parser: not supported" if p.tool_calling is False else ""
        extra += "; no tool-calling section names it" if not p.tool else ""
        out.append(f"  {p.family}: {flags}{extra} ({where})")
    return out
