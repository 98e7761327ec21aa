"""Sentinels: the token strings a parser looks for or emits, e.g. `<tool_call>`, `[TOOL_CALLS]`,
`<|python_tag|>`, `<｜tool▁calls▁begin｜>`, each with its non-ASCII characters named.

The rule (queries/patterns/sentinels.scm picks candidates; this module decides). Only plain and raw
string literals count: f-strings and bytes literals are left out, and so are docstrings and other prose.

- A **token** is `<` + an optional `/` + one or more word characters, `|`, `:`, `-` or non-ASCII
  non-space characters (at least one a letter) + `>` or a final `=` (`<tool_call>`, `</think>`,
  `<|im_start|>`, `<seed:tool_call>`, `<function=`, `<｜tool▁sep｜>`); or `[` + an optional `/` + a name
  of letters, digits and `_` with at least two capitals + `]` (`[TOOL_CALLS]`, `[/THINK]`, `[gMASK]`).
- A literal whose value, stripped of surrounding whitespace, is one token or tokens separated only by
  whitespace is a sentinel, wherever it is (class attribute, module constant, `self.x = ...`, a
  comparison or call in a method body). Its `attribute` is the name it is assigned to, directly or
  inside a tuple / list / set / call (`SPECIAL = frozenset(("<|im_start|>", ...))`), else empty.
- A literal assigned to a **token-named** target (a `_`-separated word of the name is token, start, end,
  begin, open, close, sep, separator, prefix, suffix, marker, delimiter, bot, eot or eom; module constant,
  class attribute or `self.x`) is a sentinel when its value is at most 64 characters and has no whitespace
  inside or starts with `<` or `[`: `bot_token = "functools"` (phi4_mini_json) counts though it is not
  shaped like a token, and so do `DSML_TOOL_START = "<｜DSML｜ calls>"` and `DSML_INVOKE_PREFIX =
  '<｜DSML｜ invoke name="'`.
- A literal of at most 64 characters without whitespace that holds a non-ASCII symbol or punctuation
  character (Unicode category S* or P*: `｜`, `▁`) is a piece of a special token and a sentinel:
  `_DSML = "｜DSML｜"`.
- A **regular expression** (the pattern argument of `re.compile`, `re.search`, ... or of the `regex`
  module, or a literal assigned to a name ending in regex / pattern / _re) is not a sentinel itself;
  the tokens inside it are, one row each (how = `regex`), after dropping named groups and lookbehinds
  (`(?P<name>`, `(?<=`) and unescaping punctuation (`\\[TOOL_CALLS\\]` -> `[TOOL_CALLS]`). So
  `r"<tool_call>(.*?)</tool_call>"` gives `<tool_call>` and `</tool_call>`, and a separator that only
  appears in a regex (`<｜tool▁sep｜>`) is found.
- A name assigned from a tokens object rather than a literal (`_TOOL_CALLS = SpecialTokens.tool_calls.value`:
  the right side is a dotted name whose first part ends in Token / Tokens) is kept as a **reference**:
  value = the expression as written, how = `reference` (the token itself is defined outside the tree).
- Anything else is left out: prose mentioning a token (log and error messages, docstrings), and tokens
  built with f-strings.

Each row: class and function (qualified) enclosing the literal, attribute, value (the literal's value;
for regex rows the token; for references the expression), how (`attribute`, `literal`, `regex`,
`reference`), line, and non_ascii ("U+FF5C
FULLWIDTH VERTICAL LINE, U+2581 LOWER ONE EIGHTH BLOCK").
"""

from __future__ import annotations

import ast
import re
import unicodedata

from tree_sitter import Node

from .ts import enclosing, line, matches, query, text

_BODY = r"(?:[\w|:\-]|[^\x00-\x7f\s])"
_ANGLE = rf"</?{_BODY}+(?:>|=)"
_SQUARE = r"\[/?[A-Za-z][A-Za-z0-9_]*\]"
TOKEN = re.compile(rf"{_ANGLE}|{_SQUARE}")
TOKENS = re.compile(rf"(?:{_ANGLE}|{_SQUARE})(?:\s*(?:{_ANGLE}|{_SQUARE}))*")
_REGEX_SYNTAX = re.compile(r"\(\?P<\w+>|\(\?P=\w+\)|\(\?<[=!]")
_ESCAPED = re.compile(r"\\([^\w\s])")
_CONTAINERS = {"tuple", "list", "set", "argument_list", "call", "parenthesized_expression", "expression_list",
               "concatenated_string"}
MAX_NAMED = 64


def is_token(s: str) -> bool:
    if not any(c.isalpha() for c in s):
        return False
    if s.startswith("["):
        return sum(c.isupper() for c in s) >= 2
    return True


def token_sequence(value: str) -> bool:
    """Whether a value, stripped, is one token or tokens separated only by whitespace."""
    s = value.strip()
    return bool(s) and TOKENS.fullmatch(s) is not None and all(is_token(t) for t in TOKEN.findall(s))


def regex_tokens(pattern: str) -> list[str]:
    """The tokens a regular expression's text contains, in order, each once."""
    plain = _ESCAPED.sub(r"\1", _REGEX_SYNTAX.sub("(", pattern))
    return list(dict.fromkeys(t for t in TOKEN.findall(plain) if is_token(t)))


def symbolic(value: str) -> bool:
    """A short literal without whitespace holding a non-ASCII symbol or punctuation character."""
    return 0 < len(value) <= MAX_NAMED and not any(c.isspace() for c in value) and any(
        ord(c) > 127 and unicodedata.category(c)[0] in "SP" for c in value)


def named_value(value: str) -> bool:
    s = value.strip()
    return 0 < len(s) <= MAX_NAMED and (s[0] in "<[" or not any(c.isspace() for c in s))


def non_ascii(value: str) -> str | None:
    names = [f"U+{ord(c):04X} {unicodedata.name(c, '?')}" for c in dict.fromkeys(value) if ord(c) > 127]
    return ", ".join(names) or None


def _value(node: Node) -> str | None:
    """The value of a plain or raw string literal (None: f-string, bytes, or not a literal)."""
    if any(c.type == "interpolation" for c in node.named_children):
        return None
    written = text(node)
    prefix = written[: len(written) - len(written.lstrip("rRuUbBfF"))]
    if set(prefix.lower()) & {"f", "b"}:
        return None
    body = written[len(prefix):]
    quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
    inner = body[len(quote):len(body) - len(quote)]
    if "\\" not in inner and len(body) >= 2 * len(quote) and body.endswith(quote):
        return inner  # no escapes: the text is the value (ast below only for escapes)
    try:
        value = ast.literal_eval(written)
    except (SyntaxError, ValueError):
        return None
    return value if isinstance(value, str) else None


def _target(node: Node) -> str | None:
    """The name a literal is assigned to, directly or inside a tuple / list / set / call."""
    child, n = node, node.parent
    for _ in range(6):
        if n is None:
            return None
        if n.type == "assignment":
            if n.child_by_field_name("right") != child:
                return None
            left = n.child_by_field_name("left")
            if left is not None and left.type == "attribute":
                left = left.child_by_field_name("attribute")
            return text(left) if left is not None and left.type == "identifier" else None
        if n.type not in _CONTAINERS:
            return None
        child, n = n, n.parent
    return None


def extract(root: Node) -> list[dict]:
    regex: dict[int, Node] = {}
    named: dict[int, tuple[Node, str]] = {}
    literal: dict[int, Node] = {}
    rows = []
    for caps in matches(query("sentinels.scm"), root):
        for node in caps.get("reference", []):
            cls, fn = enclosing(node)
            rows.append({"class": cls, "function": fn, "attribute": text(caps["attribute"][0]), "value": text(node),
                         "how": "reference", "line": line(node), "non_ascii": None})
        for node in caps.get("regex", []):
            regex[node.start_byte] = node
        for node in caps.get("value", []):
            named[node.start_byte] = (node, text(caps["attribute"][0]))
        for node in caps.get("literal", []):
            literal[node.start_byte] = node
    for start in sorted(set(regex) | set(named) | set(literal)):
        node = regex.get(start) or (named[start][0] if start in named else literal[start])
        value = _value(node)
        if value is None:
            continue
        attribute = named[start][1] if start in named else _target(node)
        if start in regex:
            found = [(t, "regex") for t in regex_tokens(value)]
        elif token_sequence(value) or symbolic(value):
            found = [(value, "attribute" if attribute else "literal")]
        elif start in named and named_value(value):
            found = [(value, "attribute")]
        else:
            continue
        cls, fn = enclosing(node)
        for v, how in found:
            rows.append({"class": cls, "function": fn, "attribute": attribute, "value": v, "how": how,
                         "line": line(node), "non_ascii": non_ascii(v)})
    rows.sort(key=lambda r: r["line"])
    return rows
