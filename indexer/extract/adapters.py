"""Adapter bindings: `(XReasoningAdapter, XToolAdapter) = make_adapters(XParser)` at module level."""

from __future__ import annotations

from tree_sitter import Node

from .ts import line, matches, query, text

# For each pattern of adapter_bindings.scm, the words one of which a blob holds where it matches (its predicate)
WORDS = ((b"make_adapters",),)


def extract(root: Node) -> list[dict]:
    rows = []
    for caps in matches(query("adapter_bindings.scm"), root):
        targets, parser = caps["targets"][0], caps["parser"][0]
        if parser.type == "keyword_argument":  # make_adapters(parser_cls=XParser)
            parser = parser.child_by_field_name("value")
        names = [text(n) for n in _names(targets)]
        for pos, name in enumerate(names):
            rows.append(
                {
                    "adapter": name,
                    "pos": pos,
                    "parser_written": text(parser),
                    "line": line(caps["binding"][0]),
                }
            )
    return rows


def _names(node: Node) -> list[Node]:
    if node.type in ("identifier", "attribute"):
        return [node]
    out = []
    for child in node.named_children:
        out.extend(_names(child))
    return out
