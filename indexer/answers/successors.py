"""Successors of a name that is gone: who took over its class, its real file or its family (used by `diff`,
the lifecycle of `which --all` and `card`, and the answers for a version where the name is gone).

For a name of kind K registered at A and not at B, the names of kind K at B are compared level by level; the
first level that finds any gives the successors:

1. `registered class`: the same registered class (by name: a class keeps its name when its package moves);
2. `real class`: the same class doing the parsing;
3. `real file`: the same file holding the parsing code;
4. `family`: names whose words start with the gone name's words or the other way round (minimax ->
   minimax_m2, minimax_m3), or of the same family as chat templates are matched (glm4 -> glm45, glm47).

At the first three levels, when exactly one of the successors is new at B, the name was *renamed* to it
(glm4_moe -> glm45 at v0.10.1: same class, same file). A family alone never makes a rename; nothing found
is no successor (never a guess). Derived from the facts of the two versions only, never from lists of names.
"""

from __future__ import annotations

from dataclasses import dataclass

from .matching import family, same_family, words

LEVELS = ("registered class", "real class", "real file", "family")
COLUMNS = "kind, name, impl, reg_class, reg_file, real_class, real_file, real_line"


@dataclass
class Successor:
    by: str  # one of LEVELS
    names: list[str]
    renamed_to: str | None = None
    what: str | None = None  # the class or file they share (None for a family)

    def phrase(self) -> str:
        """`renamed to glm45`, `its class continues as hermes`, `successors (same family): a, b`."""
        names = ", ".join(self.names)
        if self.renamed_to:
            return f"renamed to {self.renamed_to}"
        if self.by == "registered class":
            return f"its class continues as {names}"
        if self.by == "family":
            return f"successors (same family): {names}"
        return f"its {self.by} {self.what} continues under {names}"


def _same(by: str, gone: dict, other: dict) -> bool:
    if by == "registered class":
        return bool(gone["reg_class"]) and gone["reg_class"] == other["reg_class"]
    if by == "real class":
        return bool(gone["real_class"]) and gone["real_class"] == other["real_class"]
    if by == "real file":
        return bool(gone["real_file"]) and gone["real_file"] == other["real_file"]
    a, b = words(gone["name"]), words(other["name"])
    if not a or not b:
        return False
    n = min(len(a), len(b))
    return a[:n] == b[:n] or same_family(family(a), family(b))


def successor(gone: dict, at_b: list[dict], names_a: set[str]) -> Successor | None:
    """The successors at B of `gone` (its row at A), among `at_b` (the rows of its kind at B); `names_a` the
    names of its kind at A (a successor not among them is new at B)."""
    pool = [r for r in at_b if r["name"] != gone["name"]]
    for by in LEVELS:
        found = [r for r in pool if _same(by, gone, r)]
        if not found:
            continue
        names = sorted(r["name"] for r in found)
        new = [n for n in names if n not in names_a]
        what = {
            "registered class": gone["reg_class"],
            "real class": gone["real_class"],
            "real file": gone["real_file"],
        }.get(by)
        renamed = new[0] if by != "family" and len(new) == 1 else None
        return Successor(by, names, renamed, what)
    return None


class Maps:
    """The rows of parser_map_v per version, read once (a diff or a card of every name asks many times)."""

    def __init__(self, db):
        self.db, self._rows = db, {}

    def rows(self, version: str) -> dict[tuple[str, str], dict]:
        if version not in self._rows:
            self._rows[version] = {
                (r["kind"], r["name"]): r
                for r in (
                    dict(x)
                    for x in self.db.query(f"select {COLUMNS} from parser_map_v where version = ?", [version])
                )
            }
        return self._rows[version]

    def successors(self, a: str, b: str) -> dict[tuple[str, str], Successor | None]:
        """(kind, name) -> its successor, for every name registered at A and not at B."""
        ma, mb = self.rows(a), self.rows(b)
        out = {}
        for (kind, name), row in sorted(ma.items()):
            if (kind, name) in mb:
                continue
            out[(kind, name)] = successor(
                row, [r for (k, _), r in mb.items() if k == kind], {n for k, n in ma if k == kind}
            )
        return out


def links(
    db,
    kind: str,
    name: str,
    first: str | None,
    last: str | None,
    removed_in: str | None,
    maps: Maps | None = None,
) -> dict:
    """What a lifecycle says about the name's neighbours: `renamed_to`, `successors`, `successors_by` (at its
    removal, from its last version to the next indexed one) and `renamed_from` (the names renamed to it in
    its first version, from the indexed version before it)."""
    from .versions import indexed

    maps = maps or Maps(db)
    out: dict = {"renamed_to": None, "successors": [], "successors_by": None, "renamed_from": []}
    if removed_in and last:
        s = maps.successors(last, removed_in).get((kind, name))
        if s is not None:
            out.update(renamed_to=s.renamed_to, successors=s.names, successors_by=s.by)
    labels = indexed(db)
    if first in labels and labels.index(first) > 0:
        before = labels[labels.index(first) - 1]
        out["renamed_from"] = sorted(
            n
            for (k, n), s in maps.successors(before, first).items()
            if k == kind and s is not None and s.renamed_to == name
        )
    return out


def gone_text(kind: str, name: str, db, last: str, removed_in: str | None) -> str:
    """`; renamed to X at vY` / `; removed at vY, successors ...` for the answer about a version the name is
    gone at ('' when nothing took over)."""
    if not removed_in:
        return ""
    s = Maps(db).successors(last, removed_in).get((kind, name))
    if s is None:
        return ""
    if s.renamed_to:
        return f"; renamed to {s.renamed_to} at {removed_in}"
    return f"; removed at {removed_in}, {s.phrase()}"
