"""The Datasette app `tpindex serve` runs: one tpindex database read-only, with the project's metadata and
plugin, user SQL bounded, the MCP endpoint guarded; and the server that stops on a signal gracefully."""

from __future__ import annotations

from pathlib import Path

DB_NAME = "tpindex"  # the database's name in URLs: /tpindex/which?name=...
SQL_TIME_LIMIT_MS = 5000
MAX_VALUE_BYTES = 16 << 20  # the largest string or blob a served query may make (SQLITE_LIMIT_LENGTH)
MAX_RESULT_BYTES = 64 << 20  # ... and the most its rows may hold together (the stored values are far smaller)
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
CACHE_MB = 64  # serve --cache-mb: the response cache's budget (serve/cache.py)
CACHE_BYTES = CACHE_MB << 20


def make_datasette(
    db_path: str | Path,
    upstream: str | None = None,
    time_limit_ms: int = SQL_TIME_LIMIT_MS,
    host: str | None = None,
    cache_bytes: int = CACHE_BYTES,
    allow_hosts: tuple[str, ...] = (),
):
    """A Datasette instance serving one tpindex database read-only (the connections open it with
    mode=ro and are query-only; Datasette 0.65 has no write API and no writable canned query is defined).
    SQL from users (pages, canned queries, MCP's execute_sql) is bounded in value and result size; every
    request must be addressed to a loopback name, an IP address, `host` or one of `allow_hosts`, and a form
    posted from its own origin (guard.py); /-/mcp answers only requests addressed to a loopback host (or
    `host`) from a loopback origin. Pages are kept in a response cache of at most cache_bytes (cache.py;
    0: none)."""
    from datasette.app import Datasette

    from . import cache, plugin
    from .metadata import metadata

    _register_plugin(plugin)
    ds = Datasette(
        metadata=metadata(DB_NAME, upstream),
        settings={
            "sql_time_limit_ms": time_limit_ms,
            "facet_time_limit_ms": 500,
            "allow_download": False,
            "default_page_size": 100,
            "max_returned_rows": 2000,
        },
    )
    # Mutable (mode=ro) rather than immutable: a build finishing while serving shows up, and a database
    # in WAL mode is read through its WAL. Where SQLite cannot read it so (a read-only directory without
    # the WAL index), an immutable view that still holds what is in the WAL (store.read_view).
    from ..api import served_view

    path, immutable = served_view(Path(db_path).resolve())
    ds.add_database(_database_class()(ds, path=str(path), is_mutable=not immutable), name=DB_NAME)
    if "_memory" in ds.databases:  # added by Datasette when started without files
        ds.remove_database("_memory")
    _protect_mcp(ds, host)
    from .guard import allowed_hosts

    ds._tpindex_hosts = allowed_hosts(host, allow_hosts)
    cache.install(ds, cache_bytes)
    return ds


def _protect_mcp(ds, host: str | None) -> None:
    """datasette-mcp builds its app for host 0.0.0.0, which turns the MCP SDK's DNS-rebinding checks off: a
    web page the operator visits could then reach the tools through a name resolving to 127.0.0.1. Its
    state is made here first, with the SDK's transport security on: Host and Origin must be loopback (or the
    address served on, when it is a specific one)."""
    import datasette_mcp
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = list(LOOPBACK)
    if host and host not in ("0.0.0.0", "::", ""):
        hosts.append(f"[{host}]" if ":" in host else host)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[h for x in hosts for h in (x, f"{x}:*")],
        allowed_origins=[o for x in hosts for s in ("http", "https") for o in (f"{s}://{x}", f"{s}://{x}:*")],
    )
    server = datasette_mcp.create_mcp_server(ds)
    app = server.streamable_http_app(
        streamable_http_path="/", json_response=True, transport_security=security
    )
    datasette_mcp._states[ds] = datasette_mcp._MCPState(server=server, app=app)


def _database_class():
    import contextvars
    import sqlite3

    from datasette.database import Database, QueryInterrupted

    user_sql = contextvars.ContextVar("tpindex_user_sql", default=False)

    class ServedDatabase(Database):
        """Datasette's database, with SQL from users bounded: a value may hold at most MAX_VALUE_BYTES
        (select zeroblob(300000000) returned 1.8 GB and the server grew to 10 GB), all the rows together
        MAX_RESULT_BYTES. The answers' own reads (execute_fn) are not bounded. Tables that cannot be
        counted (contentless full-text indexes) are not counted, instead of logging an error per page.

        A database file replaced under the server (`mv new.db served.db`: another file at the path) is
        noticed at the next query and read from then on: Datasette's connections, one per thread, kept the
        old file open (and served it indefinitely); each is opened again when the path's file changed."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self._file = _file_id(self.path)
            self._opened: dict[int, tuple] = {}  # id of a connection -> the file it was opened on

        def connect(self, write=False):
            conn = super().connect(write)
            self._opened[id(conn)] = self._file
            return conn

        def _current(self, conn):
            """The thread's connection, opened again when the file at the path is another one now."""
            if self._opened.get(id(conn)) == self._file:
                return conn
            import datasette.database as dd

            fresh = self.connect()
            self.ds._prepare_connection(fresh, self.name)
            if getattr(dd.connections, self.name, None) is conn:
                setattr(dd.connections, self.name, fresh)
            self._opened.pop(id(conn), None)
            if conn in self._all_file_connections:
                self._all_file_connections.remove(conn)
            conn.close()
            return fresh

        async def execute(self, sql, *args, **kwargs):
            token = user_sql.set(True)
            try:
                return await super().execute(sql, *args, **kwargs)
            finally:
                user_sql.reset(token)

        async def execute_fn(self, fn):
            now = _file_id(self.path)
            if now is not None and now != self._file:
                self._file = now
            run = fn
            if user_sql.get():

                def run(conn):
                    old = conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
                    factory = conn.row_factory
                    conn.row_factory = _counting(factory)
                    try:
                        return fn(conn)
                    finally:
                        conn.row_factory = factory
                        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, old)

            if self.ds.executor is None:
                conn = self._read_connection
                if conn is not None and self._opened.get(id(conn)) != self._file:
                    self._read_connection = None
                    conn.close()
                return await super().execute_fn(run)
            # in the connection's thread, with the thread's connection to the file at the path now
            return await super().execute_fn(lambda conn: run(self._current(conn)))

        async def table_counts(self, limit=10):
            if not self.is_mutable and self.cached_table_counts is not None:
                return self.cached_table_counts
            counts = {}
            for table in await self.table_names():
                if table in _UNCOUNTABLE:
                    counts[table] = None
                    continue
                try:
                    counts[table] = (
                        await self.execute(
                            f"select count(*) from [{table}]", custom_time_limit=limit, log_sql_errors=False
                        )
                    ).rows[0][0]
                except (QueryInterrupted, sqlite3.DatabaseError):
                    counts[table] = None
            if not self.is_mutable:
                self._cached_table_counts = counts
            return counts

    return ServedDatabase


def _file_id(path) -> tuple | None:
    """The identity of the file at a path (device, inode): another file after a `mv` onto the path."""
    import os

    try:
        st = os.stat(path)
    except (OSError, TypeError):
        return None
    return st.st_dev, st.st_ino


_UNCOUNTABLE = {"code_postings", "tree_words"}  # contentless full-text tables: "does not support scanning"


def _counting(factory):
    total = 0

    def row(cursor, values):
        nonlocal total
        total += sum(len(v) if isinstance(v, (str, bytes)) else 8 for v in values)
        if total > MAX_RESULT_BYTES:
            import sqlite3

            raise sqlite3.DataError(
                f"the result is larger than {MAX_RESULT_BYTES >> 20} MB; select fewer or smaller values"
            )
        return factory(cursor, values) if factory else values

    return row


def _register_plugin(plugin) -> None:
    """The entry point registers the plugin when tpindex is installed; from a source tree it may not be."""
    from datasette.plugins import pm

    if not any(p is plugin for p in pm.get_plugins()):
        pm.register(plugin, name="tpindex")


def _server_class():
    import contextlib
    import signal

    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn's server, but a signal only stops it gracefully: uvicorn raises the signal again once
        stopped (SIGTERM then ended the process with status 143 and a CancelledError traceback of the
        lifespan, Ctrl-C with status 0); serve exits itself, 0 on SIGTERM and 130 on Ctrl-C. Searches at
        work are stopped at once, and so are the replays and fits of the queue for code (work.py), so that
        their requests do not hold the shutdown up to their time limit."""

        signals: list[int] = []

        @contextlib.contextmanager
        def capture_signals(self):
            self.signals = []
            originals = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for sig, handler in originals.items():
                    signal.signal(sig, handler)

        def handle_exit(self, sig, frame):
            from ..api import stop_searches
            from .work import cancel_all

            self.signals.append(sig)
            super().handle_exit(sig, frame)
            cancel_all()  # the replays and fits at work end their children and return
            stop_searches()

    return Server


def quiet_lifespan(app):
    """The app, whose lifespan task ends quietly when the server's loop ends under it: datasette-mcp's wrapper
    of the lifespan still closes its MCP sessions when Datasette has answered the shutdown (a session whose
    call was just stopped), and the loop's end cancelling it was logged as a CancelledError traceback."""
    import asyncio

    async def wrapped(scope, receive, send):
        if scope["type"] != "lifespan":
            return await app(scope, receive, send)
        try:
            return await app(scope, receive, send)
        except asyncio.CancelledError:
            return None

    return wrapped


def _Server(config):  # noqa: N802 - a class made on first use (uvicorn is imported only by serve)
    return _server_class()(config)
