"""The browser's own pages, beyond Datasette's tables and canned queries:

- `/-/parser/<kind>/<name>[?v=VERSION]`: the name's card at a version (default: the newest that has it),
  its chain, its history across versions (equal consecutive versions collapsed) and each version where
  its own code changed, with the files and upstream compare links;
- `/-/version/<label>`: every name of a version grouped by kind and impl, with counts, and what changed
  from the previous indexed version (answers/diff.py);
- `/-/find?q=`: the search box: a version label goes to its page, a parser name (prefix, any case) to
  its page, several matches to a list, none to close names.

The data functions take a read connection (store.Reader), asked through `Index` (parser_page, version_page,
find, which_empty) in Datasette's database thread; the answers modules (card, which, diff) do the work, as for
the command line, and the SQL of their own is one file per fact under queries/read/ (store/queries.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.specs import named
from ..core.suggest import close_names
from ..store import queries
from .card import Card, Links, cards
from .contract import contract_diff
from .diff import comparer
from .history import range_commits
from .search import find_names
from .serveline import serve_line
from .versions import AnswerError, indexed, nearest, require, resolve
from .which import check_name, history, parsers_at, registered_name

KIND_ORDER = ("tool", "reasoning", "engine")
IMPL_ORDER = ("standalone", "unified", "name-check", "dispatch", "unresolved")


class NotFound(AnswerError):
    """A page about something the database does not hold."""


# ---- a parser name ----------------------------------------------------------------------------------


@dataclass
class Range:
    first: str
    last: str
    count: int
    row: dict | None
    code_changed: bool = False
    moved: bool = False
    real_url: str | None = None
    reg_url: str | None = None
    since: str | None = None  # the version before the range (its code's diff starts there)


@dataclass
class CodeChange:
    version: str
    previous: str
    files: list[dict]  # {file, status, compare}
    moved: bool = False
    commits: list | None = (
        None  # answers.commit_model.Commit, from a clone (None: no history for these versions)
    )
    what: str | None = (
        None  # what changed, as `tpindex diff` says it (imports only, functions ..., methods ...)
    )
    added: int | None = None  # lines added and removed in the name's code (its diff page's +/-)
    removed: int | None = None
    more_commits: int = 0  # commits past PAGE_COMMITS, not listed (tpindex log lists them all)


PAGE_COMMITS = 50  # commits a change of the page lists (a 100k-commit clone made a 29 MB page)


def _page_commits(commits: list | None) -> tuple[list | None, int]:
    if commits is None or len(commits) <= PAGE_COMMITS:
        return commits, 0
    return commits[-PAGE_COMMITS:], len(commits) - PAGE_COMMITS  # the newest, next to the version


@dataclass
class ParserPage:
    kind: str
    name: str
    version: str
    card: Card
    hops: list[dict]
    kinds: list[str]
    present: list[str]
    ranges: list[Range]
    changes: list[CodeChange]
    asked: str | None = None  # a version asked for where the name is not registered
    other_kinds: list[str] = field(default_factory=list)
    stored: dict[str, frozenset] = field(default_factory=dict)  # version -> the paths whose code is stored
    serve: object | None = None  # answers.serveline.ServeLine (tool parsers)
    newest: str | None = None  # the newest indexed version


def parser_page(db, kind: str, name: str, at: str | None = None) -> ParserPage:
    name = registered_name(db, name)
    check_name(db, name)
    registered = set(queries.column(db, "name_kinds", name=name))
    kinds = [k for k in KIND_ORDER if k in registered]
    if kind not in kinds:
        raise NotFound(
            f"{name!r} is not a {kind} parser in any indexed version (it is a {' and a '.join(kinds)}"
            " parser)",
            f"see /-/parser/{kinds[0]}/{name}",
        )
    present = queries.column(db, "name_versions", name=name, kind=kind)
    asked = None
    version = present[-1]
    if at:
        wanted = require(db, at)
        if wanted in present:
            version = wanted
        else:
            asked = wanted
    card = cards(db, name, version, kind)[0]
    link = Links(db, version)
    hops = [{**h.to_json(), "url": link(h.file, h.line)} for h in parsers_at(db, name, version, kind)[0].hops]
    ranges = _ranges(db, kind, name)
    changes = _code_changes(db, kind, name, present)
    return ParserPage(
        kind,
        name,
        version,
        card,
        hops,
        kinds,
        present,
        ranges,
        changes,
        asked,
        [k for k in kinds if k != kind],
        _stored(db, [version] + [r.last for r in ranges if r.row]),
        serve_line(db, card),
        indexed(db)[-1],
    )


def _stored(db, versions) -> dict[str, frozenset]:
    from .source import stored_paths

    return {v: stored_paths(db, v) for v in dict.fromkeys(versions)}


def _counted(db, change: CodeChange, kind: str, name: str) -> CodeChange:
    """The change with the +/- of the name's code diff from its previous version (and its commits cut at
    PAGE_COMMITS)."""
    from .namecode import name_code_counts

    change.commits, change.more_commits = _page_commits(change.commits)
    try:
        change.added, change.removed = name_code_counts(db, change.previous, change.version, name, kind) or (
            None,
            None,
        )
    except AnswerError:  # no code to compare: the link stays, without counts
        pass
    return change


def _ranges(db, kind: str, name: str) -> list[Range]:
    """The ranges of `tpindex which --all` (the same grouping, gaps where the name is absent), each linked at
    its last version."""
    out: list[Range] = []
    prev, prev_last = None, None
    for r in history(db, name, kind).kinds[0].ranges:
        p = r.parser
        row = (
            None
            if p is None
            else {
                "impl": p.impl,
                "real_class": p.real_class,
                "real_file": p.real_file,
                "real_line": p.real_line,
                "reg_file": p.registered_file,
                "reg_line": p.registered_line,
            }
        )
        page = Range(r.first, r.last, r.versions, row, code_changed=r.code_changed)
        if p is not None:
            page.moved = prev is not None and (prev.real_file or "") != (p.real_file or "")
            page.since = prev_last
            link = Links(db, r.last)
            page.real_url = link(p.real_file, p.real_line)
            page.reg_url = link(p.registered_file, p.registered_line)
            prev, prev_last = p, r.last
        out.append(page)
    return out


def _code_changes(db, kind: str, name: str, present: list[str]) -> list[CodeChange]:
    """Each version (after the first) where the code that runs for the name changed (`tpindex diff`'s
    code-changed, with what changed), or where its real file moved (with the own files that differ)."""
    from .diff import code_changes

    rows = {r["version"]: r for r in queries.rows(db, "name_rows", kind=kind, name=name)}
    by_version: dict[str, dict[str, tuple[str, int]]] = {}
    for r in queries.rows(db, "name_code_files", kind=kind, name=name):
        by_version.setdefault(r["version"], {})[r["file"]] = (r["blob_id"], r["shared"])
    out = []
    for a, b in zip(present, present[1:], strict=False):
        ra, rb = rows[a], rows[b]
        if (ra["real_file"] or "") != (rb["real_file"] or "") or ra["impl"] != rb["impl"]:
            fa, fb = by_version.get(a, {}), by_version.get(b, {})
            own = [
                p
                for p in sorted(set(fa) | set(fb))
                if not (fa.get(p) or fb.get(p))[1] and (fa.get(p) or (None,))[0] != (fb.get(p) or (None,))[0]
            ]
            if own:
                compare = comparer(db, a, b)  # the upstream compare links, as `tpindex diff` gives them
                files = [
                    {
                        "file": p,
                        "status": "added" if p not in fa else "removed" if p not in fb else "changed",
                        "compare": compare(p),
                    }
                    for p in own
                ]
                out.append(
                    _counted(
                        db,
                        CodeChange(
                            b,
                            a,
                            files,
                            moved=(ra["real_file"] or "") != (rb["real_file"] or ""),
                            commits=range_commits(db, kind, name, a, b),
                        ),
                        kind,
                        name,
                    )
                )
        elif ra["code_sig"] != rb["code_sig"]:
            for ch in code_changes(db, a, b, [(kind, name)], {(kind, name): rb}):
                if ch.type != "code-changed":
                    continue
                files = [
                    {
                        "file": f["file"],
                        "compare": f["compare"],
                        "status": "added" if not f["blob_a"] else "removed" if not f["blob_b"] else "changed",
                    }
                    for f in ch.files
                ]
                out.append(
                    _counted(
                        db,
                        CodeChange(b, a, files, what=ch.detail, commits=range_commits(db, kind, name, a, b)),
                        kind,
                        name,
                    )
                )
    return out


# ---- a version --------------------------------------------------------------------------------------


@dataclass
class VersionPage:
    version: str
    previous: str | None
    next: str | None
    groups: list[tuple[str, list[tuple[str, list[dict]]]]]  # kind -> [(impl, rows)]
    counts: dict[str, dict[str, int]]  # kind -> impl -> n
    total: int
    changes: dict | None  # answers.diff.diff(previous, version)
    files: int = 0
    contract: object | None = None  # Index.contract_diff(previous, version): the parser contract's changes
    stored: dict[str, frozenset] = field(default_factory=dict)  # version -> the paths whose code is stored
    counts_of: dict = field(
        default_factory=dict
    )  # (kind, name) or file -> (added, removed) from the previous version


def version_page(db, label: str) -> VersionPage:
    from .diff import diff

    try:
        version = require(db, label)
    except AnswerError as e:
        raise NotFound(e.message, e.hint).offering(e.asked, e.versions) from None
    labels = indexed(db)
    i = labels.index(version)
    prev, nxt = (labels[i - 1] if i else None), (labels[i + 1] if i + 1 < len(labels) else None)
    rows = queries.rows(db, "version_rows", version=version)
    link = Links(db, version)
    for r in rows:  # the real file upstream, beside its local link
        r["real_url"] = link(r["real_file"], r["real_line"])
    groups, counts = [], {}
    for kind in KIND_ORDER + tuple(sorted({r["kind"] for r in rows} - set(KIND_ORDER))):
        mine = [r for r in rows if r["kind"] == kind]
        if not mine:
            continue
        by_impl = [(impl, [r for r in mine if r["impl"] == impl]) for impl in IMPL_ORDER]
        by_impl = [(i, rs) for i, rs in by_impl if rs]
        groups.append((kind, by_impl))
        counts[kind] = {i: len(rs) for i, rs in by_impl}
    files = queries.value(db, "version_file_count", version=version) or 0
    contract = contract_diff(db, prev, version) if prev else None
    changes = diff(db, prev, version) if prev else None
    return VersionPage(
        version,
        prev,
        nxt,
        groups,
        counts,
        len(rows),
        changes,
        files,
        contract,
        _stored(db, [v for v in (version, prev) if v]),
        _change_counts(db, prev, version, changes),
    )


# changes of a name between two versions that its code diff shows (the name is registered on both sides)
NAME_CODE_CHANGES = (
    "code-changed",
    "real-file-changed",
    "impl-changed",
    "real-class-changed",
    "registered-class-changed",
)


def _change_counts(db, a: str | None, b: str, changes: dict | None) -> dict:
    """The +/- of each name's code change and of each shared file's change from a to b."""
    from .namecode import names_code_counts
    from .source import count_paths

    every = changes.changes if changes else []
    # the names' counts together: the versions are checked once and each name's kind is the change's
    out: dict = (
        names_code_counts(
            db, a, b, list(dict.fromkeys((ch.kind, ch.name) for ch in every if ch.type in NAME_CODE_CHANGES))
        )
        if every
        else {}
    )
    for ch in every:
        try:
            if ch.type == "framework-changed" and ch.file:
                out[ch.file] = count_paths(db, a, ch.file, b, ch.file)
        except AnswerError:  # code not stored: the change is listed without counts
            pass
    return out


# ---- the search box ---------------------------------------------------------------------------------


@dataclass
class Found:
    q: str
    target: str | None = None  # ("parser", kind, name) or ("version", label) as a path
    matches: list = field(default_factory=list)  # answers.search.NameHit, best first
    suggestions: list[str] = field(default_factory=list)
    model: object | None = None  # answers.fit.Fit: a model name the documentation knows, answered (no proof)


def find(db, q: str) -> tuple[str, tuple] | Found:
    """What the search box goes to: ("version", label), ("parser", kind, name), or a Found listing."""
    q = q.strip()
    if not q:
        return Found(q)
    labels = indexed(db)
    for label in (q, q.lower()):
        found = named(label, labels)
        if len(found) == 1:
            return ("version", found[0])
    hits = find_names(db, q)
    exact = [h for h in hits if h.level == "exact" and h.via == "name"]
    if not exact:  # a model the newest version's documentation knows: its answer, as `fit --model` gives it
        answer = _model_answer(db, q)
        if answer is not None:
            return Found(q, matches=hits, model=answer)
    if len({(h.kind, h.name) for h in hits}) == 1:
        return ("parser", hits[0].kind, hits[0].name)
    if hits:
        return Found(q, matches=hits)
    close = close_names(q, queries.column(db, "parser_names"), n=6, cutoff=0.5)
    return Found(q, suggestions=close)


def _model_answer(db, q: str):
    """`fit --model q` at the newest version, without the proof (a GET runs no code), when the documentation
    knows the model; None otherwise."""
    from .docpairs import resolve
    from .fit import fit_model

    if resolve(db, indexed(db)[-1], q) is None:
        return None
    try:
        return fit_model(db, q)
    except AnswerError:
        return None


# ---- why the `which` canned query has no rows -------------------------------------------------------


def which_empty(db, name: str, version: str) -> dict | None:
    """Why `which` answers nothing for (name, version), with what to ask instead; None when it answers."""
    name, version = name.strip(), version.strip()
    if not name:
        return None
    labels = indexed(db)
    at = labels[-1] if labels else None
    if version:
        try:
            at = resolve(version, labels)
        except AnswerError as e:
            found = named(version, labels)
            return {
                "why": e.message,
                "versions": found or nearest(version, labels) or labels[-3:],
                "names": [],
                "present": [],
            }
    present = queries.column(db, "name_versions", name=name, kind=None)
    if not present:
        close = close_names(
            name,
            queries.column(db, "parser_names"),
            n=5,
            cutoff=0.5,
            also=lambda n: name.lower() in n.lower(),
        )
        return {
            "why": f"no parser is named {name!r} in any indexed version",
            "names": close,
            "versions": [],
            "present": [],
        }
    if at not in present:
        return {
            "why": f"{name!r} is not registered at {at}",
            "present": present,
            "names": [],
            "versions": [],
            "at": at,
        }
    return None


# ---- a file at a version (/-/source), a file's or a name's diff (/-/diff) ----------------------------------


@dataclass
class SourcePage:
    version: str
    code: object | None  # store.code.Code; None: the path is a directory of the version
    files: list[str]  # a directory: its paths; a file: the versions holding it, in version order
    blobs: dict[str, str] | None = None  # version -> the file's blob (a file)
    outline: dict | None = None  # answers.source.file_outline (a file)


def source_page(db, version: str, path: str) -> SourcePage:
    from .source import _blob_at, directory, file_outline, load_at

    v = require(db, version)
    if _blob_at(db, v, path) is None:
        listing = directory(db, v, path)
        if listing is not None:  # a directory: its files, each linked
            return SourcePage(v, None, listing)
    c = load_at(db, v, path)
    blobs = {r["label"]: r["blob_id"] for r in queries.rows(db, "path_blobs", path=path)}
    return SourcePage(v, c, list(blobs), blobs, file_outline(db, v, path))


def diff_files(db, a: str, b: str, path_a: str, path_b: str, name: str, kind: str | None) -> list[tuple]:
    """(diff as answers.source.diff_paths gives it, the old file's lines, the new file's lines) of one file
    (path_a or path_b given), or of each of a parser name's code files (answers.namecode.name_code_diff)."""
    from ..store import code
    from .namecode import name_code_diff
    from .source import diff_paths

    if path_a or path_b:
        diffs = [diff_paths(db, a, path_a or path_b, b, path_b or path_a)]
    else:
        diffs = name_code_diff(db, a, b, name, kind)["files"]
    # the whole files for highlighting, by the blob ids the diff found (a binary file has no lines)
    return [
        (d, *(code.read_lines(db, blob) or [] if blob else [] for blob in (d["blob_a"], d["blob_b"])))
        for d in diffs
    ]
