"""Module-level aliases: `NewName = OldName` (a registered name may be such an alias of an adapter)."""

from __future__ import annotations

from tree_sitter import Node

from .ts import line, matches, query, text


def extract(root: Node) -> list[dict]:
    return [
        {"name": text(c["name"][0]), "written": text(c["value"][0]), "line": line(c["alias"][0])}
        for c in matches(query("aliases.scm"), root)
    ]
