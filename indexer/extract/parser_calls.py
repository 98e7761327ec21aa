"""Parser calls: the calls vLLM's own code makes on parser objects, so the contract says how a version really
calls a plugin. A parser class called (`self.tool_parser(tokenizer)`, `tool_parser_cls(tokenizer,
request.tools)`: method `__init__`, a construction), a method called on a parser object
(`tool_parser.extract_tool_calls(text, request=request)`), and `super().method(...)` (kind `super`: what a
class hands its base).

One row per call: `{kind: tool | reasoning | super, method, callee (as written), positional (how many
positional arguments), keywords (their names), star (a *x argument), dstar (a **x argument), args (every
argument as written, in order), line, class, function}`.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from .ts import enclosing, line, matches, query, text

CLASS = re.compile(r"^_?(tool|reasoning)_parser(_cls|_class)?$")  # the last part of a constructed callee
RECEIVER = re.compile(r"(?:^|\.)_?(tool|reasoning)_parser(?:_instance)?$")  # what a method is called on
MAX_ARG = 80
# For each pattern of parser_calls.scm, the words one of which a blob holds where it matches (its predicates)
WORDS = ((b"_parser",), (b"super",))


def extract(root: Node) -> list[dict]:
    rows, seen = [], set()
    for caps in matches(query("parser_calls.scm"), root):
        call = caps["call"][0]
        if call.id in seen:
            continue
        seen.add(call.id)
        if "super" in caps:
            kind, method, callee = "super", text(caps["method"][0]), f"super().{text(caps['method'][0])}"
        else:
            callee = text(caps["callee"][0])
            receiver, _, last = callee.rpartition(".")
            if m := CLASS.match(last):
                kind, method = m.group(1), "__init__"
            elif m := RECEIVER.search(receiver):
                kind, method = m.group(1), last
            else:
                continue  # `get_tool_parser(name)`, `ToolParserManager.register_module(...)`
        rows.append(
            {
                "kind": kind,
                "method": method,
                "callee": callee,
                **arguments(caps["args"][0]),
                "line": line(call),
                **dict(zip(("class", "function"), enclosing(call), strict=True)),
            }
        )
    rows.sort(key=lambda r: (r["line"], r["callee"]))
    return rows


def arguments(args: Node) -> dict:
    """The shape of a call's arguments: how many positional, which keywords, whether * or ** are used."""
    positional, keywords, star, dstar, written = 0, [], False, False, []
    for a in args.named_children:
        if a.type == "comment":
            continue
        if a.type == "keyword_argument":
            keywords.append(text(a.child_by_field_name("name")))
        elif a.type == "list_splat":
            star = True
        elif a.type == "dictionary_splat":
            dstar = True
        else:
            positional += 1
        one = " ".join(text(a).split())
        written.append(one if len(one) <= MAX_ARG else one[: MAX_ARG - 1] + "…")
    return {"positional": positional, "keywords": keywords, "star": star, "dstar": dstar, "args": written}
