"""`where`: where a symbol is defined (or, failing that, mentioned), or whether a path exists, at one
version or across all of them, with a path's moves (by content, by the definitions it held, by its file
name) and removals. Reads what `build --tree` records."""

from __future__ import annotations

from ..core.paths import names_a_path
from ..core.ranges import span
from .trees import Def, TreeIndex, module_path_candidates, require_tree, to_glob
from .versions import AnswerError, require

SHOW = 20  # definitions or files listed before "... and N more"


def parse_symbol(index: TreeIndex, query: str) -> dict:
    """`Name`, `Class.method`, `pkg.mod.Class.method` (the longest module prefix that is a file in some
    version) or `path.py:Name` -> {name, qualname (or None: any), file (or None: any), module_path}."""
    if ":" in query and names_a_path(query):
        path, _, qual = query.partition(":")
        return {"name": qual.rpartition(".")[2], "qualname": qual, "file": path}
    parts = query.split(".")
    if len(parts) > 1 and all(p.isidentifier() for p in parts):
        folder = query.replace(".", "/")
        if not any(c in index.paths(v) for v in index.tree_versions() for c in module_path_candidates(query)) \
                and any(index.exists(v, folder) for v in index.tree_versions()):
            return {"module_path": folder + "/"}  # a package directory (namespace package)
        for i in range(len(parts), 0, -1):
            mod = ".".join(parts[:i])
            files = [c for c in module_path_candidates(mod)
                     if any(c in index.paths(v) for v in index.tree_versions())]
            if files:
                rest = ".".join(parts[i:])
                if not rest:
                    return {"module_path": files[0]}
                return {"name": parts[-1], "qualname": rest, "file": files[0], "files": files}
    return {"name": parts[-1], "qualname": query if len(parts) > 1 else None, "file": None}


def _matches(d: Def, spec: dict) -> bool:
    if spec.get("files") and d.path not in spec["files"]:
        return False
    if spec.get("file") and not spec.get("files") and d.path != spec["file"]:
        return False
    q = spec.get("qualname")
    return q is None or d.qualname == q or d.qualname.endswith("." + q)


def find_defs(index: TreeIndex, spec: dict) -> list[Def]:
    return [d for d in index.defs(spec["name"]) if _matches(d, spec)]


def _def_json(d: Def) -> dict:
    return {"file": d.path, "line": d.line, "end_line": d.end_line, "kind": d.kind, "qualname": d.qualname}


def where(db, query: str, at: str | None = None, all_: bool = False) -> dict:
    index = TreeIndex(db)
    require_tree(index)
    query = query.strip()
    if not query:
        raise AnswerError("nothing to look for", "pass a symbol (Name, Class.method, pkg.mod.Name, path.py:Name) or a path")
    version = None
    if not all_:
        version = require(db, at) if at else index.tree_versions()[-1]
    if names_a_path(query) and ":" not in query:
        return path_answer(index, query, version)
    spec = parse_symbol(index, query)
    if "module_path" in spec:
        return path_answer(index, spec["module_path"], version, asked=query)
    return symbol_answer(index, query, spec, version)


# -- symbols ----------------------------------------------------------------------------------------------

def symbol_answer(index: TreeIndex, query: str, spec: dict, version: str | None) -> dict:
    defs = find_defs(index, spec)
    out: dict = {"query": query, "kind": "symbol", "name": spec["name"], "file": spec.get("file")}
    if version is not None:
        if not index.has_tree[version]:
            raise AnswerError(f"{version} was indexed without --tree: its definitions are not recorded",
                              f"ask a --tree version ({', '.join(index.tree_versions()[-3:])}) or rebuild it with --tree")
        here = [d for d in defs if d.version == version]
        out.update(version=version, definitions=[_def_json(d) for d in here])
        if not here:
            out["mentions"] = _mentions(index, version, spec)
            out["elsewhere"] = _span([d.version for d in defs])
        return out
    out["history"] = [{"first": s["first"], "last": s["last"], "definitions": [_def_json(d) for d in s["defs"]]}
                      for s in index.symbol_history(defs)]
    out["removed_in"] = _removed_in(index, out["history"])
    out["tree_versions"] = index.tree_versions()
    if not defs:
        newest = index.tree_versions()[-1]
        out["mentions"] = _mentions(index, newest, spec)
        out["mentions_version"] = newest
    return out


def _mentions(index: TreeIndex, version: str, spec: dict) -> list[str]:
    words = [w for w in (spec.get("qualname") or spec["name"]).split(".") if w.isidentifier()]
    files = None
    for w in words or [spec["name"]]:
        hits = set(index.mentions(version, w))
        files = hits if files is None else files & hits
    found = sorted(files or ())
    if spec.get("file"):
        found = [f for f in found if f == spec["file"]]
    return found


def _span(versions: list[str]) -> str | None:
    vs = list(dict.fromkeys(versions))
    if not vs:
        return None
    return span(vs)


def _removed_in(index: TreeIndex, history: list[dict]) -> str | None:
    if not history or history[-1]["definitions"]:
        return None
    return history[-1]["first"]


# -- paths ------------------------------------------------------------------------------------------------

def path_answer(index: TreeIndex, path: str, version: str | None, asked: str | None = None) -> dict:
    path = path.strip()
    if path.startswith("./"):
        path = path[2:]
    out: dict = {"query": asked or path, "kind": "path", "path": path}
    pattern = any(c in path for c in "*?[") or "<" in path
    bare = "/" not in path.rstrip("/")
    if version is not None:
        out["version"] = version
        if pattern:
            out["matches"] = index.glob(version, to_glob(path))
            out["exists"] = bool(out["matches"])
            return out
        if bare and not index.exists(version, path):
            out["matches"] = index.by_file_name(version, path)
            out["exists"] = bool(out["matches"])
            return out
        if not index.knows(version, path):
            raise AnswerError(f"{version} was indexed without --tree and {path} is outside its scope",
                              f"ask a --tree version ({', '.join(index.tree_versions()[-3:])})")
        out["exists"] = index.exists(version, path)
        if out["exists"] and path not in index.paths(version):
            out["directory_files"] = len(index.files_under(version, path))
        if not out["exists"]:
            out["history"] = _path_history_json(index, path, until=version)
        return out
    if pattern or (bare and not any(index.exists(v, path) for v in index.tree_versions())):
        glob = to_glob(path) if pattern else f"*/{path}"
        found = sorted({p for v in index.tree_versions() for p in index.glob(v, glob)} |
                       ({path} if any(path in index.paths(v) for v in index.tree_versions()) else set()))
        out["histories"] = {p: _path_history_json(index, p) for p in found[:SHOW]}
        out["more"] = max(0, len(found) - SHOW)
        return out
    out["history"] = _path_history_json(index, path)
    return out


def _path_history_json(index: TreeIndex, path: str, until: str | None = None) -> list[dict]:
    """The path's ranges; each move followed to the end of its range (or to `until`): `then` its later hops,
    `final` where the file is at the range's end (None when the chain ends in a removal), `removed_at`."""
    out = []
    for s in index.path_history(path):
        if until is not None and index.index_of(s["first"]) > index.index_of(until):
            break
        end = s["last"] if until is None or index.index_of(s["last"]) <= index.index_of(until) else until
        moves = []
        for m in s["moves"]:
            chain = index.onward(m.to, s["first"], end)
            moves.append({"to": m.to, "by": m.by, "detail": m.detail,
                          "then": [{"at": h.at, "to": h.move.to, "by": h.move.by, "detail": h.move.detail}
                                   for h in chain.hops],
                          "final": chain.final(m), "removed_at": chain.removed_at})
        out.append({"first": s["first"], "last": s["last"], "present": s["present"], "moves": moves})
    return out


def move_text(m: dict) -> str:
    """`A (by: detail), then at vY to B (by: detail), now at B` (or `..., then removed at vZ`)."""
    def one(x: dict) -> str:
        return f"{x['to']} ({x['by']}{': ' + x['detail'] if x['detail'] else ''})"

    text = one(m) + "".join(f", then at {h['at']} to {one(h)}" for h in m.get("then", []))
    if m.get("removed_at"):
        return text + f", then removed at {m['removed_at']}"
    return text + (f", now at {m['final']}" if m.get("then") else "")


# -- text -------------------------------------------------------------------------------------------------

def _def_line(d: dict) -> str:
    span = f"{d['line']}-{d['end_line']}" if d["end_line"] != d["line"] else str(d["line"])
    return f"{d['file']}:{d['line']}  {d['kind']} {d['qualname']} (lines {span})"


def _capped(lines: list[str], indent: str, what: str = "more") -> list[str]:
    if len(lines) <= SHOW:
        return [indent + s for s in lines]
    return [indent + s for s in lines[:SHOW]] + [f"{indent}... and {len(lines) - SHOW} {what} (--format json lists all)"]


def _defs_block(defs: list[dict], indent: str) -> list[str]:
    """One line per definition; past SHOW of them, one line per file (its count and first few)."""
    ordered = sorted(defs, key=lambda d: (d["file"], d["line"]))
    if len(ordered) <= SHOW:
        return [indent + _def_line(d) for d in ordered]
    by_file: dict[str, list[dict]] = {}
    for d in ordered:
        by_file.setdefault(d["file"], []).append(d)
    lines = []
    for f, ds in by_file.items():
        shown = ", ".join(f"{d['qualname']}:{d['line']}" for d in ds[:4]) + (", ..." if len(ds) > 4 else "")
        lines.append(f"{f}  {len(ds)}: {shown}" if len(ds) > 1 else f"{f}:{ds[0]['line']}  {ds[0]['kind']} "
                     f"{ds[0]['qualname']}")
    return _capped(lines, indent, "more files")


def format_text(ans: dict) -> list[str]:
    if ans["kind"] == "path":
        return _format_path(ans)
    name = ans["query"]
    if "version" in ans:
        defs = ans["definitions"]
        if defs:
            nfiles = len({d["file"] for d in defs})
            head = f"{name} at {ans['version']}: defined {len(defs)} time(s) in {nfiles} file(s)"
            return [head] + _defs_block(defs, "  ")
        out = [f"{name} at {ans['version']}: not defined"
               + (f" (defined in {ans['elsewhere']})" if ans.get("elsewhere") else " in any indexed version")]
        out += _mention_lines(ans["mentions"], ans["version"])
        return out
    out = [f"{name}, over the --tree versions {ans['tree_versions'][0]} - {ans['tree_versions'][-1]}:"]
    if not ans["history"]:
        out = [f"{name}: not defined in any --tree version ({ans['tree_versions'][0]} - {ans['tree_versions'][-1]})"]
        return out + _mention_lines(ans["mentions"], ans["mentions_version"])
    for s in ans["history"]:
        span = s["first"] if s["first"] == s["last"] else f"{s['first']} - {s['last']}"
        if not s["definitions"]:
            out.append(f"  {span:<20} not defined")
            continue
        lines = [f"{d['file']}:{d['line']}  {d['kind']} {d['qualname']}"
                 for d in sorted(s["definitions"], key=lambda d: (d["file"], d["line"]))]
        capped = _capped(lines, " " * 23)
        out.append(f"  {span:<20} {capped[0].strip()}")
        out += capped[1:]
    if ans["removed_in"]:
        out.append(f"  removed at {ans['removed_in']}")
    return out


def _mention_lines(files: list[str], version: str) -> list[str]:
    if not files:
        return [f"  not mentioned in any file at {version} either"]
    return [f"  mentioned in {len(files)} file(s) at {version}:"] + _capped(files, "    ")


def _format_path(ans: dict) -> list[str]:
    path = ans["query"]
    if "version" in ans:
        v = ans["version"]
        if "matches" in ans:
            if not ans["matches"]:
                return [f"{path} at {v}: no matching path"]
            return [f"{path} at {v}: {len(ans['matches'])} matching path(s)"] + _capped(ans["matches"], "  ")
        if ans["exists"]:
            extra = f" (a directory of {ans['directory_files']} files)" if ans.get("directory_files") else ""
            return [f"{path} exists at {v}{extra}"]
        return [f"{path}: not at {v}"] + _history_lines(ans["history"], "  ")
    if "histories" in ans:
        if not ans["histories"]:
            return [f"{path}: no matching path in any --tree version"]
        out = []
        for p, h in ans["histories"].items():
            out.append(p)
            out += _history_lines(h, "  ")
        if ans["more"]:
            out.append(f"... and {ans['more']} more paths (--format json lists the first {SHOW})")
        return out
    return [path] + _history_lines(ans["history"], "  ")


def _history_lines(history: list[dict], indent: str) -> list[str]:
    if not history:
        return [f"{indent}in no indexed version"]
    if not any(s["present"] for s in history):
        return [f"{indent}in no indexed version ({history[0]['first']} - {history[-1]['last']})"]
    out = []
    for s in history:
        span = s["first"] if s["first"] == s["last"] else f"{s['first']} - {s['last']}"
        if s["present"]:
            out.append(f"{indent}{span:<20} present")
        elif s["moves"]:
            moves = "; ".join(move_text(m) for m in s["moves"])
            out.append(f"{indent}{span:<20} moved at {s['first']} to {moves}")
        else:
            out.append(f"{indent}{span:<20} absent" + (f" (removed at {s['first']})" if out else ""))
    return out
