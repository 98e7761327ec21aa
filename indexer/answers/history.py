"""`log NAME A B` and `contains COMMIT|#PR`, and the commits listed under a name's code changes in `diff`:
answered from the history a build from a clone stored (indexer/commits.py), never from the clone.

The graph is the stored commits between the indexed git versions and their common base, by row id; a
commit at or below the base is in every such version's history. A version's history is its commit's
ancestors in the graph, so the commits from A to B are those of B's history not in A's (`git log A..B`);
first-parent (the default, as `git log --first-parent`) keeps those on B's first-parent line.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from .commit_model import Commit, CommitFile
from .versions import AnswerError, indexed, require, upstream_refs
from .which import check_name, registered_name, span_text, spans

if TYPE_CHECKING:  # built by log and contains, not by the commits diff lists
    from .history_model import Contains, Log

SOURCES = {"pypi": "the package index", "dir": "a directory", "git": "a clone, its history not stored"}
CODE_CHANGES = ("code-changed", "real-file-changed", "impl-changed")  # diff changes that list their commits


@dataclass
class Graph:
    parents: dict[int, tuple[int, ...]]  # commits between the base and the tips (not those at or below it)
    children: dict[int, list[int]]
    tips: dict[str, int]  # version label -> its commit's id, for the versions whose history is stored
    order: list[str]  # every indexed version, in version order
    without: dict[str, str]  # version label -> its source, for the versions without history
    reach: dict[int, set[int]]  # memo: tip id -> the graph commits of its history


def _graph(db) -> Graph:
    """Loaded once per reader, again when a build has added history since."""
    stamp = db.execute(
        "select (select max(id) from commits), (select count(*) from history_tips),"
        " (select group_concat(label || ' ' || commit_id) from versions where status = 'complete')"
    ).fetchone()
    cached = db.__dict__.get("_history_graph")
    if cached is not None and cached[0] == stamp:
        return cached[1]
    parents: dict[int, tuple[int, ...]] = {}
    children: dict[int, list[int]] = {}
    for cid, text in db.execute("select id, parents from commits where parents is not null"):
        ps = tuple(int(p) for p in text.split())
        parents[cid] = ps
        for p in ps:
            children.setdefault(p, []).append(cid)
    walked = {r[0] for r in db.execute("select sha from history_tips")}
    tips, without = {}, {}
    for label, source, sha, cid in db.execute(
        "select v.label, v.source, v.commit_id, c.id from versions v left join commits c on c.sha = v.commit_id"
        " where v.status = 'complete' order by v.ord"
    ):
        if source == "git" and sha in walked and cid is not None:
            tips[label] = cid
        else:
            without[label] = source
    graph = Graph(parents, children, tips, indexed(db), without, {})
    db.__dict__["_history_graph"] = (stamp, graph)
    return graph


def _reach(g: Graph, tip: int) -> set[int]:
    """The graph commits of a tip's history (the tip included when it is above the base)."""
    if tip not in g.reach:
        seen: set[int] = set()
        todo = [tip] if tip in g.parents else []
        while todo:
            c = todo.pop()
            if c in seen:
                continue
            seen.add(c)
            todo.extend(p for p in g.parents[c] if p in g.parents and p not in seen)
        g.reach[tip] = seen
    return g.reach[tip]


def _no_history(db, labels: list[str], g: Graph) -> AnswerError:
    """The versions asked about have no commits: say from where they came, and the build that would answer."""
    import shlex

    labels = list(dict.fromkeys(labels))
    groups: dict[str, list[str]] = {}
    for label in labels:
        groups.setdefault(g.without[label], []).append(label)
    parts = "; ".join(f"{', '.join(ls)} ({SOURCES.get(src, src)})" for src, ls in groups.items())
    path = getattr(db, "path", None)
    dbarg = f" --db {shlex.quote(str(path))}" if path else ""
    tags = shlex.quote(",".join(labels))
    if set(groups) == {"git"}:
        row = db.execute("select origin from versions where label = ?", [labels[0]]).fetchone()
        repo = shlex.quote(row[0]) if row and row[0] else "PATH/TO/vllm"
        hint = f"build them again from the clone (nothing is re-indexed): tpindex build --repo {repo} --tags {tags}{dbarg}"
    else:
        hint = (
            f"build them from a vLLM clone: tpindex build --repo PATH/TO/vllm --tags {tags} --replace{dbarg}"
            " (its tags have the same names)"
        )
    return AnswerError(
        f"{parts} {'has' if len(labels) == 1 else 'have'} no commits: only a build from a git clone"
        " stores them",
        hint,
    )


# -- the commits from A to B ----------------------------------------------------------------------------------


def _timestamp(date: str) -> float:
    try:
        return datetime.fromisoformat(date).timestamp()
    except (TypeError, ValueError):
        return 0.0


def _between(db, g: Graph, a: str, b: str, first_parent: bool) -> list[int]:
    """The commits of B's history not in A's, oldest first: B's first-parent line, or all of them in an order
    that puts parents first and, among the commits ready, the oldest by author date."""
    ta, tb = g.tips[a], g.tips[b]
    in_a = _reach(g, ta)
    if first_parent:
        line, c = [], tb
        while c in g.parents and c not in in_a:
            line.append(c)
            c = g.parents[c][0] if g.parents[c] else None
        return line[::-1]
    chosen = _reach(g, tb) - in_a
    dates = {
        cid: _timestamp(d) for cid, d in _rows(db, "select id, date from commits where id in ({})", chosen)
    }
    waiting = {c: sum(1 for p in g.parents[c] if p in chosen) for c in chosen}
    ready = [(dates[c], c) for c, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    out = []
    while ready:
        _, c = heapq.heappop(ready)
        out.append(c)
        for child in g.children.get(c, ()):
            if child in waiting:
                waiting[child] -= 1
                if waiting[child] == 0:
                    heapq.heappush(ready, (dates[child], child))
    return out


def _rows(db, sql: str, ids) -> list[tuple]:
    ids = list(ids)
    out = []
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        out.extend(db.execute(sql.format(", ".join("?" * len(chunk))), chunk).fetchall())
    return out


def _commits(
    db,
    ids: list[int],
    upstream: str,
    files: dict[int, list[CommitFile]] | None = None,
    found: dict[int, tuple] | None = None,
) -> list[Commit]:
    """The commits of `ids` (their rows read here, or taken from `found`: id -> row)."""
    from ..core.links import commit_url, pull_url

    if found is None:
        found = _commit_rows(db, ids)
    out = []
    for cid in ids:
        _, sha, date, author, subject, pr, parents = found[cid]
        out.append(
            Commit(
                sha=sha,
                date=date or "",
                author=author or "",
                subject=subject or "",
                pr=pr,
                merge=len((parents or "").split()) > 1,
                url=commit_url(upstream, sha),
                pr_url=pull_url(upstream, pr),
                files=(files or {}).get(cid, []),
            )
        )
    return out


def _commit_rows(db, ids) -> dict[int, tuple]:
    return {
        r[0]: r
        for r in _rows(
            db, "select id, sha, date, author, subject, pr, parents from commits where id in ({})", ids
        )
    }


def _code_files(db, version: str, kind: str, name: str, framework: bool) -> list[str]:
    sql = "select file from parser_code_v where version = ? and kind = ? and name = ?"
    return sorted(
        {r[0] for r in db.execute(sql + ("" if framework else " and shared = 0"), [version, kind, name])}
    )


def _touching(db, ids: list[int], paths: set[str], first_parent: bool) -> dict[int, list[CommitFile]]:
    """commit id -> the files of `paths` it touched (all-parents: a merge only where it changed a file itself).
    The range's rows are read once per reader: the names of one diff share its range."""
    memo = db.__dict__.setdefault("_history_files", {})
    key = tuple(ids)
    if key not in memo:
        memo.clear()
        memo[key] = sorted(
            tuple(r)
            for r in _rows(
                db,
                "select commit_id, path, added, removed, own from commit_files where commit_id in ({})",
                ids,
            )
        )
    out: dict[int, list[CommitFile]] = {}
    for cid, path, added, removed, own in memo[key]:
        if path in paths and (first_parent or own is None or own):
            out.setdefault(cid, []).append(CommitFile(path, added, removed))
    return out


def log(
    db, name: str, a: str, b: str, kind: str | None = None, framework: bool = False, all_parents: bool = False
) -> Log:
    from .history_model import KindLog, Log

    a, b = require(db, a), require(db, b)
    _require_tables(db)
    g = _graph(db)
    missing = [v for v in (a, b) if v not in g.tips]
    if missing:
        raise _no_history(db, missing, g)
    name = registered_name(db, name)
    kinds = check_name(db, name, kind)
    registered = {
        (k, v)
        for k, v in db.execute(
            "select kind, version from parser_map_v where name = ? and version in (?, ?)", [name, a, b]
        )
    }
    present = [k for k in kinds if (k, a) in registered or (k, b) in registered]
    if not present:
        where = [
            r[0]
            for r in db.execute(
                "select version from parser_map_v where name = ? order by version_ord", [name]
            )
        ]
        raise AnswerError(
            f"{name!r} is registered neither at {a} nor at {b}",
            f"it is registered at {span_text(spans(indexed(db), set(where)))}",
        )
    upstream, _ = upstream_refs(db, [])
    ids = _between(db, g, a, b, not all_parents)
    out = []
    for k in present:
        files_a, files_b = _code_files(db, a, k, name, framework), _code_files(db, b, k, name, framework)
        touched = _touching(db, ids, set(files_a) | set(files_b), not all_parents)
        out.append(
            KindLog(
                kind=k,
                files_a=files_a,
                files_b=files_b,
                registered_a=(k, a) in registered,
                registered_b=(k, b) in registered,
                commits=_commits(db, [c for c in ids if c in touched], upstream, touched),
            )
        )
    note = None
    if g.tips[a] in g.parents and g.tips[a] not in _reach(g, g.tips[b]):
        note = (
            f"{a} is not an ancestor of {b}: these are the commits of {b}'s history that {a}'s does not hold"
            f" (a release branch: its own commits are left out)"
        )
    return Log(name=name, a=a, b=b, first_parent=not all_parents, framework=framework, kinds=out, note=note)


def _first_parents(db, a: str, b: str) -> list[int] | None:
    """The commits from A to B on B's first-parent line, oldest first; None when either version has no history."""
    if not _has_tables(db):
        return None
    g = _graph(db)
    if a not in g.tips or b not in g.tips:
        return None
    return _between(db, g, a, b, True)


def range_commits(db, kind: str, name: str, a: str, b: str) -> list[Commit] | None:
    """The commits from A to B (first parent) that touched the name's own code files at A or at B; None when
    either version has no history (the parser page lists them under a change of its code; diff: attach_commits)."""
    ids = _first_parents(db, a, b)
    if ids is None:
        return None
    paths = set(_code_files(db, a, kind, name, False)) | set(_code_files(db, b, kind, name, False))
    touched = _touching(db, ids, paths, True)
    return _commits(db, [i for i in ids if i in touched], upstream_refs(db, [])[0], touched)


def attach_commits(db, changes, a: str, b: str) -> None:
    """Each change of a name's code from A to B gets its commits (range_commits), when both versions have
    history: the range, the upstream, the names' own files and the commits' rows read once for all of them."""
    named = [c for c in changes if c.type in CODE_CHANGES and c.kind and c.name]
    ids = _first_parents(db, a, b) if named else None
    if ids is None:
        for c in named:
            c.commits = None
        return
    own: dict[tuple[str, str], set[str]] = {}
    for version in (a, b):
        for kind, name, file in db.execute(
            "select kind, name, file from parser_code_v where version = ? and shared = 0", [version]
        ):
            own.setdefault((kind, name), set()).add(file)
    upstream = upstream_refs(db, [])[0]
    touched = {id(c): _touching(db, ids, own.get((c.kind, c.name), set()), True) for c in named}
    found = _commit_rows(db, {i for t in touched.values() for i in t})
    for c in named:
        c.commits = _commits(db, [i for i in ids if i in touched[id(c)]], upstream, touched[id(c)], found)


def _has_tables(db) -> bool:
    return db.execute("select 1 from sqlite_master where name = 'history_tips'").fetchone() is not None


def _require_tables(db) -> None:
    """A database of an older tpindex (schema 6 and before) has no history tables until its next build."""
    if not _has_tables(db):
        from .versions import build_hint

        raise AnswerError(
            "this database was built by an older tpindex, before commits were stored",
            build_hint(db, ",".join(indexed(db)) or "v0.30.0..v0.32.0").replace(
                "index it first", "store them"
            )
            + " (from a clone; nothing is re-indexed)",
        )


# -- which versions hold a commit ---------------------------------------------------------------------------

HEX = set("0123456789abcdef")


def contains(db, query: str) -> Contains:
    from .history_model import Contains, ContainsCommit

    q = query.strip()
    pr = None
    if q.startswith("#") and q[1:].isascii() and q[1:].isdigit():
        from ..sources.history import MAX_PR_DIGITS

        if len(q[1:].lstrip("0")) > MAX_PR_DIGITS:
            raise AnswerError(
                f"{q[:24]}{'...' if len(q) > 24 else ''} is no pull request number (more than {MAX_PR_DIGITS}"
                " digits)",
                "give the number of a pull request, e.g. tpindex contains '#12345'",
            )
        pr = int(q[1:])
    elif q and set(q.lower()) <= HEX:
        if len(q) < 4:
            raise AnswerError(
                f"{q!r} is too short for a commit id",
                "give at least 4 hex digits of it (git's shortest abbreviation), or a pull request as #N",
            )
        q = q.lower()
    else:
        raise AnswerError(
            f"{query!r} is neither a commit id nor a pull request number",
            "give a commit id (4 to 40 hex digits), or a pull request as #N, e.g. tpindex contains '#12345'",
        )
    _require_tables(db)
    g = _graph(db)
    if not g.tips:
        raise _no_history(db, list(g.without), g)
    if pr is not None:
        found = db.execute(
            "select id, parents is null from commits where pr = ? order by date, id", [pr]
        ).fetchall()
    else:
        found = db.execute(
            "select id, parents is null from commits where sha between ? and ? order by id", [q, q + "z"]
        ).fetchall()
        if len(found) > 1:
            shas = [
                r[0]
                for r in _rows(
                    db, "select sha from commits where id in ({}) order by sha", [r[0] for r in found]
                )
            ]
            raise AnswerError(
                f"{q} is the start of {len(found)} commits: {', '.join(s[:12] for s in shas[:5])}"
                + (" ..." if len(shas) > 5 else ""),
                "give more of its digits",
            )
    by_tip: dict[int, list[str]] = {}
    for label, tip in g.tips.items():
        by_tip.setdefault(tip, []).append(label)
    upstream, _ = upstream_refs(db, [])
    history = [v for v in g.order if v in g.tips]
    out = []
    holding: set[str] = set()
    for (cid, below), commit in zip(found, _commits(db, [r[0] for r in found], upstream), strict=True):
        if below:
            labels = set(g.tips)
        else:
            labels, seen, todo = set(), set(), [cid]
            while todo:
                c = todo.pop()
                if c in seen:
                    continue
                seen.add(c)
                labels.update(by_tip.get(c, ()))
                todo.extend(g.children.get(c, ()))
        versions = [v for v in history if v in labels]
        holding |= labels
        commit.files = [
            CommitFile(p, ad, rm)
            for p, ad, rm in db.execute(
                "select path, added, removed from commit_files where commit_id = ? order by path", [cid]
            )
        ]
        out.append(ContainsCommit(commit=commit, first=versions[0] if versions else None, versions=versions))
    versions = [v for v in history if v in holding]
    return Contains(
        query=query.strip(),
        commits=out,
        first=versions[0] if versions else None,
        versions=versions,
        not_containing=[v for v in history if v not in holding],
        without_history=[v for v in g.order if v in g.without],
    )


# -- text and Markdown --------------------------------------------------------------------------------------
