"""The `vllm serve` line of a tool parser at a version: `vllm serve MODEL --enable-auto-tool-choice
--tool-call-parser NAME [--reasoning-parser R] [--chat-template T]`.

R is the reasoning parser that goes with the tool parser, from what the version shows, the first evidence that
gives one:

1. **same name and real class**: one registered under the same name whose real class is the tool parser's (the
   unified engine's pairs); 2. **same name**; 3. **same real class**: the reasoning parsers whose real class is
   the tool parser's real class;
4. **end token**: the reasoning parsers whose end-of-thinking token (a sentinel of their own code held by a
   token-named attribute with the word end and think, thinking or reasoning, or by end_token / end_token_id, the
   reasoning parser's own properties) the tool parser's code looks for (one of its sentinels): the only one, or
   the ones whose name matches the tool parser's as chat templates are matched (answers/matching.py); several
   without a match pair with none, and are said;
5. **docs**: the version's tool-calling documentation pairs them on one line (`--tool-call-parser NAME
   --reasoning-parser R`, answers/docwords.py).

The other evidences that agree with the one chosen are said too (the end token, the documentation's line). T is
the chat template vLLM ships for the name (examples/, matched exactly by name or file: answers/matching.py).
Several equally good reasoning parsers: the first, and the others said.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .plain import Model


@dataclass
class ServeLine(Model):
    version: str
    name: str
    command: str
    reasoning: str | None = None  # --reasoning-parser
    reasoning_by: str | None = (
        None  # same name and real class | same name | same real class | end token | docs
    )
    reasoning_others: list[str] = field(default_factory=list)  # as good as `reasoning`, not chosen
    chat_template: str | None = None  # --chat-template
    templates_not_exact: list[str] = field(default_factory=list)  # matched only by family or prefix
    # the end-of-thinking token the tool parser's code looks for, where it does, and the reasoning parsers
    # ending at it (when it paired them, or agrees with the pairing; or, several without a match, pairs none)
    end_token: str | None = None
    end_token_place: dict | None = None  # {file, line}: in the tool parser's code
    end_token_parsers: list[str] = field(default_factory=list)
    docs: dict | None = None  # {file, line}: the documentation's line pairing them (chosen, or agreeing)


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


def _docs_pair(db, card) -> dict[str, dict]:
    """The reasoning parsers the documentation pairs the name with (registered at the version), in its order,
    each with its line."""
    from .docwords import doc_claims

    claims = doc_claims(db, card.version)
    if claims is None:
        return {}
    registered = {
        r[0]
        for r in db.execute(
            "select name from parser_map_v where version = ? and kind = 'reasoning'", [card.version]
        )
    }
    out: dict[str, dict] = {}
    for tool, reasoning, line in claims.pairs:
        if tool == card.name and reasoning in registered and reasoning not in out:
            out[reasoning] = {"file": claims.path, "line": line}
    return out


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
    doc_lines = _docs_pair(db, card)
    if reasoning is None and doc_lines:
        documented = list(doc_lines)
        reasoning, by, others = documented[0], "docs", documented[1:]
    agrees = (
        reasoning is None or reasoning in ending
    )  # the token is said when it paired them, agrees, or none paired
    exact = [t["file"] for t in card.chat_templates if t["level"] == "exact"]
    template = exact[0] if exact else None
    from .command import vllm_serve

    command = vllm_serve(None, card.name, reasoning, template)
    return ServeLine(
        card.version,
        card.name,
        command,
        reasoning,
        by,
        others,
        template,
        [t["file"] for t in card.chat_templates if t["level"] != "exact"],
        token if agrees else None,
        place if agrees else None,
        ending if agrees else [],
        doc_lines.get(reasoning) if reasoning else None,
    )
