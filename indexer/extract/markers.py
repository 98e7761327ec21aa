"""Markers: HACK / TODO / FIXME / XXX comments (as a word), with the enclosing class and function."""

from __future__ import annotations

import re

from tree_sitter import Node

from .ts import captures, enclosing, line, query, text

WORD = re.compile(r"(?<![A-Za-z0-9_])(HACK|TODO|FIXME|XXX)(?![A-Za-z0-9_])")
# For each pattern of markers.scm, the words one of which a blob's bytes hold where it matches (a blob without
# any is not walked for it: extract/facts.py)
WORDS = ((b"HACK", b"TODO", b"FIXME", b"XXX"),)


def extract(root: Node) -> list[dict]:
    rows = []
    for node in captures(query("markers.scm"), root).get("comment", []):
        body = text(node)
        m = WORD.search(body)
        if not m:
            continue
        cls, fn = enclosing(node)
        rows.append(
            {
                "kind": m.group(1),
                "line": line(node),
                "text": body.lstrip("#").strip(),
                "class": cls,
                "function": fn,
            }
        )
    return rows
