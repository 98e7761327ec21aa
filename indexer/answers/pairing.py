"""The pair behind the serve line of `fit` (answers/fit.py), from what vLLM says and does, in this order:

1. **the version's documentation** (answers/docpairs.py): for a model named (`fit --model`, or a
   tokenizer_config.json's `name_or_path`), the tool and reasoning parsers its family is documented with
   (+DOCS_MODEL each); and, for the tool parser chosen, the reasoning parsers the documentation pairs it with for
   any family (+DOCS_PAIR), those the reasoning table marks as without tool calling aside;
2. **the model's own template**: the think markup it renders (the reasoning parsers' sentinels found in its turn:
   answers/fit.py's scoring), whether its generation prompt opens a think block (said);
3. **the code's evidence**: the scoring of answers/fit.py, and the pairing the code shows for the tool parser
   (answers/serveline.py `code_pairing`: same name and real class, same name, same real class, end token;
   +CODE_PAIR);
4. **the proof** (answers/proof.py): the candidates at the best rank, then the next, replayed as pairs on the
   model's outputs by the version's own code, at most MAX_PAIRS pairs; a pair that passes +PROOF to both, one that
   fails -PROOF_FAILED (it does not work as written). The pair recommended is the best-ranked that passes; one
   that fails is never recommended while another passes, and the answer says what failed.

A reasoning parser is paired only when the input shows think markup (one of them has a sentinel found in it) or
the documentation names the model's family with one. Equal scores share a rank; candidates at the chosen one's
rank that no evidence separates are reported as a tie (`Pair.tie`), the serve line naming the first in the
order listed (by name).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .plain import Model

DOCS_MODEL = 8  # the documentation names the model's family with it
DOCS_PAIR = 5  # the documentation pairs it with the tool parser chosen (for a family)
CODE_PAIR = 2  # the code pairs it with the tool parser chosen
PROOF = 4  # replayed as a pair on the model's outputs: passed
PROOF_FAILED = -10  # ... failed: it does not work as written
MAX_PAIRS = 6  # pairs replayed at most


@dataclass
class Decided(Model):
    """A piece of evidence that decided a parser of the pair: `kind` docs, code, proof, or the code's evidence of
    the scoring (sentinel, regex, shape, template, name ...), with its document or code line."""

    parser: str  # the parser it is evidence for
    kind: str
    stance: str  # for | against | note
    weight: int
    text: str
    file: str | None = None
    line: int | None = None


@dataclass
class Pair(Model):
    """The recommended tool and reasoning parser, and the evidence that decided each (docs, template, code,
    proof), each with its document line or code line. `tie`: per kind, the candidates at the chosen one's rank
    that no evidence separates (the serve line names the first); empty when the evidence decided."""

    tool: str | None
    reasoning: str | None
    evidence: list[Decided]  # docs, code, proof first, then each one's strongest evidence
    tie: dict[str, list[str]] = field(default_factory=dict)
    chat_template: str | None = None  # the --chat-template of the line: the user's template, or the docs'


def rerank(cands: list) -> list:
    """Ranked by score (equal scores share a rank: 1, 1, 3), the order before kept among equals."""
    out = sorted(cands, key=lambda c: -c.score)
    last, place = None, 0
    for i, c in enumerate(out, 1):
        if c.score != last:
            place, last = i, c.score
        c.rank = place
    return out


def add(c, evidence) -> None:
    from .fit_model import Evidence

    assert isinstance(evidence, Evidence)
    c.evidence.insert(0, evidence) if evidence.stance == "for" else c.evidence.append(evidence)
    c.score += evidence.weight


def _lines(doc_lines) -> str:
    return ", ".join(f"{e.file}:{e.line}" for e in doc_lines[:3])


def docs_for_model(cands: list, names: list[str], documented, kind: str) -> None:
    """+DOCS_MODEL to each candidate the documentation names for the model's family."""
    from .fit_model import Evidence

    for c in cands:
        if c.name in names:
            first = documented.evidence[0] if documented.evidence else None
            add(
                c,
                Evidence(
                    "docs",
                    "for",
                    DOCS_MODEL,
                    f"the documentation gives {'--tool-call-parser' if kind == 'tool' else '--reasoning-parser'}"
                    f" {c.name} for {documented.family} ({_lines(documented.evidence)})",
                    file=first.file if first else None,
                    line=first.line if first else None,
                ),
            )


def docs_for_tool(cands: list, pairs: list, tool: str) -> None:
    """+DOCS_PAIR to each reasoning candidate the documentation pairs with the tool parser (for some family)."""
    from .docpairs import with_tool_calling
    from .fit_model import Evidence

    by: dict[str, list] = {}
    for p in pairs:
        if p.reasoning and with_tool_calling(p):
            by.setdefault(p.reasoning, []).append(p)
    for c in cands:
        for p in by.get(c.name, [])[:1]:
            add(
                c,
                Evidence(
                    "docs",
                    "for",
                    DOCS_PAIR,
                    f"the documentation pairs it with --tool-call-parser {tool} for {p.family}"
                    f" ({_lines(p.evidence)})",
                    file=p.evidence[0].file,
                    line=p.evidence[0].line,
                ),
            )


def code_for_tool(db, cands: list, tool_card) -> None:
    """+CODE_PAIR to the reasoning candidate the code pairs with the tool parser (answers/serveline.py)."""
    from .fit_model import Evidence
    from .serveline import code_pairing

    name, by, others, (token, place, _) = code_pairing(db, tool_card)
    for c in cands:
        if c.name == name or c.name in others:
            where = (
                f"; its code looks for {token} ({place['file']}:{place['line']})" if by == "end token" else ""
            )
            add(
                c,
                Evidence(
                    "code",
                    "for",
                    CODE_PAIR,
                    f"the code pairs it with {tool_card.name}: {by}{where}",
                    file=place["file"] if by == "end token" else tool_card.real.file,
                    line=place["line"] if by == "end token" else None,
                ),
            )


def prove(replay, version: str, tools: list, reasoning: list | None, outputs: list) -> list:
    """Replay pairs in rank order (the best rank of each kind first, then the next) until one passes after every
    pair of the best ranks is tried, at most MAX_PAIRS. `reasoning` None: no reasoning parser."""
    from .proof import run_pair

    order = []
    for t in tools:
        for r in reasoning or [None]:
            order.append((t, r))
    order.sort(key=lambda tr: (tr[0].rank + (tr[1].rank if tr[1] else 0), tr[0].rank))
    best = order[0][0].rank + (order[0][1].rank if order[0][1] else 0) if order else 0
    runs = []
    for t, r in order[:MAX_PAIRS]:
        level = t.rank + (r.rank if r else 0)
        if level > best and any(run.ok for run in runs):
            break
        runs.append(run_pair(replay, version, t.name, r.name if r else None, outputs))
    return runs


def weigh(runs: list, tools: list, reasoning: list) -> None:
    """The proof as evidence of each candidate replayed (its best run)."""
    from .fit_model import Evidence

    for kind, cands in (("tool", tools), ("reasoning", reasoning)):
        for c in cands:
            mine = [r for r in runs if (r.tool if kind == "tool" else r.reasoning) == c.name]
            if not mine:
                continue
            passed = next((r for r in mine if r.ok), None)
            other = (
                (lambda r: f"with --reasoning-parser {r.reasoning}" if r.reasoning else "alone")
                if kind == "tool"
                else (lambda r: f"with --tool-call-parser {r.tool}")
            )
            if passed:
                add(
                    c,
                    Evidence(
                        "proof",
                        "for",
                        PROOF,
                        f"replayed {other(passed)} on the model's outputs by vLLM's own code: the call comes back"
                        " intact, finish_reason tool_calls, the reasoning separated",
                    ),
                )
            elif all(r.status != "ok" for r in mine):
                add(c, Evidence("proof", "note", 0, f"the replay {other(mine[0])} {mine[0].failure()}"))
            else:
                failed = next(r for r in mine if r.status == "ok")
                add(
                    c,
                    Evidence(
                        "proof",
                        "against",
                        PROOF_FAILED,
                        f"replayed {other(failed)} by vLLM's own code, it fails {failed.failure()}",
                    ),
                )


def tie_of(cands: list, chosen) -> list[str]:
    """The candidates at the chosen one's rank (a tie no evidence broke), the chosen first."""
    if chosen is None:
        return []
    same = [c.name for c in cands if c.rank == chosen.rank and c.score == chosen.score]
    return [chosen.name] + [n for n in same if n != chosen.name] if len(same) > 1 else []


def decisive(c, most: int = 3) -> list[Decided]:
    """The evidence that decided a candidate: docs, code pairing and proof first, then its strongest."""
    lead = [e for e in c.evidence if e.kind in ("docs", "code", "proof", "name")]
    rest = sorted((e for e in c.evidence if e.stance == "for" and e not in lead), key=lambda e: -e.weight)
    return [
        Decided(c.name, e.kind, e.stance, e.weight, e.text, e.file, e.line)
        for e in lead + rest[: max(0, most - len(lead))]
    ]
