"""The behaviour atlas's cases (issue 44): for a parser name at a version, the raw model outputs it is run on,
each with the calls it holds, made from that version's own files, never written per parser.

The cases (CASES) are the same for every name: one call with a few typed arguments (`single`), two calls
(`parallel`), a call without arguments (`no-args`), objects, arrays, escaped quotes and backslashes
(`nested`), non-ASCII text (`unicode`), text then a call (`content-before`), text alone (`content-only`: no
call, the text stays content, finish_reason `stop`), a think block then a call (`reasoning`). What differs
per name and version is how each is written, taken from the first source that gives it:

1. `template`: the name's chat template at the version (examples/tool_chat_template_*.jinja, matched as the
   card matches them), rendered with the case's assistant turn (the calls known, so the expected result is
   known). The replay child renders it (indexer/replay/child/atlas_batch.py); a template that does not render
   the case's calls, content or reasoning cannot express it: the case is `not-applicable`, with why.
2. `test`: the model-output literals of the name's test files at the version (stored in the database's code
   store; read with `ast`, never run): a literal holding the name's tokens whose calls a shape reader reads
   (JSON objects with a name and arguments, `<function=...>`/`<parameter=...>` blocks, `<invoke name=...>`
   blocks, `<arg_key>`/`<arg_value>` pairs, pythonic calls), sorted into the case it shows by what it holds
   (two calls: `parallel`; text before the call: `content-before`; ...). The calls read are the expected
   ones; the tools are typed from their values.
3. `writer`: what needs no format: `content-only` (text alone), and `reasoning` written from facts the card
   has: the think tokens of the reasoning parser of the same name (its sentinels) around a thought, then the
   name's `single` case.

A case no source gives is `not-applicable`, with why. A case's key is the digest of what makes it (the
template's blob or the literal, the case's calls, tools and reasoning parser): the atlas stores cells by it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass, field

from ..extract.tokens import TOKEN
from .atlas_literals import stored
from .atlas_shapes import Reading, classify, concrete, read_calls, write

CASES_FORMAT = 2  # bump when how a case is made changes: every cell is then run again

THOUGHT = "The user wants the weather in Paris, so I will call the weather tool."


@dataclass(frozen=True)
class CaseDef:
    id: str
    description: str
    calls: tuple = ()  # ((name, arguments), ...)
    content: str | None = None
    reasoning: str | None = None


CASES: tuple[CaseDef, ...] = (
    CaseDef(
        "single",
        "one call with a few typed arguments",
        (("get_weather", {"city": "Paris", "days": 3, "metric": True}),),
    ),
    CaseDef(
        "parallel",
        "two calls",
        (
            ("get_weather", {"city": "Paris", "days": 1, "metric": True}),
            ("get_time", {"timezone": "Europe/Paris"}),
        ),
    ),
    CaseDef("no-args", "one call without arguments", (("ping", {}),)),
    CaseDef(
        "nested",
        "objects, arrays, escaped quotes and backslashes",
        (
            (
                "search",
                {
                    "query": 'say "hi" to C:\\temp\\new',
                    "filters": {"tags": ["a", "b"], "range": {"min": 1, "max": 2.5}},
                },
            ),
        ),
    ),
    CaseDef("unicode", "non-ASCII text", (("get_weather", {"city": "Zürich", "note": "東京 ✓ ü"}),)),
    CaseDef(
        "content-before",
        "text then a call",
        (("get_weather", {"city": "Paris", "days": 2, "metric": False}),),
        content="Let me check the weather.",
    ),
    CaseDef(
        "content-only",
        "text and no call: it stays content, finish_reason stop",
        (),
        content="It is sunny in Paris today.",
    ),
    CaseDef(
        "reasoning",
        "a think block then a call",
        (("get_weather", {"city": "Paris", "days": 3, "metric": True}),),
        reasoning=THOUGHT,
    ),
)
CASE_IDS = tuple(c.id for c in CASES)
BY_ID = {c.id: c for c in CASES}
QUESTION = "What is the weather in Paris?"


def _prop(value) -> dict:
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer"}
    if isinstance(value, float):
        return {"type": "number"}
    if isinstance(value, dict):
        return {"type": "object", "properties": {k: _prop(v) for k, v in value.items()}}
    if isinstance(value, list):
        return {"type": "array", "items": _prop(value[0]) if value else {}}
    return {"type": "string"}


def tools_for(calls) -> list[dict]:
    """The request's tools: one function per name called, its parameters typed from the values given."""
    props: dict[str, dict] = {}
    for name, args in calls:
        p = props.setdefault(name, {})
        for k, v in args.items():
            p.setdefault(k, _prop(v))
    return [
        {
            "type": "function",
            "function": {
                "name": n,
                "description": f"the {n} tool",
                "parameters": {"type": "object", "properties": p, "required": sorted(p)},
            },
        }
        for n, p in props.items()
    ]


# every case's functions, offered together to a template (what a request offers the model)
ALL_TOOLS = tools_for([c for d in CASES for c in d.calls])


@dataclass
class Case:
    """One case of a name at a version: where it comes from and what the output must give."""

    case: str
    source: str  # template | test | writer | none
    origin: str | None = None  # the file (and line) it comes from
    text: str | None = None  # the raw output (None: a template, rendered by the run)
    expected: dict | None = None  # {"calls": [{name, arguments}], "content", "reasoning"}
    tools: list = field(default_factory=list)
    reasoning_parser: str | None = None
    why: str | None = None  # not applicable: why
    note: str | None = None  # why it is not its first source's
    template: str | None = None  # a template's source, to render
    template_blob: str | None = None
    messages: list | None = None
    prefix: str = ""  # a think block, written before a rendered output that shows no reasoning
    require: dict = field(default_factory=dict)
    fallback: Case | None = None  # run instead when the template cannot express the case
    key: str = ""

    def job(self, keep: list[str]) -> dict:
        """What the replay child needs of the case (atlas_batch.py)."""
        out = {"case": self.case, "tools": self.tools, "reasoning_parser": self.reasoning_parser}
        if self.template is not None and self.text is None:
            out.update(
                template=self.template,
                messages=self.messages,
                think=self.prefix,
                keep=keep,
                require=self.require,
            )
            if self.fallback is not None:
                out["fallback"] = {"text": self.fallback.text, "tools": self.fallback.tools}
        else:
            out["text"] = self.text
        return out


def _digest(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:32]


def _expected(d: CaseDef) -> dict:
    return {
        "calls": [{"name": n, "arguments": a} for n, a in d.calls],
        "content": d.content,
        "reasoning": d.reasoning,
    }


# -- facts of a version: templates, test files, sentinels ------------------------------------------------------


class Facts:
    """What the cases of one version are made from, read once per version."""

    def __init__(self, db, version: str):
        from .matching import for_version

        self.db, self.version = db, version
        self.matched = for_version(db, version)
        self.blobs = {
            r[0]: r[1]
            for r in db.execute(
                "select file, blob_id from version_files where version = ?"
                " and (file like 'examples/%' or file like 'tests/%' or file like 'docs/%')",
                [version],
            )
        }

    def docs(self) -> list[str]:
        """The tool-calling documentation pages of the version."""
        from ..core.scope import DOCS

        return [p for p in DOCS if p in self.blobs]

    def literals(self, path: str) -> list[tuple[int, str, bool]]:
        """The model-output literals of a test file, the code of a documentation page (stored: atlas_literals)."""
        blob = self.blobs.get(path)
        return stored(self.db, blob, path, lambda: self.text(path)) if blob else []

    def templates(self, kind: str, name: str) -> list[str]:
        m = self.matched.get((kind, name), {})
        return [x.file for x in m.get("chat_templates", [])]

    def tests(self, kind: str, name: str) -> list[str]:
        m = self.matched.get((kind, name), {})
        return [x.file for x in m.get("tests", [])]

    def text(self, path: str) -> str | None:
        blob = self.blobs.get(path)
        return _text(self.db, blob) if blob else None


_TEXTS: dict[tuple[int, str], str | None] = {}


def _text(db, blob: str) -> str | None:
    key = (id(db), blob)
    if key not in _TEXTS:
        from ..store import code

        if len(_TEXTS) > 4096:
            _TEXTS.clear()
        _TEXTS[key] = code.read_text(db, blob)
    return _TEXTS[key]


def think_tokens(sentinels: list[dict]) -> tuple[str, str] | None:
    """The start and end of a think block among a reasoning parser's sentinels, when they say it alone: one
    tag and its closing tag (`<think>`, `</think>`), else the values of the attributes named for a start and
    an end. None when they do not say which: several pairs, or a token written as an expression the index
    does not read (`SpecialTokens.begin_think.value`: the think tokens may be those)."""
    values = list(dict.fromkeys(s["value"] for s in sentinels))
    if any(not v.startswith(("<", "[")) and "." in v for v in values):
        return None
    pairs = [
        (v, "</" + v[1:])
        for v in values
        if v.startswith("<") and not v.startswith("</") and "</" + v[1:] in values
    ]
    if len(pairs) == 1:
        return pairs[0]
    if pairs:
        return None
    start = [s["value"] for s in sentinels if re.search(r"start|begin", s.get("attribute") or "")]
    end = [s["value"] for s in sentinels if re.search(r"end", s.get("attribute") or "")]
    if len(set(start)) == 1 and len(set(end)) == 1 and start[0] != end[0]:
        return start[0], end[0]
    return None


# -- literals of test files, and the calls they hold -----------------------------------------------------------


# -- a name's cases -------------------------------------------------------------------------------------------


def _template_case(d: CaseDef, path: str, source: str, blob: str) -> Case:
    turn: dict = {"role": "assistant", "content": d.content}
    if d.calls:
        turn["tool_calls"] = [
            {"id": f"call_{k}123456789"[-14:], "type": "function", "function": {"name": n, "arguments": a}}
            for k, (n, a) in enumerate(d.calls)
        ]
    if d.reasoning:
        turn["reasoning_content"] = turn["reasoning"] = d.reasoning
    return Case(
        case=d.id,
        source="template",
        origin=path,
        expected=_expected(d),
        tools=ALL_TOOLS,
        template=source,
        template_blob=blob,
        messages=[{"role": "user", "content": QUESTION}, turn],
        require={
            "names": [n for n, _ in d.calls],
            "content": d.content if d.calls else None,
            "reasoning": d.reasoning,
        },
    )


def examples_of(facts: Facts, kind: str, name: str, tokens: list[str]) -> list[tuple[str, Reading]]:
    """(origin, reading) of each literal of the name's test files whose calls the shape reader reads, in the
    files' order; a literal with text before its calls also without it."""
    out = []
    for path in [*facts.tests(kind, name), *(facts.docs() if tokens else ())]:
        for line, value, negative in facts.literals(path):
            if negative:  # a literal its test expects the parser not to read whole
                continue
            where = f"{path}:{line}" if line else path
            for r, how in _read(value, tuple(tokens)):
                out.append((where + how, r))
    return out


@functools.lru_cache(maxsize=1 << 16)
def _read(value: str, tokens: tuple[str, ...]) -> tuple[tuple[Reading, str], ...]:
    """The readings of one literal for a name's tokens (see examples_of), each with how it was cut."""
    toks = concrete(list(tokens), value)
    if tokens and not any(t in value for t in toks):
        return ()
    r = read_calls(value, toks)
    if r is None:
        return ()
    r.tokens = [t for t in toks if t in value]
    out = []
    if not TOKEN.search(r.before):  # text, not markup the reader does not read (a think block)
        out.append((r, ""))
    if r.before.strip():  # its call markup alone: the same calls, no text before
        bare = read_calls(value[len(r.before) :], toks)
        if bare is not None:
            bare.tokens = [t for t in toks if t in bare.text]
            out.append((bare, " (its text before the calls left out)"))
    return tuple(out)


def _example_case(which: str, origin: str, r: Reading) -> Case:
    calls = [{"name": n, "arguments": a} for n, a in r.calls]
    path_line, _, how = origin.partition(" (")
    return Case(
        case=which,
        source="test",
        origin=path_line,
        text=r.text,
        expected={"calls": calls, "content": r.before.strip() or None, "reasoning": None},
        tools=tools_for(r.calls),
        note=how.rstrip(")") or None,
    )


def _written(
    d: CaseDef, examples: list[tuple[str, Reading]], tokens: list[str], at: str | None = None
) -> tuple[Case | None, str]:
    """The case written in the call shape of the name's examples (the one with as many calls first, then the
    others in order); (None, why not) when none writes it. `at`: whose examples they are when not the name's
    at the case's version ("at v0.34.0", "of hermes, its parent class"): their tokens must be tokens of the name
    at the case's version too."""
    why = "no literal of its test files reads as calls"
    order = sorted(examples, key=lambda e: (len(e[1].calls) != len(d.calls), bool(e[1].before.strip())))
    for origin, r in order:
        mine = concrete(tokens, r.text)
        if at and not set(r.tokens or ()) <= set(mine):  # its tokens there are its tokens here
            why = f"the literals of the test files {at} hold tokens its code has not"
            continue
        text, why = write(r, list(d.calls), d.content, mine)
        if text is not None:
            where = f" {at}" if at else ""
            return (
                Case(
                    case=d.id,
                    source="writer",
                    origin=origin.partition(" (")[0] + where,
                    text=text,
                    expected=_expected(d),
                    tools=ALL_TOOLS,
                    note=f"written in the call shape ({r.shape}) of a test file's literal{where}",
                ),
                "",
            )
    return None, why


def template_of(facts: Facts, kind: str, name: str) -> tuple[str, str, str] | None:
    """(path, source, blob) of the name's first chat template at the version whose text is stored."""
    for path in facts.templates(kind, name):
        source = facts.text(path) if facts.blobs.get(path) else None
        if source is not None:
            return path, source, facts.blobs[path]
    return None


def name_cases(
    facts: Facts,
    kind: str,
    name: str,
    tokens: list[str],
    think: tuple[str, str] | None,
    reasoning: str | None,
    examples: list[tuple[str, Reading]] | None = None,
    borrowed: list[tuple[str, list[tuple[str, Reading]]]] | None = None,
    template: tuple[str, str, str] | None = None,
) -> list[Case]:
    """Every case of CASES for a name at the version of `facts` (see the module). `tokens`: the name's tag
    tokens (its sentinels); `think`: the think tokens of the reasoning parser `reasoning` that pairs with it;
    `examples`: `examples_of(...)` when known; `template`: (path, source, blob) of a template to use when the
    name has none of its own (one of another name of the same class); `borrowed`: [(whose, examples)], for
    the writer when the name has no template and no example of its own (its own at the nearest version, those
    of the names of its parent class)."""
    out: dict[str, Case] = {}
    template = template_of(facts, kind, name) or template
    if examples is None:
        examples = examples_of(facts, kind, name, tokens)
    read: dict[str, Case] = {}
    for origin, r in examples:
        which = classify(r)
        if which and which not in read:
            read[which] = _example_case(which, origin, r)
    for d in CASES:
        if d.id == "reasoning":
            continue
        other = read.get(d.id)
        why = ""
        if other is None and d.id == "content-only":
            other = Case(case=d.id, source="writer", text=d.content, expected=_expected(d), tools=ALL_TOOLS)
        elif other is None:
            other, why = _written(d, examples, tokens)
            for whose, found in borrowed or () if not examples and not template else ():
                if other is None:
                    other, why = _written(d, found, tokens, at=whose)
        if template:
            out[d.id] = _template_case(d, *template)
            out[d.id].fallback = other
        elif other is not None:
            out[d.id] = other
        else:
            out[d.id] = Case(
                case=d.id,
                source="none",
                why=f"no chat template of {name} at {facts.version}; no literal of its test files shows "
                f"{BY_ID[d.id].description}, and the writer cannot write it: {why}",
            )
    out["reasoning"] = _reasoning(
        BY_ID["reasoning"], name, facts.version, out["single"], think, reasoning, template
    )
    for c in [*read.values(), *(c.fallback for c in out.values() if c.fallback), *out.values()]:
        c.key = _digest(
            CASES_FORMAT,
            c.case,
            c.source,
            c.origin,
            c.template_blob,
            c.text,
            c.expected,
            c.tools,
            c.reasoning_parser,
            c.prefix,
            c.messages,
            c.why,
            c.fallback.key if c.fallback else None,
        )
    return [out[d.id] for d in CASES]


def _reasoning(d, name, version, single: Case, think, reasoning, template) -> Case:
    if not reasoning or not think:
        return Case(
            case=d.id,
            source="none",
            why=f"no reasoning parser of the name {name} pairs with it at {version}"
            if not reasoning
            else f"the think tokens of the reasoning parser {reasoning} are not one pair the index reads",
        )
    block = f"{think[0]}{d.reasoning}{think[1]}\n\n"
    if template is not None:  # the template's think markup if it renders reasoning, else the parser's
        c = _template_case(d, *template)
        c.prefix = block
    elif single.source == "none":
        return Case(case=d.id, source="none", why=f"no `single` case of {name} at {version} to think before")
    else:
        c = Case(
            case=d.id,
            source="writer",
            origin=single.origin,
            text=block + single.text,
            expected={**single.expected, "reasoning": d.reasoning},
            tools=single.tools,
        )
    c.expected = {**(c.expected or {}), "reasoning": d.reasoning}
    c.reasoning_parser = reasoning
    return c
