"""Reading and writing tool calls by the shape of their markup, for the behaviour atlas's cases (issue 44).

`read_calls(text, tokens)` reads the calls a raw model output holds, by the shape answers/markup.py finds in
it (never by parser name): JSON objects with a name and arguments (tagged, in a list, bare), a name written
before a JSON object of arguments (`get_weather<sep>{...}`, `functions.get_weather:0<arg>{...}`, a fenced
block), `<function=NAME>`/`<parameter=KEY>` blocks, `<invoke name="NAME">`/`<parameter name="KEY">` blocks,
`NAME<arg_key>K</arg_key><arg_value>V</arg_value>` pairs, and pythonic calls (`[f(a=1)]`, or calls between
tokens). Values written as text read as JSON when they are numbers, booleans, objects or arrays.

`write(reading, calls, content, tokens)` writes other calls in the shape of a reading (the writer the card's
facts drive: the example is a literal of the name's own test files): each call as the example's call is
written (its keys, separators, parameter markup), fewer calls by leaving the example's last ones out, more by
the example's separator (two calls in it), a list's comma, or the tokens that open and close one call (a
token of the text before the call whose closing token follows it: `<tool_call>`/`</tool_call>`,
`<|tool_call_begin|>`/`<|tool_call_end|>`). Text before the calls only where the markup starts with a token.
What it writes is read back: a text that does not read as the calls written is not given.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass

from ..extract.tokens import TOKEN

_TYPED = re.compile(r"^(-?\d+(\.\d+)?([eE][-+]?\d+)?|true|false|\{.*\}|\[.*\])$", re.S)


@dataclass
class Call:
    start: int  # its span in the text
    end: int
    name: str
    args: dict


@dataclass
class Reading:
    calls: list[tuple[str, dict]]
    before: str  # the text before the call markup
    after: str  # the text after the last call
    shape: str = ""
    text: str = ""
    spans: list[Call] | None = None
    tokens: list[str] | None = None  # the parser's tokens the text holds (set by who read it)


_CDATA = re.compile(r"^<!\[CDATA\[(.*)\]\]>$", re.S)


def _value(text: str):
    """A value of a markup format that writes values as text: JSON when it reads as a number, a boolean, an
    object or an array; else the text (trimmed; an XML CDATA section's content)."""
    t = text.strip()
    m = _CDATA.match(t)
    if m:
        return m.group(1)
    if _TYPED.match(t):
        try:
            return json.loads(t)
        except ValueError:
            pass
    return t


NAME_KEYS = ("name", "tool_name", "function_name")


def _json_calls(text: str) -> list[Call] | None:
    """JSON objects with a name (NAME_KEYS) and arguments (markup's argument keys), other keys ids or types."""
    from .markup import _ARGS_KEYS, _json_objects

    out = []
    for start, end, obj in _json_objects(text, calls_only=False):
        name = next((k for k in NAME_KEYS if isinstance(obj.get(k), str)), None)
        key = next((k for k in _ARGS_KEYS if k in obj), None)
        if name is None or key is None:
            continue
        args = obj[key]
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError:
                return None
        rest = {k: v for k, v in obj.items() if k not in (name, key)}
        if not isinstance(args, dict) or not all(isinstance(v, (str, int)) for v in rest.values()):
            return None
        out.append(Call(start, end, obj[name], args))
    return out


_FUNCTION = re.compile(r"<(?P<p>[^<>\s=]*?)function=(?P<name>[^<>\s]+)>(?P<body>.*?)</(?P=p)function>", re.S)
_FUNCTION_PARAM = re.compile(
    r"<(?P<p>[^<>\s=]*?)parameter=(?P<key>[^<>\s]+)>(?P<value>.*?)</(?P=p)parameter>", re.S
)
_INVOKE = re.compile(
    r"<(?P<p>[^<>\s]*?)(?P<tag>invoke|function) name=\"(?P<name>[^\"]+)\">(?P<body>.*?)</(?P=p)(?P=tag)>",
    re.S,
)
_INVOKE_PARAM = re.compile(
    r"<(?P<p>[^<>\s]*?)(?P<tag>parameter|param) name=\"(?P<key>[^\"]+)\"[^<>]*>(?P<value>.*?)</(?P=p)(?P=tag)>",
    re.S,
)
_ARG_CALL = re.compile(
    r"(?P<name>[A-Za-z_][\w.\-]*)\s*(?:<[^<>\s]*tool_sep>\s*)?"
    r"(?P<body>(?:<arg_key>.*?</arg_key>\s*<arg_value>.*?</arg_value>\s*)+)",
    re.S,
)
_ARG_PAIR = re.compile(r"<arg_key>(?P<key>.*?)</arg_key>\s*<arg_value>(?P<value>.*?)</arg_value>", re.S)
TAGGED = {
    "xml-function": (_FUNCTION, _FUNCTION_PARAM),
    "xml-invoke": (_INVOKE, _INVOKE_PARAM),
    "arg-key": (_ARG_CALL, _ARG_PAIR),
}


def _tagged(pattern, param, text: str) -> list[Call] | None:
    out = []
    for m in pattern.finditer(text):
        body = m.group("body")
        args = {p.group("key"): _value(p.group("value")) for p in param.finditer(body)}
        if param.sub("", body).strip():  # something between the parameters the reader does not know
            return None
        out.append(Call(m.start(), m.end(), m.group("name"), args))
    return out


def _py_calls(source: str, offset: int) -> list[Call] | None:
    """`f(a=1)` calls (keywords only, literal values) of a Python expression or of lines of them."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    nodes = []
    for stmt in tree.body:
        if not isinstance(stmt, ast.Expr):
            return None
        v = stmt.value
        nodes += v.elts if isinstance(v, ast.List) else [v]
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    out = []
    for c in nodes:
        if not isinstance(c, ast.Call) or c.args or not isinstance(c.func, ast.Name):
            return None
        try:
            args = {k.arg: ast.literal_eval(k.value) for k in c.keywords}
        except (ValueError, SyntaxError, TypeError):
            return None
        if None in args:
            return None
        s, e = (
            _offset(source, starts, c.lineno, c.col_offset),
            _offset(source, starts, c.end_lineno, c.end_col_offset),
        )
        out.append(Call(offset + s, offset + e, c.func.id, args))
    return out or None


def _offset(source: str, starts: list[int], line: int, col: int) -> int:
    """The character offset of ast's (line, UTF-8 byte column)."""
    text = source[starts[line - 1] : starts[line] if line < len(starts) else len(source)]
    return starts[line - 1] + len(text.encode()[:col].decode())


def _pythonic(text: str, tokens: list[str]) -> list[Call] | None:
    from .markup import _PYTHONIC

    m = _PYTHONIC.search(text)
    if m:
        lead = len(m.group()) - len(m.group().lstrip())
        return _py_calls(m.group().strip(), m.start() + lead)
    bounds = sorted({(i, i + len(t)) for t in tokens for i in _finds(text, t)})
    if not bounds:
        return None
    for (_, a), (b, _) in zip(bounds, [*bounds[1:], (len(text), len(text))], strict=True):
        piece = text[a:b]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            return _py_calls(piece.strip(), a + lead)
    return None


def _finds(text: str, t: str) -> list[int]:
    out, i = [], text.find(t)
    while i >= 0:
        out.append(i)
        i = text.find(t, i + 1)
    return out


_STOP = {"function", "functions", "json", "call", "tool", "name"}
_JOINS = re.compile(
    r"[\s\[\],;:.`\d]+|\b(?:function|functions|json|call|tool|name)\b"
)  # between calls, or left
_WORD = re.compile(r"[A-Za-z_][\w\-]*")


def _name_token_calls(text: str, tokens: list[str]) -> list[Call] | None:
    """Calls whose name is written before a JSON object of arguments, between tokens (see the module). The
    name is the last word before the object, between the tokens, that is not a generic word (function, json,
    ...) nor a number; the call's span starts at it."""
    from .markup import _json_objects

    if not tokens:
        return None
    out = []
    prev = 0
    for start, end, obj in _json_objects(text, calls_only=False):
        head = text[prev:start]
        if not any(t in head for t in tokens):
            return None
        masked = head
        for t in sorted(tokens, key=len, reverse=True):
            masked = masked.replace(t, "\0" * len(t))
        words = [
            w for w in _WORD.finditer(masked) if w.group().lower() not in _STOP and not w.group().isdigit()
        ]
        if not words:
            return None
        w = words[-1]
        out.append(Call(prev + w.start(), end, w.group(), obj))
        prev = end
    return out or None


def read_calls(text: str, tokens: list[str]) -> Reading | None:
    """The calls a raw output holds, read by the shape of its markup (None: none read, or a shape the reader
    does not read whole). `tokens`: the parser's tag tokens; the call markup starts at the first of them (or at
    the first call when none is before it). The shapes markup.shapes() finds are tried, the first read whole
    wins."""
    from .markup import shapes

    found = shapes(text)
    tries = list(TAGGED)  # markup.shapes knows some of their kinds only (<function name=...> it does not)
    if "pythonic" in found or ("(" in text and not ({"channel", "call-braces"} & set(found))):
        tries.append("pythonic")
    if "json" in found:
        tries += ["json", "name-token"]
    for shape in tries:
        if shape in TAGGED:
            spans = _tagged(*TAGGED[shape], text)
        elif shape == "pythonic":
            spans = _pythonic(text, tokens)
        elif shape == "json":
            spans = _json_calls(text)
        else:
            spans = _name_token_calls(text, tokens)
        r = _whole(text, tokens, shape, spans) if spans else None
        if r is not None:
            return r
    return None


def _whole(text: str, tokens: list[str], shape: str, spans: list[Call]) -> Reading | None:
    """The reading, if the calls are the whole markup: nothing but tokens (and closing brackets, fences) after
    them, no token in the text before the markup starts."""
    first, last = spans[0].start, spans[-1].end
    marks = [text.find(t) for t in tokens if 0 <= text.find(t) < first and not _closes(t)]
    start = _run_start(text, min(marks) if marks else first)
    if shape == "arg-key" and start == first:
        return None  # a name and its argument pairs without the token opening a call: a piece of one
    if any(t in text[:start] for t in tokens):
        return None  # markup before the calls the reader did not read
    rest = text[start:]  # the markup: nothing in it but the calls, tokens and what joins them
    for c in reversed(spans):
        rest = rest[: c.start - start] + rest[c.end - start :]
    for t in sorted(tokens, key=len, reverse=True):
        rest = rest.replace(t, " ")
    rest = TOKEN.sub(" ", rest)
    if _JOINS.sub("", rest):
        return None  # text in or after the markup that is not the calls'
    return Reading([(c.name, c.args) for c in spans], text[:start], text[last:], shape, text, spans)


_LEAD = re.compile(r"(?:\s|\[)+$")


def _run_start(text: str, at: int) -> int:
    """Where the markup ending at `at` starts: back over whitespace, a list's bracket and tokens, up to a token
    closing what a token before it opened (the end of a think block is not the call's)."""
    while True:
        head = text[:at]
        m = _LEAD.search(head)
        if m:
            at = m.start()
            continue
        tok = None
        for t in TOKEN.finditer(head[-80:]):
            if t.end() == len(head[-80:]):
                tok = t.group()
        if tok is None or _closes(tok):
            return at  # a token closing something (the end of a think block) is not the call's
        at -= len(tok)


def _closes(token: str) -> bool:
    """Whether a token closes something: `</x>`, `<|x_end|>`, `<｜end▁of▁x｜>`, `[/X]`."""
    return token.startswith(("</", "[/")) or bool(
        re.search(r"(?i)(^|[^a-z])end([^a-z]|$)", token.strip("<>[]|"))
    )


_SWAPS = (
    ("</", "<"),
    ("end", "begin"),
    ("end", "start"),
    ("END", "BEGIN"),
    ("END", "START"),
    ("End", "Start"),
)


def _opener(closer: str, head: str) -> int | None:
    """Where in `head` the token opening what `closer` closes starts (its last place), or None."""
    for a, b in _SWAPS:
        if a in closer:
            opener = closer.replace(a, b, 1)
            if opener in head:
                return head.rindex(opener)
    return None


def concrete(tokens: list[str], text: str) -> list[str]:
    """The tokens, those written with run-time parts (`<tool_calls{self.suffix}>`) as the text writes them."""
    from .markup import find_pattern

    out = []
    for t in tokens:
        if "{" in t and "}" in t:
            found = find_pattern(t, text)
            if found:
                out.append(found)
        else:
            out.append(t)
    return list(dict.fromkeys(out))


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
    if not json.dumps(args, ensure_ascii=False).isascii() or not r.calls[0][0].isascii():
        return "unicode"
    return "single"


# -- writing ----------------------------------------------------------------------------------------------------


def _text_value(v) -> str:
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def _write_call(shape: str, example: str, name: str, args: dict) -> str | None:
    """One call written as `example` (the text of one call of that shape) writes its own."""
    if shape == "json":
        from .markup import _ARGS_KEYS

        obj = json.loads(example)
        name_key = next(k for k in NAME_KEYS if isinstance(obj.get(k), str))
        key = next(k for k in _ARGS_KEYS if k in obj)
        compact = '": ' not in example
        seps = (",", ":") if compact else (", ", ": ")
        out = {}
        for k, v in obj.items():
            if k == name_key:
                out[k] = name
            elif k == key:
                out[k] = json.dumps(args, ensure_ascii=False, separators=seps) if isinstance(v, str) else args
            else:
                out[k] = v
        return json.dumps(out, ensure_ascii=False, separators=seps)
    if shape == "name-token":
        m = _WORD.match(example)
        brace = example.index("{", m.end())
        compact = '": ' not in example[brace:] and ", " not in example[brace:]
        seps = (",", ":") if compact else (", ", ": ")
        return name + example[m.end() : brace] + json.dumps(args, ensure_ascii=False, separators=seps)
    if shape == "pythonic":
        return f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")"
    pattern, param = TAGGED[shape]
    m = pattern.match(example)
    if m is None:
        return None
    ps = list(param.finditer(example))
    head_end = ps[0].start() if ps else m.start("body")
    head = example[: m.start("name")] + name + example[m.end("name") : head_end]
    foot = example[ps[-1].end() :] if ps else example[m.start("body") :]
    if not args:
        return head + (foot if not ps else foot.lstrip())
    if not ps:
        return None  # no parameter to write others after
    # a parameter written as the example writes one of the same kind (text, or a JSON value): where its tag
    # carries attributes besides the key (string="true"), they may say which, and are not the writer's to set
    by_kind: dict[bool, re.Match] = {}
    for p in ps:
        by_kind.setdefault(isinstance(_value(p.group("value")), str), p)
    attrs = ps[0].group()[: ps[0].start("value") - ps[0].start()].count("=") > 1
    join = example[ps[0].end() : ps[1].start()] if len(ps) > 1 else head[len(head.rstrip()) :]
    written = []
    for k, v in args.items():
        p = by_kind.get(isinstance(v, str)) or (None if attrs else ps[0])
        if p is None:
            return None
        ex = p.group()
        ks, ke = p.start("key") - p.start(), p.end("key") - p.start()
        vs, ve = p.start("value") - p.start(), p.end("value") - p.start()
        value = p.group("value")
        lead, trail = value[: len(value) - len(value.lstrip())], value[len(value.rstrip()) :]
        written.append(ex[:ks] + k + ex[ke:vs] + lead + _text_value(v) + trail + ex[ve:])
    return head + join.join(written) + foot


def write(
    r: Reading, calls: list[tuple[str, dict]], content: str | None, tokens: list[str]
) -> tuple[str | None, str]:
    """(the text, "") of `calls` (and `content` before them) written in the shape of the reading `r`, or (None,
    why not)."""
    spans = r.spans or []
    text = r.text
    if not spans or not calls:
        return None, "nothing to write"
    head = text[len(r.before) : spans[0].start]
    tail = text[spans[-1].end :]
    seps = [text[a.end : b.start] for a, b in zip(spans, spans[1:], strict=False)]
    if len(calls) > len(spans):
        if seps:
            sep = seps[-1]
        elif head.rstrip().endswith("[") and tail.lstrip().startswith("]"):
            sep = ", "
        else:
            closer = next((t for t in sorted(tokens, key=lambda t: tail.find(t)) if 0 <= tail.find(t)), None)
            at = _opener(closer, head) if closer else None
            if at is None:
                return None, f"its example ({r.shape}) has one call, and no token pair or list that joins two"
            sep = tail[: tail.index(closer) + len(closer)] + head[at:]
        seps = [*seps, *[sep] * (len(calls) - len(spans))]
    pieces = [head]
    for i, (name, args) in enumerate(calls):
        ex = spans[min(i, len(spans) - 1)]
        w = _write_call(r.shape, text[ex.start : ex.end], name, args)
        if w is None:
            return None, f"its example ({r.shape}) writes no parameter of that kind to write one after"
        if i:
            pieces.append(seps[i - 1])
        pieces.append(w)
    pieces.append(tail)
    out = "".join(pieces)
    if content:
        if not any(head.lstrip().startswith(t) for t in tokens):
            return None, "its call markup starts with no token: text before it is not told from it"
        out = content + out
    back = read_calls(out, tokens)
    if back is None or not _same_calls(back.calls, calls) or back.before.strip() != (content or ""):
        return None, f"what it writes in the shape of its example ({r.shape}) does not read back as the calls"
    return out, ""


def _same_calls(a, b) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
