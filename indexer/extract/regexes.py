"""Regular expressions: the patterns a parser matches text with, as Python reads them (issue 29: `fit` runs a
parser's own regular expressions on a template's rendered call or a raw model output).

queries/patterns/regexes.scm picks the candidates: the first argument of `re.compile`, `re.search`, ...
(the `regex` module too) and a string assigned to a name ending in regex / pattern / _re. A row each:

- `pattern`: the literal's value (raw or plain strings, implicit concatenations joined); f-strings and
  bytes are left out (their value is not known without running the code);
- `flags`: the flags the call passes (its positional flags argument or `flags=`), as names joined by `|`
  (`DOTALL|MULTILINE`; `re.S` is DOTALL), "" when it passes none, None for an assigned pattern (the call that
  uses it is elsewhere);
- `how`: the function called (`compile`, `search`, ...) or `assigned`;
- `attribute`: the name it is assigned to (`self.tool_call_regex = re.compile(...)`: tool_call_regex), as for
  sentinels; class, function and line.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from .sentinels import _target, _value
from .ts import enclosing, line, matches, query, text

# the positional place of the flags argument (after the pattern) for the functions that take one
FLAGS_AT = {"compile": 1, "match": 2, "search": 2, "fullmatch": 2, "findall": 2, "finditer": 2}
FLAG_NAMES = {
    "S": "DOTALL",
    "DOTALL": "DOTALL",
    "M": "MULTILINE",
    "MULTILINE": "MULTILINE",
    "I": "IGNORECASE",
    "IGNORECASE": "IGNORECASE",
    "X": "VERBOSE",
    "VERBOSE": "VERBOSE",
    "A": "ASCII",
    "ASCII": "ASCII",
    "U": "UNICODE",
    "UNICODE": "UNICODE",
}
_FLAG = re.compile(r"\b(?:re|regex)\.([A-Z]+)\b")


def _pattern(node: Node) -> str | None:
    """The value of a plain or raw string, or of an implicit concatenation of them."""
    if node.type == "parenthesized_expression":
        node = node.named_children[0]
    if node.type == "string":
        return _value(node)
    parts = [_value(c) for c in node.named_children if c.type == "string"]
    return None if not parts or any(p is None for p in parts) else "".join(parts)


def _flags(node: Node, function: str) -> str:
    """The flags a call passes with its pattern (node: the pattern argument)."""
    args = node.parent
    written = None
    positional = [c for c in args.named_children if c.type not in ("keyword_argument", "comment")]
    for c in args.named_children:
        if c.type == "keyword_argument" and text(c.child_by_field_name("name")) == "flags":
            written = text(c.child_by_field_name("value"))
    at = FLAGS_AT.get(function)
    if written is None and at is not None and len(positional) > at:
        written = text(positional[at])
    if not written:
        return ""
    return "|".join(dict.fromkeys(FLAG_NAMES[f] for f in _FLAG.findall(written) if f in FLAG_NAMES))


def extract(root: Node) -> list[dict]:
    rows, seen = [], set()
    for caps in matches(query("regexes.scm"), root):
        node = (caps.get("pattern") or caps.get("assigned"))[0]
        if node.start_byte in seen:
            continue
        seen.add(node.start_byte)
        pattern = _pattern(node)
        if pattern is None:
            continue
        if "pattern" in caps:
            how = text(caps["function"][0])
            flags = _flags(node, how)
            attribute = _target(node) if how == "compile" else None  # a search result is no regex
        else:
            how, flags, attribute = "assigned", None, text(caps["target"][0])
        cls, fn = enclosing(node)
        rows.append(
            {
                "class": cls,
                "function": fn,
                "attribute": attribute,
                "pattern": pattern,
                "flags": flags,
                "how": how,
                "line": line(node),
            }
        )
    rows.sort(key=lambda r: r["line"])
    return rows
