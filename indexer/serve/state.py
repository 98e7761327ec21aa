"""What the plugin keeps per served tpindex database, which database a page asks for, and `ask`: how a page
puts its question to the database's `Index` (the one query layer) in the database's thread. The state every
page module reads (they import it from here, not from the plugin that registers them)."""

from __future__ import annotations

import asyncio
import time

from ..core.links import DEFAULT_UPSTREAM, normalize_upstream, upstream_problem

PLUGIN = "tpindex"
LABELS_TTL = 5.0  # seconds a page renders with the version labels it read, before reading them again


class DbState:
    """What the plugin keeps per tpindex database: its upstream and each version's ref."""

    def __init__(self, upstream: str | None):
        self.upstream = upstream
        self.refs: dict[str, str] = {}
        self.labels: set[str] | None = None
        self.labels_read_at = 0.0
        self.lock = asyncio.Lock()

    async def ref(self, db, label: str) -> str:
        if label not in self.refs:
            async with self.lock:
                self.refs.update(await db.execute_fn(lambda conn: _index(conn).refs()))
                self.refs.setdefault(label, label)
        return self.refs[label]

    async def versions(self, db) -> set[str]:
        """The complete versions' labels, read again after LABELS_TTL seconds: a build that adds a version
        while the database is served gets its cells linked too."""
        now = time.monotonic()
        if self.labels is None or now - self.labels_read_at > LABELS_TTL:
            labels = await db.execute_fn(lambda conn: _index(conn).labels())
            self.labels, self.labels_read_at = set(labels), now
        return self.labels


def _index(conn):
    from ..api import Index

    return Index(conn)


def _cache(datasette) -> dict:
    if not hasattr(datasette, "_tpindex_state"):
        datasette._tpindex_state = {}
    return datasette._tpindex_state


def forget(datasette, database: str) -> None:
    """The database changed (serve's response cache saw it): its state is read again at the next page."""
    _cache(datasette).pop(database, None)


async def state(datasette, database: str | None) -> DbState | None:
    """The plugin's state for a tpindex database, None for any other database."""
    if database is None or database not in datasette.databases:
        return None
    cache = _cache(datasette)
    if database not in cache:
        db = datasette.get_database(database)
        st = None
        if not db.is_memory and "parser_map" in await db.table_names():
            st = DbState(await db.execute_fn(lambda conn: _index(conn).stored_upstream()))
        cache[database] = st
    return cache[database]


async def tpindex_databases(datasette) -> list[str]:
    return [
        name for name in list(datasette.databases) if name != "_internal" and await state(datasette, name)
    ]


async def served_database(datasette, request) -> tuple[str, list[str]]:
    """The tpindex database a page asks for (?db=, else the first served), after Datasette's permission checks:
    (its name, every tpindex database served); a PageError (404) when it is not served."""
    from .errors import PageError

    await datasette.ensure_permissions(request.actor, ["view-instance"])
    names = await tpindex_databases(datasette)
    wanted = request.args.get("db") or (names[0] if names else None)
    if wanted not in names:
        raise PageError(
            "no tpindex database is served here"
            if not names
            else f"{wanted} is not a tpindex database; served: {', '.join(names)}"
        )
    await datasette.ensure_permissions(request.actor, [("view-database", wanted)])
    return wanted, names


def upstream_for(datasette, database: str, st: DbState) -> str | None:
    """The upstream file links point to; None (files shown without links) when the one stored in the
    database is not a valid one (serve and build refuse those, an older tpindex did not)."""
    config = datasette.plugin_config(PLUGIN, database=database) or {}
    upstream = str(config.get("upstream") or st.upstream or DEFAULT_UPSTREAM)
    return None if upstream_problem(upstream) else normalize_upstream(upstream)


async def ask(datasette, database: str, question, time_limit: bool = False):
    """question(Index) in the database's thread; its links go to the served upstream (serve --upstream, else
    the stored one; none when that is not a valid URL). `time_limit`: its SQL stopped at serve's --time-limit,
    as Datasette stops a query (QueryInterrupted)."""
    import sqlite3

    import datasette.database as dd

    upstream = upstream_for(datasette, database, await state(datasette, database))
    limit_ms = datasette.setting("sql_time_limit_ms") if time_limit else None

    def asked(conn):
        ix = _index(conn)
        ix.db.upstream_override = upstream
        return question(ix)

    def go(conn):
        if limit_ms is None:
            return asked(conn)
        with dd.sqlite_timelimit(conn, limit_ms):
            try:
                return asked(conn)
            except sqlite3.OperationalError as e:
                if e.args == ("interrupted",):
                    raise dd.QueryInterrupted(e, "", {}) from None
                raise

    return await datasette.get_database(database).execute_fn(go)
