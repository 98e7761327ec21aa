"""Build step: the history of a clone, stored so that `log`, `contains` and the commits of `diff` are
answered from the database, with the clone gone (issue 31).

What is stored, for the indexed git versions' commits (the *tips*):

- their common base B (`meta.history_base`: the nearest commit every tip descends from, `merge-base
  --octopus`; a single tip is its own base);
- every commit reachable from a tip and not from B, once, with its parents, author date, author, subject
  and the pull request the subject names (`commits`), and the parsed in-scope paths (Python under vllm/
  the scope holds) it touched with the lines added and removed against its first parent (`commit_files`;
  a merge's row says whether the file also differs from every other parent). That is the graph `log`
  walks and `contains` searches;
- every commit reachable from B (B included), listed only: id, date, author, subject, PR. Every tip's
  history holds them, so `contains` answers for them without their graph: a clone with 100k commits
  stores its old history as one row a commit, no parents, no paths.

Builds are incremental: a build walks only from the tips it has not walked (`history_tips`), stopping
at the tips already walked and at B, so adding the newest tag reads that tag's new commits only. A tag
older than B (a build of an older range) moves B down: the commits between the new B and the old one are
walked then, and their listed rows get their graph. A scope wider than the walked one (`meta
.history_roots`) reads the paths of the new directories for the stored graph. Nothing here runs, and
no git command runs, when every tip is walked and the scope is covered (a no-op build).

The walk runs in a thread from the start of the build, while the versions are parsed and written: most
of its time is git's (`git log --numstat` computing line counts), on the other core; its rows are
written once the versions are, in one transaction of their own. The thread reads the repository only
(the database is the build's, in the main thread), and nothing it holds is used by the forked parser
workers.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field

from ..core.scope import Scope, parsed


def roots_of(scope: Scope) -> list[str]:
    """The scope's directories that hold parsed paths (vllm/...): where commits are looked at."""
    return [r for r in scope.roots() if r == "" or r == "vllm" or r.startswith("vllm/")]


def _covered(root: str, walked: list[str]) -> bool:
    return any(w == "" or root == w or root.startswith(w + "/") for w in walked)


def _meta(conn, key: str) -> str | None:
    row = conn.execute("select value from meta where key = ?", [key]).fetchone()
    return row[0] if row else None


@dataclass
class Plan:
    """What a walk needs from the database (read before it starts) and what it found (written after)."""

    git_dir: str
    scope: Scope
    walked: list[str]  # tips walked by earlier builds
    candidates: list[str]  # tips not walked yet
    base0: str | None  # the stored base
    stored_roots: list[str]
    roots: list[str]
    extra: list[str]  # roots the stored graph was not walked for
    stored_merges: set[str]  # merge commits already stored
    # found by the walk
    new: list[str] = field(default_factory=list)
    base: str | None = None
    graph: dict = field(default_factory=dict)  # sha -> CommitInfo with parents
    listed: list = field(default_factory=list)  # CommitInfo without parents (at and below the base)
    rows: dict = field(default_factory=dict)  # "replace"/"ignore" -> [(sha, path, added, removed, own)]


class Walk:
    """A history walk running in a thread; `finish(conn)` waits for it and writes what it found."""

    def __init__(self, plan: Plan):
        self.plan = plan
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="tpindex-history", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            _read(self.plan)
        except BaseException as e:  # re-raised by finish(), in the build's thread
            self.error = e

    def finish(self, conn) -> int:
        """-> commits added."""
        self.thread.join()
        if self.error is not None:
            raise self.error
        return _write(conn, self.plan) if self.plan.new or self.plan.extra else 0


def start(conn, git_dir: str, scope: Scope, refs) -> Walk | None:
    """Start walking the history of the git versions this build indexes and those already indexed from
    git, from the tips no build walked yet (and for the directories of a wider scope); None when there is
    nothing to walk."""
    building = {r.label: r.commit for r in refs if r.source == "git"}
    tips = [
        sha
        for label, sha in conn.execute(
            "select label, commit_id from versions where source = 'git' and status = 'complete' order by ord"
        )
        if label not in building
    ] + list(building.values())
    walked = [r[0] for r in conn.execute("select sha from history_tips")]
    seen = set(walked)
    stored_roots = json.loads(_meta(conn, "history_roots") or "[]")
    roots = roots_of(scope)
    extra = [r for r in roots if not _covered(r, stored_roots)]
    candidates = list(dict.fromkeys(t for t in tips if t not in seen))
    if not candidates and not extra:
        return None
    merges = (
        {r[0] for r in conn.execute("select sha from commits where parents like '% %'")} if extra else set()
    )
    return Walk(
        Plan(
            git_dir,
            scope,
            walked,
            candidates,
            _meta(conn, "history_base"),
            stored_roots,
            roots,
            extra,
            merges,
        )
    )


def record(conn, git_dir: str, scope: Scope, refs=()) -> int:
    """The walk of `start`, at once. -> commits added."""
    walk = start(conn, git_dir, scope, refs)
    return walk.finish(conn) if walk else 0


def _read(plan: Plan) -> None:
    """The walk: everything it reads of the repository, into `plan`."""
    from ..sources.history import GitHistory

    h = GitHistory(plan.git_dir)
    try:
        here = h.commits_here([*plan.candidates, *plan.walked])  # one git process for every tip
        plan.new = new = [t for t in plan.candidates if t in here]  # another clone's versions: no history
        if not new and not plan.extra:
            return
        walked = [t for t in plan.walked if t in here]  # walked in another clone: not a revision here
        if not new and not walked:  # nothing of this clone to read the wider scope's paths for
            plan.extra = []
            return
        base0 = plan.base0
        ranges: list[tuple[list[str], list[str]]] = []  # (tips, stop) walked with their graph and paths
        listed_from = None
        base = base0
        if new and not walked:  # the first walk
            base = h.base(new)
            ranges.append((new, [base] if base else []))
            listed_from = base
        elif new:
            if base0 is not None and not all(h.is_ancestor(base0, t) for t in new):
                base = h.base([base0, *new])  # an older tag: the base moves down
            ranges.append((new, [*walked, base] if base else walked))
            if base0 is not None and base != base0:
                ranges.append(([base0], [base] if base else []))  # listed so far, now between base and tips
        plan.base = base
        plan.graph = graph = {c.sha: c for tips, stop in ranges for c in h.commits(tips, stop)}
        touched: dict[str, list[tuple]] = {}
        for tips, stop in ranges:
            touched.update(h.touched(tips, stop, plan.roots))
        # a wider scope: the new directories' paths for the graph already stored (the new ranges were just read
        # with every directory)
        extra = h.touched(walked, [base] if base else [], plan.extra) if plan.extra and walked else {}
        plan.listed = list(h.listed(listed_from)) if listed_from else []
        merges = {sha for sha, c in graph.items() if len(c.parents) > 1} | plan.stored_merges
        # (sha, path, added, removed, own): the walked ranges' rows replace what was there; the wider scope's
        # add to it
        plan.rows = {"replace": [], "ignore": []}
        for verb, found in (("replace", touched), ("ignore", extra)):
            for sha, paths in found.items():
                paths = [p for p in paths if parsed(p[0]) and plan.scope.matches(p[0])]
                own = h.own_paths(sha, [p[0] for p in paths]) if sha in merges and paths else set()
                plan.rows[verb] += [
                    (sha, path, added, removed, int(path in own) if sha in merges else None)
                    for path, added, removed in paths
                ]
    finally:
        h.close()


def _write(conn, plan: Plan) -> int:
    graph = plan.graph
    with conn:
        conn.execute("begin immediate")
        before = conn.execute("select count(*) from commits").fetchone()[0]
        conn.executemany(
            "insert or ignore into commits(sha, date, author, subject, pr) values (?, ?, ?, ?, ?)",
            [(c.sha, c.date, c.author, c.subject, c.pr) for c in plan.listed],
        )
        conn.executemany(
            "insert into commits(sha, date, author, subject, pr) values (?, ?, ?, ?, ?)"
            " on conflict(sha) do nothing",
            [(c.sha, c.date, c.author, c.subject, c.pr) for c in graph.values()],
        )
        ids = _ids(
            conn,
            {p for c in graph.values() for p in c.parents}
            | set(graph)
            | {r[0] for rows in plan.rows.values() for r in rows},
        )
        # a parent not stored can only be missing from the clone (the edge of a shallow clone): left out
        conn.executemany(
            "update commits set parents = ? where id = ?",
            [(" ".join(str(ids[p]) for p in c.parents if p in ids), ids[c.sha]) for c in graph.values()],
        )
        for verb, rows in plan.rows.items():
            conn.executemany(
                f"insert or {verb} into commit_files(commit_id, path, added, removed, own)"
                " values (?, ?, ?, ?, ?)",
                [(ids[r[0]], *r[1:]) for r in rows if r[0] in ids],
            )
        conn.executemany("insert or ignore into history_tips(sha) values (?)", [(t,) for t in plan.new])
        if plan.new:
            if plan.base is not None:
                conn.execute(
                    "insert or replace into meta(key, value) values ('history_base', ?)", [plan.base]
                )
            else:
                conn.execute("delete from meta where key = 'history_base'")
        merged = sorted(set(plan.stored_roots) | set(plan.roots))
        merged = [r for r in merged if not any(o != r and _covered(r, [o]) for o in merged)]
        conn.execute(
            "insert or replace into meta(key, value) values ('history_roots', ?)", [json.dumps(merged)]
        )
        return conn.execute("select count(*) from commits").fetchone()[0] - before


def _ids(conn, shas: set[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    wanted = list(shas)
    for i in range(0, len(wanted), 500):
        chunk = wanted[i : i + 500]
        out.update(
            (sha, cid)
            for cid, sha in conn.execute(
                f"select id, sha from commits where sha in ({', '.join('?' * len(chunk))})", chunk
            )
        )
    return out
