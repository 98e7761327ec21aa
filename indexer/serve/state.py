"""What the plugin keeps per served tpindex database, and which database a page asks for: the state every
page module reads (they import it from here, not from the plugin that registers them)."""

from __future__ import annotations

import asyncio
import time

from ..core.links import DEFAULT_UPSTREAM, normalize_upstream, ref_for, upstream_problem

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
                res = await db.execute("select label, source, commit_id from versions")
                self.refs.update({r[0]: ref_for(r[0], r[1], r[2]) for r in res.rows})
                self.refs.setdefault(label, label)
        return self.refs[label]

    async def versions(self, db) -> set[str]:
        """The complete versions' labels, read again after LABELS_TTL seconds: a build that adds a version
        while the database is served gets its cells linked too."""
        now = time.monotonic()
        if self.labels is None or now - self.labels_read_at > LABELS_TTL:
            res = await db.execute("select label from versions where status = 'complete'")
            self.labels, self.labels_read_at = {r[0] for r in res.rows}, now
        return self.labels


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
            res = await db.execute("select value from meta where key = 'upstream'")
            st = DbState(res.rows[0][0] if res.rows else None)
        cache[database] = st
    return cache[database]


async def tpindex_databases(datasette) -> list[str]:
    return [name for name in list(datasette.databases) if name != "_internal" and await state(datasette, name)]


async def served_database(datasette, request) -> tuple[str | None, list[str], str | None]:
    """The tpindex database a page asks for (?db=, else the first served), after Datasette's permission checks:
    (its name, every tpindex database served, None), or (None, served, why it is not found)."""
    await datasette.ensure_permissions(request.actor, ["view-instance"])
    names = await tpindex_databases(datasette)
    wanted = request.args.get("db") or (names[0] if names else None)
    if wanted not in names:
        return None, names, ("no tpindex database is served here" if not names else
                             f"{wanted} is not a tpindex database; served: {', '.join(names)}")
    await datasette.ensure_permissions(request.actor, [("view-database", wanted)])
    return wanted, names, None


def upstream_for(datasette, database: str, st: DbState) -> str | None:
    """The upstream file links point to; None (files shown without links) when the one stored in the
    database is not a valid one (serve and build refuse those, an older tpindex did not)."""
    config = datasette.plugin_config(PLUGIN, database=database) or {}
    upstream = str(config.get("upstream") or st.upstream or DEFAULT_UPSTREAM)
    return None if upstream_problem(upstream) else normalize_upstream(upstream)
