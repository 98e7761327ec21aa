"""The whole tree (`build --tree`): every path of a version, the definitions of every module under vllm/,
and the identifiers every text file uses, for `where` and `check-doc`.

Per version the source lists its whole tree (git: its tree objects, through the cat-file process;
archives: the members the one read already goes through; a directory: the walk). Per blob, at most once:

- a module under vllm/ gets its definitions (extract/definitions.py). A blob the build extracts (the
  build's scope, at either depth) has them among its facts already (`from_facts`, no second parse); any other is
  parsed here with the light extraction: tree-sitter and a walk over statements, no pattern query.
  A light blob is not in `blobs`, so meeting it later in the parser scope parses it fully, as any new
  blob; its definitions stay the same (the two ways are checked to agree).
- a text file (WORD_SUFFIXES, at most WORDS_MAX bytes) gets its identifiers written to the contentless
  full-text table tree_words: enough to tell whether a file mentions a name, not a copy of the source.

Light work runs in the build's worker processes, in batches (one task per file would cost more in
inter-process traffic than the work), while the main process writes earlier versions.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import wait

from ..core.scope import FULL, MODULE
from ..extract.words import has_words, is_module, light
from ..store.packed import unpack
from .workers import worker_died

BATCH_BYTES = 1 << 20
BATCH_FILES = 256
MAX_QUEUED = 48 << 20  # bytes handed to the workers and not yet parsed: beyond, wait (memory stays bounded)


def light_batch(items: list[tuple[bytes, bool, bool]]) -> list[tuple[list | None, str | None]]:
    return [light(*item) for item in items]


class TreeTier:
    """The build's whole-tree pass: `submit` a version's listing (work goes to the workers), later `write`
    it inside that version's transaction."""

    def __init__(self, builder):
        self.builder = builder
        self.db = builder.db
        self.extractor = builder.extractor
        conn = self.db.conn
        self.path_ids: dict[str, int] = dict(conn.execute("select path, id from tree_paths"))
        self.blobs: dict[str, list] = {
            b: [k, d, w] for k, b, d, w in conn.execute("select id, blob_id, defs, words from tree_blobs")
        }  # blob id -> [key, defs extractor, words]
        self.next_path = max(self.path_ids.values(), default=0) + 1
        self.next_blob = max((s[0] for s in self.blobs.values()), default=0) + 1
        self.waiting: dict[str, tuple] = {}  # blob id -> (batch future or results, index, defs?, words?)
        self.derive: set[str] = set()  # blob ids whose definitions come from their full facts
        self._batch: list = []
        self._batch_ids: list = []
        self._batch_bytes = 0
        self._queued: deque = deque()  # (future, bytes) of the batches the workers have not finished
        self._queued_bytes = 0

    # -- submit --------------------------------------------------------------------------------------
    def submit(self, listing, full_facts) -> list[tuple[str, str]]:
        """Hand the light work of a version's files to the workers; -> the (path, blob id) list to write.
        `full_facts(blob_id)`: whether the build parses the blob with its definitions (scope.MODULE or deeper)."""
        todo = []
        stored_full = self._stored_full(
            [e.blob_id for e in listing if is_module(e.path) and e.blob_id in self.builder.depth]
        )
        for e in listing:
            b = e.blob_id
            state = self.blobs.get(b)
            defs = (
                is_module(e.path)
                and (state is None or state[1] != self.extractor)
                and b not in self.derive
                and not (b in self.waiting and self.waiting[b][2])
            )
            words = (
                has_words(e.path)
                and (state is None or not state[2])
                and not (b in self.waiting and self.waiting[b][3])
            )
            if defs and (b in stored_full or (self.builder.depth.get(b, -1) < FULL and full_facts(b))):
                self.derive.add(b)
                defs = False
            if defs or words:
                if b in self.waiting:  # already asked for the other half: ask for both again
                    old = self.waiting.pop(b)
                    defs, words = defs or old[2], words or old[3]
                todo.append((e, defs, words))
        if todo:
            read_many = getattr(self.builder.source, "read_many", None)
            datas = read_many([e for e, _, _ in todo]) if read_many else (e.read() for e, _, _ in todo)
            for (e, defs, words), data in zip(todo, datas, strict=True):
                self._add(e.blob_id, data, defs, words)
            self._flush()
        return [(e.path, e.blob_id) for e in listing]

    def _stored_full(self, blob_ids: list[str]) -> set[str]:
        """Of these blobs stored by the build, those whose facts hold their definitions (not the not-parsed
        ones, nor a framework module's flags: scope.MODULE or deeper)."""
        out: set[str] = set()
        ids = list(dict.fromkeys(b for b in blob_ids if b not in self.derive))
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            out.update(
                r[0]
                for r in self.db.conn.execute(
                    "select id from blobs where facts is not null and coalesce(depth, ?) >= ?"
                    f" and id in ({','.join('?' * len(chunk))})",
                    [FULL, MODULE, *chunk],
                )
            )
        return out

    def _add(self, blob_id: str, data: bytes, defs: bool, words: bool) -> None:
        if self.builder.jobs <= 1:
            self.waiting[blob_id] = ([light(data, defs, words)], 0, defs, words)
            return
        self._batch.append((data, defs, words))
        self._batch_ids.append((blob_id, defs, words))
        self._batch_bytes += len(data)
        if self._batch_bytes >= BATCH_BYTES or len(self._batch) >= BATCH_FILES:
            self._flush()

    def _flush(self) -> None:
        if not self._batch:
            return
        try:
            future = self.builder._pool().submit(light_batch, self._batch)
        except self.builder.broken_pool:
            raise worker_died() from None
        for i, (blob_id, defs, words) in enumerate(self._batch_ids):
            self.waiting[blob_id] = (future, i, defs, words)
        self._queued.append((future, self._batch_bytes))
        self._queued_bytes += self._batch_bytes
        self._batch, self._batch_ids, self._batch_bytes = [], [], 0
        while self._queued_bytes > MAX_QUEUED:  # a finished batch releases its bytes
            done, size = self._queued.popleft()
            self._queued_bytes -= size
            wait([done])

    # -- write ---------------------------------------------------------------------------------------
    def write(self, version_id: int, files: list[tuple[str, str]]) -> None:
        conn = self.db.conn
        new_paths, changed, def_rows, word_rows, stale = [], {}, [], [], []
        for path, blob_id in files:
            if path not in self.path_ids:
                self.path_ids[path] = self.next_path
                new_paths.append((self.next_path, path))
                self.next_path += 1
            state = self.blobs.get(blob_id)
            if state is None:
                state = self.blobs[blob_id] = [self.next_blob, None, 0]
                self.next_blob += 1
                changed[blob_id] = state
            if blob_id in self.waiting:
                work, i, defs, words = self.waiting.pop(blob_id)
                rows, text = self._result(work)[i]
                if defs:
                    if state[1] is not None:
                        stale.append(state[0])
                    def_rows.extend(_def_rows(state[0], rows))
                    state[1] = self.extractor
                if words:
                    word_rows.append((state[0], text))
                    state[2] = 1
                changed[blob_id] = state
            if blob_id in self.derive:
                self.derive.discard(blob_id)
                packed = conn.execute("select facts from blobs where id = ?", [blob_id]).fetchone()
                from ..extract.definitions import from_facts

                facts = unpack(packed[0]) if packed else {}
                if state[1] is not None:
                    stale.append(state[0])
                def_rows.extend(_def_rows(state[0], from_facts(facts)))
                state[1] = self.extractor
                changed[blob_id] = state
        conn.executemany("insert into tree_paths(id, path) values (?, ?)", new_paths)
        conn.executemany(
            "insert or replace into tree_blobs(id, blob_id, defs, words) values (?, ?, ?, ?)",
            [(s[0], b, s[1], s[2]) for b, s in changed.items()],
        )
        conn.executemany("delete from definitions where blob_key = ?", [(k,) for k in stale])
        conn.executemany(
            "insert into definitions(blob_key, kind, name, qualname, line, end_line)"
            " values (?, ?, ?, ?, ?, ?)",
            def_rows,
        )
        conn.executemany("insert into tree_words(rowid, words) values (?, ?)", word_rows)
        conn.executemany(
            "insert or replace into tree_files(version_id, path_id, blob_key) values (?, ?, ?)",
            [(version_id, self.path_ids[p], self.blobs[b][0]) for p, b in files],
        )
        conn.execute(
            "insert or replace into version_trees(version_id, files, modules) values (?, ?, ?)",
            [version_id, len(files), sum(1 for p, _ in files if is_module(p))],
        )

    def _result(self, work):
        if isinstance(work, list):
            return work
        try:
            return work.result()
        except self.builder.broken_pool:
            raise worker_died() from None


def _def_rows(key: int, rows: list[list] | None) -> list[tuple]:
    return [(key, kind, qual.rpartition(".")[2], qual, line, end) for kind, qual, line, end in rows or []]
