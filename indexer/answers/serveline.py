"""The `vllm serve` line of a tool parser at a version: `vllm serve MODEL --enable-auto-tool-choice
--tool-call-parser NAME [--reasoning-parser R] [--chat-template T]`.

R is the reasoning parser that goes with the tool parser, from what the code shows at that version: one
registered under the same name whose real class is the tool parser's (the unified engine's pairs), else one of
the same name, else the reasoning parsers whose real class is the tool parser's real class. T is the chat
template vLLM ships for the name (examples/, matched exactly by name or file: answers/matching.py). Several
equally good reasoning parsers: the first, and the others said.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .model import Model


@dataclass
class ServeLine(Model):
    version: str
    name: str
    command: str
    reasoning: str | None = None  # --reasoning-parser
    reasoning_by: str | None = None  # same name and real class | same name | same real class
    reasoning_others: list[str] = field(default_factory=list)  # as good as `reasoning`, not chosen
    chat_template: str | None = None  # --chat-template
    templates_not_exact: list[str] = field(default_factory=list)  # matched only by family or prefix


def serve_line(db, card) -> ServeLine | None:
    """The serve line of a tool parser's card (None for another kind)."""
    if card.kind != "tool":
        return None
    same_name = [p for p in card.pairs if p["kind"] == "reasoning"]
    reasoning, by, others = None, None, []
    both = [p["name"] for p in same_name if p["shares_real_class"]]
    if both:
        reasoning, by = both[0], "same name and real class"
    elif same_name:
        reasoning, by = same_name[0]["name"], "same name"
    elif card.real.class_:
        shared = [r[0] for r in db.execute(
            "select name from parser_map_v where version = ? and kind = 'reasoning' and real_class = ?"
            " and real_file is ? order by name", [card.version, card.real.class_, card.real.file])]
        if shared:
            reasoning, by, others = shared[0], "same real class", shared[1:]
    exact = [t["file"] for t in card.chat_templates if t["level"] == "exact"]
    template = exact[0] if exact else None
    command = f"vllm serve MODEL --enable-auto-tool-choice --tool-call-parser {card.name}"
    if reasoning:
        command += f" --reasoning-parser {reasoning}"
    if template:
        command += f" --chat-template {template}"
    return ServeLine(card.version, card.name, command, reasoning, by, others, template,
                     [t["file"] for t in card.chat_templates if t["level"] != "exact"])
