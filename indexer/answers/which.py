"""`which`: the file that really implements a parser name, with every hop, at one version or all."""

from __future__ import annotations

import difflib
import json

from .versions import AnswerError, indexed, newest, require

SIGNATURE = ("impl", "reg_file", "reg_class", "real_class", "real_file", "adapter", "wrapper_class", "reason",
             "code_sig")


def known_names(db) -> list[str]:
    return [r[0] for r in db.execute("select distinct name from parser_map order by name")]


def check_name(db, name: str) -> None:
    names = known_names(db)
    if name in names:
        return
    close = difflib.get_close_matches(name, names, n=5, cutoff=0.5)
    close += [n for n in names if name in n and n not in close][:5 - len(close)]
    hint = f"did you mean: {', '.join(close)}?" if close else "tpindex export lists the names of a version"
    raise AnswerError(f"no parser named {name!r} in any indexed version", hint)


def rows_at(db, name: str, version: str, kind: str | None = None) -> list[dict]:
    sql = "select * from parser_map_v where name = ? and version = ?" + (" and kind = ?" if kind else "")
    params = [name, version] + ([kind] if kind else [])
    rows = [dict(r) for r in db.query(sql + " order by kind", params)]
    for r in rows:
        r["hops"] = [dict(h) for h in db.query(
            "select step, hop, class, module, file, line from parser_hops_v where version = ? and kind = ?"
            " and name = ? order by step", [version, r["kind"], name])]
    return rows


def which(db, name: str, at: str | None = None, kind: str | None = None) -> dict:
    check_name(db, name)
    version = require(db, at) if at else newest(db)
    rows = rows_at(db, name, version, kind)
    if not rows:
        present = [r[0] for r in db.execute(
            "select distinct version from parser_map_v where name = ? order by version_ord", [name])]
        span = f"{present[0]} – {present[-1]}" if present else "no version"
        raise AnswerError(f"{name!r} is not registered at {version} (it is in {span})",
                          "ask another version with --at, or all with --all")
    return {"name": name, "version": version, "parsers": rows}


def history(db, name: str, kind: str | None = None) -> dict:
    """Every indexed version of a name, equal consecutive versions collapsed into ranges."""
    check_name(db, name)
    versions = indexed(db)
    kinds = [kind] if kind else [r[0] for r in db.execute(
        "select distinct kind from parser_map where name = ? order by kind", [name])]
    out = []
    for k in kinds:
        by_version = {r["version"]: r for r in (dict(x) for x in db.query(
            "select * from parser_map_v where name = ? and kind = ?", [name, k]))}
        ranges: list[dict] = []
        for v in versions:
            row = by_version.get(v)
            sig = tuple(row[c] for c in SIGNATURE) if row else None
            if ranges and ranges[-1]["sig"] == sig:
                ranges[-1]["last"] = v
            else:
                ranges.append({"first": v, "last": v, "sig": sig, "row": row})
        while ranges and ranges[0]["sig"] is None:
            ranges.pop(0)
        life = db.query("select * from lifecycle where name = ? and kind = ?", [name, k])
        out.append({"kind": k, "ranges": [{**r, "sig": None} for r in ranges],
                    "lifecycle": next((dict(x) for x in life), None)})
    return {"name": name, "kinds": out}


def format_chain(row: dict, version: str) -> list[str]:
    lines = [f"{row['name']} ({row['kind']} parser) at {version}: {row['impl']}"]
    for h in row["hops"]:
        where = f"{h['file']}:{h['line']}" if h["file"] else "(no file)"
        what = h["class"] or ""
        if h["hop"] == "registered":
            what = f"{row['name']!r} -> {h['module'] or '?'}.{h['class'] or '?'} ({row['form']})"
        lines.append(f"  {h['hop']:<18} {where:<58} {what}")
    if row["impl"] == "unresolved":
        lines.append(f"  unresolved: {row['reason']}")
    else:
        lines.append(f"  => really implemented in {row['real_file']} ({row['real_class']})")
    extras = list(json.loads(row["notes"])) if row.get("notes") else []
    if row["stub"]:
        extras.append("registered file is a stub (no methods of its own)")
    if row["reexport"]:
        extras.append("registered module only re-exports the class")
    if row["alias_of"]:
        extras.append(f"same class as: {row['alias_of']}")
    if row["parent_class"]:
        extras.append(f"subclasses parser {row['parent_class']} ({row['parent_file']})")
    lines.extend(f"  note: {e}" for e in extras)
    return lines


def describe(row: dict | None) -> str:
    if row is None:
        return "absent"
    if row["impl"] == "unresolved":
        return f"unresolved ({row['reason']})"
    via = f" via {row['adapter']}" if row["adapter"] else ""
    if row.get("wrapper_class"):
        via += f", wrapped by {row['wrapper_class']}"
    where = row["reg_file"] or f"{row['registry_file']} ({row['form']})"
    return f"{row['impl']}: {row['real_file']} ({row['real_class']}){via}; registered in {where}"


def code_changed(prev: dict | None, row: dict | None) -> bool:
    """The same real file and implementation as the range before, with other code."""
    return bool(prev and row and all(prev[c] == row[c] for c in ("impl", "real_file", "real_class"))
                and prev["code_sig"] != row["code_sig"])


def format_history(h: dict) -> list[str]:
    lines = []
    for k in h["kinds"]:
        lines.append(f"{h['name']} ({k['kind']} parser)")
        prev = None
        for r in k["ranges"]:
            span = r["first"] if r["first"] == r["last"] else f"{r['first']} – {r['last']}"
            mark = "code changed; " if code_changed(prev, r["row"]) else ""
            lines.append(f"  {span:<28} {mark}{describe(r['row'])}")
            prev = r["row"]
        life = k["lifecycle"]
        if life:
            facts = [f"first {life['first_version']}", f"last {life['last_version']}"]
            if life["became_unified"]:
                facts.append(f"unified from {life['became_unified']}")
            if life["real_file_changed_in"]:
                facts.append(f"real file changed in {life['real_file_changed_in']}")
            if life.get("code_changed_in"):
                facts.append(f"code changed in {life['code_changed_in']}")
            if life["removed_in"]:
                facts.append(f"removed in {life['removed_in']}")
            lines.append("  lifecycle: " + "; ".join(facts))
    return lines
