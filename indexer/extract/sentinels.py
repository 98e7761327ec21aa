"""Sentinels: the token strings a parser looks for or emits, e.g. `<tool_call>`, `[TOOL_CALLS]`,
`<|python_tag|>`, `<｜tool▁calls▁begin｜>`, each with its non-ASCII characters named.

The rule (queries/patterns/sentinels.scm picks candidates; this module decides). Plain and raw string
literals count, and f-strings as patterns (below); bytes literals, docstrings and other prose are left out.

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
  class attribute or `self.x`; or returned by a method or property of a token-named name, `def
  bot_token(self): return "..."`) is a sentinel when its value is at most 64 characters and has no whitespace
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
  the right side is a dotted name whose first part ends in Token / Tokens), or a method or property returning
  one (`def start_token(self): return SpecialTokens.begin_think`), is kept as a **reference**: value = the
  expression as written, how = `reference` (the token itself is defined outside the tree).
- A literal returned directly by a method or property of a class holds it under the method's name
  (attribute = `start_token` for `@property def start_token(self): return "<think>"`), as an assignment
  would: a subclass that overrides the name overrides the token (indexer/logic.py `overridden`).
- An **f-string** is tested like a literal on its *shape*, each interpolation replaced by a word character;
  an interpolation that is a bare name of a module constant of the file (`_DSML = "｜DSML｜"`) is filled
  in first. Filled in completely, it is an ordinary sentinel (`f"<{_DSML}calls>"` -> `<｜DSML｜calls>`);
  otherwise it is a **pattern**: value = the text with the rest as written (`<tool_calls{self.suffix}>`),
  how = `pattern`. f-strings of regular expressions are left out.
- Anything else is left out: prose mentioning a token (log and error messages, docstrings).

Each row: class and function (qualified) enclosing the literal, attribute, value (the literal's value;
for regex rows the token; for references the expression; for patterns the text), how (`attribute`,
`literal`, `regex`, `reference`, `pattern`), line, and non_ascii ("U+FF5C
FULLWIDTH VERTICAL LINE, U+2581 LOWER ONE EIGHTH BLOCK").
"""

from __future__ import annotations

import ast
import re
import unicodedata

from tree_sitter import Node

from .tokens import TOKEN, TOKENS, is_token
from .ts import enclosing, line, matches, query, text

_REGEX_SYNTAX = re.compile(r"\(\?P<\w+>|\(\?P=\w+\)|\(\?<[=!]")
_ESCAPED = re.compile(r"\\([^\w\s])")
_CONTAINERS = {
    "tuple",
    "list",
    "set",
    "argument_list",
    "call",
    "parenthesized_expression",
    "expression_list",
    "concatenated_string",
}
MAX_NAMED = 64


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
    return (
        0 < len(value) <= MAX_NAMED
        and not any(c.isspace() for c in value)
        and any(ord(c) > 127 and unicodedata.category(c)[0] in "SP" for c in value)
    )


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
    body = written[len(prefix) :]
    quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
    inner = body[len(quote) : len(body) - len(quote)]
    if "\\" not in inner and len(body) >= 2 * len(quote) and body.endswith(quote):
        return inner  # no escapes: the text is the value (ast below only for escapes)
    try:
        value = ast.literal_eval(written)
    except (SyntaxError, ValueError):
        return None
    return value if isinstance(value, str) else None


def _target(node: Node) -> str | None:
    """The name a literal is assigned to, directly or inside a tuple / list / set / call; or the method or
    property of a class that returns it (`def start_token(self): return "<think>"`)."""
    child, n = node, node.parent
    for _ in range(6):
        if n is None:
            return None
        if n.type == "return_statement":
            fn = n.parent.parent if n.parent is not None and n.parent.type == "block" else None
            if fn is None or fn.type != "function_definition" or _class_of(fn) is None:
                return None
            return text(fn.child_by_field_name("name"))
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


def _class_of(fn: Node) -> Node | None:
    """The class a function is defined in directly (decorated or not)."""
    p = fn.parent
    if p is not None and p.type == "decorated_definition":
        p = p.parent
    return (
        p.parent
        if p is not None
        and p.type == "block"
        and p.parent is not None
        and p.parent.type == "class_definition"
        else None
    )


def _constants(root: Node) -> dict[str, str]:
    """Module-level `NAME = "plain string"` assignments (or f-strings of earlier ones, filled in): what an
    f-string of the same file may read."""
    out = {}
    for stmt in root.named_children:
        a = (
            stmt.named_children[0]
            if stmt.type == "expression_statement" and stmt.named_child_count == 1
            else None
        )
        if a is not None and a.type == "assignment":
            left, right = a.child_by_field_name("left"), a.child_by_field_name("right")
            if left is None or left.type != "identifier" or right is None or right.type != "string":
                continue
            value = _value(right)
            if value is None and (got := _fstring(right, out)) is not None and got[0] == got[1]:
                value = got[0]  # an f-string of earlier constants only: PREFIX = f"{NAMESPACE}<"
            if value is not None:
                out[text(left)] = value
    return out


def _fstring(node: Node, constants: dict[str, str]) -> tuple[str, str] | None:
    """An f-string as (value, shape): the value with each interpolation filled in when it is a bare name of
    a module constant of the file, else kept as written (`{self.suffix}`); the shape with those left
    replaced by a word character, to test it like a literal. None: not an f-string, or unreadable."""
    written = text(node)
    prefix = written[: len(written) - len(written.lstrip("rRuUbBfF"))]
    if "f" not in prefix.lower() or "b" in prefix.lower():
        return None
    plain = prefix.lower().replace("f", "")
    quote = (
        written[len(prefix) : len(prefix) + 3]
        if written[len(prefix) : len(prefix) + 3] in ('"""', "'''")
        else written[len(prefix) : len(prefix) + 1]
    )
    value, shape = [], []
    for child in node.children:
        if child.type == "string_content":
            piece = text(child).replace("{{", "{").replace("}}", "}")
            if "\\" in piece and "r" not in plain:
                try:
                    piece = ast.literal_eval(quote + piece + quote)
                except (SyntaxError, ValueError):
                    return None
            value.append(piece)
            shape.append(piece)
        elif child.type == "interpolation":
            inner = child.named_children[0] if child.named_child_count == 1 else None
            if inner is not None and inner.type == "identifier" and text(inner) in constants:
                value.append(constants[text(inner)])
                shape.append(constants[text(inner)])
            else:
                value.append(text(child))
                shape.append("x")
    return "".join(value), "".join(shape)


def extract(root: Node) -> list[dict]:
    constants: dict[str, str] | None = None
    regex: dict[int, Node] = {}
    named: dict[int, tuple[Node, str]] = {}
    literal: dict[int, Node] = {}
    rows = []
    for caps in matches(query("sentinels.scm"), root):
        for node in caps.get("reference", []):
            cls, fn = enclosing(node)
            rows.append(
                {
                    "class": cls,
                    "function": fn,
                    "attribute": text(caps["attribute"][0]),
                    "value": text(node),
                    "how": "reference",
                    "line": line(node),
                    "non_ascii": None,
                }
            )
        for node in caps.get("regex", []):
            regex[node.start_byte] = node
        for node in caps.get("value", []):
            named[node.start_byte] = (node, text(caps["attribute"][0]))
        for node in caps.get("literal", []):
            literal[node.start_byte] = node
    for start in sorted(set(regex) | set(named) | set(literal)):
        node = regex.get(start) or (named[start][0] if start in named else literal[start])
        value = shape = _value(node)
        pattern = False
        if value is None and start not in regex:
            if constants is None:
                constants = _constants(root)
            got = _fstring(node, constants)
            if got is None:
                continue
            value, shape = got
            pattern = value != shape
        if value is None:
            continue
        attribute = named[start][1] if start in named else _target(node)
        plain = "attribute" if attribute else "literal"
        if start in regex:
            found = [(t, "regex") for t in regex_tokens(value)]
        elif token_sequence(shape) or symbolic(shape):
            found = [(value, "pattern" if pattern else plain)]
        elif start in named and named_value(shape):
            found = [(value, "pattern" if pattern else "attribute")]
        else:
            continue
        cls, fn = enclosing(node)
        for v, how in found:
            rows.append(
                {
                    "class": cls,
                    "function": fn,
                    "attribute": attribute,
                    "value": v,
                    "how": how,
                    "line": line(node),
                    "non_ascii": non_ascii(v),
                }
            )
    rows.sort(key=lambda r: r["line"])
    return rows
