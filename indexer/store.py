"""The SQLite store: schema, migrations, and the views that hide blob ids.

Facts are computed once per unique blob and located once per (blob, path) pair, a "unit" (the path
decides the module, and so how relative imports and registered modules resolve). Each version maps
paths to units. Views join them so that a person writes `where version = 'v0.32.0'`.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from . import code
from .problems import Problem

SCHEMA_VERSION = 2


class StoreError(Problem):
    """A database that cannot be used as it is."""


TABLES = """
create table if not exists meta (key text primary key, value text);
create table if not exists versions (
    id integer primary key,
    label text not null unique,
    ref text not null,
    commit_id text not null,
    source text not null,
    ord integer,
    status text not null default 'building',
    registry text,
    file_count integer,
    scope text,
    extractor text,
    indexed_at text
);
create table if not exists blobs (
    id text primary key,
    size integer not null,
    extractor text not null,
    status text not null,
    error_count integer not null default 0,
    first_error_line integer,
    error text,
    facts blob
);
create table if not exists units (
    id integer primary key,
    blob_id text not null references blobs(id),
    path text not null,
    module text,
    extractor text not null,
    unique (blob_id, path)
);
create index if not exists units_module on units(module);
create table if not exists files (
    version_id integer not null references versions(id) on delete cascade,
    path text not null,
    unit_id integer not null references units(id),
    primary key (version_id, path)
) without rowid;
create index if not exists files_unit on files(unit_id);
create table if not exists registrations (
    unit_id integer not null references units(id), kind text not null, name text not null,
    module text, class text, form text not null, line integer, registry text);
create table if not exists imports (
    unit_id integer not null references units(id), line integer, module text, name text, alias text,
    level integer, star integer, type_checking integer, in_function text, in_class text);
create table if not exists classes (
    unit_id integer not null references units(id), qualname text not null, name text, module text,
    line integer, end_line integer, decorators text, nested_in text, no_methods integer, streaming text);
create table if not exists bases (
    unit_id integer not null references units(id), class text not null, pos integer,
    written text, resolved text, base_module text, keyword text);
create table if not exists methods (
    unit_id integer not null references units(id), class text not null, name text, line integer,
    end_line integer, body text);
create table if not exists class_attrs (
    unit_id integer not null references units(id), class text not null, name text, value text, line integer,
    value_kind text, resolved text);
create table if not exists markers (
    id integer primary key, unit_id integer not null references units(id), kind text, line integer,
    text text, class text, function text);
create table if not exists plants (
    unit_id integer not null references units(id), plant text, line integer, text text, class text,
    function text);
create table if not exists adapter_bindings (
    unit_id integer not null references units(id), adapter text, pos integer, parser_written text,
    parser text, line integer);
create table if not exists aliases (
    unit_id integer not null references units(id), name text, written text, resolved text, line integer);
create table if not exists parser_map (
    version_id integer not null references versions(id) on delete cascade,
    kind text not null,            -- tool | reasoning | unified
    name text not null,
    registry_file text, registry_line integer,  -- where the name is registered (or listed)
    reg_module text, reg_class text,
    reg_file text, reg_line integer,  -- the registered module's file, and the registered class's line in it
    form text,
    impl text not null,            -- standalone | unified | name-check | dispatch | unresolved
    real_class text, real_module text, real_file text, real_line integer,
    adapter text,                  -- the adapter class the registered class reaches, if any
    alias_of text,                 -- other names registered to the same class in this version, comma-separated
    stub integer,                  -- the registered file defines no method of its own
    reexport integer,              -- the registered module only re-exports a class defined elsewhere
    parent_class text, parent_file text,  -- the parser class the real class subclasses, when it is a parser
    reason text,                   -- why a chain could not be followed (impl = unresolved)
    primary key (version_id, kind, name)
);
create table if not exists parser_hops (
    version_id integer not null references versions(id) on delete cascade,
    kind text not null, name text not null, step integer not null,
    hop text not null,             -- registered | reexport | base | adapter | binding | name-check | dispatch | real
    class text, module text, file text, line integer,
    primary key (version_id, kind, name, step)
);
create table if not exists name_checks (
    unit_id integer not null references units(id), kind text, name text, class text, module text,
    line integer, via text, owner text);
"""

FACT_TABLES = ("registrations", "imports", "classes", "bases", "methods", "class_attrs", "markers",
               "plants", "adapter_bindings", "aliases", "name_checks")

INDEXES = "\n".join(f"create index if not exists {t}_unit on {t}(unit_id);" for t in FACT_TABLES)

FTS = """
create virtual table if not exists markers_fts using fts5(text, content='markers', content_rowid='id');
create trigger if not exists markers_ai after insert on markers begin
  insert into markers_fts(rowid, text) values (new.id, new.text);
end;
create trigger if not exists markers_ad after delete on markers begin
  insert into markers_fts(markers_fts, rowid, text) values ('delete', old.id, old.text);
end;
"""

# Views: per version, complete versions only, no blob ids.
VIEWS = {
    "version_files": """
        select v.label as version, v.ord as version_ord, f.path as file, u.module, u.id as unit_id,
               u.blob_id, b.status as parse_status
        from files f join versions v on v.id = f.version_id and v.status = 'complete'
        join units u on u.id = f.unit_id join blobs b on b.id = u.blob_id""",
    "registry": """
        select vf.version, r.kind, r.name, r.module, r.class, r.form, vf.file, r.line, r.registry,
               vf.version_ord
        from registrations r join version_files vf on vf.unit_id = r.unit_id""",
    "imports_v": """
        select vf.version, vf.file, vf.module as importer, i.line, i.module, i.name, i.alias, i.level,
               i.star, i.type_checking, i.in_function, i.in_class, vf.version_ord
        from imports i join version_files vf on vf.unit_id = i.unit_id""",
    "adapter_imports": """
        select version, file, importer, line, module, name, alias,
               case when name like '%ParserToolAdapter' then 'tool' else 'reasoning' end as role,
               version_ord
        from imports_v where name like '%ParserToolAdapter' or name like '%ParserReasoningAdapter'""",
    "classes_v": """
        select vf.version, vf.file, c.module, c.qualname as class, c.line, c.end_line, c.decorators,
               c.nested_in, c.no_methods, c.streaming, vf.version_ord
        from classes c join version_files vf on vf.unit_id = c.unit_id""",
    "class_hierarchy": """
        select vf.version, c.qualname as class, c.module, vf.file, c.line, b.pos, b.written as base_written,
               b.resolved as base, b.base_module, bf.file as base_file, vf.version_ord
        from classes c join version_files vf on vf.unit_id = c.unit_id
        join bases b on b.unit_id = c.unit_id and b.class = c.qualname and b.keyword is null
        left join version_files bf on bf.version = vf.version and bf.module = b.base_module""",
    "methods_v": """
        select vf.version, vf.file, vf.module, m.class, m.name as method, m.line, m.end_line, m.body,
               vf.version_ord
        from methods m join version_files vf on vf.unit_id = m.unit_id""",
    "class_attrs_v": """
        select vf.version, vf.file, vf.module, a.class, a.name as attribute, a.value, a.value_kind, a.resolved,
               a.line, vf.version_ord
        from class_attrs a join version_files vf on vf.unit_id = a.unit_id""",
    "markers_v": """
        select vf.version, vf.file, m.kind, m.line, m.text, m.class, m.function, m.id as marker_id,
               vf.version_ord
        from markers m join version_files vf on vf.unit_id = m.unit_id""",
    "plants_v": """
        select vf.version, vf.file, p.plant, p.line, p.text, p.class, p.function, vf.version_ord
        from plants p join version_files vf on vf.unit_id = p.unit_id""",
    "adapter_bindings_v": """
        select vf.version, vf.file, a.adapter, a.pos, a.parser_written, a.parser, a.line, vf.version_ord
        from adapter_bindings a join version_files vf on vf.unit_id = a.unit_id""",
    "name_checks_v": """
        select vf.version, vf.file, n.kind, n.name, n.class, n.module, n.line, n.via, n.owner, vf.version_ord
        from name_checks n join version_files vf on vf.unit_id = n.unit_id""",
    "parser_map_v": """
        select v.label as version, p.kind, p.name, p.impl, p.registry_file, p.registry_line, p.reg_module,
               p.reg_class, p.reg_file, p.reg_line,
               p.form, p.real_class, p.real_module, p.real_file, p.real_line, p.adapter, p.alias_of, p.stub,
               p.reexport, p.parent_class, p.parent_file, p.reason, v.ord as version_ord
        from parser_map p join versions v on v.id = p.version_id and v.status = 'complete'""",
    "parser_hops_v": """
        select v.label as version, h.kind, h.name, h.step, h.hop, h.class, h.module, h.file, h.line,
               v.ord as version_ord
        from parser_hops h join versions v on v.id = h.version_id and v.status = 'complete'""",
    "lifecycle": """
        with present as (
            select p.kind, p.name, v.label, v.ord, p.impl, p.real_file,
                   lag(p.real_file) over w as prev_file, lag(v.ord) over w as prev_ord
            from parser_map p join versions v on v.id = p.version_id and v.status = 'complete'
            window w as (partition by p.kind, p.name order by v.ord)
        ), spans as (
            select kind, name, min(ord) as first_ord, max(ord) as last_ord, count(*) as n from present
            group by kind, name
        )
        select s.kind, s.name,
            (select label from present p where p.kind = s.kind and p.name = s.name and p.ord = s.first_ord)
                as first_version,
            (select label from present p where p.kind = s.kind and p.name = s.name and p.ord = s.last_ord)
                as last_version,
            (select label from present p where p.kind = s.kind and p.name = s.name and p.impl = 'unified'
                order by p.ord limit 1) as became_unified,
            (select group_concat(label, ', ') from (select label from present p where p.kind = s.kind
                and p.name = s.name and p.prev_ord is not null
                and coalesce(p.real_file, '') != coalesce(p.prev_file, '') order by p.ord)) as real_file_changed_in,
            (select label from versions v where v.status = 'complete' and v.ord > s.last_ord order by v.ord limit 1)
                as removed_in,
            s.n as versions_present
        from spans s""",
    "parse_errors": """
        select version, file, parse_status, b.error_count, b.first_error_line, b.error
        from version_files vf join blobs b on b.id = vf.blob_id where b.status not in ('ok', 'not-parsed')""",
}


class Reader:
    """A read-only connection with the two calls the query commands use (sqlite-utils' `execute` and
    `query`), without importing sqlite-utils: read-only commands start in a fraction of the time."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def execute(self, sql: str, params=()):
        return self.conn.execute(sql, params)

    def query(self, sql: str, params=()):
        cur = self.conn.execute(sql, params)
        cols = [d[0] for d in cur.description]
        for row in cur:
            yield dict(zip(cols, row, strict=True))

    def table_names(self) -> list[str]:
        return [r[0] for r in self.conn.execute("select name from sqlite_master where type = 'table'")]


def connect(path: str | Path, create: bool = True, readonly: bool = False):
    """Open (and create or migrate) a database: a sqlite_utils.Database to write, a Reader to read."""
    path = Path(path)
    if not path.exists():
        if not create:
            raise StoreError(f"no database at {path}", f"build one first: tpindex build --db {path}")
        if not path.parent.is_dir():
            raise StoreError(f"directory {path.parent} does not exist", "create it or pass another --db")
    try:
        if readonly:
            conn = _open_readonly(path)  # probed there
        else:
            conn = sqlite3.connect(str(path), timeout=30)
            conn.execute("select count(*) from sqlite_master").fetchone()
        conn.execute("pragma busy_timeout = 30000")
    except sqlite3.DatabaseError as e:
        if is_damaged(e):
            raise StoreError(f"{path} is damaged ({e})", "rebuild it into another --db") from e
        raise StoreError(f"{path} is not a tpindex database ({e})", "pass another --db") from e
    try:
        if readonly:
            db = Reader(conn)
            check_schema(db, path)
            return db
        import sqlite_utils

        db = sqlite_utils.Database(conn)
        _setup(db, path)
        return db
    except sqlite3.DatabaseError as e:  # pages of the schema or of meta that cannot be read
        if not is_damaged(e):
            raise
        conn.close()
        raise StoreError(f"{path} is damaged ({e})", "rebuild it into another --db") from e


def is_damaged(e: sqlite3.DatabaseError) -> bool:
    name = getattr(e, "sqlite_errorname", "")
    if str(e).startswith("Could not decode to UTF-8"):  # text columns holding garbage bytes
        return True
    return name == "SQLITE_CORRUPT" or (not name and "malformed" in str(e))


def _open_readonly(path: Path) -> sqlite3.Connection:
    """Read-only; on read-only media (where SQLite cannot create the WAL index) as an immutable file."""
    from urllib.parse import quote

    uri = "file:" + quote(str(path.absolute()))  # a path with ? or # is still one path
    try:
        conn = sqlite3.connect(uri + "?mode=ro", uri=True, timeout=30)
        conn.execute("select count(*) from sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError:
        if os.access(path.parent, os.W_OK):
            raise
    return sqlite3.connect(uri + "?mode=ro&immutable=1", uri=True, timeout=30)


def schema_version(db) -> int | None:
    if "meta" not in db.table_names():
        return None
    row = db.execute("select value from meta where key = 'schema_version'").fetchone()
    return int(row[0]) if row else None


def check_schema(db, path) -> None:
    found = schema_version(db)
    if found is None:
        if db.table_names():
            raise StoreError(f"{path} is an SQLite database but not a tpindex one", "pass another --db")
        raise StoreError(f"{path} holds no index yet", f"build one first: tpindex build --db {path}")
    if found > SCHEMA_VERSION:
        raise StoreError(f"{path} was built by a newer tpindex (schema {found}, this one reads {SCHEMA_VERSION})",
                         "upgrade tpindex or rebuild into another --db")
    if any(v not in MIGRATIONS for v in range(found, SCHEMA_VERSION)):
        raise StoreError(f"{path} was built by an older tpindex (schema {found}) that this one cannot migrate"
                         f" to schema {SCHEMA_VERSION}", "rebuild into another --db")


MIGRATIONS: dict[int, str] = {
    # from version N to N+1. Tables, indexes and views are (re)created after the migrations run, so a
    # change to a view alone is a schema bump with an empty migration.
    1: "",  # 2: the code tables (indexer/code.py); the extractor bump re-indexes versions to fill them
}


def _setup(db, path) -> None:
    try:
        db.execute("pragma journal_mode = wal")
    except sqlite3.OperationalError as e:
        raise StoreError(f"cannot write {path} ({e})", "check its permissions or pass another --db") from e
    db.execute("pragma foreign_keys = on")
    db.execute("pragma synchronous = normal")
    found = schema_version(db)
    if found is None and [t for t in db.table_names() if t != "meta"]:
        raise StoreError(f"{path} is an SQLite database but not a tpindex one", "pass another --db")
    if found is not None:
        check_schema(db, path)
    if found == SCHEMA_VERSION:
        return  # nothing to create: a build on a current database starts without a schema write
    # One transaction (executescript would commit statement by statement): a build killed while it
    # creates or migrates the schema leaves the database as it was.
    script = ["begin immediate;"]
    script += [MIGRATIONS[v] for v in range(found if found is not None else SCHEMA_VERSION, SCHEMA_VERSION)]
    script += [TABLES, code.SCHEMA, INDEXES, FTS]
    script += [f"drop view if exists {name};\ncreate view {name} as {sql};" for name, sql in VIEWS.items()]
    script += [f"insert or replace into meta(key, value) values ('schema_version', '{int(SCHEMA_VERSION)}');",
               "commit;"]
    try:
        db.conn.executescript("\n".join(script))
    except BaseException:
        if db.conn.in_transaction:
            db.conn.rollback()
        raise


def set_meta(db, key: str, value: str) -> None:
    db.execute("insert or replace into meta(key, value) values (?, ?)", [key, value])
