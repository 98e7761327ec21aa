"""`tpindex serve`'s response cache: a page answered once is answered again from memory, as long as the
served database has not changed.

The served database only changes when a build writes into it, and a page depends on nothing else than
the request and the database (the pages kept are listed below): a whole response (status, headers, body)
is kept under the request's key (method, path, query string and the headers a page may read: host,
cookies, authorization, accept*), for the database's state, read at every request from its files: the
main file's identity, size, modification time and change counter, and its -wal's size, modification time
and header (checkpoint sequence and salts, which change when the WAL restarts). When the state changes the
cache is emptied and the plugin's per-database state (the version labels and refs it keeps) is read
again; a page whose render saw the state change is answered but not kept.

Bounded: at most `max_bytes` in all (bodies, headers and keys), an entry at most an eighth of that
(larger ones are answered and not kept), least recently used first out. Concurrent requests for the same
page wait for the first one's render instead of rendering it too. Kept: 200 answers to GET without a
Set-Cookie header, of the pages that read the database only (the home page, the database's own pages,
and /-/parser, /-/version, /-/parser-matrix, /-/source, /-/diff, /-/grep, /-/find, /-/where); never the
introspection pages, the forms (check-doc, fit), replay, which runs code, or SQL a user wrote (?sql=: it may
call random() or read the time).
"""

from __future__ import annotations

import asyncio
import os
from collections import OrderedDict

ENTRY_SHARE = 8  # an entry holds at most 1/ENTRY_SHARE of the budget
ATTR = "_tpindex_response_cache"
EXACT_PAGES = {"", "-/parser-matrix", "-/diff", "-/grep", "-/find", "-/where"}  # after the base URL
PAGE_PREFIXES = ("-/parser/", "-/version/", "-/source/")
KEY_HEADERS = (b"host", b"cookie", b"authorization", b"accept", b"accept-encoding", b"accept-language")
OVERHEAD = 256  # bytes counted per entry beyond its key, headers and body


def database_state(path: str) -> tuple:
    """What changes whenever a transaction is committed to the database at path (rollback journal: the
    main file's change counter; WAL: the -wal's size or header), or the file is replaced."""
    out = []
    for name, offset, size in ((path, 24, 4), (path + "-wal", 0, 32)):
        try:
            with open(name, "rb") as f:
                st = os.fstat(f.fileno())
                f.seek(offset)
                out.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, f.read(size)))
        except OSError:
            out.append(None)
    return tuple(out)


class ResponseCache:
    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.max_entry = max_bytes // ENTRY_SHARE
        self.entries: OrderedDict[tuple, tuple[dict, bytes, int]] = OrderedDict()
        self.bytes = 0
        self.pending: dict[tuple, asyncio.Event] = {}
        self.states: dict[str, tuple] = {}
        self.hits = self.misses = self.evictions = 0

    def stats(self) -> dict:
        return {
            "entries": len(self.entries),
            "bytes": self.bytes,
            "max_bytes": self.max_bytes,
            "hits": self.hits,
            "misses": self.misses,
            "evictions": self.evictions,
        }

    def state(self, datasette) -> tuple:
        """The served databases' state now; a database that changed empties the cache and has its plugin
        state read again."""
        now = {
            name: database_state(db.path)
            for name, db in list(datasette.databases.items())
            if getattr(db, "path", None) and not db.is_memory
        }
        changed = [name for name in now.keys() | self.states.keys() if now.get(name) != self.states.get(name)]
        if changed:
            from .state import forget

            if self.states:
                self.clear()
            for name in changed:
                forget(datasette, name)
            self.states = now
        return tuple(sorted(now.items()))

    def clear(self) -> None:
        self.entries.clear()
        self.bytes = 0

    def get(self, key: tuple):
        entry = self.entries.get(key)
        if entry is not None:
            self.entries.move_to_end(key)
        return entry

    def put(self, key: tuple, start: dict, body: bytes) -> None:
        size = (
            OVERHEAD
            + len(body)
            + sum(len(x) for x in key if isinstance(x, bytes))
            + sum(len(k) + len(v) for k, v in start.get("headers") or [])
        )
        if size > self.max_entry:
            return
        old = self.entries.pop(key, None)
        if old is not None:
            self.bytes -= old[2]
        while self.entries and self.bytes + size > self.max_bytes:
            _, (_, _, gone) = self.entries.popitem(last=False)
            self.bytes -= gone
            self.evictions += 1
        self.entries[key] = (start, body, size)
        self.bytes += size


def install(datasette, max_bytes: int) -> None:
    """Give this Datasette a response cache of max_bytes (0: none); the plugin's asgi_wrapper uses it."""
    setattr(datasette, ATTR, ResponseCache(max_bytes) if max_bytes > 0 else None)


def of(datasette) -> ResponseCache | None:
    return getattr(datasette, ATTR, None)


def _kept_path(datasette, path: str) -> bool:
    base = datasette.urls.path("/")
    if not path.startswith(base):
        return False
    rest = path[len(base) :]
    if rest in EXACT_PAGES or rest.startswith(PAGE_PREFIXES):
        return True
    first = rest.split("/", 1)[0].split(".", 1)[0]  # /tpindex, /tpindex/table, /tpindex.json
    db = datasette.databases.get(first)
    return db is not None and not db.is_memory and first != "_internal"


def _user_sql(query_string: bytes) -> bool:
    """A query a user wrote (?sql=) may read more than the database (random(), the time): never kept."""
    return any(p.split(b"=", 1)[0] == b"sql" for p in query_string.split(b"&"))


def _key(scope) -> tuple:
    headers = scope.get("headers") or []
    return (
        scope.get("method"),
        scope.get("scheme"),
        scope.get("root_path", ""),
        scope.get("raw_path") or scope.get("path", "").encode(),
        scope.get("query_string", b""),
        *(b"\n".join(v for k, v in headers if k == name) for name in KEY_HEADERS),
    )


async def _replay(start: dict, body: bytes, send) -> None:
    await send({**start, "headers": list(start.get("headers") or [])})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def wrap(app, datasette):
    """The ASGI app with the cache in front of it, once install() gave this Datasette one (Datasette makes
    its test client's app as it is created, before make_datasette installs the cache)."""

    async def cached(scope, receive, send):
        cache = of(datasette)
        if cache is None or scope["type"] != "http":
            return await app(scope, receive, send)
        state = cache.state(datasette)
        if (
            scope.get("method") != "GET"
            or not _kept_path(datasette, scope.get("path", ""))
            or _user_sql(scope.get("query_string", b""))
        ):
            return await app(scope, receive, send)
        key = _key(scope)
        entry = cache.get(key)
        if entry is None and key in cache.pending:  # the same page being rendered: wait for it, once
            await cache.pending[key].wait()
            entry = cache.get(key)
        if entry is not None:
            cache.hits += 1
            return await _replay(entry[0], entry[1], send)
        cache.misses += 1
        leader = key not in cache.pending
        if leader:
            cache.pending[key] = asyncio.Event()
        start: dict | None = None
        chunks: list[bytes] = []
        size, complete = 0, False

        async def capture(message):
            nonlocal start, size, complete
            if message["type"] == "http.response.start":
                start = {**message, "headers": list(message.get("headers") or [])}  # kept as sent
            elif message["type"] == "http.response.body" and size <= cache.max_entry:
                body = message.get("body", b"")
                chunks.append(body)
                size += len(body)
                complete = not message.get("more_body", False)
            await send(message)

        try:
            await app(scope, receive, capture)
            if (
                complete
                and start is not None
                and start.get("status") == 200
                and size <= cache.max_entry
                and not any(k.lower() == b"set-cookie" for k, _ in start.get("headers") or [])
                and cache.state(datasette) == state
            ):
                cache.put(key, start, b"".join(chunks))
        finally:
            if leader:
                cache.pending.pop(key).set()

    return cached
