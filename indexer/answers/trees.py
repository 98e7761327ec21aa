"""What the whole-tree tier (`build --tree`) knows, per version: the paths, the definitions, the mentions;
and the histories `where` and `check-doc` tell from them (a path's moves, a symbol's files).

A version indexed without --tree knows only the paths of its scope; questions about other paths there
are "unknown", never "absent".
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

from .versions import AnswerError

TOP_KINDS = ("class", "function")
# <name>, {x}, a lone capital letter starting a file name (`X_tool_parser.py`), your_*: one path part of a pattern
PLACEHOLDER = re.compile(r"<[^<>/]+>|\{[^{}/]+\}|(?:(?<=/)|^)[A-Z](?=[_.-])|(?<![A-Za-z0-9])[Yy]our_\w+")


@dataclass(frozen=True)
class Def:
    version: str
    path: str
    kind: str
    qualname: str
    line: int
    end_line: int


@dataclass
class Move:
    to: str
    by: str  # content | package | definitions | file name
    detail: str = ""

    def describe(self) -> str:
        return f"{self.to} ({self.by}{': ' + self.detail if self.detail else ''})"


@dataclass
class Hop:
    """A later move of a moved file's new path: at version `at`, to `move.to`."""

    at: str
    move: Move


@dataclass
class Chain:
    """Where a move led, followed to the end: the later hops, and the removal that ended it (or None)."""

    hops: list[Hop]
    removed_at: str | None

    def final(self, first: Move) -> str | None:
        """The path the file is at after the last hop (None when the chain ends in a removal)."""
        if self.removed_at:
            return None
        return self.hops[-1].move.to if self.hops else first.to


def module_path_candidates(dotted: str) -> list[str]:
    base = dotted.replace(".", "/")
    return [base + ".py", base + "/__init__.py"]


class TreeIndex:
    """Cached look-ups over one database (a Reader or a sqlite3 connection wrapped in one)."""

    def __init__(self, db):
        self.db = db
        rows = db.execute(
            "select v.id, v.label, v.scope, t.version_id is not null from versions v"
            " left join version_trees t on t.version_id = v.id where v.status = 'complete' order by v.ord"
        ).fetchall()
        self.versions = [r[1] for r in rows]
        self.vid = {r[1]: r[0] for r in rows}
        self.scope_label = {r[1]: r[2] or "default" for r in rows}
        self.has_tree = {r[1]: bool(r[3]) for r in rows}
        self.label_of = {r[0]: r[1] for r in rows}
        self._paths: dict[str, dict[str, str]] = {}
        self._scopes: dict[str, object] = {}
        self._mentions: dict[str, set[int]] = {}
        self._defs: dict[str, list[Def]] = {}
        self._keys: dict[str, dict[str, int]] = {}  # version -> path -> blob key
        self._presence: dict[str, dict[str, bool]] = {}  # path -> version (that can tell) -> exists
        self._histories: dict[str, list[dict]] = {}

    # -- versions -------------------------------------------------------------------------------------
    def tree_versions(self) -> list[str]:
        return [v for v in self.versions if self.has_tree[v]]

    def index_of(self, version: str) -> int:
        return self.versions.index(version)

    def previous(self, version: str) -> str | None:
        i = self.index_of(version)
        return self.versions[i - 1] if i > 0 else None

    # -- paths ----------------------------------------------------------------------------------------
    def paths(self, version: str) -> dict[str, str]:
        """path -> blob id of every file the index knows at a version (the whole tree, or the scope)."""
        if version not in self._paths:
            if self.has_tree[version]:
                sql = (
                    "select p.path, b.blob_id from tree_files t join tree_paths p on p.id = t.path_id"
                    " join tree_blobs b on b.id = t.blob_key where t.version_id = ?"
                )
            else:
                sql = (
                    "select f.path, u.blob_id from files f join units u on u.id = f.unit_id"
                    " where f.version_id = ?"
                )
            self._paths[version] = dict(self.db.execute(sql, [self.vid[version]]).fetchall())
        return self._paths[version]

    def knows(self, version: str, path: str) -> bool:
        """Whether the index can tell if `path` exists at `version` (always with --tree; else only inside
        the scope the version was indexed with)."""
        if self.has_tree[version]:
            return True
        scope = self._scope(version)
        return scope is not None and (
            scope.matches(path) or any(p.startswith(path.rstrip("/") + "/") for p in self.paths(version))
        )

    def _scope(self, version: str):
        if version not in self._scopes:
            from ..core.scope import Scope

            label = self.scope_label[version]
            name, _, extra = label.partition("+")
            try:
                self._scopes[version] = Scope.named(name, tuple(x for x in extra.split(",") if x))
            except ValueError:
                self._scopes[version] = None
        return self._scopes[version]

    def exists(self, version: str, path: str) -> bool:
        """A file, or a directory holding files ("vllm/parser" or "vllm/parser/")."""
        paths = self.paths(version)
        if path in paths:
            return True
        prefix = path.rstrip("/") + "/"
        return any(p.startswith(prefix) for p in paths)

    def presence(self, path: str) -> dict[str, bool]:
        """Whether `path` exists, at each version that can tell (`knows`), in version order. Computed once
        a path: knows / exists scan a version's paths, and check-doc asks again at every checked version."""
        if path not in self._presence:
            self._presence[path] = {v: self.exists(v, path) for v in self.versions if self.knows(v, path)}
        return self._presence[path]

    def files_under(self, version: str, directory: str) -> list[str]:
        prefix = directory.rstrip("/") + "/"
        return sorted(p for p in self.paths(version) if p.startswith(prefix))

    def glob(self, version: str, pattern: str) -> list[str]:
        """Paths matching a pattern (fnmatch; `*` crosses /)."""
        return sorted(p for p in self.paths(version) if fnmatch.fnmatchcase(p, pattern))

    def by_file_name(self, version: str, name: str) -> list[str]:
        return sorted(p for p in self.paths(version) if p.rsplit("/", 1)[-1] == name)

    # -- definitions ----------------------------------------------------------------------------------
    def defs(self, name: str) -> list[Def]:
        """Every definition named `name` (the last part of its qualified name), in every --tree version."""
        if name not in self._defs:
            self._defs[name] = self._load_defs(name)
        return self._defs[name]

    def _load_defs(self, name: str) -> list[Def]:
        rows = self.db.execute(
            "select t.version_id, p.path, d.kind, d.qualname, d.line, d.end_line from definitions d"
            " join tree_files t on t.blob_key = d.blob_key join tree_paths p on p.id = t.path_id"
            " where d.name = ?",
            [name],
        ).fetchall()
        out = [Def(self.label_of[v], p, k, q, ln, e) for v, p, k, q, ln, e in rows if v in self.label_of]
        return sorted(out, key=lambda d: (self.index_of(d.version), d.path, d.line))

    def defs_in(self, version: str, path: str) -> list[Def]:
        rows = self.db.execute(
            "select d.kind, d.qualname, d.line, d.end_line from definitions d join tree_blobs b on b.id = d.blob_key"
            " where b.blob_id = ? order by d.line",
            [self.paths(version).get(path, "")],
        ).fetchall()
        return [Def(version, path, k, q, ln, e) for k, q, ln, e in rows]

    def modules(self, version: str, path: str) -> list[str]:
        """The Python modules a path is (a file) or holds (a directory) at a version whose definitions the
        tree tier reads (those under vllm/: core.scope.parsed)."""
        from ..core.scope import parsed

        files = [path] if path in self.paths(version) else self.files_under(version, path)
        return [f for f in files if parsed(f)]

    def holds_code(self, version: str, path: str) -> bool | None:
        """Whether the modules of `path` define a class or a function of their own at a --tree version. A
        module that only imports and re-exports, the shim a moved package leaves behind (imports, `__all__`,
        a module `__getattr__` or `__dir__` handing out names from the new place, as resolve follows a
        re-export to where the class is defined), does not. None: the version has no tree, or the path holds
        no module (whether it is there is the only question)."""
        if not self.has_tree[version]:
            return None
        mods = self.modules(version, path)
        if not mods:
            return None
        keys = self._blob_keys(version)
        blobs = sorted({keys[m] for m in mods if m in keys})
        for i in range(0, len(blobs), 500):
            chunk = blobs[i : i + 500]
            row = self.db.execute(
                f"select 1 from definitions where blob_key in ({','.join('?' * len(chunk))})"
                " and kind in ('class', 'function') and qualname not in ('__getattr__', '__dir__') limit 1",
                chunk,
            ).fetchone()
            if row:
                return True
        return False

    # -- mentions -------------------------------------------------------------------------------------
    def _mention_keys(self, word: str) -> set[int]:
        from ..extract.words import encode_word, is_word

        if word not in self._mentions and not is_word(word):  # the index holds identifiers only: a query
            self._mentions[word] = set()  # of other characters would be an FTS5 phrase or syntax (an error)
        if word not in self._mentions:
            self._mentions[word] = {
                r[0]
                for r in self.db.execute(
                    "select rowid from tree_words where tree_words match ?", [encode_word(word)]
                )
            }
        return self._mentions[word]

    def _blob_keys(self, version: str) -> dict[str, int]:
        if version not in self._keys:
            self._keys[version] = dict(
                self.db.execute(
                    "select p.path, t.blob_key from tree_files t join tree_paths p on p.id = t.path_id"
                    " where t.version_id = ?",
                    [self.vid[version]],
                ).fetchall()
            )
        return self._keys[version]

    def mentions(self, version: str, word: str) -> list[str]:
        """Files of a --tree version whose text uses the identifier `word` (code, comments or strings)."""
        keys = self._mention_keys(word)
        if not keys:
            return []
        return sorted(p for p, k in self._blob_keys(version).items() if k in keys)

    def mentioned_in(self, version: str, word: str, path: str) -> bool:
        keys = self._mention_keys(word)
        return bool(keys) and self._blob_keys(version).get(path) in keys

    def mentioning(self, version: str, words: list[str], files: list[str]) -> list[str]:
        """Those of `files` whose text uses every one of `words` at a --tree version, in their order
        (`mentioned_in` for many files and words, its look-ups made once)."""
        keys, sets = self._blob_keys(version), [self._mention_keys(w) for w in words]
        return [f for f in files if all(keys.get(f) in s for s in sets)]

    # -- histories ------------------------------------------------------------------------------------
    def path_history(self, path: str) -> list[dict]:
        """Ranges of versions where `path` exists or not, each absent range after a present one with how
        it ended (moved, removed). Versions that cannot tell are left out. Computed once a path (shared:
        callers read it, never change it)."""
        if path in self._histories:
            return self._histories[path]
        spans: list[dict] = []
        for v, present in self.presence(path).items():
            if spans and spans[-1]["present"] == present:
                spans[-1]["last"] = v
                continue
            span = {"first": v, "last": v, "present": present, "moves": []}
            if not present and spans:
                span["moves"] = self.successors(spans[-1]["last"], v, path)
            spans.append(span)
        self._histories[path] = spans
        return spans

    def successors(self, before: str, after: str, path: str) -> list[Move]:
        """Where a file that exists at `before` and not at `after` went: the same content at a path new
        in `after`; else the new file (or another file) defining most of its classes and functions;
        else the one new file with the same name."""
        old, new = self.paths(before), self.paths(after)
        blob = old.get(path)
        if blob is None:  # a directory
            return []
        fresh = [p for p in new if p not in old]
        package = self._became_package(before, after, path)
        if package:
            return [package]
        same = [p for p in fresh if new[p] == blob]
        if same:
            return [Move(p, "content") for p in same]
        if path.endswith(".py") and self.has_tree.get(before) and self.has_tree.get(after):
            top = [
                d.qualname
                for d in self.defs_in(before, path)
                if d.kind in TOP_KINDS and "." not in d.qualname
            ]
            if top:
                holders: dict[str, list[str]] = {}
                for name in top:
                    for d in self.defs(name):
                        if d.version == after and d.qualname == name and d.path != path:
                            holders.setdefault(d.path, []).append(name)
                if holders:
                    best = max(
                        sorted(holders),
                        key=lambda p: (
                            len(holders[p]),
                            p in fresh,
                            p.rsplit("/", 1)[-1] == path.rsplit("/", 1)[-1],
                        ),
                    )
                    names = holders[best]
                    if len(names) * 2 >= len(top):
                        shown = ", ".join(names[:4]) + (
                            f" and {len(names) - 4} more" if len(names) > 4 else ""
                        )
                        return [Move(best, "definitions", f"{len(names)} of its {len(top)} ({shown})")]
        base = path.rsplit("/", 1)[-1]
        named = [p for p in fresh if p.rsplit("/", 1)[-1] == base]
        if len(named) == 1:
            return [Move(named[0], "file name")]
        return []

    def _became_package(self, before: str, after: str, path: str) -> Move | None:
        """`x/y.py` gone where `x/y/__init__.py` is new: the module became a package of the same import path."""
        if not path.endswith(".py") or path.endswith("/__init__.py"):
            return None
        package = path[:-3] + "/"
        init = package + "__init__.py"
        if init not in self.paths(after) or init in self.paths(before):
            return None
        detail = f"same import path {path[:-3].replace('/', '.')}"
        if self.has_tree.get(before) and self.has_tree.get(after):
            top = [
                d.qualname
                for d in self.defs_in(before, path)
                if d.kind in TOP_KINDS and "." not in d.qualname
            ]
            held: dict[str, list[str]] = {}  # module of the package -> the old module's definitions it holds
            for name in top:
                for d in self.defs(name):
                    if d.version == after and d.qualname == name and d.path.startswith(package):
                        held.setdefault(d.path[len(package) :], []).append(name)
            if held:
                count = len({n for names in held.values() for n in names})
                ordered = sorted(held, key=lambda m: (-len(held[m]), m))
                shown = ", ".join(
                    f"{m} ({', '.join(held[m])})" if len(held[m]) <= 2 else f"{m} ({len(held[m])})"
                    for m in ordered[:6]
                ) + (f" and {len(ordered) - 6} more" if len(ordered) > 6 else "")
                detail += f"; {count} of its {len(top)} definitions in {len(held)} of its modules: {shown}"
        return Move(package, "package", detail)

    def onward(self, path: str, since: str, until: str | None = None) -> Chain:
        """Where `path`, reached by a move at version `since`, went next, hop by hop (each hop the first of
        its moves), up to version `until` (default: the newest): the hops and the removal that ends them."""
        limit = self.index_of(until) if until else len(self.versions) - 1
        hops: list[Hop] = []
        seen, current, at = {path}, path, self.index_of(since)
        while True:
            gone = next(
                (
                    s
                    for s in self.path_history(current)
                    if not s["present"] and at < self.index_of(s["first"]) <= limit
                ),
                None,
            )
            if gone is None:
                return Chain(hops, None)
            if not gone["moves"]:
                return Chain(hops, gone["first"])
            move = gone["moves"][0]
            hops.append(Hop(gone["first"], move))
            if move.to in seen:  # moved back: stop rather than go round
                return Chain(hops, None)
            seen.add(move.to)
            current, at = move.to, self.index_of(gone["first"])

    def symbol_history(self, defs: list[Def]) -> list[dict]:
        """Ranges of --tree versions with the same set of (file, qualified name); lines are the range's
        last version's."""
        by_version: dict[str, list[Def]] = {}
        for d in defs:
            by_version.setdefault(d.version, []).append(d)
        spans: list[dict] = []
        for v in self.tree_versions():
            here = by_version.get(v, [])
            sig = frozenset((d.path, d.qualname) for d in here)
            if spans and spans[-1]["sig"] == sig:
                spans[-1]["last"], spans[-1]["defs"] = v, here
            else:
                spans.append({"first": v, "last": v, "sig": sig, "defs": here})
        while spans and not spans[0]["sig"]:
            spans.pop(0)
        for s in spans:
            del s["sig"]
        return spans


def require_tree(index: TreeIndex) -> None:
    if not index.tree_versions():
        raise AnswerError(
            "no version in this database was indexed with --tree, so it knows neither every path nor"
            " any definition",
            "index with the whole tree: tpindex build ... --tree (make index does)",
        )


def to_glob(path: str) -> str:
    """`vllm/tool_parsers/<name>_tool_parser.py` -> `vllm/tool_parsers/*_tool_parser.py`; a directory
    (trailing /) matches the files under it."""
    glob = PLACEHOLDER.sub("*", path)
    return glob + "*" if glob.endswith("/") else glob
