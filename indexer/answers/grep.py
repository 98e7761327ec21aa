"""`grep`: a regular expression over the stored code of the indexed versions, like `git grep -n -E` over
their tags, each matching (path, line number, text) once with the versions that hold it.

The work is done once per distinct line, not once per version: the pattern runs over the pages of
distinct lines (a literal every match must contain is looked for first, and only the lines holding it
are matched), the inverted index names the blobs holding the matched lines, their line-id arrays give
the line numbers, and the files table the (version, path) pairs of those blobs. `tpindex grep` and the
browser's search page both call `search`.

Every surface searches with a wall-clock limit that really stops it (GREP_TIME_LIMIT unless given): the
pattern is read and translated here (linear, capped: ere.translate), then compiled and run in a child
process that is killed at the limit (bounded.py), since one backtracking match can take exponential time
inside one call of Python's `re`, where nothing else gets a word in. The child also cuts the first `mark`
matching lines at their matches (for the terminal's colour and the browser's <mark>), for the same reason.
"""

from __future__ import annotations

import fnmatch
import functools
from dataclasses import dataclass, field

from ..core import ranges
from ..store import code
from .ere import Compiled, Translated, translate
from .versions import AnswerError, indexed, require

GREP_TIME_LIMIT = (
    10.0  # seconds a search may take (tpindex grep --time-limit; serve's --time-limit for its own)
)


@dataclass
class Match:
    path: str
    line: int | None  # None: a binary file that matches
    text: str | None
    versions: list[str] = field(default_factory=list)  # in version order
    marks: list[tuple[str, bool]] | None = (
        None  # the text cut at the pattern's matches (see pieces), if asked
    )

    @property
    def binary(self) -> bool:
        return self.line is None

    def json(self) -> dict:
        return {
            "path": self.path,
            "line": self.line,
            "text": self.text,
            "versions": self.versions,
            "binary": self.binary,
        }


@dataclass
class Result:
    pattern: Translated
    versions: list[str]  # the versions searched, in version order
    matches: list[Match]
    all_versions: list[str]  # every indexed version, in order (ranges are over these)
    truncated: bool = False  # more distinct lines matched than max_lines: the matches are of the first ones

    @functools.cached_property
    def _pos(self) -> dict[str, int]:
        return {v: i for i, v in enumerate(self.all_versions)}

    @functools.cached_property
    def _runs(self) -> dict[tuple[str, ...], str]:
        return {}

    def matching_versions(self) -> list[str]:
        """The versions searched that hold a matching line (of the matches found: all of them, unless truncated),
        in version order: a count of those is not the count of versions searched."""
        held = {v for m in self.matches for v in m.versions}
        return [v for v in self.versions if v in held]

    def ranges(self, m: Match) -> str:
        """The match's versions as ranges (each set of versions written once per result: many matches share one)."""
        key = tuple(m.versions)
        text = self._runs.get(key)
        if text is None:
            text = self._runs[key] = ranges.runs_text(ranges.runs(m.versions, pos=self._pos))
        return text

    def __reduce__(self):
        """Pickled (across the search child's pipe) as columns, each match's versions as positions among
        all_versions: a tenth of the time of pickling thousands of Match objects and their lists of labels."""
        pos = self._pos
        ms = self.matches
        columns = (
            [m.path for m in ms],
            [m.line for m in ms],
            [m.text for m in ms],
            [
                bytes(pos[v] for v in m.versions) if len(pos) <= 256 else tuple(pos[v] for v in m.versions)
                for m in ms
            ],
            [m.marks for m in ms],
        )
        return _result, (self.pattern, self.versions, self.all_versions, self.truncated, columns)


def _result(pattern, versions, all_versions, truncated, columns) -> Result:
    labels = all_versions.__getitem__
    matches = [
        Match(path, line, text, list(map(labels, vs)), marks)
        for path, line, text, vs, marks in zip(*columns, strict=True)
    ]
    return Result(pattern, versions, matches, all_versions, truncated)


def collapse(versions: list[str], order: list[str]) -> str:
    """'v0.24.0 - v0.31.0, v0.33.0': runs of versions consecutive in `order`."""
    return ranges.runs_text(ranges.runs(versions, order))


def select_versions(db, tags: str | None, at: str | None) -> list[str]:
    all_versions = indexed(db)
    if not all_versions:
        raise AnswerError("the database holds no indexed version", "build one: tpindex build --tags ...")
    if at and tags:
        raise AnswerError("--at and --tags both choose versions", "use one of them")
    if at:
        return [require(db, at)]
    if tags:
        from ..core.specs import SpecError, select

        try:
            chosen = select(tags, all_versions, pre=True)
        except SpecError as e:
            raise AnswerError(f"{e} (among the indexed versions)", "tpindex versions lists them") from None
        return chosen.names + [r for r in chosen.refs if r in all_versions]
    return all_versions


def path_matcher(globs: list[str]):
    """--path: a glob (fnmatch, * crosses /) or a directory or file (itself and everything under it)."""
    if not globs:
        return None
    tests = []
    for g in globs:
        g = g.strip()
        if any(c in g for c in "*?["):
            tests.append(lambda p, g=g: fnmatch.fnmatchcase(p, g))
        else:
            d = g.rstrip("/")
            tests.append(lambda p, d=d: p == d or p.startswith(d + "/"))
    return lambda p: any(t(p) for t in tests)


def matching_lines(conn, pat: Compiled, limit: int | None = None) -> dict[int, str]:
    """line id -> text, for every stored distinct line the pattern matches (the first `limit` ones)."""
    out: dict[int, str] = {}
    for first, page in code.pages(conn):
        for index, line in _scan(page, pat):
            out[first + index] = line
            if limit is not None and len(out) > limit:
                return out
    return out


_FOLDS_TO_ASCII = ("\u212a".encode(), "\u017f".encode())  # Kelvin sign ~ k, long s ~ s under IGNORECASE


def _needles(data: bytes, pat: Compiled) -> tuple[bytes, list[bytes] | None]:
    """What a line of `data` (stored text as UTF-8, or a binary blob's bytes) must hold to match: the
    haystack (its ASCII letters lowercased under -i) and the pattern's literal, or the texts one of which it
    must hold; None when the pattern has neither, or under -i when `data` holds one of the two non-ASCII
    letters Python folds to ASCII ones (K and ſ, for k and s) and a text holds k or s."""
    texts = [pat.literal] if pat.literal else pat.any_of
    if not texts:
        return data, None
    if not pat.icase:
        return data, [t.encode() for t in texts]
    if (
        any(c in t for t in texts for c in "ks")
        and not data.isascii()
        and any(c in data for c in _FOLDS_TO_ASCII)
    ):
        return data, None  # (a text without k or s cannot be matched through them)
    return data.lower(), [t.encode() for t in texts]


def _scan(page: bytes, pat: Compiled):
    """(index, text) of the lines of a page (UTF-8, "\\n"-joined) that the pattern matches. With a
    literal every match contains, or texts one of which each contains (an alternation such as
    (HACK|FIXME|TODO)), only the lines holding it (one) are decoded and matched (under -i, in
    the page's ASCII-lowercased bytes, unless it holds one of the two non-ASCII letters Python folds to
    ASCII ones); otherwise the pattern runs over the decoded page."""
    hay, needles = _needles(page, pat)
    literal = needles[0] if needles and pat.literal else None
    any_of = needles if needles and not pat.literal else None
    n, last = 0, 0
    if any_of:  # each matching line holds one of these: only the lines holding one are decoded and matched
        starts = set()
        for text in any_of:
            find, k = hay.find, hay.find(text)
            while k >= 0:
                s = page.rfind(b"\n", 0, k) + 1
                starts.add(s)
                e = page.find(b"\n", k)
                if e < 0:
                    break
                k = find(text, e + 1)
        search = pat.regex.search
        for s in sorted(starts):
            e = page.find(b"\n", s)
            line = page[s : len(page) if e < 0 else e].decode()
            if search(line):
                n += page.count(b"\n", last, s)
                last = s
                yield n, line
        return
    if literal:
        find, search, pos = hay.find, pat.regex.search, 0
        while True:
            k = find(literal, pos)
            if k < 0:
                return
            s = page.rfind(b"\n", 0, k) + 1
            e = page.find(b"\n", k)
            e = len(page) if e < 0 else e
            line = page[s:e].decode()
            if search(line):
                n += page.count(b"\n", last, s)
                last = s
                yield n, line
            pos = e + 1
    text = page.decode()
    search, pos, size = pat.regex.search, 0, len(text)
    while pos <= size:
        m = search(text, pos)
        if not m:
            return
        s = text.rfind("\n", 0, m.start()) + 1
        e = text.find("\n", m.start())
        e = size if e < 0 else e
        n += text.count("\n", last, s)
        last = s
        yield n, text[s:e]
        pos = e + 1


def _binary_matches(data: bytes, pat: Compiled) -> bool:
    """Whether a line of a binary blob's bytes matches; the prefilter's texts looked for first, unless one
    holds a byte that is not UTF-8 (stored as an INVALID character, that is not these bytes)."""
    texts = [pat.literal] if pat.literal else pat.any_of or []
    if all(max(t) < code.INVALID for t in texts):
        hay, needles = _needles(data, pat)
        if needles is not None and not any(n in hay for n in needles):
            return False
    return any(pat.regex.search(code.decode_line(s)) for s in data.split(b"\n"))


def _places(conn, rows, versions: dict[int, int], keep) -> dict[tuple[int, str], tuple[int, ...]]:
    """(code_texts row, path) -> the positions of its versions, in order, for the rows' blobs in the chosen versions
    (`versions`: version id -> position in the indexed order) and paths."""
    found: dict[tuple[int, str], list[int]] = {}
    rows = list(rows)
    for i in range(0, len(rows), 500):
        chunk = rows[i : i + 500]
        for row, path, version in conn.execute(
            "select t.id, u.path, f.version_id from code_texts t join units u on u.blob_id = t.blob_id"
            f" join files f on f.unit_id = u.id where t.id in ({','.join(map(str, chunk))})"
        ):
            position = versions.get(version)
            if position is not None and (keep is None or keep(path)):
                key = (row, path)
                if key in found:
                    found[key].append(position)
                else:
                    found[key] = [position]
    paths: dict[str, str] = {}  # one object per path: the result pickles each once
    return {(row, paths.setdefault(path, path)): tuple(sorted(vs)) for (row, path), vs in found.items()}


def _chosen_rows(conn, versions: list[str], keep) -> set[int]:
    """The code_texts rows of the files of these versions (and paths)."""
    found: set[int] = set()
    for v in versions:
        for row, path in conn.execute(
            "select t.id, f.path from files f join versions v on v.id = f.version_id"
            " join units u on u.id = f.unit_id join code_texts t on t.blob_id = u.blob_id where v.label = ?",
            [v],
        ):
            if keep is None or keep(path):
                found.add(row)
    return found


@dataclass
class Plan:
    """A search read and checked against the database, ready to run where it may be stopped."""

    pattern: Translated
    file: str  # the database file
    chosen: list[str]
    all_versions: list[str]
    paths: list[str]

    def run(
        self, time_limit: float | None = GREP_TIME_LIMIT, max_lines: int | None = None, mark: int | None = 0
    ) -> Result:
        """The search, where it may be stopped (module `run`): needs no connection, so a server's own thread
        can wait for it while the database thread serves other pages."""
        return run(self, time_limit, max_lines, mark)


def plan(
    db,
    pattern: str,
    tags: str | None = None,
    at: str | None = None,
    paths: list[str] | None = None,
    icase: bool = False,
    fixed: bool = False,
) -> Plan:
    """Read the pattern and the versions and paths to search (quick, in the caller's process): a mistake in
    any is raised here."""
    pat = translate(pattern, icase=icase, fixed=fixed)
    if not code.present(db):
        raise AnswerError(
            "this database holds no code to search (it was built by an older tpindex)",
            "build the same versions again: the build stores their code",
        )
    return Plan(pat, database_file(db), select_versions(db, tags, at), indexed(db), list(paths or []))


def database_file(db) -> str:
    """The file the search child opens again: the path the reader was opened with (any bytes the file system
    allows), else the one SQLite names, read as bytes so a name that is not UTF-8 survives."""
    import os

    if getattr(db, "path", None) is not None:
        return os.fspath(db.path)
    conn = getattr(db, "conn", db)
    factory, conn.text_factory = conn.text_factory, bytes
    try:
        return os.fsdecode(next(r[2] for r in conn.execute("pragma database_list") if r[1] == b"main"))
    finally:
        conn.text_factory = factory


def run(
    p: Plan, time_limit: float | None = GREP_TIME_LIMIT, max_lines: int | None = None, mark: int | None = 0
) -> Result:
    """Run a planned search in a child process stopped after `time_limit` seconds (None or 0: here, without
    a limit)."""
    if not time_limit:
        from ..store.database import open_reader

        db = open_reader(p.file)
        try:
            return _search(db, p, max_lines, mark)
        finally:
            db.conn.close()
    from ..core import bounded

    return bounded.run(_search_file, (p, max_lines, mark), time_limit)


def _search_file(p: Plan, max_lines, mark) -> Result:
    """In the child: the search on a connection of its own."""
    from ..store.database import open_reader

    db = open_reader(p.file)
    try:
        return _search(db, p, max_lines, mark)
    finally:
        db.conn.close()


def search(
    db,
    pattern: str,
    tags: str | None = None,
    at: str | None = None,
    paths: list[str] | None = None,
    icase: bool = False,
    fixed: bool = False,
    max_lines: int | None = None,
    time_limit: float | None = GREP_TIME_LIMIT,
    mark: int | None = 0,
) -> Result:
    """Every matching (path, line, text) with its versions. `max_lines` (the browser's cap) stops after
    that many distinct matching lines and marks the result truncated; `mark` matches (None: all) get their
    text cut at the pattern's matches. Stopped after `time_limit` seconds (bounded.TooSlow)."""
    return run(plan(db, pattern, tags, at, paths, icase, fixed), time_limit, max_lines, mark)


def _search(db, p: Plan, max_lines: int | None, mark: int | None) -> Result:
    pat = p.pattern.compile()
    chosen, all_versions = p.chosen, p.all_versions
    keep = path_matcher(p.paths)
    keep = keep and functools.cache(keep)
    # With fewer versions, only their blobs are searched; a path filter alone is applied with the places.
    rows = _chosen_rows(db, chosen, keep) if len(chosen) < len(all_versions) else None
    lines = matching_lines(db, pat, max_lines)
    truncated = max_lines is not None and len(lines) > max_lines
    hits = code.holding(db, lines, rows)
    binary_hits = [row for row, data in code.binaries(db, rows) if _binary_matches(data, pat)]
    wanted = set(chosen)
    order = {v: i for i, v in enumerate(all_versions) if v in wanted}
    positions = {
        vid: order[label] for vid, label in db.execute("select id, label from versions") if label in order
    }
    found: dict[
        tuple, tuple[int, ...]
    ] = {}  # (path, line number, line id) -> positions of the versions holding it
    no_line = [(None, None)]  # a binary blob: one match, no line
    for (row, path), versions in _places(db, [*hits, *binary_hits], positions, keep).items():
        for number, line_id in hits.get(row, no_line):
            key = (path, number, line_id)
            held = found.get(key)  # also in another blob: the file changed elsewhere, not at this line
            found[key] = versions if held is None else tuple(sorted({*held, *versions}))
    # (path, line, first version) orders them: one version has one text at a path's line
    ordered = sorted(found.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0, kv[1][0]))
    display = functools.cache(code.display)  # a distinct line is in many matches
    label = all_versions.__getitem__
    matches = [
        Match(path, number, None if x is None else display(lines[x]), list(map(label, vs)))
        for (path, number, x), vs in ordered
    ]
    cut = functools.cache(lambda text: pieces(text, pat))
    for m in matches[:mark] if mark is not None else matches:
        if not m.binary:
            m.marks = cut(m.text)
    return Result(p.pattern, chosen, matches, all_versions, truncated)


# -- text output ----------------------------------------------------------------------------------------


def pieces(text: str, pat: Compiled) -> list[tuple[str, bool]]:
    """The text cut at the pattern's non-empty matches: (piece, whether it is a match), to mark them (the
    terminal's colour, the browser's <mark>)."""
    out, last = [], 0
    for m in pat.regex.finditer(text):
        if m.end() == m.start():
            continue
        out += [(text[last : m.start()], False), (m.group(), True)]
        last = m.end()
    return out + [(text[last:], False)]
