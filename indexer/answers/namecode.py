"""The code of a parser NAME: `show NAME` (the class that really implements it, or one contract method as
the name resolves it) and `diff A B --code NAME` (the files holding its own code, file by file, the real
file of A against the real file of B when it moved). Both read spans and files from the index and the code
from the database (answers/source.py)."""

from __future__ import annotations

import json

from .source import diff_paths, show_span
from .versions import AnswerError, newest, require
from .which import check_name, parsers_at, registered_name

# whose resolution answers `--method` first: the class whose code does the parsing, then the others
ROLE_ORDER = ("engine", "composed", "registered", "wrapper")


def _class_end(db, version: str, file: str, cls: str, line: int) -> int | None:
    row = db.execute(
        "select end_line from classes_v where version = ? and file = ? and class = ? and line = ?",
        [version, file, cls, line],
    ).fetchone()
    return row[0] if row else None


def name_spans(
    db, name: str, at: str | None = None, kind: str | None = None, method: str | None = None
) -> list[dict]:
    """For each kind of NAME at a version (one when the kinds share it): the span of the class that really
    implements it, or of `method` as the name resolves it, with the code of that span."""
    name = registered_name(db, name)
    check_name(db, name, kind)
    version = require(db, at) if at else newest(db)
    parsers = parsers_at(db, name, version, kind)
    if not parsers:
        raise AnswerError(f"{name!r} is not registered at {version}", "ask another version with --at")
    out: list[dict] = []
    for p in parsers:
        if method:
            rows = {
                r[0]: r[1:]
                for r in db.execute(
                    "select role, defining_class, file, line, end_line, body from parser_methods_v where version = ?"
                    " and kind = ? and name = ? and method = ? and file is not null",
                    [version, p.kind, name, method],
                )
            }
            role = next((r for r in ROLE_ORDER if r in rows), None)
            if role is None:
                known = sorted(
                    {
                        r[0]
                        for r in db.execute(
                            "select method from parser_methods_v where version = ? and kind = ? and name = ?",
                            [version, p.kind, name],
                        )
                    }
                )
                raise AnswerError(
                    f"no class of {name!r} ({p.kind}) defines {method} at {version}",
                    f"one of: {', '.join(known)}" if known else "show the class: drop --method",
                )
            cls, file, start, end, body = rows[role]
            what = {"class": cls, "method": method, "role": role, "body": body}
        else:
            if p.real_file is None:
                raise AnswerError(
                    f"{name!r} ({p.kind}) at {version} is unresolved: {p.reason}",
                    "tpindex which says how far the chain goes",
                )
            file, start, cls = p.real_file, p.real_line, p.real_class
            end = _class_end(db, version, file, cls, start)
            what = {"class": cls, "method": None, "role": "real", "body": None}
        same = next((s for s in out if (s["file"], s["start"], s["end"]) == (file, start, end)), None)
        if same:
            same["kinds"].append(p.kind)
            continue
        out.append(
            {
                "name": name,
                "version": version,
                "kinds": [p.kind],
                "file": file,
                "start": start,
                "end": end,
                **what,
                "code": show_span(db, version, file, start, end),
            }
        )
    return out


def _own_files(db, version: str, name: str, kind: str) -> dict[str, frozenset]:
    """path -> the (what, qualname, digest) of the name's pieces in each file holding its own code (not
    shared framework files)."""
    out = {}
    for path, unit, pieces in db.execute(
        "select file, unit_id, pieces from parser_code_v where version = ? and"
        " kind = ? and name = ? and shared = 0",
        [version, kind, name],
    ).fetchall():
        wanted = {(what, q) for _part, what, q in json.loads(pieces or "[]")}
        out[path] = frozenset(
            (w, q, d)
            for w, q, d in db.execute("select what, qualname, digest from uses where unit_id = ?", [unit])
            if (w, q) in wanted
        )
    return out


def _name_code_pairs(db, a: str, b: str, name: str, kind: str | None) -> tuple[str, str, list, list[tuple]]:
    """(a, b, kinds, [(path at A or None, path at B or None)]) of the name's own code: its real files, then
    its other own files whose code in them changed."""
    name = registered_name(db, name)
    kinds = check_name(db, name, kind)
    a, b = require(db, a), require(db, b)
    return a, b, kinds, _pairs(db, a, b, name, kinds)


def _registered(db, version: str, name: str, kind: str) -> tuple[str | None] | None:
    """(real file,) of the name at a version, None when it is not registered there (parsers_at's row, read
    without its hops and attributes)."""
    row = db.execute(
        "select real_file from parser_map_v where name = ? and version = ? and kind = ?",
        [name, version, kind],
    ).fetchone()
    return None if row is None else (row[0],)


def _pairs(db, a: str, b: str, name: str, kinds: list[str]) -> list[tuple]:
    """_name_code_pairs's pairs, for versions and kinds already checked."""
    pairs: list[tuple[str | None, str | None]] = []
    for k in kinds:
        ra, rb = _registered(db, a, name, k), _registered(db, b, name, k)
        if ra is None and rb is None:
            continue
        fa = _own_files(db, a, name, k) if ra else {}
        fb = _own_files(db, b, name, k) if rb else {}
        real_a, real_b = (ra[0] if ra else None), (rb[0] if rb else None)
        if real_a or real_b:
            pairs.append((real_a, real_b))
        for path in sorted(set(fa) | set(fb)):
            if path in (real_a, real_b) or (path in fa and path in fb and fa[path] == fb[path]):
                continue
            pairs.append((path if path in fa else None, path if path in fb else None))
    if not pairs:
        raise AnswerError(
            f"{name!r} is registered at neither {a} nor {b}", "tpindex which NAME --all says where"
        )
    return list(dict.fromkeys(pairs))  # each pair once, in order


def name_code_diff(db, a: str, b: str, name: str, kind: str | None = None) -> dict:
    """The name's own code from A to B, file by file: the real file of A against the real file of B (a
    move is followed), the other files path by path when the name's code in them changed (a file changed
    elsewhere, in code the name does not run, is left out); unchanged files are left out."""
    name = registered_name(db, name)
    a, b, kinds, pairs = _name_code_pairs(db, a, b, name, kind)
    files = []
    for pa, pb in pairs:
        d = diff_paths(db, a, pa or pb, b, pb or pa)  # a side without the file reads the other side's path
        if d["status"] != "unchanged":
            files.append(d)
    return {"a": a, "b": b, "name": name, "kinds": kinds, "files": files}


def name_code_counts(db, a: str, b: str, name: str, kind: str | None = None) -> tuple[int, int] | None:
    """Lines added and removed in the name's own code from A to B: the +/- of its diff (name_code_diff),
    counted from the stored line ids alone; None when some of that code is not stored."""
    a, b, _, pairs = _name_code_pairs(db, a, b, name, kind)
    return _summed(db, a, b, pairs)


def _summed(db, a: str, b: str, pairs: list[tuple]) -> tuple[int, int] | None:
    from .source import count_paths

    counts = [count_paths(db, a, pa or pb, b, pb or pa) for pa, pb in pairs]
    if any(c is None for c in counts):
        return None
    return sum(c[0] for c in counts), sum(c[1] for c in counts)


def names_code_counts(
    db, a: str, b: str, names: list[tuple[str, str]]
) -> dict[tuple[str, str], tuple | None]:
    """name_code_counts of several (kind, name) of the index between the same two versions (a version's page):
    the versions checked once, each name's registered kind taken as known. A name registered at neither
    version is left out."""
    a, b = require(db, a), require(db, b)
    out = {}
    for kind, name in names:
        try:
            out[(kind, name)] = _summed(db, a, b, _pairs(db, a, b, name, [kind]))
        except AnswerError:
            continue
    return out
