"""`tpindex atlas --no-run` and every surface showing the behaviour atlas (issue 44): what the store holds, read
only (running is indexer/replay/atlas.py's).

- `atlas(db, names, tags, kind, case, mode)`: the matrix, rows of (name, version) with their cells, and
  `changes`: for each (name, case, mode), each version whose status or reason differs from the version before
  it (among the versions the name has cells at);
- `behaviour(db, kind, name)`: the ranges of versions where cells of a name are wrong or an error for one
  reason, with the version that fixed it (the card's and the parser page's behaviour section);
- `behaviour_changes(db, a, b)`: the cells whose status differs from version A to version B (`diff A B`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..store import queries

if TYPE_CHECKING:  # the models are imported where an answer is made: `card` and `diff` ask has_atlas only
    from .atlas_model import Atlas, AtlasCaseDef, AtlasCell, AtlasChange, AtlasRow, BehaviourRange

# the battery's axes (answers/atlas_cases.py CASES, answers/atlas_verdict.py MODES), as every surface reads them
CASE_IDS = (
    "single",
    "parallel",
    "no-args",
    "nested",
    "unicode",
    "content-before",
    "content-only",
    "reasoning",
)
MODES = ("nonstream", "stream:token", "stream:char", "serving-full", "serving-stream")

STATUSES = ("ok", "wrong", "error", "not-applicable")


def has_atlas(db) -> bool:
    """Whether the database has atlas tables with any cell (a database of an older schema has none)."""
    try:
        return db.execute("select 1 from atlas_map limit 1").fetchone() is not None
    except Exception:  # noqa: BLE001 - no such table: an older database
        return False


def check_names(db, names: list[str] | None, kind: str) -> None:
    from .which import check_name

    for n in names or ():
        check_name(db, n, kind)


def case_defs() -> list[AtlasCaseDef]:
    from .atlas_cases import CASES
    from .atlas_model import AtlasCaseDef

    return [
        AtlasCaseDef(
            id=d.id,
            description=d.description,
            calls=[{"name": n, "arguments": a} for n, a in d.calls],
            content=d.content,
            reasoning=d.reasoning,
        )
        for d in CASES
    ]


def _key(cell: AtlasCell) -> tuple:
    return (
        CASE_IDS.index(cell.case) if cell.case in CASE_IDS else 99,
        MODES.index(cell.mode) if cell.mode in MODES else -1,
    )


def atlas(
    db,
    names: list[str] | None = None,
    tags: str | None = None,
    kind: str = "tool",
    case: str | None = None,
    mode: str | None = None,
    sources: bool = True,
    _versions: list[str] | None = None,
) -> Atlas:
    """The stored atlas of `names` (None: every name) at the versions of `tags` (None: every indexed version),
    only the cells of `case` and `mode` when given; `sources`: each row's cases' sources too."""
    import json

    from .atlas_model import Atlas, AtlasCell, AtlasRow, AtlasSource
    from .grep import select_versions
    from .versions import AnswerError

    if case is not None and case not in CASE_IDS:
        raise AnswerError(f"no case {case!r} in the atlas", f"the cases: {', '.join(CASE_IDS)}")
    if mode is not None and mode not in MODES:
        raise AnswerError(f"no mode {mode!r} in the atlas", f"the modes: {', '.join(MODES)}")
    if not has_atlas(db):
        raise AnswerError(
            "the behaviour atlas has not been run on this database",
            "run it: tpindex atlas [NAME...] (it stores its cells; --no-run then answers from them)",
        )
    check_names(db, names, kind)
    versions = _versions or select_versions(db, tags, None)
    wanted = set(versions)
    params = {"kind": kind, "names": json.dumps(names) if names else None}
    rows: dict[tuple[str, str], AtlasRow] = {}
    for r in queries.rows(db, "atlas_cells", **params):
        if r["version"] not in wanted:
            continue
        if case and r["case_id"] != case:
            continue
        row = rows.setdefault((r["version"], r["name"]), AtlasRow(r["name"], kind, r["version"], []))
        for m in [r["mode"]] if r["mode"] is not None else MODES:  # no case: not applicable in every mode
            if mode is None or m == mode:
                row.cells.append(AtlasCell(r["case_id"], m, r["status"], r["detail"]))
    for r in queries.rows(db, "atlas_sources", **params) if sources else ():
        row = rows.get((r["version"], r["name"]))
        if row is None or (case and r["case_id"] != case):
            continue
        row.sources.append(
            AtlasSource(
                case=r["case_id"],
                source=r["source"],
                origin=r["origin"],
                text=r["text"],
                expected=json.loads(r["expected"]) if r["expected"] else None,
                reasoning_parser=r["reasoning_parser"],
                note=r["note"],
            )
        )
    order = {v: i for i, v in enumerate(versions)}
    out = sorted(rows.values(), key=lambda r: (order[r.version], r.name))
    for r in out:
        r.cells.sort(key=_key)
        r.sources.sort(key=lambda s: CASE_IDS.index(s.case) if s.case in CASE_IDS else 99)
    not_run = [
        f"{r['name']} {r['version']}"
        for r in queries.rows(db, "atlas_not_run", **params)
        if r["version"] in wanted
    ]
    return Atlas(
        kind=kind,
        cases=[d for d in case_defs() if case is None or d.id == case],
        modes=[m for m in MODES if mode is None or m == mode],
        rows=out,
        changes=changes(out),
        not_run=not_run,
    )


def _cells_by(rows: list[AtlasRow]) -> dict[tuple[str, str, str | None], list[tuple[str, AtlasCell]]]:
    """(name, case, mode) -> [(version, cell)] in version order. A case without cells (not applicable for
    every mode) stands for each mode, so that a case becoming applicable is a change of each."""
    out: dict[tuple, list] = {}
    for r in rows:
        for c in r.cells:
            for m in [c.mode] if c.mode is not None else MODES:
                out.setdefault((r.name, c.case, m), []).append((r.version, c))
    return out


def _state(c: AtlasCell) -> str:
    from .atlas_verdict import what

    return c.status if c.status in ("ok", "not-applicable") else f"{c.status}: {what(c.detail)}"


def changes(rows: list[AtlasRow]) -> list[AtlasChange]:
    from .atlas_model import AtlasChange

    kinds = {r.name: r.kind for r in rows}
    out = []
    for (name, case, mode), seq in _cells_by(rows).items():
        for (pv, prev), (v, now) in zip(seq, seq[1:], strict=False):
            if _state(prev) != _state(now):
                out.append(
                    AtlasChange(name, kinds[name], case, mode, v, pv, prev.status, now.status, now.detail)
                )
    return sorted(out, key=lambda c: (c.name, CASE_IDS.index(c.case), MODES.index(c.mode), c.version))


def behaviour(db, kind: str, name: str) -> list[BehaviourRange]:
    """The ranges of versions where the name's cells are wrong or an error for one reason (see the module); []
    when the atlas has not run it."""
    from .atlas_model import BehaviourRange
    from .atlas_verdict import what

    if not has_atlas(db):
        return []
    a = atlas(db, [name], kind=kind) if _has_rows(db, kind, name) else None
    if a is None or not a.rows:
        return []
    versions = [r.version for r in a.rows]
    spans: dict[tuple[str, str, str, str], dict] = {}  # (what, status, first, last) -> cells, example
    for (_, case, mode), seq in _cells_by(a.rows).items():
        at = {v: c for v, c in seq}
        run: list[str] = []
        for v in [*versions, None]:
            c = at.get(v) if v else None
            bad = c is not None and c.status in ("wrong", "error")
            if run and (not bad or _state(c) != _state(at[run[0]])):
                first = at[run[0]]
                key = (what(first.detail), first.status, run[0], run[-1])
                entry = spans.setdefault(key, {"cells": [], "example": first.detail})
                entry["cells"].append(f"{case} {mode}")
                run = []
            if bad:
                run.append(v)
    out = []
    for (why, status, first, last), e in spans.items():
        i, j = versions.index(first), versions.index(last)
        out.append(
            BehaviourRange(
                what=why,
                status=status,
                cells=e["cells"],
                first=first,
                last=last,
                fixed_in=versions[j + 1] if j + 1 < len(versions) else None,
                before=versions[i - 1] if i > 0 else None,
                example=e["example"],
            )
        )
    return sorted(out, key=lambda b: (versions.index(b.first), b.what))


def _has_rows(db, kind: str, name: str) -> bool:
    return (
        db.execute("select 1 from atlas_map where kind = ? and name = ? limit 1", [kind, name]).fetchone()
        is not None
    )


def behaviour_changes(db, a: str, b: str) -> list[AtlasChange]:
    """The cells whose status (or reason) differs from version A to version B, for the names with cells at both
    (`diff A B`'s behaviour section); [] when the atlas has run neither."""
    from .atlas_model import AtlasCell, AtlasChange

    if not has_atlas(db):
        return []
    cells: dict[str, dict[tuple, AtlasCell]] = {a: {}, b: {}}
    kinds = {}
    for r in queries.rows(db, "atlas_cells_at", a=a, b=b):
        for m in [r["mode"]] if r["mode"] is not None else MODES:
            cells[r["version"]][(r["name"], r["case_id"], m)] = AtlasCell(
                r["case_id"], m, r["status"], r["detail"]
            )
            kinds[r["name"]] = r["kind"]
    out = []
    for key, now in cells[b].items():
        prev = cells[a].get(key)
        if prev is not None and _state(prev) != _state(now):
            name, case, mode = key
            out.append(AtlasChange(name, kinds[name], case, mode, b, a, prev.status, now.status, now.detail))
    return sorted(out, key=lambda c: (c.name, CASE_IDS.index(c.case), MODES.index(c.mode)))
