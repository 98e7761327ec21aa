"""The write side of the store, through sqlite-utils: creating the schema, migrating an older one (one named
function per step), and the build's record writes. Readers never import this module (nor sqlite-utils): they
open the database with plain sqlite3 (store/database.py).

A migration step is a function of a `sqlite_utils.Database`, registered for the schema version it migrates
from (`@step(N)`: N -> N + 1). It must leave a database that already has what it adds as it is (a column is
added when missing). Tables, indexes and views are (re)created after the steps run, so a change to a view alone
is a schema bump whose step does nothing. The steps, the tables, the views and the new schema version are
written in one transaction: a build killed while it creates or migrates the schema leaves the database as it
was (tests/test_crash.py kills it at every statement).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from sqlite_utils import Database

from . import database as store

STEPS: dict[int, Callable[[Database], None]] = {}  # schema N -> the function migrating N to N + 1


def step(version: int):
    """Register a migration step from schema `version` to `version + 1`."""

    def register(fn: Callable[[Database], None]) -> Callable[[Database], None]:
        if version in STEPS:
            raise ValueError(
                f"two migrations from schema {version}: {STEPS[version].__name__}, {fn.__name__}"
            )
        STEPS[version] = fn
        return fn

    return register


def add_columns(db: Database, table: str, **columns: type) -> None:
    """Add the columns a table lacks (a table not there yet is created with them after the steps)."""
    if not db[table].exists():
        return
    have = db[table].columns_dict
    for name, kind in columns.items():
        if name not in have:
            db[table].add_column(name, kind)


@step(1)
def origins_and_how_names_resolve(db: Database) -> None:
    """versions.origin; methods' super calls and delegation; name checks' tested class; parser_map's streaming
    method, wrapper, notes and code digest."""
    add_columns(db, "versions", origin=str)
    add_columns(db, "methods", calls_super=int, delegates=str)
    add_columns(db, "name_checks", tested=str)
    add_columns(
        db,
        "parser_map",
        streaming=str,
        wrapper_class=str,
        wrapper_file=str,
        wrapper_line=int,
        notes=str,
        code_sig=str,
    )


@step(2)
def sentinels_and_request_settings(db: Database) -> None:
    """New tables and views only."""


@step(3)
def the_whole_tree(db: Database) -> None:
    """The whole-tree tables (tree_*, definitions, version_trees) and their views: new tables only."""


@step(4)
def the_code(db: Database) -> None:
    """The code tables (store/code.py): new tables; the extractor's bump re-indexes versions to fill them."""


@step(5)
def blob_depths(db: Database) -> None:
    """blobs.depth: modules outside the parser packages extracted less deeply."""
    add_columns(db, "blobs", depth=int)


@step(6)
def class_creation(db: Database) -> None:
    """class_sets, env_defaults, parser_overridden (new tables); what set an attribute at class creation and
    when; the class whose streaming method runs."""
    add_columns(db, "parser_attrs", set_by=str, condition=str)
    add_columns(
        db, "parser_map", streaming_class=str, streaming_file=str, streaming_line=int, streaming_from=str
    )


@step(7)
def history(db: Database) -> None:
    """History from a clone: commits, commit_files, history_tips (filled by the next build --repo)."""


@step(8)
def the_parser_contract(db: Database) -> None:
    """signatures and parser_calls: new tables and views; the extractor's bump fills them."""


@step(9)
def uses_and_code_pieces(db: Database) -> None:
    """The uses fact table (new) and parser_code.pieces; the extractor's bump re-indexes."""
    add_columns(db, "parser_code", pieces=str)


@step(10)
def regexes_and_template_renders(db: Database) -> None:
    """regexes and regexes_v, template_renders: new tables and a view only."""


@step(11)
def code_postings(db: Database) -> None:
    """The code's inverted index of blocks of line ids gives way to code_postings, the places of each line,
    filled from the stored arrays in this transaction."""
    from . import code

    db["code_index"].drop(ignore=True)
    db["meta"].delete_where("key = ?", ["code_block_shift"])
    _script(db, code.SCHEMA)
    code.index_stored(db.conn)


@step(12)
def init_hops(db: Database) -> None:
    """self_attrs (a new fact table; the extractor's bump re-indexes to fill it), parser_hops.end_line and
    detail, parser_overridden.by_method: an overriding __init__ as part of where the logic is."""
    add_columns(db, "parser_hops", end_line=int, detail=str)
    add_columns(db, "parser_overridden", by_method=str)


@step(13)
def the_behaviour_atlas(db: Database) -> None:
    """The behaviour atlas (issue 44): atlas_cases, atlas_cells, atlas_map, atlas_literals, atlas_read and the
    view atlas_v (created with the other tables below)."""
    _script(db, store.ATLAS_TABLES)


@step(14)
def documentation_pages(db: Database) -> None:
    """doc_pages (the documentation pages read once per blob, filled here from the stored text) and
    version_scopes (the scope each version was indexed with: a version without a row is re-indexed by the next
    build, which records the scope it used)."""
    from . import code, docpages

    _script(db, "\n".join([store.TABLES, code.SCHEMA]))
    docpages.fill(db.conn)


def _script(db: Database, sql: str) -> None:
    """Each statement of a script, in the open transaction (sqlite3's executescript would commit it first)."""
    pending = ""
    for line in sql.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            if pending.strip().strip(";").strip():
                db.execute(pending)
            pending = ""
    if pending.strip():
        db.execute(pending)


def setup(reader, path) -> None:
    """Create or migrate the schema of a database opened for a build (`reader`: store.Reader)."""
    try:
        reader.execute("pragma journal_mode = wal")
    except sqlite3.OperationalError as e:
        raise store.StoreError(
            f"cannot write {path} ({e})", "check its permissions or pass another --db"
        ) from e
    db = Database(reader.conn, execute_plugins=False)  # recursive triggers on, as builds have always had them
    db.execute("pragma foreign_keys = on")
    db.execute("pragma synchronous = normal")
    found = store.schema_version(reader)
    if found is None and [t for t in db.table_names() if t != "meta"]:
        raise store.StoreError(f"{path} is an SQLite database but not a tpindex one", "pass another --db")
    if found is not None:
        store.check_schema(reader, path)
    now = store.SCHEMA_VERSION
    if found == now:
        return  # nothing to create: a build on a current database starts without a schema write
    from . import code

    db.execute("begin immediate")
    try:
        for version in range(found if found is not None else now, now):
            STEPS[version](db)
        _script(db, "\n".join([store.TABLES, store.ATLAS_TABLES, code.SCHEMA, store.INDEXES, store.FTS]))
        for name, sql in store.VIEWS.items():
            db.create_view(name, sql, replace=True)
        db["meta"].insert({"key": "schema_version", "value": str(int(now))}, replace=True)
        db.execute("commit")
    except BaseException:
        if db.conn.in_transaction:
            db.conn.rollback()
        raise


def writer(conn: sqlite3.Connection) -> Database:
    """The build's sqlite-utils view of its connection (the schema is set up; no plugins)."""
    return Database(conn, execute_plugins=False)


def missing_steps(found: int) -> list[int]:
    """The schema versions from `found` to the current one that no step migrates from."""
    return [v for v in range(found, store.SCHEMA_VERSION) if v not in STEPS]
