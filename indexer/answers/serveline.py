"""The `vllm serve` line: one function forms it everywhere (`command`: fit, the model answer, the parser pages of
both kinds, MCP), and `serve_line` gives a parser's own line at a version, with what paired it.

`vllm serve MODEL --enable-auto-tool-choice --tool-call-parser T [--reasoning-parser R] [--chat-template C]`:

- **C** only where the version's documentation gives the parser that template in its flags (every flags line naming
  T names the same one: answers/docpairs.py `documented_template`), or, in `fit`, the user's own template given
  to it: never the template vLLM ships merely because one matches the name (it would replace a model's own
  tool-capable template).
- **R for a tool parser's page**, the first evidence that gives one, in this order:
  1. **docs**: the reasoning parsers the documentation pairs with T (answers/docpairs.py `pairs`: a row of the
     reasoning table whose family the tool-calling page gives T, or a flags line naming both), those rows the
     table does not mark as without tool calling; one: it; several: none in the line, each listed with its family;
  2. the code, as the version shows it: **same name and real class** (one registered under the same name whose
     real class is T's: the unified engine's pairs), **same name**, **same real class**, **end token** (the
     reasoning parsers whose end-of-thinking token, a sentinel of their own code held by a token-named attribute
     with the word end and think, thinking or reasoning, or by end_token / end_token_id, T's code looks for: the
     only one, or the ones whose name matches T's as chat templates are matched, answers/matching.py).
- **T for a reasoning parser's page**: the tool parsers the documentation pairs with it (one: in the line), else
  one registered under the same name, else those with the same real class.

The evidence that agrees with the one chosen is said too (the end token, the documentation's lines).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .plain import Model


def command(
    tool: str | None, reasoning: str | None = None, chat_template: str | None = None, model: str | None = None
) -> str:
    """The one `vllm serve` line (a reasoning parser alone when there is no tool parser), shell-quoted
    (answers/command.py)."""
    from .command import vllm_serve

    return vllm_serve(model, tool, reasoning, chat_template)


@dataclass
class ServeLine(Model):
    version: str
    name: str
    command: str
    reasoning: str | None = None  # --reasoning-parser
    reasoning_by: str | None = (
        None  # docs | same name and real class | same name | same real class | end token
    )
    reasoning_others: list[str] = field(default_factory=list)  # as good as `reasoning`, not chosen
    chat_template: str | None = None  # --chat-template: the documentation's
    templates_not_exact: list[str] = field(
        default_factory=list
    )  # templates vLLM ships for the name, not in the line
    # the end-of-thinking token the tool parser's code looks for, where it does, and the reasoning parsers
    # ending at it (when it paired them, or agrees with the pairing; or, several without a match, pairs none)
    end_token: str | None = None
    end_token_place: dict | None = None  # {file, line}: in the tool parser's code
    end_token_parsers: list[str] = field(default_factory=list)
    docs: dict | None = None  # {file, line}: a documentation line pairing them (chosen, or agreeing)
    kind: str = "tool"  # the parser's kind (a reasoning parser's line names the tool parser it pairs with)
    tool: str | None = None  # --tool-call-parser
    tool_by: str | None = None  # docs | same name | same real class (a reasoning parser's line)
    tool_others: list[str] = field(default_factory=list)
    documented: list = field(
        default_factory=list
    )  # answers.docpairs.DocPair: the docs' pairings with the name


END_WORDS = ("think", "thinking", "reasoning")
END_ATTRIBUTES = (
    "end_token",
    "end_token_id",
)  # the reasoning parser's own properties (BaseThinkingReasoningParser)


def _ends(attribute: str) -> bool:
    """Whether an attribute holding a reasoning parser's sentinel names its end-of-thinking token."""
    a = attribute.strip("_").lower()
    ws = a.split("_")
    return a in END_ATTRIBUTES or ("end" in ws and any(w in END_WORDS for w in ws))


def _by_end_token(db, card) -> tuple[str | None, dict | None, list[str]]:
    """(token, its place in the tool parser's code, the reasoning parsers ending at it) for the first sentinel
    of the tool parser's that some reasoning parser of the version ends at."""
    from .card import name_sentinels

    mine = {s["value"]: s["places"][0] for s in card.sentinels if s.get("places")}
    if not mine:
        return None, None, []
    found = [
        r[0]
        for r in db.execute(
            "select distinct p.name from parser_code_v p join sentinels_v s on s.version = p.version and s.file = p.file"
            f" where p.version = ? and p.kind = 'reasoning' and p.shared = 0 and s.value in ({', '.join('?' * len(mine))})"
            " order by p.name",
            [card.version, *mine],
        )
    ]
    ending: dict[str, list[str]] = {}  # token -> reasoning parsers ending at it
    for name in found:
        for s in name_sentinels(db, name, card.version, "reasoning"):
            if s["value"] in mine and any(_ends(a) for a in s["attributes"]):
                ending.setdefault(s["value"], []).append(name)
    for token in mine:  # in the order of the tool parser's card
        if token in ending:
            place = mine[token]
            return token, {"file": place["file"], "line": place["line"]}, ending[token]
    return None, None, []


def _closest(name: str, candidates: list[str]) -> list[str]:
    """The candidates whose name matches the tool parser's at the first matching level (answers/matching.py)."""
    from .matching import Named, owners, words

    return [
        n.name
        for n, _, _ in owners(
            words(name), None, [Named("reasoning", c, [("name", words(c))]) for c in candidates]
        )
    ]


def _with_tool_calling(pairs: list) -> list:
    """The documented pairings that hold for tool calling (answers/docpairs.py `with_tool_calling`)."""
    from .docpairs import with_tool_calling

    return [p for p in pairs if with_tool_calling(p)]


def code_pairing(db, card) -> tuple[str | None, str | None, list[str], tuple]:
    """(reasoning parser, by, as good, (end token, place, parsers ending at it)) from the code alone (steps 2 of
    the module docstring) for a tool parser's card."""
    same_name = [p for p in card.pairs if p["kind"] == "reasoning"]
    reasoning, by, others = None, None, []
    both = [p["name"] for p in same_name if p["shares_real_class"]]
    if both:
        reasoning, by = both[0], "same name and real class"
    elif same_name:
        reasoning, by = same_name[0]["name"], "same name"
    elif card.real.class_:
        shared = [
            r[0]
            for r in db.execute(
                "select name from parser_map_v where version = ? and kind = 'reasoning' and real_class = ?"
                " and real_file is ? order by name",
                [card.version, card.real.class_, card.real.file],
            )
        ]
        if shared:
            reasoning, by, others = shared[0], "same real class", shared[1:]
    token, place, ending = _by_end_token(db, card)
    if reasoning is None and ending:
        chosen = ending if len(ending) == 1 else _closest(card.name, ending)
        if chosen:
            reasoning, by, others = chosen[0], "end token", chosen[1:]
    return reasoning, by, others, (token, place, ending)


def serve_line(db, card) -> ServeLine | None:
    """A parser's own serve line at its card's version (the module docstring's rules)."""
    from . import docpairs

    if card.kind == "reasoning":
        return _reasoning_line(db, card)
    if card.kind != "tool":
        return None
    documented = docpairs.for_tool(db, card.version, card.name)
    paired = list(dict.fromkeys(p.reasoning for p in _with_tool_calling(documented) if p.reasoning))
    reasoning, by, others, (token, place, ending) = code_pairing(db, card)
    docs = None
    if paired:
        chosen = paired[0] if len(paired) == 1 else None
        code_choice = reasoning
        reasoning, by, others = chosen, "docs" if chosen else None, [] if chosen else paired
        if chosen is None:
            by = None
        first = next(p for p in documented if p.reasoning == (chosen or paired[0]))
        line = next((e for e in first.evidence if "--reasoning-parser" in e.text), first.evidence[0])
        docs = {"file": line.file, "line": line.line}
        if code_choice and code_choice != chosen:
            others = [o for o in others if o != code_choice]
    elif reasoning:
        first = next((p for p in documented if p.reasoning == reasoning), None)
        if first:
            docs = {"file": first.evidence[0].file, "line": first.evidence[0].line}
    agrees = reasoning is None or reasoning in ending
    template = docpairs.documented_template(db, card.version, card.name)
    return ServeLine(
        card.version,
        card.name,
        command(card.name, reasoning, template),
        reasoning,
        by,
        others,
        template,
        [t["file"] for t in card.chat_templates if t["file"] != template],
        token if agrees else None,
        place if agrees else None,
        ending if agrees else [],
        docs,
        documented=documented,
    )


def _reasoning_line(db, card) -> ServeLine:
    from . import docpairs

    documented = docpairs.for_reasoning(db, card.version, card.name)
    tools = list(dict.fromkeys(p.tool for p in _with_tool_calling(documented) if p.tool))
    tool, by, others = None, None, []
    if tools:
        tool, by, others = (tools[0], "docs", []) if len(tools) == 1 else (None, None, tools)
    else:
        same = [p["name"] for p in card.pairs if p["kind"] == "tool"]
        if same:
            tool, by = same[0], "same name"
        elif card.real.class_:
            shared = [
                r[0]
                for r in db.execute(
                    "select name from parser_map_v where version = ? and kind = 'tool' and real_class = ?"
                    " and real_file is ? order by name",
                    [card.version, card.real.class_, card.real.file],
                )
            ]
            if shared:
                tool, by, others = shared[0], "same real class", shared[1:]
    docs = None
    first = next((p for p in documented if p.tool == (tool or (tools[0] if tools else None))), None)
    if first:
        docs = {"file": first.evidence[0].file, "line": first.evidence[0].line}
    template = docpairs.documented_template(db, card.version, tool) if tool else None
    return ServeLine(
        card.version,
        card.name,
        command(tool, card.name, template),
        card.name,
        None,
        [],
        template,
        [],
        None,
        None,
        [],
        docs,
        kind="reasoning",
        tool=tool,
        tool_by=by,
        tool_others=others,
        documented=documented,
    )
