"""`diff`: typed changes between two indexed versions, each with structured fields (kind, name, before,
after, file, line) and a line of prose that explains itself."""

from __future__ import annotations

from collections import defaultdict

from .model import Change, Diff
from .successors import Successor, successor
from .versions import require, upstream_refs


def _map(db, version: str) -> dict[tuple, dict]:
    return {(r["kind"], r["name"]): r for r in (dict(x) for x in db.query(
        "select * from parser_map_v where version = ?", [version]))}


def diff(db, a: str, b: str) -> Diff:
    a, b = require(db, a), require(db, b)
    changes: list[Change] = []
    ma, mb = _map(db, a), _map(db, b)
    code_changed: list[tuple[str, str]] = []
    gone = {key: successor(ma[key], [r for k, r in mb.items() if k[0] == key[0]], {k[1] for k in ma if k[0] == key[0]})
            for key in ma if key not in mb}
    renamed = {(key[0], s.renamed_to) for key, s in gone.items() if s is not None and s.renamed_to}
    for key in sorted(set(ma) | set(mb)):
        if key in renamed and key not in ma:
            continue  # said by the name-renamed of the name it replaces
        succ = gone.get(key)
        changes.extend(_name_changes(key, ma.get(key), mb.get(key), code_changed, succ,
                                     mb.get((key[0], succ.renamed_to)) if succ and succ.renamed_to else None))
    changes.extend(code_changes(db, a, b, code_changed, mb))
    changes.extend(_file_changes(db, a, b, "adapter-import",
                                 "select file, name, module, line from adapter_imports where version = ?",
                                 lambda r: f"imports {r[1]} from {r[2]}", lambda r: f"{r[2]}.{r[1]}"))
    changes.extend(_class_changes(db, a, b))
    changes.extend(_file_changes(db, a, b, "marker", "select file, kind, text, line from markers_v where version = ?",
                                 lambda r: r[2], lambda r: r[2]))
    changes.extend(_file_changes(db, a, b, "plant", "select file, plant, text, line from plants_v where version = ?",
                                 lambda r: f"{r[1]}: {r[2]}", lambda r: r[2]))
    from .history import attach_commits

    attach_commits(db, changes, a, b)  # from a clone: the commits of each name whose code changed
    return Diff(a=a, b=b, changes=changes)


def _name_changes(key: tuple[str, str], ra: dict | None, rb: dict | None, code_changed: list,
                  succ: Successor | None = None, target: dict | None = None) -> list[Change]:
    kind, name = key
    subject = f"{name} ({kind})"
    out = []

    def add(type_, detail, before=None, after=None, row=None):
        row = row or rb or ra
        out.append(Change(type=type_, subject=subject, detail=detail, kind=kind, name=name, before=before,
                          after=after, file=row["real_file"], line=row["real_line"]))

    if ra is None:
        add("name-added", f"registered in {rb['reg_file'] or rb['registry_file']}; {rb['impl']} ->"
            f" {rb['real_file'] or rb['reason']}", after=rb["impl"])
        return out
    if rb is None and target is not None:  # its class or real file continues under one new name
        shared = f" {succ.what}" if succ.what else ""
        add("name-renamed", f"renamed to {target['name']} (same {succ.by}{shared}; {target['impl']} ->"
            f" {target['real_file'] or target['reason']})", before=name, after=target["name"], row=target)
        out[-1].successors, out[-1].successors_by = succ.names, succ.by
        return out
    if rb is None:
        add("name-removed", f"was {ra['impl']} -> {ra['real_file'] or ra['reason']}"
            + (f"; {succ.phrase()}" if succ else ""), before=ra["impl"])
        if succ:
            out[-1].successors, out[-1].successors_by = succ.names, succ.by
        return out
    if ra["impl"] != rb["impl"]:
        moved = f" (real file {ra['real_file']} -> {rb['real_file']})" if ra["real_file"] != rb["real_file"] else ""
        add("impl-changed", f"{ra['impl']} -> {rb['impl']}{moved}", ra["impl"], rb["impl"])
    elif ra["real_file"] != rb["real_file"]:
        add("real-file-changed", f"{ra['real_file']} -> {rb['real_file']}", ra["real_file"], rb["real_file"])
    was = f"{ra['reg_module']}.{ra['reg_class']}"
    now = f"{rb['reg_module']}.{rb['reg_class']}"
    if was != now:
        add("registered-class-changed", f"{was} -> {now}", was, now)
    if ra["real_class"] != rb["real_class"] and ra["real_file"] == rb["real_file"] and ra["impl"] == rb["impl"]:
        add("real-class-changed", f"{ra['real_class']} -> {rb['real_class']}", ra["real_class"], rb["real_class"])
    if (ra["wrapper_class"], ra["wrapper_file"]) != (rb["wrapper_class"], rb["wrapper_file"]):
        add("wrapper-changed", f"wrapped by {ra['wrapper_class'] or 'nothing'} -> {rb['wrapper_class'] or 'nothing'}",
            ra["wrapper_class"], rb["wrapper_class"])
    if ra["real_file"] == rb["real_file"] and ra["impl"] == rb["impl"] and ra["code_sig"] != rb["code_sig"]:
        code_changed.append(key)
    alias_a = set(filter(None, (ra["alias_of"] or "").split(", ")))
    alias_b = set(filter(None, (rb["alias_of"] or "").split(", ")))
    for n in sorted(alias_b - alias_a):
        add("alias-added", f"now shares its class with {n}", None, n)
    for n in sorted(alias_a - alias_b):
        add("alias-removed", f"no longer shares its class with {n}", n, None)
    return out


def _code(db, version: str) -> dict[tuple[str, str], dict[str, tuple[str, int]]]:
    """(kind, name) -> {path: (blob id, shared)} of the files holding each name's code."""
    out: dict[tuple[str, str], dict] = {}
    for kind, name, path, blob, shared in db.execute(
            "select kind, name, file, blob_id, shared from parser_code_v where version = ?", [version]):
        out.setdefault((kind, name), {})[path] = (blob, shared)
    return out


def code_changes(db, a: str, b: str, names: list[tuple[str, str]], mb: dict) -> list[Change]:
    """`code-changed` for each name whose own code files changed while its real file stayed, and one
    `framework-changed` per shared framework file (engine base, abstract parser, adapters) that changed,
    with the names it affects."""
    ca, cb = _code(db, a), _code(db, b)
    out, framework = [], defaultdict(list)
    compare = comparer(db, a, b)
    for key in sorted(set(ca) & set(cb)):
        fa, fb = ca[key], cb[key]
        for p in sorted(set(fa) & set(fb)):
            if fa[p][1] and fb[p][1] and fa[p][0] != fb[p][0]:
                framework[p].append(f"{key[1]} ({key[0]})")
    for kind, name in names:
        fa, fb = ca.get((kind, name), {}), cb.get((kind, name), {})
        own = [p for p in sorted(set(fa) | set(fb)) if not (fa.get(p) or fb.get(p))[1]
               and (fa.get(p) or (None,))[0] != (fb.get(p) or (None,))[0]]
        if not own:
            continue
        files = [{"file": p, "blob_a": (fa.get(p) or (None,))[0], "blob_b": (fb.get(p) or (None,))[0],
                  "compare": compare(p)} for p in own]
        for f in files:
            if f["blob_a"] and f["blob_b"]:
                f.update(_counted(db, a, b, f["blob_a"], f["blob_b"], f["file"], kind, name))
        real = mb[(kind, name)]
        where = ", ".join(f"{f['file']} ({_counts_text(f)})" if f.get("added") is not None else f["file"] for f in files)
        out.append(Change(type="code-changed", subject=f"{name} ({kind})", kind=kind, name=name,
                          detail=f"code changed in {where}", file=real["real_file"], line=real["real_line"],
                          files=files, compare=compare(own[0])))
    for p, affected in sorted(framework.items()):
        out.append(Change(type="framework-changed", subject=p, file=p, names=affected, compare=compare(p),
                          detail=f"shared framework code changed; affects {len(affected)} name(s): {', '.join(affected)}"))
    return out


def _name_classes(db, version: str, kind: str, name: str, path: str) -> list[tuple[int, int]]:
    """Spans (line, end_line) of the classes holding the name's code in one file at a version: its real,
    registered and wrapper classes and the classes defining its contract methods."""
    names = {r[0] for r in db.execute(
        "select defining_class from parser_methods_v where version = ? and kind = ? and name = ? and file = ?",
        [version, kind, name, path])}
    row = db.execute("select real_class, real_file, reg_class, reg_file, wrapper_class, wrapper_file from parser_map_v"
                     " where version = ? and kind = ? and name = ?", [version, kind, name]).fetchone()
    if row:
        names |= {cls for cls, file in zip(row[0::2], row[1::2], strict=True) if cls and file == path}
    return [(ln, end) for cls, ln, end in db.execute(
        "select class, line, end_line from classes_v where version = ? and file = ?", [version, path]) if cls in names]


def _counted(db, a: str, b: str, blob_a: str, blob_b: str, path: str, kind: str, name: str) -> dict:
    """Lines added and removed in the file, and within the name's classes (`added`, `removed`), compared by
    the stored line ids (no text read); {} when the code is not stored."""
    cache = db.__dict__.setdefault("_code_opcodes", {})  # names sharing a file compare it once
    if (blob_a, blob_b) not in cache:
        import difflib

        from .. import code

        ia, ib = (code.line_ids(db, x) if x else None for x in (blob_a, blob_b))
        cache[(blob_a, blob_b)] = None if ia is None or ib is None else [
            op for op in difflib.SequenceMatcher(None, ia, ib, autojunk=False).get_opcodes() if op[0] != "equal"]
    ops = cache[(blob_a, blob_b)]
    if ops is None:
        return {}
    spans_a, spans_b = _name_classes(db, a, kind, name, path), _name_classes(db, b, kind, name, path)
    out = {"added": 0, "removed": 0, "file_added": 0, "file_removed": 0}
    for _tag, i1, i2, j1, j2 in ops:  # 0-based [i1, i2) removed from A, [j1, j2) added in B
        out["file_removed"] += i2 - i1
        out["file_added"] += j2 - j1
        out["removed"] += sum(1 for n in range(i1 + 1, i2 + 1) if any(lo <= n <= hi for lo, hi in spans_a))
        out["added"] += sum(1 for n in range(j1 + 1, j2 + 1) if any(lo <= n <= hi for lo, hi in spans_b))
    return out


def _counts_text(f: dict) -> str:
    text = f"+{f['added']} -{f['removed']} in its classes"
    if (f["file_added"], f["file_removed"]) != (f["added"], f["removed"]):
        text += f", +{f['file_added']} -{f['file_removed']} in the file"
    return text


def comparer(db, a: str, b: str):
    """path -> the upstream compare link of A and B at that file (None when the upstream has none)."""
    from ..serve.links import compare_url

    upstream, refs = upstream_refs(db, [a, b])
    return lambda path: compare_url(upstream, refs.get(a, a), refs.get(b, b), path)


def upstream_linker(db):
    """(version, file, line) -> the upstream URL of that line at that version."""
    from ..serve.links import source_url

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
            for line in (this[row][-extra:] if extra > 0 else []):
                out.append(Change(type=f"{type_}-{suffix}", subject=row[0], detail=detail(row), file=row[0], line=line,
                                  before=value(row) if suffix == "removed" else None,
                                  after=value(row) if suffix == "added" else None))
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
            out.append(Change(type="class-moved", subject=file, detail=f"class {cls} -> {moved[1]}", file=file,
                              line=cb[moved][0], before=cls, after=moved[1]))
        else:
            out.append(Change(type="class-removed", subject=file, detail=f"class {cls}", file=file,
                              line=ca[(file, cls)][0], before=cls))
    for file, cls in added:
        out.append(Change(type="class-added", subject=file, detail=f"class {cls}", file=file, line=cb[(file, cls)][0],
                          after=cls))
    bases_sql = ("select file, class, group_concat(coalesce(base, base_written), ', '), min(line) from"
                 " (select * from class_hierarchy where version = ? order by file, class, pos) group by file, class")
    ba = {(r[0], r[1]): r[2] for r in db.execute(bases_sql, [a])}
    bb = {(r[0], r[1]): (r[2], r[3]) for r in db.execute(bases_sql, [b])}
    for key in sorted(set(ba) & set(bb)):
        if ba[key] != bb[key][0]:
            out.append(Change(type="class-rebased", subject=key[0], detail=f"class {key[1]}: bases {ba[key]} -> {bb[key][0]}",
                              file=key[0], line=bb[key][1], before=ba[key], after=bb[key][0]))
    return sorted(out, key=lambda c: (c.type != "class-moved", c.type, c.file, c.line or 0))


# -- text and Markdown -------------------------------------------------------------------------------------

def format_text(d: Diff, width: int | None = None) -> str:
    from . import textfmt

    if not d.changes:
        return f"no changes between {d.a} and {d.b}"
    lines = [f"{len(d.changes)} change(s) from {d.a} to {d.b}:"]
    pad = max(len(c.type) for c in d.changes) + 2
    for c in d.changes:
        lines += textfmt.table([(c.type.ljust(pad - 2), f"{c.subject}: {c.detail}")], width, indent="")
        for k in c.commits or ():
            lines += textfmt.hanging(" " * pad + f"commit {k.sha[:10]} ", k.subject, width)
    return "\n".join(lines)


def format_markdown(d: Diff, source_url=None) -> str:
    """A table for issues and pull requests; `source_url(version, file, line)` links files upstream."""
    lines = [f"# Changes from {d.a} to {d.b}", ""]
    if not d.changes:
        return "\n".join(lines + ["No changes."])
    lines += ["| change | kind | name | before | after | where | detail |", "|---|---|---|---|---|---|---|"]

    def esc(s):
        return "" if s is None else str(s).replace("|", "\\|").replace("\n", " ")

    for c in d.changes:
        where = ""
        if c.file:
            at = d.a if c.type.endswith("-removed") else d.b
            label = f"{c.file}:{c.line}" if c.line else c.file
            url = source_url(at, c.file, c.line) if source_url else None
            where = f"[{esc(label)}]({url})" if url else esc(label)
        if c.compare:
            where += f" ([compare]({c.compare}))"
        detail = esc(c.detail)
        if c.commits:
            from .history import md_commit

            detail += "<br>" + "<br>".join(md_commit(k) for k in c.commits)
        lines.append(f"| {c.type} | {esc(c.kind)} | {esc(c.name)} | {esc(c.before)} | {esc(c.after)} | {where} |"
                     f" {detail} |")
    return "\n".join(lines)
