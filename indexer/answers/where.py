"""`where`: where a symbol is defined (or, failing that, mentioned), or whether a path exists, at one
version or across all of them, with a path's moves (by content, by the definitions it held, by its file
name) and removals. Reads what `build --tree` records."""

from __future__ import annotations

import shlex

from ..core.paths import names_a_path
from ..core.ranges import span
from .trees import Def, TreeIndex, module_path_candidates, require_tree, to_glob
from .versions import AnswerError, require
from .where_model import Definition, Move, MoveHop, PathRange, SymbolRange, Where

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
        if not any(
            c in index.paths(v) for v in index.tree_versions() for c in module_path_candidates(query)
        ) and any(index.exists(v, folder) for v in index.tree_versions()):
            return {"module_path": folder + "/"}  # a package directory (namespace package)
        for i in range(len(parts), 0, -1):
            mod = ".".join(parts[:i])
            files = [
                c
                for c in module_path_candidates(mod)
                if any(c in index.paths(v) for v in index.tree_versions())
            ]
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


def _definition(d: Def) -> Definition:
    return Definition(file=d.path, line=d.line, end_line=d.end_line, kind=d.kind, qualname=d.qualname)


def where(db, query: str, at: str | None = None, all_: bool = False) -> Where:
    index = TreeIndex(db)
    require_tree(index)
    query = query.strip()
    if not query:
        raise AnswerError(
            "nothing to look for", "pass a symbol (Name, Class.method, pkg.mod.Name, path.py:Name) or a path"
        )
    version = None
    if not all_:
        version = require(db, at) if at else index.tree_versions()[-1]
    if names_a_path(query) and ":" not in query:
        return path_answer(index, query, version)
    spec = parse_symbol(index, query)
    if "module_path" in spec:
        return path_answer(index, spec["module_path"], version, asked=query)
    if not spec["name"].isidentifier():
        shown = query if len(query) <= 60 and query.isprintable() else repr(query[:60])
        raise AnswerError(
            f"{shown} is neither a Python name nor a path",
            "where looks up a symbol (Name, Class.method, pkg.mod.Name, path.py:Name) or a path; for any other"
            f" text, search the code: tpindex grep -F {shlex.quote(query[:60])}",
        )
    return symbol_answer(index, query, spec, version)


# -- symbols ----------------------------------------------------------------------------------------------


def symbol_answer(index: TreeIndex, query: str, spec: dict, version: str | None) -> Where:
    defs = find_defs(index, spec)
    out = Where(query=query, kind="symbol", name=spec["name"], file=spec.get("file"))
    if version is not None:
        if not index.has_tree[version]:
            raise AnswerError(
                f"{version} was indexed without --tree: its definitions are not recorded",
                f"ask a --tree version ({', '.join(index.tree_versions()[-3:])}) or rebuild it with --tree",
            )
        here = [d for d in defs if d.version == version]
        out.version, out.definitions = version, [_definition(d) for d in here]
        if not here:
            out.mentions = _mentions(index, version, spec)
            out.elsewhere = _span([d.version for d in defs])
        return out
    out.history = [
        SymbolRange(first=s["first"], last=s["last"], definitions=[_definition(d) for d in s["defs"]])
        for s in index.symbol_history(defs)
    ]
    out.removed_in = _removed_in(index, out.history)
    out.tree_versions = index.tree_versions()
    if not defs:
        newest = index.tree_versions()[-1]
        out.mentions = _mentions(index, newest, spec)
        out.mentions_version = newest
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


def _removed_in(index: TreeIndex, history: list[SymbolRange]) -> str | None:
    if not history or history[-1].definitions:
        return None
    return history[-1].first


# -- paths ------------------------------------------------------------------------------------------------


def path_answer(index: TreeIndex, path: str, version: str | None, asked: str | None = None) -> Where:
    path = path.strip()
    if path.startswith("./"):
        path = path[2:]
    out = Where(query=asked or path, kind="path", path=path)
    pattern = any(c in path for c in "*?[") or "<" in path
    bare = "/" not in path.rstrip("/")
    if version is not None:
        out.version = version
        if pattern:
            out.matches = index.glob(version, to_glob(path))
            out.exists = bool(out.matches)
            return out
        if bare and not index.exists(version, path):
            out.matches = index.by_file_name(version, path)
            out.exists = bool(out.matches)
            return out
        if not index.knows(version, path):
            raise AnswerError(
                f"{version} was indexed without --tree and {path} is outside its scope",
                f"ask a --tree version ({', '.join(index.tree_versions()[-3:])})",
            )
        out.exists = index.exists(version, path)
        if out.exists and path not in index.paths(version):
            out.directory_files = len(index.files_under(version, path))
        if not out.exists:
            out.history = _path_history(index, path, until=version)
        return out
    if pattern or (bare and not any(index.exists(v, path) for v in index.tree_versions())):
        glob = to_glob(path) if pattern else f"*/{path}"
        found = sorted(
            {p for v in index.tree_versions() for p in index.glob(v, glob)}
            | ({path} if any(path in index.paths(v) for v in index.tree_versions()) else set())
        )
        out.histories = {p: _path_history(index, p) for p in found[:SHOW]}
        out.more = max(0, len(found) - SHOW)
        return out
    out.history = _path_history(index, path)
    return out


def _path_history(index: TreeIndex, path: str, until: str | None = None) -> list[PathRange]:
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
            moves.append(
                Move(
                    to=m.to,
                    by=m.by,
                    detail=m.detail,
                    then=[
                        MoveHop(at=h.at, to=h.move.to, by=h.move.by, detail=h.move.detail) for h in chain.hops
                    ],
                    final=chain.final(m),
                    removed_at=chain.removed_at,
                )
            )
        out.append(PathRange(first=s["first"], last=s["last"], present=s["present"], moves=moves))
    return out
