"""Tool-call markup in text: what a chat template renders for a tool call, the token strings in it, their
look-alikes, and the shape of the call (used by `fit` and by the card's chat templates).

- `render(template)`: what a chat template renders around one tool call (extract/templates.py: the build
  stores it for every template blob; a given template is rendered here).
- `tokens(text)`: the token strings in a text, by the rule sentinels are found with (extract/sentinels.py).
- `look_alike(value, text)`: where a text has a string that reads like `value` but is made of other code
  points (full-width vs ASCII pipes, U+2581 vs space or `_`, other confusables), and which ones.
- `shapes(text)`: the shape of the call markup: JSON objects with a name and arguments (inside tokens,
  bare, in a list, in a fenced block, after a name and a separator token), XML-like `<function=...>` /
  `<parameter=...>`, `<invoke name=...>` / `<parameter name=...>`, `<arg_key>` / `<arg_value>`, pythonic calls
  `[f(a=1)]`, `call:f{...}` blocks, channels addressed `to=f`.
- `char_diff(a, b)`: a character-level diff of two texts, as pieces.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass

from ..extract.templates import (  # noqa: F401
    ARG,
    THOUGHT,
    TOOL_NAME,
    VALUE,
    WITH_CALL,
    WITH_REASONING,
    Rendered,
    from_row,
    render,
    render_bounded,
    render_call,
)
from ..extract.tokens import TOKEN, is_token


def shipped(db, version: str, path: str) -> tuple[str | None, Rendered | None]:
    """(blob id, the call markup it renders) of a chat template of a version: what the build stored, else (a
    database built before renderings were stored) rendered now from its stored text; (None, None) when the
    path is not in the version, (blob id, None) when neither is stored."""
    row = db.execute(
        "select blob_id from version_files where version = ? and file = ?", [version, path]
    ).fetchone()
    if row is None:
        return None, None
    blob_id = row[0]
    if db.execute("select 1 from sqlite_master where name = 'template_renders'").fetchone():
        got = db.execute(
            "select call, reply, error, notes from template_renders where blob_id = ?", [blob_id]
        ).fetchone()
        if got is not None:
            keys = ("call", "reply", "error", "notes")
            return blob_id, from_row(dict(zip(keys, got, strict=True)))
    from ..store import code

    text = code.read_text(db, blob_id)
    return blob_id, (render_bounded(text) if text is not None else None)  # a repository's: it may loop


# -- tokens and look-alikes --------------------------------------------------------------------------------


def tokens(text: str) -> list[str]:
    """The token strings of a text, in order, each once (`<tool_call>`, `<|im_end|>`, `[TOOL_CALLS]`,
    `<function=`), by the rule of extract/sentinels.py."""
    return list(dict.fromkeys(t for t in TOKEN.findall(text) if is_token(t)))


# confusables that compatibility normalization (NFKC) leaves alone, folded to what they look like
_CONFUSABLE = {
    "\u2581": "_",
    " ": "_",  # SentencePiece's space marker, a space and an underscore: one word break
    "\u2502": "|",
    "\u01c0": "|",
    "\u2223": "|",
    "\u05c0": "|",
    "\u23d0": "|",
    "\u2758": "|",
    "\uffe8": "|",
    "\u2039": "<",
    "\u203a": ">",
    "\u3008": "<",
    "\u3009": ">",
    "\u27e8": "<",
    "\u27e9": ">",
    "\u2329": "<",
    "\u232a": ">",
    "\u02c2": "<",
    "\u02c3": ">",
    "\u2010": "-",
    "\u2011": "-",
    "\u2012": "-",
    "\u2013": "-",
    "\u2212": "-",
    "\u00a0": "_",
    "\u3000": "_",
    "\u2007": "_",
    "\u202f": "_",
}


@functools.lru_cache(maxsize=1 << 14)
def _fold(c: str) -> str:
    if c in _CONFUSABLE:
        return _CONFUSABLE[c]
    import unicodedata  # here, as difflib below: fit's look-alikes need them, card's call shapes do not

    n = unicodedata.normalize("NFKC", c)
    n = _CONFUSABLE.get(n, n)
    return n if len(n) == 1 else c


def skeleton(text: str) -> str:
    """The text with each character folded to what it looks like (one character for one, so positions
    stay): full-width forms to ASCII, U+2581, spaces and `_` to `_`, other confusable pipes, angle brackets
    and dashes to ASCII (case is not folded: it shows)."""
    if text.isascii():
        return text.replace(" ", "_")
    return "".join(map(_fold, text))


def name(c: str) -> str:
    import unicodedata

    return f"U+{ord(c):04X} {unicodedata.name(c, '?')}"


@dataclass
class LookAlike:
    value: str  # what the parser looks for
    found: str  # what the text has instead
    differences: list[tuple[str, str]]  # (the parser's character, the text's), named

    def describe(self) -> str:
        return "; ".join(f"{ours} where the parser has {theirs}" for theirs, ours in self.differences)


def look_alike(value: str, text: str, folded: str | None = None) -> LookAlike | None:
    """A string of the text that reads like `value` but is not it (None when the text has `value` itself, or
    nothing like it)."""
    if not value.strip() or value in text:
        return None
    folded = skeleton(text) if folded is None else folded
    i = folded.find(skeleton(value))
    if i < 0:
        return None
    found = text[i : i + len(value)]
    diffs = list(dict.fromkeys((name(a), name(b)) for a, b in zip(value, found, strict=True) if a != b))
    return LookAlike(value, found, diffs) if diffs else None


def find_pattern(value: str, text: str) -> str | None:
    """A sentinel written as an f-string with run-time parts (`<tool_calls{self.suffix}>`): the first string
    of the text it matches, each part standing for a few characters that are not markup."""
    pieces = re.split(r"(\{[^{}]*\})", value)
    rx = "".join(
        r"[^<>\s|]{0,24}?" if p.startswith("{") and p.endswith("}") else re.escape(p) for p in pieces
    )
    m = re.search(rx, text)
    return m.group() if m else None


# -- shapes ------------------------------------------------------------------------------------------------

PRIMARY = ("json", "xml-function", "xml-invoke", "arg-key", "pythonic", "call-braces", "channel")
DESCRIBE = {
    "json": "JSON objects with a name and arguments",
    "xml-function": "XML-like <function=NAME> / <parameter=KEY> blocks",
    "xml-invoke": 'XML-like <invoke name="NAME"> / <parameter name="KEY"> blocks',
    "arg-key": "<arg_key> / <arg_value> pairs after the function name",
    "pythonic": "pythonic calls [f(a=1)]",
    "call-braces": "call:NAME{key:value} blocks",
    "channel": "a message addressed to=NAME on a channel",
    "tagged": "inside tokens",
    "bare": "without tokens around them",
    "list": "in a JSON list",
    "fenced": "in a ```json block",
    "name-token": "after the function name and a separator token",
    "args-only": "the function name outside the JSON",
}

_XML_FUNCTION = re.compile(r"<(?:[^<>\s=]*[:|\uff5c])?function=")
_XML_PARAM = re.compile(r"<(?:[^<>\s=]*[:|\uff5c])?parameter=")
_XML_INVOKE = re.compile(r"<[^<>\s]*invoke[\s\u2581]+name\s*=")
_ARG_KEY = re.compile(r"<[^<>\s]*arg_key>")
_PYTHONIC = re.compile(
    r"\[\s*[A-Za-z_][\w.]*\((?:\s*[A-Za-z_]\w*\s*=[^\n]*?)?\)\s*"
    r"(?:,\s*[A-Za-z_][\w.]*\((?:\s*[A-Za-z_]\w*\s*=[^\n]*?)?\)\s*)*\]",
    re.S,
)
_CALL_BRACES = re.compile(r"(?:^|[\s>:])call:[A-Za-z_][\w.\-]*\{")
_CHANNEL = re.compile(r"\bto=(?:functions\.)?[A-Za-z_][\w.\-]*")
_NAME_TOKEN = re.compile(
    r"[A-Za-z_][\w.:\-]*\s*(?:<[^<>\s]+>|\[[A-Z_]+\])\s*$"
)  # f<sep> right before the arguments
_ARGS_KEYS = ("arguments", "parameters", "args", "input", "params")
# _NAME_TOKEN is searched in this many characters before the first JSON object (searched in all of them, each
# start of a word was tried to the end of the text: 'a' * 4000 before the JSON took 12.8 s per fit)
NAME_TOKEN_TAIL = 256


def _json_objects(text: str, calls_only: bool) -> list[tuple[int, int, dict]]:
    """(start, end, object) of each JSON object of the text (with calls_only, those with a string name and an
    argument key)."""
    out, dec, i = [], json.JSONDecoder(), 0
    while True:
        i = text.find("{", i)
        if i < 0:
            return out
        try:
            obj, end = dec.raw_decode(text, i)
        except ValueError:
            i += 1
            continue
        except RecursionError:  # nested deeper than Python's parser goes: so is every "{" inside it
            return out
        call = (
            isinstance(obj, dict)
            and isinstance(obj.get("name"), str)
            and any(
                k in obj and not (isinstance(obj[k], dict) and "properties" in obj[k]) for k in _ARGS_KEYS
            )
        )
        if isinstance(obj, dict) and (call or not calls_only):
            out.append((i, end, obj))
            i = end
        else:
            i += 1


def shapes(text: str) -> list[str]:
    """The shapes of the call markup in a text: the PRIMARY ones first, then qualifiers of the JSON one (see
    DESCRIBE), and for JSON calls the argument key (`args:parameters`)."""
    found: list[str] = []
    if _XML_FUNCTION.search(text) or _XML_PARAM.search(text):
        found.append("xml-function")
    if _XML_INVOKE.search(text):
        found.append("xml-invoke")
    if _ARG_KEY.search(text):
        found.append("arg-key")
    if _PYTHONIC.search(text):
        found.append("pythonic")
    if _CALL_BRACES.search(text):
        found.append("call-braces")
    if _CHANNEL.search(text) and TOKEN.search(text):
        found.append("channel")
    calls = _json_objects(text, calls_only=True)
    objects = calls or ([] if found else _json_objects(text, calls_only=False))
    if not objects:
        return found
    found.insert(0, "json")
    start, _, obj = objects[0]
    before = text[:start].rstrip()
    if before.endswith("["):
        before = before[:-1].rstrip()
        found.append("list")
    if before.endswith("```json") or before.endswith("```"):
        found.append("fenced")
    elif _NAME_TOKEN.search(before[-NAME_TOKEN_TAIL:]):  # anchored at the end: its tail holds any match
        found.append("name-token")
    elif before and TOKEN.search(before[-48:]) and before.endswith((">", "]")):
        found.append("tagged")
    elif not before:
        found.append("bare")
    if calls:
        found.append(f"args:{next(k for k in _ARGS_KEYS if k in obj)}")
    else:
        found.append("args-only")
    return found


def describe(shape_list: list[str]) -> str:
    primary = [s for s in shape_list if s in PRIMARY]
    quals = [s for s in shape_list if s not in PRIMARY]
    if not primary:
        return "no call markup recognised"
    words = [DESCRIBE[s] if s != "json" or "args-only" not in quals else "JSON arguments" for s in primary]
    extra = [DESCRIBE.get(q, f'with "{q[5:]}"' if q.startswith("args:") else q) for q in quals]
    return ", ".join(words) + (f" ({', '.join(extra)})" if extra else "")


# -- character diff ----------------------------------------------------------------------------------------


def char_diff(a: str, b: str) -> list[tuple[str, str]]:
    """(op, text) pieces turning a into b: op ' ' kept, '-' only in a, '+' only in b."""
    import difflib

    out: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            out.append((" ", a[i1:i2]))
            continue
        if i2 > i1:
            out.append(("-", a[i1:i2]))
        if j2 > j1:
            out.append(("+", b[j1:j2]))
    return out


def similarity(a: str, b: str) -> float:
    if not a and not b:
        return 1.0
    import difflib

    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def one_line(text: str) -> str:
    """A text on one line, its line breaks and tabs written as \\n, \\r, \\t."""
    return text.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")


def inline(pieces: list[tuple[str, str]]) -> str:
    """A diff as one text: [-removed-]{+added+}, newlines as \\n."""
    show = {" ": "{}", "-": "[-{}-]", "+": "{{+{}+}}"}
    return "".join(show[op].format(t.replace("\n", "\\n")) for op, t in pieces)
