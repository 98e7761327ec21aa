"""The one way versions are written as ranges: runs of versions consecutive in the indexed order, each
run its first version, or first and last joined by a separator. The separators differ by answer (" - " in
most, " – " in which's prose) and stay as each answer prints them; the grouping is this one."""

from __future__ import annotations


def runs(chosen, order: list[str] | None = None, pos: dict[str, int] | None = None) -> list[list[str]]:
    """`chosen` as runs of versions consecutive in `order` (or in the positions `pos`, built once by a
    caller that asks often), in that order; a version `order` does not hold is left out."""
    pos = pos if pos is not None else {v: i for i, v in enumerate(order or [])}
    out: list[list[str]] = []
    for v in sorted((v for v in dict.fromkeys(chosen) if v in pos), key=pos.__getitem__):
        if out and pos[v] == pos[out[-1][-1]] + 1:
            out[-1].append(v)
        else:
            out.append([v])
    return out


def span(versions: list[str], sep: str = " - ") -> str:
    """A run as text: its one version, or its first and last."""
    return versions[0] if len(versions) == 1 else f"{versions[0]}{sep}{versions[-1]}"


def runs_text(rs: list[list[str]], sep: str = " - ", empty: str = "") -> str:
    """Runs as text, comma-separated: "v0.24.0 - v0.31.0, v0.33.0"."""
    return ", ".join(span(r, sep) for r in rs) or empty
