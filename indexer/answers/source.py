"""`show` and `diff --code`: the stored code of a path at a version, and a unified diff of two.

`show_span(db, version, path, start, end)` and `diff_paths(db, a, path_a, b, path_b)` take any (path,
span): the name forms (`show NAME`, `diff --code NAME`) call them with a parser's real file and class span.
Both read the database only (no repository, no archive cache).
"""

from __future__ import annotations

from ..core.suggest import close_names
from ..store import code
from .linediff import Matcher
from .versions import AnswerError, require

CONTEXT = 3  # lines of context around each change, as diff -u and git diff


_blob_at = code.blob_at


def present_in(db, path: str) -> list[str]:
    """The indexed versions that hold path, in version order."""
    return [
        r[0]
        for r in db.execute(
            "select v.label from files f join versions v on v.id = f.version_id and v.status = 'complete'"
            " where f.path = ? order by v.ord",
            [path],
        )
    ]


def _missing(db, version: str, path: str, also: str | None = None) -> AnswerError:
    from .grep import collapse
    from .versions import indexed

    paths = [
        r[0]
        for r in db.execute(
            "select f.path from files f join versions v on v.id = f.version_id where v.label = ?", [version]
        )
    ]
    base = path.rsplit("/", 1)[-1]
    close = close_names(path, paths, n=4, cutoff=0.6, also=lambda p: p.rsplit("/", 1)[-1] == base)
    where = present_in(db, path)
    at = f"{version} or {also}" if also else version
    if where:
        msg = f"{path} is not in {at}; it is in {collapse(where, indexed(db))}"
    else:
        msg = f"{path} is in no indexed version"
    hints = []
    if close:
        hints.append(f"did you mean {', '.join(close)}?")
    if where:
        hints.append(
            f"or ask --at {where[-1]}" if not also else f"or compare versions from {where[0]} to {where[-1]}"
        )
    return AnswerError(
        msg, " ".join(hints) or "tpindex grep or the version_files view lists the paths of a version"
    ).offering(version, where[-3:], path, close)


def stored_paths(db, version: str) -> frozenset[str]:
    """The paths of a version whose code the database holds (the ones a source page can show)."""
    if not code._has_table(db):
        return frozenset()
    return frozenset(
        r[0]
        for r in db.execute(
            "select f.path from files f join versions v on v.id = f.version_id join units u on u.id = f.unit_id"
            " join code_texts t on t.blob_id = u.blob_id where v.label = ?",
            [version],
        )
    )


def line_counts(d: dict) -> tuple[int, int]:
    """Lines added and removed by a diff of diff_paths (its hunks' + and - lines)."""
    lines = [line for h in d.get("hunks") or [] for line in h["lines"]]
    return sum(1 for x in lines if x[:1] == "+"), sum(1 for x in lines if x[:1] == "-")


def _stored_keys(db, blob: str | None) -> list[int] | None:
    """What diff_paths compares for a blob (its line ids, the last one marked without a final newline), read
    without the lines' text; [] for no blob (the path is absent); None when its code is not stored or is
    binary."""
    if blob is None:
        return []
    row = (
        db.execute("select kind, final_newline, lines from code_texts where blob_id = ?", [blob]).fetchone()
        if code._has_table(db)
        else None
    )
    if row is None or row[0] == "binary":
        return None
    keys = list(code.unpack_ids(row[2])) if row[2] else []
    if keys and not row[1]:
        keys[-1] = -keys[-1]
    return keys


_COUNTS: dict[tuple, tuple[int, int] | None] = {}  # (blob a, blob b) -> counts: a blob id names its content
MAX_COUNTS = 20_000


def count_paths(db, a: str, path_a: str, b: str, path_b: str) -> tuple[int, int] | None:
    """The (added, removed) of diff_paths(a, path_a, b, path_b) without building it: its + and - lines; None
    when a side's code is not stored (or binary)."""
    blobs = (_blob_at(db, a, path_a), _blob_at(db, b, path_b))
    if blobs[0] == blobs[1]:
        return 0, 0
    if blobs not in _COUNTS:
        ka, kb = _stored_keys(db, blobs[0]), _stored_keys(db, blobs[1])
        counts = None
        if ka is not None and kb is not None:
            added = removed = 0
            for tag, a1, a2, b1, b2 in Matcher(ka, kb).get_opcodes():
                if tag in ("replace", "delete"):
                    removed += a2 - a1
                if tag in ("replace", "insert"):
                    added += b2 - b1
            counts = (added, removed)
        if len(_COUNTS) >= MAX_COUNTS:
            _COUNTS.clear()
        _COUNTS[blobs] = counts
    return _COUNTS[blobs]


def load_at(db, version: str, path: str, required: bool = True) -> code.Code | None:
    """The stored code of path at version (version already checked)."""
    blob_id = _blob_at(db, version, path)
    if blob_id is None:
        if required:
            raise _missing(db, version, path)
        return None
    found = code.load(db, blob_id)
    if found is None:  # every file in scope is stored, parsed code, templates and tests alike
        raise AnswerError(
            f"the code of {path} at {version} is not stored in this database (it was built by an "
            "older tpindex)",
            "build the same versions again: the build stores it",
        )
    return found


def show_span(db, version: str, path: str, start: int | None = None, end: int | None = None) -> dict:
    """Lines start..end (1-based, inclusive; None: the first / the last) of path at version."""
    version = require(db, version)
    c = load_at(db, version, path)
    total = len(c.lines)
    first = 1 if start is None else start
    last = total if end is None else end
    if c.kind != "binary":
        if first < 1 or (end is not None and last < first):
            raise AnswerError(
                f"{first}-{last} is not a range of lines", "write PATH:LINE or PATH:START-END, START >= 1"
            )
        if first > max(total, 1) or (total == 0 and start is not None):
            raise AnswerError(
                f"line {first} is past the end of {path} at {version} ({total} lines)",
                f"ask lines 1-{total}" if total else "the file is empty",
            )
        last = min(last, total)
    return {
        "version": version,
        "path": path,
        "blob_id": c.blob_id,
        "kind": c.kind,
        "size": c.size,
        "line_count": total,
        "start": first,
        "end": last,
        "final_newline": c.final_newline,
        "lines": [{"line": n, "text": c.lines[n - 1]} for n in range(first, last + 1)]
        if c.kind != "binary"
        else [],
    }


# -- diff -------------------------------------------------------------------------------------------------

NO_EOL = "\\ No newline at end of file"


def _keys(c: code.Code | None) -> list[int]:
    """What the diff compares: line ids (equal ids, equal lines), the last line marked when the file does
    not end with a newline (so a newline added at the end is a change, as in git diff)."""
    if c is None:
        return []
    keys = list(c.ids or [])
    if keys and not c.final_newline:
        keys[-1] = -keys[-1]
    return keys


def diff_paths(db, a: str, path_a: str, b: str, path_b: str, context: int = CONTEXT) -> dict:
    """A unified diff of path_a at version a against path_b at version b, as hunks. A path absent on one
    side is an added or deleted file; absent on both, an error."""
    a, b = require(db, a), require(db, b)
    ca = load_at(db, a, path_a, required=False)
    cb = load_at(db, b, path_b, required=False)
    if ca is None and cb is None:
        raise _missing(db, a, path_a, also=b) if path_a == path_b else _missing(db, a, path_a)
    if ca is None:
        status = "added"
    elif cb is None:
        status = "deleted"
    elif ca.blob_id == cb.blob_id:
        status = "unchanged" if path_a == path_b else "moved"
    else:
        status = "modified"
    out = {
        "a": a,
        "b": b,
        "status": status,
        "path_a": path_a if ca else None,
        "path_b": path_b if cb else None,
        "blob_a": ca.blob_id if ca else None,
        "blob_b": cb.blob_id if cb else None,
        "hunks": [],
    }
    if status in ("unchanged", "moved"):
        return out
    if (ca and ca.kind == "binary") or (cb and cb.kind == "binary"):
        out["binary"] = True
        return out
    la, lb = (ca.lines if ca else []), (cb.lines if cb else [])
    ka, kb = _keys(ca), _keys(cb)
    matcher = Matcher(ka, kb)
    for group in matcher.get_grouped_opcodes(context):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        lines: list[str] = []
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                lines += _marked(" ", la, ka, a1, a2)
                continue
            if tag in ("replace", "delete"):
                lines += _marked("-", la, ka, a1, a2)
            if tag in ("replace", "insert"):
                lines += _marked("+", lb, kb, b1, b2)
        out["hunks"].append(
            {
                "old_start": i1 + 1 if i2 > i1 else i1,
                "old_lines": i2 - i1,
                "new_start": j1 + 1 if j2 > j1 else j1,
                "new_lines": j2 - j1,
                "lines": lines,
            }
        )
    return out


def _marked(sign: str, lines: list[str], keys: list[int], lo: int, hi: int) -> list[str]:
    out = []
    for i in range(lo, hi):
        out.append(sign + lines[i])
        if keys[i] < 0:
            out.append(NO_EOL)
    return out


def as_shown(d: dict):
    from .model import Line, Shown

    return Shown(
        version=d["version"],
        path=d["path"],
        blob_id=d["blob_id"],
        kind=d["kind"],
        size=d["size"],
        line_count=d["line_count"],
        start=d["start"],
        end=d["end"],
        final_newline=bool(d["final_newline"]),
        lines=[Line(r["line"], r["text"]) for r in d["lines"]],
    )


def as_code_diff(d: dict):
    from .model import CodeDiff, Hunk

    return CodeDiff(
        a=d["a"],
        b=d["b"],
        status=d["status"],
        path_a=d["path_a"],
        path_b=d["path_b"],
        blob_a=d["blob_a"],
        blob_b=d["blob_b"],
        binary=bool(d.get("binary")),
        hunks=[Hunk(**h) for h in d["hunks"]],
    )


def file_outline(db, version: str, path: str) -> dict:
    """What a source page shows beside the code of path at version: its classes with their methods (lines),
    its module-level functions (signatures: closures and methods left out), and the parser names it implements (`implements`: kind, name and the roles the file plays for it, as
    parser_code records them: registered, real, engine, wrapper, base, helper)."""
    unit = db.execute(
        "select f.unit_id from files f join versions v on v.id = f.version_id"
        " where v.label = ? and f.path = ?",
        [version, path],
    ).fetchone()
    classes, functions = [], []
    if unit:
        methods: dict[str, list[dict]] = {}
        for cls, name, line in db.execute(
            "select class, name, line from methods where unit_id = ? order by line", [unit[0]]
        ):
            methods.setdefault(cls, []).append({"name": name, "line": line})
        classes = [
            {"name": q, "line": line, "methods": methods.get(q, [])}
            for q, line in db.execute(
                "select qualname, line from classes where unit_id = ? order by line", [unit[0]]
            )
        ]
        functions = [
            {"name": n, "line": line}
            for n, line in db.execute(
                "select name, line from signatures where unit_id = ? and kind = 'function' order by line, name",
                [unit[0]],
            )
        ]
    implements = [
        {"kind": k, "name": n, "roles": r}
        for k, n, r in db.execute(
            "select kind, name, roles from parser_code_v where version = ? and file = ? order by"
            " case kind when 'tool' then 0 when 'reasoning' then 1 else 2 end, name",
            [version, path],
        )
    ]
    return {"classes": classes, "functions": functions, "implements": implements}


def directory(db, version: str, path: str) -> list[str] | None:
    """The paths of version under the directory path (in scope), or None when path is no directory of it."""
    prefix = path.rstrip("/") + "/"
    found = [
        r[0]
        for r in db.execute(
            "select f.path from files f join versions v on v.id = f.version_id where v.label = ? and f.path like ?"
            " escape '\\' order by f.path",
            [version, prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"],
        )
    ]
    return found or None
