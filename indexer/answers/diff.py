"""`diff`: typed changes between two indexed versions, each a line that explains itself."""

from __future__ import annotations

from collections import Counter

from .versions import require

MAP_COLS = ("impl", "reg_module", "reg_class", "reg_file", "real_class", "real_file", "adapter", "alias_of")


def _map(db, version: str) -> dict[tuple, dict]:
    return {(r["kind"], r["name"]): r for r in (dict(x) for x in db.query(
        "select * from parser_map_v where version = ?", [version]))}


def _set(db, sql: str, version: str) -> Counter:
    return Counter(tuple(r) for r in db.execute(sql, [version]))


def _code(db, version: str) -> dict[tuple[str, str], dict[str, tuple[str, int]]]:
    """(kind, name) -> {path: (blob id, shared)} of the files holding each name's code."""
    out: dict[tuple[str, str], dict] = {}
    for kind, name, path, blob, shared in db.execute(
            "select kind, name, file, blob_id, shared from parser_code_v where version = ?", [version]):
        out.setdefault((kind, name), {})[path] = (blob, shared)
    return out


def code_changes(db, a: str, b: str, names: list[tuple[str, str]], ma: dict, mb: dict) -> list[dict]:
    """`code-changed` for each name whose own code files changed while its real file stayed, and one
    `framework-changed` per shared framework file (engine base, abstract parser, adapters) that changed,
    with the names it affects."""
    ca, cb = _code(db, a), _code(db, b)
    out, framework = [], {}
    compare = _comparer(db, a, b)
    for key in sorted(set(ca) & set(cb)):
        fa, fb = ca[key], cb[key]
        for p in sorted(set(fa) & set(fb)):
            if fa[p][1] and fb[p][1] and fa[p][0] != fb[p][0]:
                framework.setdefault(p, []).append(f"{key[1]} ({key[0]})")
    for kind, name in names:
        fa, fb = ca.get((kind, name), {}), cb.get((kind, name), {})
        own = [p for p in sorted(set(fa) | set(fb)) if not (fa.get(p) or fb.get(p))[1] and
               (fa.get(p) or (None,))[0] != (fb.get(p) or (None,))[0]]
        if own:
            files = [{"file": p, "blob_a": (fa.get(p) or (None,))[0], "blob_b": (fb.get(p) or (None,))[0],
                      "compare": compare(p)} for p in own]
            out.append({"type": "code-changed", "subject": f"{name} ({kind})",
                        "detail": "code changed in " + ", ".join(own) + f" (real file {mb[(kind, name)]['real_file']})",
                        "kind": kind, "name": name, "files": files})
    for p, affected in sorted(framework.items()):
        out.append({"type": "framework-changed", "subject": p,
                    "detail": f"shared framework code changed; affects {len(affected)} name(s): {', '.join(affected)}",
                    "file": p, "names": affected, "compare": compare(p)})
    return out


def _comparer(db, a: str, b: str):
    """path -> the upstream compare link of A and B at that file (None when the upstream has none)."""
    from ..serve.links import DEFAULT_UPSTREAM, compare_url, normalize_upstream, ref_for

    row = db.execute("select value from meta where key = 'upstream'").fetchone()
    upstream = normalize_upstream(row[0] if row and row[0] else DEFAULT_UPSTREAM)
    refs = {label: ref_for(label, source, commit) for label, source, commit in db.execute(
        "select label, source, commit_id from versions where label in (?, ?)", [a, b])}
    return lambda path: compare_url(upstream, refs.get(a, a), refs.get(b, b), path)


def diff(db, a: str, b: str) -> dict:
    a, b = require(db, a), require(db, b)
    changes: list[dict] = []

    def add(type_, subject, detail, **extra):
        changes.append({"type": type_, "subject": subject, "detail": detail, **extra})

    ma, mb = _map(db, a), _map(db, b)
    code_changed: list[tuple[str, str]] = []
    for key in sorted(set(ma) | set(mb)):
        kind, name = key
        ra, rb = ma.get(key), mb.get(key)
        subject = f"{name} ({kind})"
        if ra is None:
            add("name-added", subject, f"registered in {rb['reg_file']}; {rb['impl']} -> {rb['real_file'] or rb['reason']}",
                kind=kind, name=name)
            continue
        if rb is None:
            add("name-removed", subject, f"was {ra['impl']} -> {ra['real_file'] or ra['reason']}", kind=kind, name=name)
            continue
        if ra["impl"] != rb["impl"]:
            add("impl-changed", subject, f"{ra['impl']} -> {rb['impl']} (real file {ra['real_file']} -> {rb['real_file']})",
                kind=kind, name=name)
        elif ra["real_file"] != rb["real_file"]:
            add("real-file-changed", subject, f"{ra['real_file']} -> {rb['real_file']}", kind=kind, name=name)
        if (ra["reg_module"], ra["reg_class"]) != (rb["reg_module"], rb["reg_class"]):
            add("registered-class-changed", subject,
                f"{ra['reg_module']}.{ra['reg_class']} -> {rb['reg_module']}.{rb['reg_class']}", kind=kind, name=name)
        if ra["real_class"] != rb["real_class"] and ra["real_file"] == rb["real_file"] and ra["impl"] == rb["impl"]:
            add("real-class-changed", subject, f"{ra['real_class']} -> {rb['real_class']}", kind=kind, name=name)
        if ra["real_file"] == rb["real_file"] and ra["impl"] == rb["impl"] and ra["code_sig"] != rb["code_sig"]:
            code_changed.append((kind, name))
        alias_a = set(filter(None, (ra["alias_of"] or "").split(", ")))
        alias_b = set(filter(None, (rb["alias_of"] or "").split(", ")))
        for n in sorted(alias_b - alias_a):
            add("alias-added", subject, f"now shares its class with {n}", kind=kind, name=name)
        for n in sorted(alias_a - alias_b):
            add("alias-removed", subject, f"no longer shares its class with {n}", kind=kind, name=name)

    for c in code_changes(db, a, b, code_changed, ma, mb):
        changes.append(c)

    def set_changes(type_, sql, fmt):
        sa, sb = _set(db, sql, a), _set(db, sql, b)
        for row in sorted((sb - sa).elements()):
            add(f"{type_}-added", row[0], fmt(row))
        for row in sorted((sa - sb).elements()):
            add(f"{type_}-removed", row[0], fmt(row))

    set_changes("adapter-import",
                "select file, name, module from adapter_imports where version = ?",
                lambda r: f"imports {r[1]} from {r[2]}")
    classes_sql = "select file, class, module from classes_v where version = ?"
    ca, cb = _set(db, classes_sql, a), _set(db, classes_sql, b)
    for row in sorted((cb - ca).elements()):
        add("class-added", row[0], f"class {row[1]}")
    for row in sorted((ca - cb).elements()):
        add("class-removed", row[0], f"class {row[1]}")
    bases_sql = ("select file, class, group_concat(coalesce(base, base_written), ', ') from"
                 " (select * from class_hierarchy where version = ? order by file, class, pos) group by file, class")
    ba = {(r[0], r[1]): r[2] for r in db.execute(bases_sql, [a])}
    bb = {(r[0], r[1]): r[2] for r in db.execute(bases_sql, [b])}
    for key in sorted(set(ba) & set(bb)):
        if ba[key] != bb[key]:
            add("class-rebased", key[0], f"class {key[1]}: bases {ba[key]} -> {bb[key]}")
    set_changes("marker", "select file, kind, text from markers_v where version = ?", lambda r: f"{r[1]}: {r[2]}")
    set_changes("plant", "select file, plant, text from plants_v where version = ?", lambda r: f"{r[1]}: {r[2]}")
    return {"a": a, "b": b, "changes": changes}


def format_text(d: dict) -> str:
    if not d["changes"]:
        return f"no changes between {d['a']} and {d['b']}"
    lines = [f"{len(d['changes'])} change(s) from {d['a']} to {d['b']}:"]
    lines += [f"{c['type']:<26} {c['subject']}: {c['detail']}" for c in d["changes"]]
    return "\n".join(lines)


def format_markdown(d: dict) -> str:
    lines = [f"# Changes from {d['a']} to {d['b']}", ""]
    if not d["changes"]:
        return "\n".join(lines + ["No changes."])
    lines += ["| change | subject | detail |", "|---|---|---|"]
    esc = lambda s: str(s).replace("|", "\\|")  # noqa: E731
    lines += [f"| {c['type']} | {esc(c['subject'])} | {esc(c['detail'])} |" for c in d["changes"]]
    return "\n".join(lines)
