"""The build: sources -> extract -> store -> resolve, one transaction per version.

Each unique blob is parsed once (in worker processes, while this process walks the next version and
writes); a blob met at a new path is located again from its stored raw facts, not parsed. A version is
written in one transaction whose last statement marks it complete, so a build killed at any moment
leaves only complete versions behind.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pickle
import sqlite3
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from operator import itemgetter
from pathlib import Path

from ..core.problems import BuildError
from ..core.scope import FULL, MODULE, RECORDED, Scope, depth_needed, is_template, module_of
from ..core.specs import sort_key
from ..extract import extractor_id, parse
from ..extract.locate import locate, needed
from ..extract.templates import render_batch
from ..sources import VersionRef
from ..store import database as store
from ..store import packed, schema
from ..store.code import CodeWriter, prepare
from . import scopes
from .workers import worker_died as _worker_died

INLINE_PARSE_BYTES = 1 << 20  # a build of one version whose new blobs hold fewer bytes parses here: starting
# the pool (two forks, each compiling the queries, the results sent back) costs more than half that work
LOOKAHEAD = 4  # versions walked and handed to the workers ahead of the one being written ...
PENDING_BYTES = 16 << 20  # ... while the source they were handed holds fewer bytes than this (memory: each
# blob's bytes and results wait in this process until its version is written)
BATCH_BYTES = 1 << 18  # blobs are handed to a worker in batches of about this many bytes of source ...
BATCH_FILES = 32  # ... or this many files: one task per blob costs the pool more than small blobs' work
REUSE_RESOLUTION = (
    True  # a version repeating the Python units of one resolved in the same run copies its rows
)
# Records written through sqlite-utils (tuples, these columns first): a version's, its new units', blobs' and
# chat templates' renders. The facts of its units, its files and its resolution (about 180,000 rows for the 64
# releases) go through executemany: sqlite-utils' insert_all checks every value for JSON (100,000 rows of seven
# columns took 0.53 CPU-s against 0.18), which would make a cold build ~0.5 CPU-s slower.
UNIT_COLUMNS = ("id", "blob_id", "path", "module", "extractor")
BLOB_COLUMNS = (
    "id",
    "size",
    "extractor",
    "status",
    "error_count",
    "first_error_line",
    "error",
    "facts",
    "depth",
)
RENDER_COLUMNS = ("blob_id", "call", "reply", "error", "notes")
WORKER_CHECK_SECONDS = 0.5  # while waiting for a parse result, how often the workers are checked alive


@dataclass
class BuildStats:
    versions_added: list[str] = field(default_factory=list)
    versions_reindexed: list[str] = field(default_factory=list)
    versions_skipped: list[str] = field(default_factory=list)
    blobs_reused: int = 0
    parses: dict[str, int] = field(default_factory=dict)  # blob id -> times parsed in this run
    files: int = 0
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
    resolutions_reused: int = (
        0  # versions given the resolution of an earlier one of this run (same Python units)
    )
    commits: int = 0  # commits of a clone's history stored by this run (indexer/commits.py)

    @property
    def blobs_parsed(self) -> int:
        return sum(self.parses.values())

    def summary(self) -> str:
        added = len(self.versions_added) + len(self.versions_reindexed)
        parts = [f"{added} version(s) indexed"]
        if self.versions_reindexed:
            parts.append(
                f"{len(self.versions_reindexed)} of them re-indexed (tag moved, scope or extractor"
                " changed, or facts missing)"
            )
        parts.append(f"{len(self.versions_skipped)} already indexed and skipped")
        history = f"; {self.commits} commit(s) of history stored" if self.commits else ""
        return (
            ", ".join(parts) + f"; {self.blobs_parsed} blob(s) parsed, {self.blobs_reused} reused from"
            f" earlier versions or builds; {self.files} file(s) mapped{history}; {self.seconds:.2f} s."
        )


class BuildLock:
    """One build per database at a time: a second one is refused with a clear message. The lock is the
    real file's (symbolic links resolved), so a build through a link to a database being built is refused."""

    def __init__(self, db_path: Path):
        self.db_path = db_path
        self.path = Path(os.path.realpath(db_path) + ".lock")

    def __enter__(self):
        try:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise BuildError(
                f"cannot create {self.path} ({e.strerror})", "check the directory's permissions"
            ) from e
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self.fd)
            raise BuildError(
                f"another tpindex build is writing {self.db_path}",
                "wait for it to finish or build into another --db",
            ) from None
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


def build(
    db_path: str | Path,
    source,
    versions: list[VersionRef],
    scope: Scope,
    jobs: int | None = None,
    dedup: bool = True,
    progress: Callable[[str, int], None] | None = None,
    upstream: str | None = None,
    replace: bool = False,
    code: bool = True,
) -> BuildStats:
    """Index `versions` into the database. `progress(label, done)` is called as each version starts being
    written (done=0) and once it is (done=1). A version already indexed from another source under the same
    label is refused unless `replace`.

    A build that fails part of the way (its source, the disk, the database) raises a BuildError saying that
    the versions indexed before are kept (the one being written is rolled back); Ctrl-C, a BuildInterrupted
    saying so."""
    db_path = Path(db_path)
    try:
        return _build(db_path, source, versions, scope, jobs, dedup, progress, upstream, replace, code)
    except KeyboardInterrupt:
        raise BuildInterrupted(
            "interrupted: the versions indexed before are kept; run the same build again to index the rest"
        ) from None
    except OSError as e:  # a source that fails mid-build (archive, repository), or the disk under it
        hint = getattr(e, "hint", None)
        raise BuildError(str(e), f"{hint}; {KEPT}" if hint else f"{KEPT}; run the build again") from None
    except sqlite3.Error as e:  # a full disk, an I/O error: the version being written is rolled back
        if store.is_damaged(e):
            raise BuildError(
                f"{db_path} is damaged ({e})",
                f"rebuild it into another --db (tpindex check --db {db_path} says what is wrong)",
            ) from None
        raise BuildError(
            f"cannot write {db_path} ({e})",
            f"{KEPT}; free disk space (or pass another --db) and run the build again",
        ) from None


KEPT = "versions indexed before the failure are kept"


class BuildInterrupted(KeyboardInterrupt):
    """Ctrl-C during a build; str() says what was kept (the command line prints it)."""


def _build(
    db_path: Path, source, versions, scope, jobs, dedup, progress, upstream, replace, code
) -> BuildStats:
    t0 = time.perf_counter()
    stats = BuildStats()
    store.check_target(db_path)  # what the file is, before the lock file and WAL mode change anything
    with BuildLock(db_path):
        db = store.connect(db_path, setup=schema.setup)
        try:
            walk = None
            if source.kind == "git":  # the commits between the indexed tags, for log, contains and diff:
                from .commits import start  # read in a thread while the versions are built, written after

                walk = start(db.conn, source.git_dir, scope, versions)
            Builder(db, source, scope, stats, jobs, dedup, replace, code).run(versions, progress)
            scopes.read_pages(db)
            if walk is not None:
                stats.commits = walk.finish(db.conn)
            _repair(db, stats)
            listing = getattr(source, "listing", lambda: None)()
            with db.conn:
                if upstream:
                    store.set_meta(db, "upstream", upstream)
                if (
                    listing
                ):  # what the source has, for the hints of a version not indexed (answers/versions.py)
                    store.set_meta(db, f"listing:{listing['source']}", json.dumps(listing))
        finally:
            db.conn.close()
    stats.seconds = time.perf_counter() - t0
    return stats


def _repair(db, stats: BuildStats) -> None:
    """Leftovers (store.repair_leftovers) appear when versions are indexed again; an older tpindex may have
    left some too: looked for after any build that re-indexed a version, and once by each extractor."""
    extractor = extractor_id()
    row = db.execute("select value from meta where key = 'repaired'").fetchone()
    if not stats.versions_reindexed and row and row[0] == extractor:
        return
    with db.conn:
        db.conn.execute("begin immediate")
        store.repair_leftovers(db.conn, extractor)
        store.set_meta(db, "repaired", extractor)


def parse_and_locate(data: bytes, path: str, code: bool = True, depth: int = FULL) -> dict:
    """Worker: parse one blob at an extraction depth, pack its raw facts for reuse at other paths, locate
    them at `path` (as `table_rows`), and split its code into line keys (indexer.store.code.prepare) for the
    writer to store."""
    res = parse(data) if depth == FULL else parse(data, depth)
    res["depth"] = depth
    facts = res.pop("facts")
    res["packed"] = packed.pack(facts)
    res["path"], res["rows"] = path, table_rows(locate(facts, path), path)
    res["code"] = prepare(data) if code else None
    return res


def parse_batch(items: list[tuple[bytes, str, bool, int]]) -> bytes:
    """Worker: parse_and_locate over a batch of (bytes, path, code, depth), pickled here: the build process
    holds the results of the versions ahead of the one it writes as these bytes (several times smaller
    than the objects: the peak of a --scope all build), and unpickles a batch when it writes its version."""
    return pickle.dumps([parse_and_locate(*item) for item in items], pickle.HIGHEST_PROTOCOL)


def table_rows(located: dict[str, list[dict]], path: str) -> list[tuple[str, tuple[str, ...], list[tuple]]]:
    """Rows located at `path`, those its depth needs, as (table, columns, value tuples), the columns those of
    each table's first row: what the writer inserts, and cheaper to send between processes than dicts."""
    out = []
    for table, rows in needed(located, path).items():
        if rows:
            cols = tuple(rows[0])
            if len(cols) == 1:
                out.append((table, cols, [(r[cols[0]],) for r in rows]))
            else:
                out.append((table, cols, list(map(itemgetter(*cols), rows))))
    return out


def _worker_init(parent: int) -> None:
    """In a parser worker: Ctrl-C is the build process's to handle (it stops the pool), and the worker
    exits once the build process is gone. A build killed with SIGKILL cannot shut its pool down, and its
    workers would otherwise wait for work forever."""
    import signal
    import threading

    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


class _NeverRaised(Exception):
    pass


def _stop_pool(pool, bound: float = 10.0) -> None:
    """Stop a process pool at once, whatever its state (a build failing or interrupted): SIGKILL its
    workers and see its manager thread end (interpreter exit waits for it). A worker killed while it sent
    a result leaves that thread reading the rest of the message forever; the message is completed with
    zero bytes, which fail to unpickle and make the thread wind the pool down."""
    thread, results = pool._executor_manager_thread, pool._result_queue
    workers = list((pool._processes or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in workers:
        if p.exitcode is None:
            p.kill()
    for p in workers:
        p.join(bound)
    if thread is None or results is None or not thread.is_alive():
        return
    try:
        fd = results._writer.fileno()
        os.set_blocking(fd, False)
    except (OSError, ValueError):  # already closed: nothing can be stuck reading it
        return
    zeros, deadline = bytes(1 << 16), time.monotonic() + bound
    while thread.is_alive() and time.monotonic() < deadline:
        try:
            os.write(fd, zeros)
        except BlockingIOError:
            pass
        except OSError:
            break
        thread.join(0.05)


class Builder:
    def __init__(
        self,
        db,
        source,
        scope: Scope,
        stats: BuildStats,
        jobs,
        dedup: bool,
        replace: bool = False,
        code: bool = True,
    ):
        self.db, self.source, self.scope, self.stats = db, source, scope, stats
        self.out = schema.writer(db.conn)  # sqlite-utils: the records a version writes (store/schema.py)
        self.replace = replace
        self.code = CodeWriter(db.conn) if code else None  # the text of each parsed blob, stored once
        self.jobs = jobs if jobs is not None else (os.cpu_count() or 1)
        self.dedup = dedup
        self.extractor = extractor_id()
        self.depth = {
            b: store.stored_depth(status, depth)
            for b, status, depth in db.execute(  # blob id -> depth
                "select id, status, depth from blobs where extractor = ?", [self.extractor]
            )
        }
        self.units: dict[tuple[str, str], int] = {}
        self.stale_units: dict[tuple[str, str], int] = {}  # facts of an older extractor, replaced when met
        for i, b, p, x in db.execute("select id, blob_id, path, extractor from units"):
            (self.units if x == self.extractor else self.stale_units)[(b, p)] = i
        self.next_unit = db.execute("select coalesce(max(id), 0) + 1 from units").fetchone()[0]
        underfed = store.underfed_units(
            db.conn, self.extractor
        )  # facts missing: their versions are re-indexed
        self.underfed_versions = self._versions_mapping([u for u, _, _ in underfed])
        self.scoped = scopes.indexed_with(db.conn, scope)  # versions indexed with this scope's patterns
        self.refilled: set[int] = set()  # units given the facts they lacked, in the version being written
        self.pool = None
        self.broken_pool: type[BaseException] = _NeverRaised  # the pool's BrokenProcessPool once it exists
        self.module_cache: dict[int, dict] = {}  # resolve's per-unit facts, shared across versions
        self.resolved: dict[
            bytes, int
        ] = {}  # a version's Python units (hashed) -> a version of this run resolved so
        self.inflight: dict[str, object] = {}  # blob id -> (bytes, future or parsed result), until written
        self.inflight_depth: dict[str, int] = {}  # blob id -> the depth it is being extracted at
        self.batches: dict[
            object, list[dict]
        ] = {}  # a parse batch's future -> its results, while its version
        # is written (a batch holds blobs of one version: the one whose submit sent it)
        self.texts: dict[
            str, tuple | None
        ] = {}  # blob id -> (bytes, prepared) of a recorded file's text, to store
        self.renders: dict[
            str, object
        ] = {}  # template blob id -> its rendering (a row, or a future's), to store
        self.stored_renders: set[str] | None = None
        self.tree = None
        if scope.tree:
            from .tree import TreeTier

            self.tree = TreeTier(self)

    # -- plan ------------------------------------------------------------------------------------
    def todo(self, versions: list[VersionRef]) -> list[tuple[VersionRef, int | None]]:
        out = []
        for ref in versions:
            row = self.db.execute(
                "select id, commit_id, status, scope, extractor, source, ref from versions where label = ?",
                [ref.label],
            ).fetchone()
            if row and row[5] != ref.source and not self.replace:
                hint = (
                    f"keep both under another label (--label {ref.label}+local), or replace it with --replace"
                    if ref.source == "dir"
                    else "replace it with --replace, or build into another --db"
                )
                raise BuildError(
                    f"{ref.label} is already indexed from {row[5]} ({row[6]}); this build would replace it"
                    f" with {ref.source} ({ref.ref})",
                    hint,
                )
            if (
                row
                and row[1] == ref.commit
                and row[2] == "complete"
                and row[3] == self.scope.name
                and row[4] == self.extractor
                and row[0] not in self.underfed_versions
                and row[0] in self.scoped
            ):
                self.stats.versions_skipped.append(ref.label)
                continue
            out.append((ref, row[0] if row else None))
        return out

    def run(self, versions: list[VersionRef], progress) -> None:
        pending: deque = deque()  # (version, old id, entries, tree work, bytes handed to the workers)
        held = 0  # bytes of the pending versions' new blobs

        def write_until(left: int):
            nonlocal held
            while len(pending) > left or (len(pending) > 1 and held > PENDING_BYTES):
                ref, old_id, entries, tree, size = pending.popleft()
                if progress:
                    progress(ref.label, 0)
                self.write(ref, old_id, entries, tree)
                held -= size
                if progress:
                    progress(ref.label, 1)

        try:
            todo = self.todo(versions)
            for ref, old_id in todo:
                try:
                    if self.tree:  # one listing of the whole tree; the scope's files are among it
                        listing = self._text_paths(ref, self.source.tree(ref))
                        entries = [e for e in listing if self.scope.matches(e.path)]
                    else:
                        entries = self._text_paths(ref, list(self.source.files(ref, self.scope)))
                except BaseException:
                    write_until(0)  # the versions already read are fine: keep them, then fail
                    raise
                size = self.submit(entries, alone=len(todo) == 1)
                tree = self.tree.submit(listing, self._with_definitions) if self.tree else None
                listing = None  # an archive's whole tree in memory: let it go before the next is read
                pending.append((ref, old_id, entries, tree, size))
                held += size
                if self.code is not None and self.pool is not None:
                    self.code.load()  # the stored lines' keys, read while the workers parse (once a build)
                write_until(LOOKAHEAD)  # workers parse the next versions while this one is written
            write_until(0)
            if self.code is not None:
                self.code.finish()  # the code's index merged after a large build
        except BaseException:
            if self.pool is not None:
                pool, self.pool = self.pool, None
                _stop_pool(pool)
            raise
        finally:
            if self.pool is not None:
                self.pool.shutdown(cancel_futures=True)

    def _with_definitions(self, blob_id: str) -> bool:
        """Whether a blob is being extracted with its definitions (the tree tier derives its own from them)."""
        return self.inflight_depth.get(blob_id, RECORDED) >= MODULE

    def _text_paths(self, ref, entries: list) -> list:
        """The entries with every path the database can store: a name that is not UTF-8 has its bytes escaped
        (core.paths.text_path), and the build says so, rather than stopping at that version and every later
        one."""
        from ..core.paths import text_path
        from ..sources import FileEntry

        odd = [i for i, e in enumerate(entries) if text_path(e.path) != e.path]
        for i in odd:
            e = entries[i]
            entries[i] = FileEntry(text_path(e.path), e.blob_id, e.read)
        if odd:
            self.stats.warnings.append(
                f"{ref.label}: {len(odd)} path(s) not UTF-8, stored with their bytes escaped"
                f" ({entries[odd[0]].path})"
            )
        return entries

    # -- parse -------------------------------------------------------------------------------------
    def submit(self, entries, alone: bool = False) -> int:
        """Hand the blobs of a version's entries that need extracting (not stored or being extracted at the
        depth their paths need) to the workers; a blob at several paths is extracted once, at the deepest.
        -> the bytes handed."""
        new: list[tuple[object, int]] = []
        wanted: dict[str, int] = {}  # blob id -> its place in `new`
        texts: list = []  # recorded files (templates, tests) whose text or rendering is not stored yet
        for e in entries:
            needed = depth_needed(e.path)
            if needed == RECORDED:
                text = self.code is not None and e.blob_id not in self.texts and not self.code.has(e.blob_id)
                render = (
                    is_template(e.path) and e.blob_id not in self.renders and not self._rendered(e.blob_id)
                )
                if text:
                    self.texts[e.blob_id] = None
                if render:
                    self.renders[e.blob_id] = None
                if text or render:
                    texts.append(e)
                continue
            if self.dedup:
                if max(self.depth.get(e.blob_id, -1), self.inflight_depth.get(e.blob_id, -1)) >= needed:
                    continue
                if e.blob_id in wanted:
                    new[wanted[e.blob_id]] = (e, needed)
                    self.inflight_depth[e.blob_id] = needed
                    continue
                wanted[e.blob_id] = len(new)
            new.append((e, needed))
            self.inflight[e.blob_id] = None
            self.inflight_depth[e.blob_id] = needed
        if not new and not texts:
            return 0
        read_many = getattr(self.source, "read_many", None)
        reading = [e for e, _ in new] + texts
        datas = iter(read_many(reading) if read_many else (e.read() for e in reading))
        blobs = datas  # the new blobs' bytes, then the texts'
        inline = self.jobs <= 1
        if alone and not inline:  # one version: its new blobs read first, to weigh the work
            blobs = [next(datas) for _ in new]
            inline = sum(map(len, blobs)) < INLINE_PARSE_BYTES
        code = self.code is not None
        batch: list[tuple[bytes, str, bool, int]] = []
        ids: list[str] = []
        size = total = 0
        for (e, depth), data in zip(new, blobs, strict=False):  # datas goes on with the texts
            self._count(e.blob_id)
            total += len(data)
            if inline:
                self.inflight[e.blob_id] = (data, parse_and_locate(data, e.path, code, depth))
                continue
            batch.append((data, e.path, code, depth))
            ids.append(e.blob_id)
            size += len(data)
            if size >= BATCH_BYTES or len(batch) >= BATCH_FILES:
                self._send(batch, ids)
                batch, ids, size = [], [], 0
        if batch:
            self._send(batch, ids)
        templates: list[tuple[str, bytes]] = []
        for e, data in zip(texts, datas, strict=True):  # their text: split here, it is cheap
            if e.blob_id in self.texts and self.texts[e.blob_id] is None:
                self.texts[e.blob_id] = (data, prepare(data))
            if e.blob_id in self.renders and self.renders[e.blob_id] is None:
                templates.append((e.blob_id, data))
            total += len(data)
        if (
            templates
        ):  # a Jinja compile each (tens of ms): in a worker, like parsing, unless this build parses here
            if inline:
                for (blob_id, _), row in zip(templates, render_batch([d for _, d in templates]), strict=True):
                    self.renders[blob_id] = row
            else:
                try:
                    future = self._pool().submit(render_batch, [d for _, d in templates])
                except self.broken_pool:
                    raise _worker_died() from None
                for i, (blob_id, _) in enumerate(templates):
                    self.renders[blob_id] = (future, i)
        return total

    def _rendered(self, blob_id: str) -> bool:
        """Whether a template blob's rendering is stored (read once, outside the version's transaction)."""
        if self.stored_renders is None:
            self.stored_renders = {r[0] for r in self.db.conn.execute("select blob_id from template_renders")}
        return blob_id in self.stored_renders

    def _send(self, batch: list[tuple[bytes, str, bool, int]], ids: list[str]) -> None:
        try:
            future = self._pool().submit(parse_batch, batch)
        except self.broken_pool:
            raise _worker_died() from None
        for i, (blob_id, (data, _, _, _)) in enumerate(zip(ids, batch, strict=True)):
            self.inflight[blob_id] = (data, (future, i))

    def _count(self, blob_id: str) -> None:
        self.stats.parses[blob_id] = self.stats.parses.get(blob_id, 0) + 1

    def _pool(self):
        if self.pool is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor
            from concurrent.futures.process import BrokenProcessPool

            self.broken_pool = BrokenProcessPool

            import signal

            # Ctrl-C held off while the workers start (the fork context starts them all at the first submit),
            # so that none gets it before _worker_init ignores it
            held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            try:
                self.pool = ProcessPoolExecutor(
                    max_workers=self.jobs,
                    mp_context=multiprocessing.get_context("fork"),
                    initializer=_worker_init,
                    initargs=(os.getpid(),),
                )
                self.pool.submit(int)
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, held)
        return self.pool

    def _result(self, blob_id: str):
        data, res = self.inflight.pop(blob_id)
        self.inflight_depth.pop(blob_id, None)
        if isinstance(res, tuple):  # (a future of the pool, the blob's place in its batch)
            future = res[0]
            if future not in self.batches:
                self.batches[future] = pickle.loads(self._wait(future))
            res = self.batches[future][res[1]]
        return data, res

    def _wait(self, future):
        """A future's result, checking the workers while waiting: a worker that dies while it sends a result
        leaves the pool's reader waiting for the rest of that message, and the future would never end."""
        from concurrent.futures import TimeoutError as StillRunning  # the builtin TimeoutError from 3.11

        while True:
            try:
                return future.result(timeout=WORKER_CHECK_SECONDS)
            except StillRunning:
                if self._a_worker_died():
                    raise _worker_died() from None
            except self.broken_pool:
                raise _worker_died() from None

    def _a_worker_died(self) -> bool:
        """Workers of a running pool never exit by themselves: any that has an exit status died."""
        return any(p.exitcode is not None for p in list((self.pool._processes or {}).values()))

    # -- write -------------------------------------------------------------------------------------
    def write(self, ref: VersionRef, old_id: int | None, entries, tree=None) -> None:
        conn = self.db.conn
        parsed_here: dict[str, dict] = {}
        facts: dict[tuple[str, tuple], list[tuple]] = {}  # (table, columns) -> rows, inserted in one go
        with conn:  # one transaction per version
            conn.execute("begin immediate")
            extracted = []
            for e in entries:
                if e.blob_id in self.inflight and self.inflight[e.blob_id] is not None:
                    data, res = self._result(e.blob_id)
                    parsed_here[e.blob_id] = res
                    extracted.append((e.blob_id, data, res))
            self.batches = {}
            self._store_blobs(extracted)
            self._store_texts(entries)
            self._store_renders(entries)
            if old_id is not None:
                conn.execute("delete from versions where id = ?", [old_id])
                self.stats.versions_reindexed.append(ref.label)
            else:
                self.stats.versions_added.append(ref.label)
            version_id = (
                self.out["versions"]
                .insert(
                    {
                        "label": ref.label,
                        "ref": ref.ref,
                        "commit_id": ref.commit,
                        "source": ref.source,
                        "origin": ref.origin or None,
                        "status": "building",
                        "scope": self.scope.name,
                        "extractor": self.extractor,
                        "indexed_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S"),
                    }
                )
                .last_rowid
            )
            scopes.record(conn, version_id, self.scope)
            new_units: list[tuple] = []
            recorded: list[tuple] = []
            rows = [
                (version_id, e.path, self._unit(e, parsed_here, facts, new_units, recorded)) for e in entries
            ]
            # each kind of row in one statement: many small statements of different kinds cost several times
            # as much (each finds the CPU's caches cold)
            conn.executemany(
                "insert into blobs(id, size, extractor, status, depth) values (?, 0, ?, 'not-parsed', ?)"
                " on conflict(id) do update set extractor = excluded.extractor, depth = excluded.depth"
                " where blobs.status = 'not-parsed'",
                recorded,
            )  # a migration's rows: as built now
            self.out["units"].insert_all([UNIT_COLUMNS, *new_units])
            for (table, cols), fact_rows in facts.items():
                conn.executemany(
                    f"insert into {table}(unit_id, {', '.join(cols)}) values (?{', ?' * len(cols)})",
                    fact_rows,
                )
            conn.executemany("insert or replace into files(version_id, path, unit_id) values (?, ?, ?)", rows)
            self.stats.files += len(rows)
            if tree is not None:
                self.tree.write(version_id, tree)
            n_registered = self._resolve(version_id)
            self._resolve_refilled(version_id)
            if n_registered == 0:
                self.stats.warnings.append(
                    f"{ref.label}: no parser registry found in scope ({len(rows)} file(s))"
                )
            self.renumber()  # readers, and a build killed before its end, see every version in order
            if self.code:
                self.code.flush()
            conn.execute(
                "update versions set status = 'complete', file_count = ?, registry = ? where id = ?",
                [len(rows), "found" if n_registered else "none", version_id],
            )

    def _resolve(self, version_id: int) -> int:
        """Resolve a version, or copy the resolution of a version resolved in this run whose Python files are
        the same units (resolution reads nothing else; of a recorded file, a test, only its path). Not while
        facts were refilled in this transaction (a guard: a donor of this run holding the same units had them
        extracted as deep already, so it does not arise; were it to, the donor's rows would be about to
        change). -> how many names the version registers."""
        from ..resolve.chains import copy_resolution, resolve_version

        key = hashlib.sha1(
            repr(
                sorted(  # a recorded file (a test) has no facts whatever its content: its path counts
                    (path, None if depth_needed(path) == RECORDED else unit_id)
                    for path, unit_id in self.db.conn.execute(
                        "select path, unit_id from files where version_id = ? and path like '%.py'",
                        [version_id],
                    )
                )
            ).encode()
        ).digest()
        donor = self.resolved.get(key) if REUSE_RESOLUTION and not self.refilled else None
        if donor is not None:
            self.stats.resolutions_reused += 1
            return copy_resolution(self.db.conn, donor, version_id)
        self.resolved[key] = version_id
        return resolve_version(self.db, version_id, self.module_cache)

    def _store_blobs(self, extracted: list[tuple[str, bytes, dict]]) -> None:
        """The blobs extracted for the version being written: their rows, their code, and the facts units
        stored shallower lacked."""
        rows, stored = [], []
        for blob_id, data, res in extracted:
            before = self.depth.get(blob_id)
            if before is not None and before > res["depth"]:
                continue  # extracted again less deeply (--no-dedup, at another path): the stored facts stay
            rows.append(
                (
                    blob_id,
                    len(data),
                    self.extractor,
                    res["status"],
                    res["error_count"],
                    res["first_error_line"],
                    res["error"],
                    res["packed"],
                    res["depth"],
                )
            )
            stored.append((blob_id, data, res, before))
        self.out["blobs"].insert_all([BLOB_COLUMNS, *rows], replace=True)
        for blob_id, data, res, before in stored:
            if self.code:
                self.code.add(blob_id, data, res["code"])  # the bytes read for parsing, split by the worker
            self.depth[blob_id] = res["depth"]
            if before is not None and before < res["depth"]:
                self._refill(blob_id, before, res)

    def _store_texts(self, entries) -> None:
        """The text of the version's recorded files (chat templates, tests), which are not parsed: stored in
        the code store like parsed code, so that show, grep and diff --code read them too."""
        for e in entries:
            got = self.texts.get(e.blob_id)
            if got is not None:
                del self.texts[e.blob_id]
                self.code.add(e.blob_id, *got)

    def _store_renders(self, entries) -> None:
        """What the version's new chat templates render for one tool call (extract/templates.py), once per blob."""
        rows = []
        for e in entries:
            got = self.renders.get(e.blob_id)
            if got is None:
                continue
            if isinstance(got, tuple):
                got = self._wait(got[0])[got[1]]
            del self.renders[e.blob_id]
            self._rendered(e.blob_id)
            self.stored_renders.add(e.blob_id)
            rows.append((e.blob_id, got["call"], got["reply"], got["error"], got["notes"]))
        self.out["template_renders"].insert_all([RENDER_COLUMNS, *rows], replace=True)

    def _refill(self, blob_id: str, before: int, res: dict) -> None:
        """A blob stored shallower than a path now needs (met first at a recorded path, or outside the parser
        packages) has just been extracted deeper: its units at paths needing more get the facts they lacked,
        in place (see _resolve_refilled)."""
        facts = None
        for unit_id, path in self.db.conn.execute(
            "select id, path from units where blob_id = ? and extractor = ?", [blob_id, self.extractor]
        ).fetchall():
            if depth_needed(path) <= before:
                continue
            if path == res["path"]:
                located = res["rows"]
            else:
                facts = packed.unpack(res["packed"]) if facts is None else facts
                located = table_rows(locate(facts, path), path)
            self._clear_facts(unit_id)
            for table, cols, values in located:
                self.db.conn.executemany(
                    f"insert into {table}(unit_id, {', '.join(cols)}) values (?{', ?' * len(cols)})",
                    [(unit_id, *v) for v in values],
                )
            self.refilled.add(unit_id)

    def _clear_facts(self, unit_id: int) -> None:
        for table in store.FACT_TABLES:
            self.db.conn.execute(f"delete from {table} where unit_id = ?", [unit_id])
        self.module_cache.pop(unit_id, None)

    def _resolve_refilled(self, version_id: int) -> None:
        """Other complete versions mapping units refilled in this transaction were resolved without those
        facts: resolve them again."""
        from ..resolve.chains import resolve_version

        refilled, self.refilled = sorted(self.refilled), set()
        for vid in sorted(self._versions_mapping(refilled) - {version_id}):
            n = resolve_version(self.db, vid, self.module_cache)
            self.db.conn.execute(
                "update versions set registry = ? where id = ?", ["found" if n else "none", vid]
            )

    def _versions_mapping(self, unit_ids: list[int]) -> set[int]:
        """The complete versions with a file at one of these units."""
        out: set[int] = set()
        for i in range(0, len(unit_ids), 500):
            chunk = unit_ids[i : i + 500]
            out.update(
                r[0]
                for r in self.db.conn.execute(
                    "select distinct f.version_id from files f join versions v on v.id = f.version_id"
                    f" where v.status = 'complete' and f.unit_id in ({', '.join('?' * len(chunk))})",
                    chunk,
                )
            )
        return out

    def _unit(self, e, parsed_here: dict[str, dict], facts: dict, new_units: list, recorded: list) -> int:
        """The unit of an entry: found, or made (its row added to `new_units`, a blob only recorded and met
        for the first time to `recorded`, its located rows to `facts`)."""
        key = (e.blob_id, e.path)
        if key in self.units:
            if e.blob_id not in parsed_here:
                self.stats.blobs_reused += 1
            return self.units[key]
        conn = self.db.conn
        if depth_needed(e.path) == RECORDED:
            if e.blob_id not in self.depth:
                recorded.append((e.blob_id, self.extractor, RECORDED))
                self.depth[e.blob_id] = RECORDED
            located = []
        elif e.blob_id in parsed_here and parsed_here[e.blob_id]["path"] == e.path:
            located = parsed_here[e.blob_id]["rows"]
        else:  # a blob seen before, now at another path: locate its stored raw facts there
            if e.blob_id not in parsed_here:
                self.stats.blobs_reused += 1
            stored = conn.execute("select facts from blobs where id = ?", [e.blob_id]).fetchone()[0]
            located = table_rows(locate(packed.unpack(stored), e.path), e.path)
        old = self.stale_units.pop(key, None)
        if old is not None:  # stale facts of an older extractor: replace them under the same unit id
            unit_id = old
            self._clear_facts(unit_id)
            conn.execute(
                "update units set extractor = ?, module = ? where id = ?",
                [self.extractor, module_of(e.path), unit_id],
            )
        else:
            unit_id = self.next_unit
            self.next_unit += 1
            new_units.append((unit_id, e.blob_id, e.path, module_of(e.path), self.extractor))
        for table, cols, values in located:
            facts.setdefault((table, cols), []).extend([(unit_id, *v) for v in values])
        self.units[key] = unit_id
        return unit_id

    def renumber(self) -> None:
        """versions.ord in version order; inside the transaction of the version being written."""
        current = dict(self.db.conn.execute("select label, ord from versions"))
        wanted = {label: i for i, label in enumerate(sorted(current, key=sort_key))}
        self.db.conn.executemany(
            "update versions set ord = ? where label = ?",  # only the rows that move
            [(i, label) for label, i in wanted.items() if current[label] != i],
        )
