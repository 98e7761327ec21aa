"""The hard-coded era (before any registry): the accepted names are the `choices=[...]` of the
`--tool-call-parser` (or `--reasoning-parser`) argument. The class each name picks is found by the
name-check extractor in the serving code."""

from __future__ import annotations

from tree_sitter import Node

from .ts import line, matches, query, string_value

# For each pattern of cli_choices.scm, the words one of which a blob holds where it matches (its predicates)
WORDS = ((b"-parser",),)


def extract(root: Node) -> list[dict]:
    rows = []
    for caps in matches(query("cli_choices.scm"), root):
        flag = string_value(caps["flag"][0]) or ""
        for choice in caps["choices"][0].named_children:
            name = string_value(choice)
            if name is None:
                continue
            rows.append(
                {
                    "kind": "reasoning" if "reasoning" in flag else "tool",
                    "name": name,
                    "module": None,
                    "class": None,
                    "form": "cli-choices",
                    "line": line(choice),
                    "registry": flag,
                }
            )
    return rows
