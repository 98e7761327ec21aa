"""`diff`: typed changes between two indexed versions, each with structured fields (kind, name, before,
after, file, line) and a line of prose that explains itself."""

from __future__ import annotations

import json
from bisect import bisect_left
from collections import defaultdict

from ..core.kinds import ChangeType
from ..resolve.vocabulary import PARTS
from .diff_model import Change, CodePart, Diff
from .successors import Successor, successor
from .versions import require, upstream_refs


def _map(db, version: str) -> dict[tuple, dict]:
    return {
        (r["kind"], r["name"]): r
        for r in (dict(x) for x in db.query("select * from parser_map_v where version = ?", [version]))
    }


def diff(db, a: str, b: str) -> Diff:
    a, b = require(db, a), require(db, b)
    changes: list[Change] = []
    ma, mb = _map(db, a), _map(db, b)
    code_changed: list[tuple[str, str]] = []
    gone = {
        key: successor(
            ma[key], [r for k, r in mb.items() if k[0] == key[0]], {k[1] for k in ma if k[0] == key[0]}
        )
        for key in ma
        if key not in mb
    }
    renamed = {(key[0], s.renamed_to) for key, s in gone.items() if s is not None and s.renamed_to}
    for key in sorted(set(ma) | set(mb)):
        if key in renamed and key not in ma:
            continue  # said by the name-renamed of the name it replaces
        succ = gone.get(key)
        changes.extend(
            _name_changes(
                key,
                ma.get(key),
                mb.get(key),
                code_changed,
                succ,
                mb.get((key[0], succ.renamed_to)) if succ and succ.renamed_to else None,
            )
        )
    changes.extend(code_changes(db, a, b, code_changed, mb))
    changes.extend(
        _file_changes(
            db,
            a,
            b,
            "adapter-import",
            "select file, name, module, line from adapter_imports where version = ?",
            lambda r: f"imports {r[1]} from {r[2]}",
            lambda r: f"{r[2]}.{r[1]}",
        )
    )
    changes.extend(_class_changes(db, a, b))
    changes.extend(
        _file_changes(
            db,
            a,
            b,
            "marker",
            "select file, kind, text, line from markers_v where version = ?",
            lambda r: r[2],
            lambda r: r[2],
        )
    )
    changes.extend(
        _file_changes(
            db,
            a,
            b,
            "plant",
            "select file, plant, text, line from plants_v where version = ?",
            lambda r: f"{r[1]}: {r[2]}",
            lambda r: r[2],
        )
    )
    from .history import attach_commits

    attach_commits(db, changes, a, b)  # from a clone: the commits of each name whose code changed
    return Diff(a=a, b=b, changes=changes)


def _name_changes(
    key: tuple[str, str],
    ra: dict | None,
    rb: dict | None,
    code_changed: list,
    succ: Successor | None = None,
    target: dict | None = None,
) -> list[Change]:
    kind, name = key
    subject = f"{name} ({kind})"
    out = []

    def add(type_, detail, before=None, after=None, row=None):
        row = row or rb or ra
        out.append(
            Change(
                type=type_,
                subject=subject,
                detail=detail,
                kind=kind,
                name=name,
                before=before,
                after=after,
                file=row["real_file"],
                line=row["real_line"],
            )
        )

    if ra is None:
        add(
            ChangeType.NAME_ADDED,
            f"registered in {rb['reg_file'] or rb['registry_file']}; {rb['impl']} ->"
            f" {rb['real_file'] or rb['reason']}",
            after=rb["impl"],
        )
        return out
    if rb is None and target is not None:  # its class or real file continues under one new name
        shared = f" {succ.what}" if succ.what else ""
        add(
            ChangeType.NAME_RENAMED,
            f"renamed to {target['name']} (same {succ.by}{shared}; {target['impl']} ->"
            f" {target['real_file'] or target['reason']})",
            before=name,
            after=target["name"],
            row=target,
        )
        out[-1].successors, out[-1].successors_by = succ.names, succ.by
        return out
    if rb is None:
        add(
            ChangeType.NAME_REMOVED,
            f"was {ra['impl']} -> {ra['real_file'] or ra['reason']}" + (f"; {succ.phrase()}" if succ else ""),
            before=ra["impl"],
        )
        if succ:
            out[-1].successors, out[-1].successors_by = succ.names, succ.by
        return out
    if ra["impl"] != rb["impl"]:
        moved = (
            f" (real file {ra['real_file']} -> {rb['real_file']})"
            if ra["real_file"] != rb["real_file"]
            else ""
        )
        add(ChangeType.IMPL_CHANGED, f"{ra['impl']} -> {rb['impl']}{moved}", ra["impl"], rb["impl"])
    elif ra["real_file"] != rb["real_file"]:
        add(
            ChangeType.REAL_FILE_CHANGED,
            f"{ra['real_file']} -> {rb['real_file']}",
            ra["real_file"],
            rb["real_file"],
        )
    was = f"{ra['reg_module']}.{ra['reg_class']}"
    now = f"{rb['reg_module']}.{rb['reg_class']}"
    if was != now:
        add(ChangeType.REGISTERED_CLASS_CHANGED, f"{was} -> {now}", was, now)
    if (
        ra["real_class"] != rb["real_class"]
        and ra["real_file"] == rb["real_file"]
        and ra["impl"] == rb["impl"]
    ):
        add(
            ChangeType.REAL_CLASS_CHANGED,
            f"{ra['real_class']} -> {rb['real_class']}",
            ra["real_class"],
            rb["real_class"],
        )
    if (ra["wrapper_class"], ra["wrapper_file"]) != (rb["wrapper_class"], rb["wrapper_file"]):
        add(
            ChangeType.WRAPPER_CHANGED,
            f"wrapped by {ra['wrapper_class'] or 'nothing'} -> {rb['wrapper_class'] or 'nothing'}",
            ra["wrapper_class"],
            rb["wrapper_class"],
        )
    if ra["real_file"] == rb["real_file"] and ra["impl"] == rb["impl"] and ra["code_sig"] != rb["code_sig"]:
        code_changed.append(key)
    alias_a = set(filter(None, (ra["alias_of"] or "").split(", ")))
    alias_b = set(filter(None, (rb["alias_of"] or "").split(", ")))
    for n in sorted(alias_b - alias_a):
        add(ChangeType.ALIAS_ADDED, f"now shares its class with {n}", None, n)
    for n in sorted(alias_a - alias_b):
        add(ChangeType.ALIAS_REMOVED, f"no longer shares its class with {n}", n, None)
    return out


def _code(db, version: str) -> dict[tuple[str, str], dict[str, tuple]]:
    """(kind, name) -> {path: (blob id, shared, unit id, roles, pieces)} of the files holding each name's
    code, `pieces` the JSON of the [part, what, qualname] of the definitions that run for it there (decoded by
    _Uses.listed: most names' code does not change, their pieces are never looked at)."""
    out: dict[tuple[str, str], dict] = {}
    for kind, name, path, blob, shared, unit, roles, pieces in db.execute(
        "select kind, name, file, blob_id, shared, unit_id, roles, pieces from parser_code_v where version = ?",
        [version],
    ):
        out.setdefault((kind, name), {})[path] = (blob, shared, unit, roles, pieces)
    return out


class _Uses:
    """What one diff reads of the units' definitions, each once: the uses rows of a unit ((what, qualname) ->
    (line, end_line, digest)), read for many units at once when they are known (`read`), its definitions'
    spans in line order (for `lines`), the pieces of a file decoded (`listed`), a blob's line ids (`ids`)."""

    def __init__(self, db):
        self.db, self.rows, self.units, self.spans, self.decoded, self.blobs = db, {}, {}, {}, {}, {}

    def read(self, units) -> None:
        """The rows of these units, a few queries for all of them (each unit's rows in the order of its own
        query: by unit, then as stored)."""
        todo = sorted({u for u in units if u is not None and u not in self.rows})
        for i in range(0, len(todo), 500):
            chunk = todo[i : i + 500]
            for u in chunk:
                self.rows[u] = {}
            for unit, what, q, ln, end, digest in self.db.execute(
                "select unit_id, what, qualname, line, end_line, digest from uses where unit_id in"
                f" ({', '.join('?' * len(chunk))}) order by unit_id, rowid",
                chunk,
            ):
                self.rows[unit].setdefault((what, q), (ln, end, digest))

    def __call__(self, unit: int) -> dict[tuple[str, str], tuple]:
        if unit not in self.rows:
            self.read([unit])
        return self.rows[unit]

    def listed(self, pieces: str | None) -> list:
        """A file's pieces ([part, what, qualname]), decoded once per diff (names sharing a file share them)."""
        if not pieces:
            return []
        if pieces not in self.decoded:
            self.decoded[pieces] = json.loads(pieces)
        return self.decoded[pieces]

    def ids(self, blob_id: str):
        """A blob's line ids (store.code.line_ids), read once per diff (names sharing a file compare it)."""
        from ..store import code

        if blob_id not in self.blobs:
            self.blobs[blob_id] = code.line_ids(self.db, blob_id)
        return self.blobs[blob_id]

    def digest(self, version: str, key: tuple[str, str, str]) -> str | None:
        """The digest of a definition (path, what, qualname) at a version, whoever runs it there: a piece
        that is a name's at one side only but the same code at the other (its file became a parser module,
        a framework file before, or the other way) did not change."""
        path, what, qualname = key
        if (version, path) not in self.units:
            row = self.db.execute(
                "select unit_id from version_files where version = ? and file = ?", [version, path]
            ).fetchone()
            self.units[(version, path)] = row[0] if row else None
        unit = self.units[(version, path)]
        found = self(unit).get((what, qualname)) if unit is not None else None
        return found[2] if found else None

    def lines(self, unit: int, what: str, qualname: str) -> set[int]:
        """The lines that are the definition's own: its span without the definitions written inside it (a
        class's methods and nested classes have rows of their own), found among the unit's spans in line
        order from the definition's first line."""
        rows = self(unit)
        line, end, _ = rows[(what, qualname)]
        if unit not in self.spans:
            self.spans[unit] = sorted((ln, e) for (w, _q), (ln, e, _) in rows.items() if w != "import")
        spans = self.spans[unit]
        own = set(range(line, end + 1))
        for i in range(bisect_left(spans, (line,)), len(spans)):
            ln, e = spans[i]
            if ln > end:
                break
            if (ln, e) != (line, end) and e <= end:
                own.difference_update(range(ln, e + 1))
        return own


def _pieces(
    files: dict[str, tuple], uses: _Uses, shared: bool = False, skip: set[str] = frozenset()
) -> dict[tuple[str, str, str], tuple]:
    """(path, what, qualname) -> (part, digest, unit) of a name's pieces in its own files (or, `shared`,
    in its shared ones), but those of `skip`."""
    out = {}
    for path, (_blob, is_shared, unit, _roles, pieces) in files.items():
        if bool(is_shared) != shared or not pieces or path in skip:
            continue
        rows = uses(unit)
        for part, what, q in uses.listed(pieces):
            if (what, q) in rows:
                out[(path, what, q)] = (part, rows[(what, q)][2], unit)
    return out


def _display(what: str, qualname: str) -> str:
    return f"{qualname} (class body)" if what == "class" else qualname


def code_changes(db, a: str, b: str, names: list[tuple[str, str]], mb: dict) -> list[Change]:
    """`code-changed` for each name whose code (the definitions that run for it, logic.code_pieces) changed
    while its real file stayed, by part (imports only, functions, methods, extraction), and one
    `framework-changed` per shared framework file (engine base, abstract parser, adapters) that changed,
    with the names it affects (a shared file holding only helpers a name calls affects it when those
    changed)."""
    ca, cb = _code(db, a), _code(db, b)
    uses = _Uses(db)
    units = []  # of the names' own files that changed, read at once
    for key in names:
        fa, fb = ca.get(key, {}), cb.get(key, {})
        same = _same_files(fa, fb)
        units += [
            f[2] for files in (fa, fb) for path, f in files.items() if f[4] and not f[1] and path not in same
        ]
    uses.read(units)
    compare = comparer(db, a, b)
    out = [c for kind, name in names if (c := _name_change(db, a, b, kind, name, ca, cb, uses, compare, mb))]
    return out + _framework_changes(ca, cb, uses, compare)


def _same_files(fa: dict[str, tuple], fb: dict[str, tuple]) -> set[str]:
    """The paths holding a name's code at A and at B with the same blob."""
    return {p for p in fa.keys() & fb.keys() if fa[p][0] == fb[p][0]}


def _framework_changes(ca: dict, cb: dict, uses: _Uses, compare) -> list[Change]:
    """One `framework-changed` per shared file that changed, with the names it affects (a file of helpers a
    name calls affects it only when those helpers changed)."""
    framework, helpers = defaultdict(list), defaultdict(dict)
    for key in sorted(set(ca) & set(cb)):
        fa, fb = ca[key], cb[key]
        for p in sorted(set(fa) & set(fb)):
            if fa[p][1] and fb[p][1] and fa[p][0] != fb[p][0]:
                if fa[p][3] == fb[p][3] == "helper" and (uses.listed(fa[p][4]) or uses.listed(fb[p][4])):
                    pa = _pieces({p: fa[p]}, uses, shared=True)
                    pb = _pieces({p: fb[p]}, uses, shared=True)
                    changed = [
                        k
                        for k in sorted(set(pa) | set(pb))
                        if (pa.get(k) or (None, None))[1] != (pb.get(k) or (None, None))[1]
                    ]
                    if not changed:
                        continue  # the helpers it calls there did not change
                    helpers[p].update(dict.fromkeys(_display(k[1], k[2]) for k in changed))
                framework[p].append(f"{key[1]} ({key[0]})")
    out = []
    for p, affected in sorted(framework.items()):
        called = f" (helpers it calls: {', '.join(helpers[p])})" if helpers.get(p) else ""
        out.append(
            Change(
                type=ChangeType.FRAMEWORK_CHANGED,
                subject=p,
                file=p,
                names=affected,
                compare=compare(p),
                detail=f"shared framework code changed{called}; affects {len(affected)} name(s):"
                f" {', '.join(affected)}",
            )
        )
    return out


def _name_change(
    db, a: str, b: str, kind: str, name: str, ca: dict, cb: dict, uses: _Uses, compare, mb: dict
) -> Change | None:
    """`code-changed` for one name, by part, with each file's +/- counts; None when its code did not change."""
    fa, fb = ca.get((kind, name), {}), cb.get((kind, name), {})
    # a file with the same blob at A and B is one unit: every piece in it has the same digest at both (and
    # digest() finds it there for a piece that is the name's at one side only), so none of it changed
    same = _same_files(fa, fb)
    pa, pb = _pieces(fa, uses, skip=same), _pieces(fb, uses, skip=same)
    changed = []  # (path, what, qualname, change, part)
    for k in sorted(set(pa) | set(pb)):
        if k not in pb:
            if uses.digest(b, k) != pa[k][1]:
                changed.append((*k, "removed", pa[k][0]))
        elif k not in pa:
            if uses.digest(a, k) != pb[k][1]:
                changed.append((*k, "added", pb[k][0]))
        elif pa[k][1] != pb[k][1]:
            changed.append((*k, "changed", pb[k][0]))
    if not changed:
        return None
    paths = list(dict.fromkeys(c[0] for c in changed))
    files, parts = [], []
    lines: dict[tuple[str, str], tuple[set, set]] = {}  # (path, part) -> (lines at A, lines at B)
    for path, what, q, change, part in changed:
        la, lb = lines.setdefault((path, part), (set(), set()))
        if change != "added":
            la |= uses.lines(pa[(path, what, q)][2], what, q)
        if change != "removed":
            lb |= uses.lines(pb[(path, what, q)][2], what, q)
    counts: dict[tuple[str, str], tuple[int, int] | None] = {}
    for path in paths:
        blob_a, blob_b = (fa.get(path) or (None,))[0], (fb.get(path) or (None,))[0]
        f = {"file": path, "blob_a": blob_a, "blob_b": blob_b, "compare": compare(path)}
        here = {part: v for (p, part), v in lines.items() if p == path}
        counted = _counted(uses, blob_a, blob_b, here)
        if counted is not None:
            per_part, f["file_added"], f["file_removed"] = counted
            counts.update({(path, part): c for part, c in per_part.items()})
            f["added"] = sum(c[0] for c in per_part.values())
            f["removed"] = sum(c[1] for c in per_part.values())
        files.append(f)
    for part in PARTS:
        mine = [c for c in changed if c[4] == part]
        if not mine:
            continue
        known = [counts.get((p, part)) for p in dict.fromkeys(c[0] for c in mine)]
        added = None if None in known else sum(k[0] for k in known)
        removed = None if None in known else sum(k[1] for k in known)
        parts.append(
            CodePart(
                part=part,
                names=list(dict.fromkeys(_display(c[1], c[2]) for c in mine)),
                added=added,
                removed=removed,
                pieces=[{"file": c[0], "what": c[1], "qualname": c[2], "change": c[3]} for c in mine],
            )
        )
    real = mb[(kind, name)]
    return Change(
        type=ChangeType.CODE_CHANGED,
        subject=f"{name} ({kind})",
        kind=kind,
        name=name,
        detail=_parts_text(parts, paths),
        file=real["real_file"],
        line=real["real_line"],
        files=files,
        parts=parts,
        compare=compare(paths[0]),
    )


def _parts_text(parts: list[CodePart], paths: list[str]) -> str:
    """`imports only: X (+1 -1) in F`, else `code changed in F: functions f, g (+3 -1); methods C.m (+1 -0)`."""

    def counted(p: CodePart) -> str:
        return f" (+{p.added} -{p.removed})" if p.added is not None else ""

    def named(p: CodePart) -> str:
        marks = {"added": " (new)", "removed": " (removed)", "changed": ""}
        shown = dict.fromkeys(_display(x["what"], x["qualname"]) + marks[x["change"]] for x in p.pieces)
        return ", ".join(shown)

    where = ", ".join(paths)
    if [p.part for p in parts] == ["imports"]:
        return f"imports only: {named(parts[0])}{counted(parts[0])} in {where}"
    return f"code changed in {where}: " + "; ".join(f"{p.part} {named(p)}{counted(p)}" for p in parts)


# (blob a, blob b) -> the changed opcodes of their line ids: equal ids are equal lines in any database, so the
# opcodes of two blobs are the same whichever database holds them, and a page asked again does not compare again
_OPCODES: dict[tuple[str, str], list] = {}
MAX_OPCODES = 4_000


def _counted(uses: _Uses, blob_a: str | None, blob_b: str | None, lines: dict[str, tuple[set, set]]):
    """Lines removed and added in each part's lines of a file, and in the whole file, compared by the stored
    line ids (no text read): ({part: (added, removed)}, file added, file removed); a side without the file
    counts its part's lines whole. None when the code is not stored."""
    if blob_a is None or blob_b is None:
        total = uses.ids(blob_a or blob_b)
        if total is None:
            return None
        per = {part: (len(lb), len(la)) for part, (la, lb) in lines.items()}
        return per, (len(total) if blob_b else 0), (len(total) if blob_a else 0)
    ia, ib = uses.ids(blob_a), uses.ids(blob_b)
    if ia is None or ib is None:
        return None
    ops = _OPCODES.get((blob_a, blob_b))
    if (
        ops is None
    ):  # names sharing a file compare it once, and once per process (a blob id names its content)
        from .linediff import Matcher

        ops = [op for op in Matcher(ia, ib).get_opcodes() if op[0] != "equal"]
        if len(_OPCODES) >= MAX_OPCODES:
            _OPCODES.clear()
        _OPCODES[(blob_a, blob_b)] = ops
    per = {part: [0, 0] for part in lines}
    file_added = file_removed = 0
    for _tag, i1, i2, j1, j2 in ops:  # 0-based [i1, i2) removed from A, [j1, j2) added in B
        file_removed += i2 - i1
        file_added += j2 - j1
        for part, (la, lb) in lines.items():
            per[part][1] += len(la.intersection(range(i1 + 1, i2 + 1)))
            per[part][0] += len(lb.intersection(range(j1 + 1, j2 + 1)))
    return {part: tuple(v) for part, v in per.items()}, file_added, file_removed


def comparer(db, a: str, b: str):
    """path -> the upstream compare link of A and B at that file (None when the upstream has none)."""
    from ..core.links import compare_url

    upstream, refs = upstream_refs(db, [a, b])
    return lambda path: compare_url(upstream, refs.get(a, a), refs.get(b, b), path)


def upstream_linker(db):
    """(version, file, line) -> the upstream URL of that line at that version."""
    from ..core.links import source_url

    upstream, refs = upstream_refs(db)
    return lambda version, file, line=None: source_url(upstream, refs.get(version, version), file, line)


def _located(db, sql: str, version: str) -> dict[tuple, list[int]]:
    """Rows (all columns but the last, a line) -> their lines, in order."""
    out: dict[tuple, list[int]] = defaultdict(list)
    for r in db.execute(sql, [version]):
        out[tuple(r[:-1])].append(r[-1])
    return out


def _file_changes(db, a: str, b: str, type_: str, sql: str, detail, value) -> list[Change]:
    """Added and removed rows of a per-file fact (same file and same text, wherever its line moved)."""
    la, lb = _located(db, sql, a), _located(db, sql, b)
    out = []
    for this, other, suffix in ((lb, la, "added"), (la, lb, "removed")):
        for row in sorted(this):
            extra = len(this[row]) - len(other.get(row, []))
            for line in this[row][-extra:] if extra > 0 else []:
                out.append(
                    Change(
                        type=ChangeType(f"{type_}-{suffix}"),
                        subject=row[0],
                        detail=detail(row),
                        file=row[0],
                        line=line,
                        before=value(row) if suffix == "removed" else None,
                        after=value(row) if suffix == "added" else None,
                    )
                )
    return out


def _class_changes(db, a: str, b: str) -> list[Change]:
    """Classes added, removed, moved inside a file (another enclosing function or class, same name), and
    re-based."""
    sql = "select file, class, line from classes_v where version = ?"
    ca, cb = _located(db, sql, a), _located(db, sql, b)
    added = sorted(set(cb) - set(ca))
    removed = sorted(set(ca) - set(cb))
    out = []
    for file, cls in removed:
        moved = next((x for x in added if x[0] == file and x[1].split(".")[-1] == cls.split(".")[-1]), None)
        if moved:
            added.remove(moved)
            out.append(
                Change(
                    type=ChangeType.CLASS_MOVED,
                    subject=file,
                    detail=f"class {cls} -> {moved[1]}",
                    file=file,
                    line=cb[moved][0],
                    before=cls,
                    after=moved[1],
                )
            )
        else:
            out.append(
                Change(
                    type=ChangeType.CLASS_REMOVED,
                    subject=file,
                    detail=f"class {cls}",
                    file=file,
                    line=ca[(file, cls)][0],
                    before=cls,
                )
            )
    for file, cls in added:
        out.append(
            Change(
                type=ChangeType.CLASS_ADDED,
                subject=file,
                detail=f"class {cls}",
                file=file,
                line=cb[(file, cls)][0],
                after=cls,
            )
        )
    ba = {k: v[0] for k, v in _bases(db, a).items()}
    bb = _bases(db, b)
    for key in sorted(set(ba) & set(bb)):
        if ba[key] != bb[key][0]:
            out.append(
                Change(
                    type=ChangeType.CLASS_REBASED,
                    subject=key[0],
                    detail=f"class {key[1]}: bases {ba[key]} -> {bb[key][0]}",
                    file=key[0],
                    line=bb[key][1],
                    before=ba[key],
                    after=bb[key][0],
                )
            )
    return sorted(out, key=lambda c: (c.type != "class-moved", c.type, c.file, c.line or 0))


def _bases(db, version: str) -> dict[tuple[str, str], tuple[str, int]]:
    """(file, class) -> (its bases, comma-separated in order, and its line) at a version: the class_hierarchy
    view's rows, read from the version's own files (the view's left join to each base's file materializes
    the files of every version first: 18 ms a version on 64)."""
    sql = """
        with vf as (select file, module, unit_id from version_files where version = ?)
        select file, class, group_concat(coalesce(base, base_written), ', '), min(line) from (
            select vf.file, c.qualname as class, c.line, b.pos, b.written as base_written, b.resolved as base
            from classes c join vf on vf.unit_id = c.unit_id
            join bases b on b.unit_id = c.unit_id and b.class = c.qualname and b.keyword is null
            left join vf bf on bf.module = b.base_module
            order by vf.file, c.qualname, b.pos)
        group by file, class"""
    return {(r[0], r[1]): (r[2], r[3]) for r in db.execute(sql, [version])}


# -- text and Markdown -------------------------------------------------------------------------------------
