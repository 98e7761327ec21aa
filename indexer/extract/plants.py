"""Plants: known workaround patterns, one `.scm` file per plant under queries/plants/ (its stem is the
plant's name). Adding a plant is adding a file; no code changes."""

from __future__ import annotations

import functools

from tree_sitter import Node

from .ts import captures, enclosing, line, queries_dir, query, text


@functools.cache
def plant_names() -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in (queries_dir() / "plants").glob("*.scm")))


def extract(root: Node) -> list[dict]:
    rows = []
    for name in plant_names():
        for node in captures(query(f"plants/{name}.scm"), root).get("plant", []):
            cls, fn = enclosing(node)
            rows.append(
                {
                    "plant": name,
                    "line": line(node),
                    "text": text(node).splitlines()[0][:200],
                    "class": cls,
                    "function": fn,
                }
            )
    rows.sort(key=lambda r: (r["line"], r["plant"]))
    return rows
