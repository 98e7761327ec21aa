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

import ast
import functools
import hashlib
import json
import re
from dataclasses import dataclass, field

CASES_FORMAT = 1  # bump when how a case is made changes: every cell is then run again

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
                out["fallback"] = {"text": self.fallback.text}
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
                " and (file like 'examples/%' or file like 'tests/%')",
                [version],
            )
        }

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
    """The start and end of a think block among a reasoning parser's sentinels: a tag and its closing tag
    (`<think>`, `</think>`), else the values of attributes named for a start and an end."""
    values = [s["value"] for s in sentinels]
    for v in values:
        if v.startswith("<") and not v.startswith("</") and ("</" + v[1:]) in values:
            return v, "</" + v[1:]
    start = next((s["value"] for s in sentinels if re.search(r"start|begin", s.get("attribute") or "")), None)
    end = next((s["value"] for s in sentinels if re.search(r"end", s.get("attribute") or "")), None)
    return (start, end) if start and end and start != end else None


# -- literals of test files, and the calls they hold -----------------------------------------------------------


@functools.lru_cache(maxsize=2048)
def literals(source: str) -> tuple[tuple[int, str], ...]:
    """The string literals of a Python file, (line, value), in file order (adjacent literals joined, as Python
    joins them; f-strings left out). Read with ast: never run."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return ()
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) >= 8:
            out.append((node.lineno, node.value))
    return tuple(sorted(set(out)))


@dataclass
class Reading:
    calls: list[tuple[str, dict]]
    before: str  # the text before the call markup
    after: str  # the text after it


_TYPED = re.compile(r"^(-?\d+(\.\d+)?([eE][-+]?\d+)?|true|false|\{.*\}|\[.*\])$", re.S)


def _value(text: str):
    """A value of a markup format that writes values as text: JSON when it reads as a number, a boolean, an
    object or an array; else the text (trimmed)."""
    t = text.strip()
    if _TYPED.match(t):
        try:
            return json.loads(t)
        except ValueError:
            pass
    return t


def _json_calls(text: str) -> list[tuple[int, int, str, dict]] | None:
    from .markup import _ARGS_KEYS, _json_objects

    out = []
    for start, end, obj in _json_objects(text, calls_only=True):
        key = next(k for k in _ARGS_KEYS if k in obj)
        args = obj[key]
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError:
                return None
        if not isinstance(args, dict) or set(obj) - {"name", key, "type", "id"}:
            return None
        out.append((start, end, obj["name"], args))
    return out


_FUNCTION = re.compile(r"<(?P<p>[^<>\s=]*?)function=(?P<name>[^<>\s]+)>(?P<body>.*?)</(?P=p)function>", re.S)
_FUNCTION_PARAM = re.compile(
    r"<(?P<p>[^<>\s=]*?)parameter=(?P<key>[^<>\s]+)>(?P<value>.*?)</(?P=p)parameter>", re.S
)
_INVOKE = re.compile(r"<(?P<p>[^<>\s]*?)invoke name=\"(?P<name>[^\"]+)\">(?P<body>.*?)</(?P=p)invoke>", re.S)
_INVOKE_PARAM = re.compile(
    r"<(?P<p>[^<>\s]*?)parameter name=\"(?P<key>[^\"]+)\"[^<>]*>(?P<value>.*?)</(?P=p)parameter>", re.S
)
_ARG_CALL = re.compile(
    r"(?P<name>[A-Za-z_][\w.\-]*)\s*(?:<[^<>\s]*tool_sep>\s*)?(?P<body>(?:<arg_key>.*?</arg_key>\s*<arg_value>.*?</arg_value>\s*)+)",
    re.S,
)
_ARG_PAIR = re.compile(r"<arg_key>(?P<key>.*?)</arg_key>\s*<arg_value>(?P<value>.*?)</arg_value>", re.S)


def _tagged(pattern, param, text: str) -> list[tuple[int, int, str, dict]] | None:
    out = []
    for m in pattern.finditer(text):
        body = m.group("body")
        args = {p.group("key"): _value(p.group("value")) for p in param.finditer(body)}
        rest = param.sub("", body).strip()
        if rest:  # something between the parameters the reader does not know
            return None
        out.append((m.start(), m.end(), m.group("name"), args))
    return out


def _pythonic(text: str) -> list[tuple[int, int, str, dict]] | None:
    from .markup import _PYTHONIC

    m = _PYTHONIC.search(text)
    if not m:
        return None
    try:
        node = ast.parse(m.group().strip(), mode="eval").body
        calls = []
        for c in node.elts:
            if not isinstance(c, ast.Call) or c.args or not isinstance(c.func, ast.Name):
                return None
            calls.append((c.func.id, {k.arg: ast.literal_eval(k.value) for k in c.keywords}))
    except (SyntaxError, ValueError, AttributeError):
        return None
    return [(m.start(), m.end(), n, a) for n, a in calls]


def read_calls(text: str, tokens: list[str]) -> Reading | None:
    """The calls a raw output holds, read by the shape of its markup (None: none read, or a shape the reader
    does not read whole). `tokens`: the parser's tag tokens; the call markup starts at the first of them (or at
    the first call when none is before it)."""
    from .markup import shapes

    found = shapes(text)
    spans = None
    if "xml-function" in found:
        spans = _tagged(_FUNCTION, _FUNCTION_PARAM, text)
    elif "xml-invoke" in found:
        spans = _tagged(_INVOKE, _INVOKE_PARAM, text)
    elif "arg-key" in found:
        spans = _tagged(_ARG_CALL, _ARG_PAIR, text)
    elif "pythonic" in found:
        spans = _pythonic(text)
    elif "json" in found and "args-only" not in found:
        spans = _json_calls(text)
    if not spans:
        return None
    first, last = spans[0][0], spans[-1][1]
    marks = [text.find(t) for t in tokens if 0 <= text.find(t) < first]
    start = min(marks) if marks else first
    if start == first and text[:first].rstrip().endswith("["):  # a JSON list of calls
        start = text[:first].rstrip().rindex("[")
    after = text[last:]
    for t in sorted(tokens, key=len, reverse=True):
        after = after.replace(t, "")
    if after.strip(" \n]}") or any(t in text[:start] for t in tokens):
        return None  # text after the calls, or markup before them the reader did not read
    return Reading([(n, a) for _, _, n, a in spans], text[:start], text[last:])


def classify(r: Reading) -> str | None:
    """The case a reading shows (None: none)."""
    if not r.calls:
        return None
    if r.before.strip():
        return "content-before"
    if len(r.calls) >= 2:
        return "parallel"
    args = r.calls[0][1]
    if not args:
        return "no-args"
    if any(
        isinstance(v, (dict, list)) or (isinstance(v, str) and ('"' in v or "\\" in v)) for v in args.values()
    ):
        return "nested"
    if not json.dumps(args).isascii() or not r.calls[0][0].isascii():
        return "unicode"
    return "single"


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


def name_cases(
    facts: Facts,
    kind: str,
    name: str,
    tokens: list[str],
    think: tuple[str, str] | None,
    reasoning: str | None,
) -> list[Case]:
    """Every case of CASES for a name at the version of `facts` (see the module). `tokens`: the name's tag
    tokens (its sentinels); `think`: the think tokens of the reasoning parser `reasoning` that pairs with it."""
    out: dict[str, Case] = {}
    templates = [p for p in facts.templates(kind, name) if facts.blobs.get(p)]
    template = None
    for path in templates:
        source = facts.text(path)
        if source is not None:
            template = (path, source, facts.blobs[path])
            break
    read: dict[str, Case] = {}
    for path in facts.tests(kind, name):
        src = facts.text(path)
        if src is None:
            continue
        for line, value in literals(src):
            if tokens and not any(t in value for t in tokens):
                continue
            r = read_calls(value, tokens)
            which = classify(r) if r else None
            if which and which not in read:
                calls = [{"name": n, "arguments": a} for n, a in r.calls]
                read[which] = Case(
                    case=which,
                    source="test",
                    origin=f"{path}:{line}",
                    text=value,
                    expected={"calls": calls, "content": r.before.strip() or None, "reasoning": None},
                    tools=tools_for(r.calls),
                )
    for d in CASES:
        if d.id == "reasoning":
            continue
        if template:
            out[d.id] = _template_case(d, *template)
            out[d.id].fallback = read.get(d.id)
        elif d.id in read:
            out[d.id] = read[d.id]
        elif d.id == "content-only":
            out[d.id] = Case(
                case=d.id, source="writer", text=d.content, expected=_expected(d), tools=ALL_TOOLS
            )
        else:
            out[d.id] = Case(
                case=d.id,
                source="none",
                why=f"no chat template of {name} at {facts.version}, and no literal of its test files shows "
                f"{BY_ID[d.id].description}",
            )
    out["reasoning"] = _reasoning(
        BY_ID["reasoning"], name, facts.version, out["single"], think, reasoning, template
    )
    for c in [*read.values(), *out.values()]:
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
            else f"the reasoning parser {reasoning} has no think tokens the index read",
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
