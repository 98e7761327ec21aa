"""The code of every parsed blob, stored once: the representation, how a build writes it, how it is read.

Versions share most lines even where their files differ (over vLLM's 64 releases since v0.6.0 the
25,000 unique files of `--scope all` hold 13.4 million lines, of which 0.85 million are distinct), so
the text is deduplicated by line, not only by blob:

- `code_lines`: every distinct line once, numbered 1, 2, ... in the order builds met them, stored in
  pages of consecutive ids (the lines joined by "\\n"), so a search reads all of them in a few rows;
- `code_texts`: one row per blob: how it decodes (text, non-utf8, binary), and its lines as a
  compressed array of 32-bit line ids (binary blobs keep their bytes instead, compressed);
- `code_postings`: a full-text index used as an inverted index from each line id to the places holding
  it: a blob's document is its line ids in line order (each as a token, `term`), so the index gives
  for a line id the blobs and the token positions (line numbers - 1) where it is, and a search reads
  the places of the lines it matched without reading any blob's array.

A build splits a blob where its bytes already are (the parser worker: `prepare`) into a 64-bit key (the
process's hash of the line's bytes; forked workers share it) and a CRC-32 per line, as compact arrays;
the writing process only looks the keys up (`CodeWriter.add`), so its dictionary of distinct lines
costs an int per line rather than the line's text. A key found with another CRC is a new line: two
lines taken for one would need a 96-bit coincidence.

Other modules call the functions here and never see this representation: `read_text`, `read_lines`,
`load`, and for searching `pages`, `holding`, `display` and `binaries`. Text is decoded as UTF-8; a byte
that is not UTF-8 is stored as a private-use character of its own (U+10FF80 + byte - 0x80, so that a
search can tell it from a real U+FFFD, as git grep does) and reads as U+FFFD; a blob with a NUL byte in
its first 8000 bytes is binary (git's rule).
"""

from __future__ import annotations

import bisect
import operator
import sys
import zlib
from array import array
from dataclasses import dataclass, field
from itertools import repeat

PAGE_CHARS = 1 << 18  # a page of lines holds about this many characters
BINARY_PROBE = 8000  # like git: a NUL byte in the first 8000 bytes makes a blob binary
IDS_TYPE = next(t for t in "IL" if array(t).itemsize == 4)
INVALID = "\U0010ff80"  # a byte b >= 0x80 that is not UTF-8 is stored as chr(ord(INVALID) + b - 0x80)
_ESCAPE = {0xDC00 + b: ord(INVALID) + b - 0x80 for b in range(0x80, 0x100)}  # from surrogateescape
_DISPLAY = {ord(INVALID) + b - 0x80: 0xFFFD for b in range(0x80, 0x100)}

SCHEMA = """
create table if not exists code_texts (
    id integer primary key,
    blob_id text not null unique,
    kind text not null,             -- text | non-utf8 (see INVALID) | binary
    size integer not null,          -- bytes
    line_count integer not null,
    final_newline integer not null, -- 1 when the last line ends with a newline
    lines blob,                     -- zlib of the line ids, 32-bit little-endian (text kinds)
    raw blob                        -- zlib of the bytes (binary only)
);
create table if not exists code_lines (
    first integer primary key,      -- the id of the page's first line; its lines are first .. first + count - 1
    count integer not null,
    text text not null              -- the lines, joined by a newline
);
create virtual table if not exists code_postings using fts5(
    lines, content='', detail=full, columnsize=0, tokenize='ascii');
"""


def term(line_id: int) -> str:
    """A line id as a token of code_postings: the 8 hex digits of its 32 bits."""
    return format(line_id, "08x")


def document(ids: array) -> str:
    """A blob's document in code_postings: its line ids in line order, each as its `term`, so that a token's
    position is its line number - 1. One C call (bytes.hex, a separator every 4 bytes, over the array in
    big-endian order) rather than a str() per line."""
    if sys.byteorder == "little":
        ids = array(IDS_TYPE, ids)
        ids.byteswap()
    return ids.tobytes().hex(" ", 4)


OPTIMIZE_SHARE = 8  # a build writing 1/8 or more of code_postings' documents merges it into one segment


def optimize(conn) -> None:
    """Merge code_postings into one b-tree (FTS5's optimize). Each transaction that writes documents adds a
    segment (FTS5 merges them four at a level), and a search looks every line up in every segment: the 65
    versions of a first build leave 6-12 segments, and a line is found 2-3 times faster in one (0.11 CPU-s for
    the default scope, 1.5 for --scope all, and the index 10 % smaller)."""
    conn.execute("insert into code_postings(code_postings) values ('optimize')")


def index_stored(conn) -> None:
    """Fill a new, empty code_postings with the stored blobs (a database of schema 11 had an index of blocks of
    line ids instead: the migration drops that, creates this and calls this, in its transaction)."""
    rows = [
        (row, document(unpack_ids(packed)))
        for row, packed in conn.execute("select id, lines from code_texts where lines is not null")
    ]
    conn.executemany("insert into code_postings(rowid, lines) values (?, ?)", [r for r in rows if r[1]])
    optimize(conn)


def _pack(ids: array) -> bytes:
    if sys.byteorder == "big":
        ids = array(IDS_TYPE, ids)
        ids.byteswap()
    return zlib.compress(ids.tobytes(), 1)


def unpack_ids(data: bytes) -> array:
    return _ids_of(zlib.decompress(data))


def decode_line(line: bytes) -> str:
    """A line's bytes as stored text (see INVALID)."""
    return line.decode("utf-8", "surrogateescape").translate(_ESCAPE)


def stored_form(arg: str) -> str:
    """A command-line argument as stored text: its bytes that are not UTF-8 (surrogate escapes, as Python
    decodes argv) as the characters the code store keeps them as (see INVALID)."""
    return arg.translate(_ESCAPE) if any("\udc80" <= c <= "\udcff" for c in arg) else arg


def display(text: str) -> str:
    """Stored text as people read it: each byte that is not UTF-8 as U+FFFD."""
    return text.translate(_DISPLAY) if text and max(text) >= INVALID else text


def prepare(data: bytes) -> tuple[str, bytes, bytes]:
    """In the parser worker: a blob's kind, and the bytes of the arrays of its lines' keys and CRCs
    (empty for a binary blob)."""
    if b"\0" in data[:BINARY_PROBE]:
        return "binary", b"", b""
    try:
        data.decode("utf-8")
        kind = "text"
    except UnicodeDecodeError:
        kind = "non-utf8"
    lines = data.split(b"\n") if data else []
    if lines and lines[-1] == b"":
        lines.pop()
    return kind, array("q", map(hash, lines)).tobytes(), array(IDS_TYPE, map(zlib.crc32, lines)).tobytes()


# -- writing (in the build, inside the version's transaction) --------------------------------------------


class CodeWriter:
    """Stores the code of blobs as a build meets them: `add` in the version's transaction for each newly
    parsed blob, `flush` before that transaction commits (it writes the rows `add` prepared, and the lines
    met for the first time, each kind in one statement). The keys of the stored lines are loaded from the
    database on the first `add` of a run."""

    def __init__(self, conn):
        self.conn = conn
        self.stored: set[str] | None = None
        self.known: set[str] | None = None  # the stored blob ids (and those added), read once (_blob_ids)
        self.ids: dict[int, int] = {}  # line key -> CRC-32 << 32 | line id
        self.next_id = 1
        self.new: list[
            str
        ] = []  # lines met for the first time and not in a page yet, ids next_id - len(new) ..
        self.new_chars = 0  # ... their characters and newlines: a page is made once they reach PAGE_CHARS
        self.pages: list[tuple[int, int, str]] = []  # code_lines rows made and not written yet
        self.next_text = 1  # code_texts.id of the next blob
        self.texts: list[tuple] = []  # code_texts rows of text blobs, to write
        self.binaries: list[tuple] = []  # ... of binary blobs
        self.postings: list[tuple] = []  # code_postings rows
        self.indexed = 0  # code_postings documents written in this run

    def load(self) -> None:
        """Read what `add` needs of the stored code, if not read yet (reads only: a build calls it outside a
        transaction, while its workers parse, so that the first `add` does not wait for it)."""
        if self.stored is None:
            self._load()

    def _load(self) -> None:
        self.stored = self._blob_ids()
        self.next_text = self.conn.execute("select coalesce(max(id), 0) + 1 from code_texts").fetchone()[0]
        for first, count, page in self.conn.execute(
            "select first, count, cast(text as blob) from code_lines order by first"
        ):
            lines = _page_lines(page)
            # every line's key and CRC << 32 | id, in C (map over builtins): no Python frame per line
            self.ids.update(
                zip(
                    map(hash, lines),
                    map(
                        operator.or_,
                        map(operator.lshift, map(zlib.crc32, lines), repeat(32)),
                        range(first, first + count),
                    ),
                    strict=True,
                )
            )
            self.next_id = first + count

    def has(self, blob_id: str) -> bool:
        """Whether the blob's code is stored (or added in this run). Reads only: a build asks this outside
        the version's transaction."""
        return blob_id in self._blob_ids()

    def _blob_ids(self) -> set[str]:
        """The stored blob ids, read once: `has` may read them before the first `add` loads the rest, and
        `add` then adds to this same set."""
        if self.known is None:
            self.known = {r[0] for r in self.conn.execute("select blob_id from code_texts")}
        return self.known

    def add(self, blob_id: str, data: bytes, prepared: tuple[str, bytes, bytes] | None = None) -> None:
        """Store a blob's code; `prepared` is what `prepare(data)` gave in the worker."""
        self.load()
        if blob_id in self.stored:
            return
        kind, key_bytes, check_bytes = prepared or prepare(data)
        if kind == "binary":
            self.binaries.append((self._text_id(), blob_id, len(data), zlib.compress(data, 1)))
            self.stored.add(blob_id)
            return
        keys, checks = array("q"), array(IDS_TYPE)
        keys.frombytes(key_bytes)
        checks.frombytes(check_bytes)
        get = self.ids.get
        found = array("Q", map(get, keys, repeat(0)))  # CRC << 32 | id, 0 when not met before
        halves = array(IDS_TYPE)
        halves.frombytes(found.tobytes())
        ids, high = (
            (halves[0::2], halves[1::2]) if sys.byteorder == "little" else (halves[1::2], halves[0::2])
        )
        # lines not met before, and (once in 2**96) a line whose key another line already has
        zeros = _zeros(ids.tolist()) if found.count(0) else []
        expected = checks
        if zeros:
            expected = array(IDS_TYPE, checks)
            for i in zeros:
                expected[i] = 0
        todo = set(zeros) | _differences(high, expected)
        if todo:
            lines = data.split(b"\n")
            decode = bytes.decode if kind == "text" else decode_line
            for i in sorted(todo):
                x = get(keys[i], 0)
                if x >> 32 != checks[i] or not x:  # not met earlier in this blob either
                    x = self.next_id
                    self.ids[keys[i]] = checks[i] << 32 | x
                    self.next_id += 1
                    line = decode(lines[i])
                    self.new.append(line)
                    self.new_chars += len(line) + 1
                    if self.new_chars >= PAGE_CHARS:  # a full page: joined now, so a large version's new
                        self._page()  # lines are held as pages of text, not as a string each
                ids[i] = x & 0xFFFFFFFF
        row = self._text_id()
        self.texts.append((row, blob_id, kind, len(data), len(ids), int(data.endswith(b"\n")), _pack(ids)))
        if ids:
            self.postings.append((row, document(ids)))
            self.indexed += 1
        self.stored.add(blob_id)

    def finish(self) -> None:
        """After a build's last version: when it wrote at least 1/OPTIMIZE_SHARE of code_postings' documents (a
        first build, a large catch-up), merge the index into one segment (see optimize)."""
        if (
            self.indexed
            and self.indexed * OPTIMIZE_SHARE
            >= self.conn.execute("select count(*) from code_texts where lines is not null").fetchone()[0]
        ):
            with self.conn:
                optimize(self.conn)

    def _text_id(self) -> int:
        self.next_text += 1
        return self.next_text - 1

    def flush(self) -> None:
        """Write the blobs added since the last flush, and the lines met for the first time, in pages."""
        self.conn.executemany(
            "insert into code_texts(id, blob_id, kind, size, line_count, final_newline, lines)"
            " values (?, ?, ?, ?, ?, ?, ?)",
            self.texts,
        )
        self.conn.executemany(
            "insert into code_texts(id, blob_id, kind, size, line_count, final_newline, raw)"
            " values (?, ?, 'binary', ?, 0, 0, ?)",
            self.binaries,
        )
        self.conn.executemany("insert into code_postings(rowid, lines) values (?, ?)", self.postings)
        self.texts, self.binaries, self.postings = [], [], []
        if self.new:
            self._page()
        self.conn.executemany("insert into code_lines(first, count, text) values (?, ?, ?)", self.pages)
        self.pages = []

    def _page(self) -> None:
        """The new lines not in a page yet, made a page (a code_lines row to write)."""
        self.pages.append((self.next_id - len(self.new), len(self.new), "\n".join(self.new)))
        self.new, self.new_chars = [], 0


def _encode(line: str) -> bytes:
    """The bytes a stored line was read from."""
    if line and max(line) >= INVALID:
        return line.translate({v: k for k, v in _ESCAPE.items()}).encode("utf-8", "surrogateescape")
    return line.encode()


_INVALID_UTF8 = (b"\xf4\x8f\xbe", b"\xf4\x8f\xbf")  # how INVALID .. INVALID + 0x7f begin in UTF-8


def _page_lines(page: bytes) -> list[bytes]:
    """The bytes each line of a stored page (its text's UTF-8, as `cast(text as blob)` reads it) was read
    from: the page split as it is, unless it holds a byte stored as an INVALID character."""
    if _INVALID_UTF8[0] in page or _INVALID_UTF8[1] in page:
        return [_encode(s) for s in page.decode().split("\n")]
    return page.split(b"\n")


def _differences(a: array, b: array, lo: int = 0, hi: int | None = None) -> set[int]:
    """Positions where two arrays of one length differ, found by halving (slices compare in C): a blob
    whose lines were nearly all met before costs a few comparisons, not a loop over its lines."""
    hi = len(a) if hi is None else hi
    if a[lo:hi] == b[lo:hi]:
        return set()
    if hi - lo <= 8:
        return {i for i in range(lo, hi) if a[i] != b[i]}
    mid = (lo + hi) // 2
    return _differences(a, b, lo, mid) | _differences(a, b, mid, hi)


def _zeros(ids: list[int]) -> list[int]:
    """Positions of the zeros, in order (list.index searches in C)."""
    out, i = [], -1
    try:
        while True:
            i = ids.index(0, i + 1)
            out.append(i)
    except ValueError:
        return out


# -- reading --------------------------------------------------------------------------------------------


@dataclass
class Code:
    """The stored code of one blob."""

    blob_id: str
    kind: str  # text | non-utf8 | binary
    size: int
    final_newline: bool
    lines: list[str] = field(default_factory=list)  # empty for a binary blob
    ids: array | None = None  # the line ids (equal ids, equal lines)

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + ("\n" if self.final_newline and self.lines else "")


class Lines:
    """Random access to lines by id, reading each page at most once."""

    def __init__(self, conn):
        self.conn = conn
        self.firsts: list[int] | None = None
        self.pages: dict[int, list[str]] = {}

    def _page(self, first: int) -> list[str]:
        if first not in self.pages:
            row = self.conn.execute("select text from code_lines where first = ?", [first]).fetchone()
            self.pages[first] = row[0].split("\n")
        return self.pages[first]

    def get(self, ids) -> list[str]:
        if self.firsts is None:
            self.firsts = [r[0] for r in self.conn.execute("select first from code_lines order by first")]
        firsts, out = self.firsts, []
        for x in ids:
            first = firsts[bisect.bisect_right(firsts, x) - 1]
            out.append(self._page(first)[x - first])
        return out


def _has_table(conn) -> bool:
    """Whether the database has the code tables (not one of the previous schema, not built again yet)."""
    return conn.execute("select 1 from sqlite_master where name = 'code_texts'").fetchone() is not None


def present(conn) -> bool:
    """Whether the database holds any code (not one built by an older tpindex, or with --no-code)."""
    if not _has_table(conn):
        return False
    return conn.execute("select exists(select 1 from code_texts)").fetchone()[0] == 1


def load(conn, blob_id: str) -> Code | None:
    """The stored code of a blob, or None when its text is not in the database."""
    if not _has_table(conn):
        return None
    row = conn.execute(
        "select kind, size, final_newline, lines from code_texts where blob_id = ?", [blob_id]
    ).fetchone()
    if row is None:
        return None
    kind, size, final_newline, packed = row
    if kind == "binary":
        return Code(blob_id, kind, size, False)
    ids = unpack_ids(packed)
    text = Lines(conn).get(ids)
    if kind == "non-utf8":
        text = [display(s) for s in text]
    return Code(blob_id, kind, size, bool(final_newline), text, ids)


def line_ids(conn, blob_id: str) -> array | None:
    """The line ids of a text blob (equal ids, equal lines), without reading its lines; None for a binary
    blob or one whose code is not stored."""
    if not _has_table(conn):
        return None
    row = conn.execute(
        "select lines from code_texts where blob_id = ? and kind != 'binary'", [blob_id]
    ).fetchone()
    return unpack_ids(row[0]) if row else None


def read_lines(conn, blob_id: str) -> list[str] | None:
    code = load(conn, blob_id)
    return None if code is None else code.lines


def blob_at(conn, version: str, path: str) -> str | None:
    """The blob of a path at a version (its label), None when the version has no such file."""
    row = conn.execute(
        "select u.blob_id from files f join versions v on v.id = f.version_id"
        " join units u on u.id = f.unit_id where v.label = ? and f.path = ?",
        [version, path],
    ).fetchone()
    return row[0] if row else None


def read_text(conn, blob_id: str) -> str | None:
    """The text of a blob (bytes that are not UTF-8 as U+FFFD; "" for a binary blob), None if not stored."""
    code = load(conn, blob_id)
    return None if code is None else code.text


def read_bytes(conn, blob_id: str) -> bytes | None:
    """The bytes of a binary blob, None for any other."""
    row = conn.execute(
        "select raw from code_texts where blob_id = ? and kind = 'binary'", [blob_id]
    ).fetchone()
    return zlib.decompress(row[0]) if row else None


def unindexed(conn) -> list[str]:
    """The blob ids of the text blobs whose document in code_postings (grep's index) is not their line ids in
    line order: missing, cut short, holding other lines, or indexed under a row no blob has (its id then
    given as the row, "#N"). Each document is read back through fts5vocab, in (row, position) order, and
    compared with the blob's array."""
    if not _has_table(conn):
        return []
    conn.execute(
        "create virtual table if not exists temp.code_places using fts5vocab(main, code_postings, 'instance')"
    )
    places = conn.execute("select doc, offset, term from temp.code_places order by doc, offset")
    place = next(places, None)
    bad = []
    for row, blob_id, packed in conn.execute(
        "select id, blob_id, lines from code_texts where lines is not null order by id"
    ):
        while place is not None and place[0] < row:  # a document of no blob
            bad.append(f"#{place[0]}")
            while place is not None and place[0] == int(bad[-1][1:]):
                place = next(places, None)
        got = []
        while place is not None and place[0] == row:
            got.append(place[2])
            place = next(places, None)
        try:
            want = document(unpack_ids(packed)).split()
        except (ValueError, zlib.error, TypeError):
            want = None  # damaged itself: damaged() says so
        if want is not None and got != want:
            bad.append(blob_id)
    if place is not None:
        bad.append(f"#{place[0]}")
    return bad


def damaged(conn) -> tuple[int, list[str]]:
    """(blobs checked, the ids of those whose stored code does not hash to their blob id): each blob's bytes
    are put back together from its line ids (or its raw bytes) and hashed as git does, sha1 of
    b"blob %d\\0" % size + bytes. A byte flipped in a stored line damages every blob holding that line."""
    import hashlib

    if not _has_table(conn):
        return 0, []
    lines: list[bytes] = []
    by_id: dict[int, bytes] | None = None
    for first, text in conn.execute("select first, cast(text as blob) from code_lines order by first"):
        page = _page_lines(text)
        if by_id is None and first == len(lines) + 1:
            lines.extend(page)
        else:  # not one run from 1 (never written so): look lines up by id
            by_id = by_id if by_id is not None else dict(enumerate(lines, 1))
            by_id.update(enumerate(page, first))
    get = by_id.get if by_id is not None else None
    bad, n = [], 0
    for blob_id, kind, size, final_newline, packed, raw in conn.execute(
        "select blob_id, kind, size, final_newline, lines, raw from code_texts"
    ):
        n += 1
        try:
            if kind == "binary":
                data = zlib.decompress(raw)
            else:
                ids = unpack_ids(packed)
                parts = (
                    [get(i) for i in ids]
                    if get
                    else [lines[i - 1] if 0 < i <= len(lines) else None for i in ids]
                )
                if None in parts:
                    raise ValueError("a line id with no line")
                data = b"\n".join(parts) + (b"\n" if final_newline and parts else b"")
        except (ValueError, zlib.error, TypeError):
            bad.append(blob_id)
            continue
        if len(data) != size or hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() != blob_id:
            bad.append(blob_id)
    return n, bad


# -- searching ------------------------------------------------------------------------------------------


def pages(conn):
    """Every distinct line, as (first id, the page's lines joined by "\\n" as UTF-8 bytes), in id order."""
    yield from conn.execute("select first, cast(text as blob) from code_lines order by first")


CHECK_PLACES = 100_000  # places read from the index before it is weighed against the arrays (see holding)
LINES_PER_PLACE = 8  # reading a blob's array costs about this many lines for one place read from the index


def holding(conn, line_ids, rows: set[int] | None = None) -> dict[int, list[tuple[int, int]]]:
    """code_texts row -> [(line number, line id)] for every line of every text blob that is one of line_ids;
    only the blobs of `rows` when given. Read from code_postings: each line id's places, one row each
    (through its fts5vocab instance table), the work growing with the places found rather than with the
    blobs holding them.

    A line can be in a million places (the empty line is in every file): when the index has given
    CHECK_PLACES places and more than the blobs to search hold lines / LINES_PER_PLACE, their arrays are
    read instead (a search of one version for a common line would otherwise read its places in every
    version)."""
    wanted = {term(x): x for x in line_ids}
    if not wanted:
        return {}
    conn.execute(
        "create virtual table if not exists temp.code_places using fts5vocab(main, code_postings, 'instance')"
    )
    out: dict[int, list[tuple[int, int]]] = {}
    terms, n, check, weighed = sorted(wanted), 0, CHECK_PLACES, False
    for i in range(0, len(terms), 500):
        chunk = terms[i : i + 500]
        for t, row, offset in conn.execute(
            f"select term, doc, offset from temp.code_places where term in ({','.join('?' * len(chunk))})",
            chunk,
        ):
            n += 1
            if n > check:
                if weighed:
                    return _from_arrays(conn, set(wanted.values()), rows)
                check, weighed = max(check, _line_count(conn, rows) // LINES_PER_PLACE), True
            if rows is None or row in rows:
                if row in out:
                    out[row].append((offset + 1, wanted[t]))
                else:
                    out[row] = [(offset + 1, wanted[t])]
    return out


def _line_count(conn, rows: set[int] | None) -> int:
    found = conn.execute("select id, line_count from code_texts")
    return sum(count for row, count in found if rows is None or row in rows)


def _from_arrays(conn, wanted: set[int], rows: set[int] | None) -> dict[int, list[tuple[int, int]]]:
    """What `holding` gives, read from the blobs' arrays."""
    out = {}
    for row, packed in conn.execute("select id, lines from code_texts where lines is not null"):
        if rows is not None and row not in rows:
            continue
        ids = unpack_ids(packed)
        if not wanted.isdisjoint(ids):
            out[row] = [(n, x) for n, x in enumerate(ids, 1) if x in wanted]
    return out


def _ids_of(raw: bytes) -> array:
    ids = array(IDS_TYPE)
    ids.frombytes(raw)
    if sys.byteorder == "big":
        ids.byteswap()
    return ids


def binaries(conn, rows: set[int] | None = None):
    """(code_texts row, bytes) of the binary blobs (those of `rows` when given)."""
    for row, raw in conn.execute("select id, raw from code_texts where kind = 'binary'"):
        if rows is None or row in rows:
            yield row, zlib.decompress(raw)
