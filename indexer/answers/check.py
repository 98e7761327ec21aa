"""The report of `tpindex check`: a database verified without changing it.

Read-only (it never takes the build lock and never waits for a running build): schema version, tables
and views, SQLite's own quick_check, foreign keys, every version complete and in order with its file
count, every file's unit and blob present and its facts readable, files at parsed paths whose content
was never parsed (facts missing), archive versions whose file list looks cut short (a damaged archive
read by an older tpindex), the markers' full-text index in sync with the markers (rebuilt in a temporary
table and compared term by term), and parser-map rows only for complete versions. Prints "ok: ..." and
exits 0, or one line per problem and exits 1; a file that is not a tpindex database at all is a usage
error (exit 2).
"""

from __future__ import annotations

import re
import sqlite3
import zlib


def check_report(db_path):
    """Run every check on a database, read-only; -> a CheckReport."""
    from ..store.database import BadSchemaVersion, connect
    from .model import CheckReport

    try:
        db = connect(db_path, create=False, readonly=True, any_schema=True)
    except (
        BadSchemaVersion
    ) as e:  # a tpindex database whose meta row is damaged: a finding, not a usage error
        return CheckReport(ok=False, problems=[e.message], notes=[], summary=f"Hint: {e.hint}")
    try:
        problems, notes, summary = run_checks(db.conn)
    except (sqlite3.DatabaseError, UnicodeDecodeError) as e:
        problems, notes, summary = [f"the database cannot be read ({e})"], [], ""
    finally:
        db.conn.close()
    return CheckReport(ok=not problems, problems=problems, notes=notes, summary=summary)


def table_names(sql: str) -> list[str]:
    return re.findall(r"create (?:virtual )?table if not exists (\w+)", sql)


def run_checks(conn) -> tuple[list[str], list[str], str]:
    """Every check in order -> (problems, notes, summary); stops after the schema's tables when any is missing."""
    from ..store import database as store

    found = _schema(conn)
    problems: list[str] = []
    if found != store.SCHEMA_VERSION:
        problems.append(
            f"schema version {found}, this tpindex writes {store.SCHEMA_VERSION}:"
            " the next tpindex build migrates it"
        )
    missing = _missing_relations(conn)
    if missing:
        return [*problems, missing], [], ""
    problems += [problem for check in PROBLEM_CHECKS for problem in check(conn)]
    notes = [note for check in NOTE_CHECKS for note in check(conn)]
    return problems, notes, _summary(conn, found)


def _missing_relations(conn) -> str:
    from ..store import database as store

    present = {
        r[0]: r[1]
        for r in conn.execute("select name, type from sqlite_master where type in ('table', 'view')")
    }
    missing = [t for t in table_names(store.TABLES + store.FTS) if present.get(t) != "table"]
    missing += [v for v in store.VIEWS if present.get(v) != "view"]
    return f"missing tables or views: {', '.join(missing)}" if missing else ""


def _versions(conn) -> list[tuple]:
    """(id, label, status, ord, file_count, files mapped) of every version."""
    return conn.execute(
        "select id, label, status, ord, file_count, (select count(*) from files f"
        " where f.version_id = v.id) from versions v"
    ).fetchall()


def _sqlite_integrity(conn) -> list[str]:
    bad = [r[0] for r in conn.execute("pragma quick_check")]
    if bad != ["ok"]:
        return [f"SQLite quick_check: {'; '.join(bad[:5])}" + (" ..." if len(bad) > 5 else "")]
    return []


def _foreign_keys(conn) -> list[str]:
    fk: dict[tuple[str, str], int] = {}
    for table, _rowid, parent, _fkid in conn.execute("pragma foreign_key_check"):
        fk[(table, parent)] = fk.get((table, parent), 0) + 1
    # files -> units -> blobs are reported by _file_chain with a clearer message
    return [
        f"{n} row(s) of {table} point at missing {parent} rows"
        for (table, parent), n in sorted(fk.items())
        if (table, parent) not in (("files", "units"), ("units", "blobs"))
    ]


def _version_rows(conn) -> list[str]:
    """Versions complete, in order, with their file counts."""
    versions = _versions(conn)
    from ..core.specs import sort_key

    problems = []
    for _id, label, status, _ord, file_count, n_files in versions:
        if status != "complete":
            problems.append(f"version {label} is not complete (status {status!r})")
        elif file_count != n_files:
            problems.append(f"version {label} records {file_count} file(s) but maps {n_files}")
    ords = [o for *_, o, _, _ in versions]
    if None in ords or len(set(ords)) != len(ords):
        problems.append("versions have missing or repeated order numbers (versions.ord)")
    elif [v[1] for v in sorted(versions, key=lambda v: v[3])] != sorted(
        (v[1] for v in versions), key=sort_key
    ):
        problems.append("versions.ord does not follow version order")
    return problems


def _file_chain(conn) -> list[str]:
    """files -> units -> blobs, and the facts of every blob that was parsed."""
    problems = []
    q = conn.execute
    n = q("select count(*) from files f left join units u on u.id = f.unit_id where u.id is null").fetchone()[
        0
    ]
    if n:
        problems.append(f"{n} file row(s) point at no unit")
    n = q("select count(*) from units u left join blobs b on b.id = u.blob_id where b.id is null").fetchone()[
        0
    ]
    if n:
        problems.append(f"{n} unit(s) point at no blob")
    unreadable = 0
    for blob_id, status, facts in q("select id, status, facts from blobs where status != 'not-parsed'"):
        try:
            if facts is None:
                if status not in ("extract-failed",):
                    raise ValueError("no facts")
            else:
                from ..store.packed import unpack

                unpack(facts)
        except (ValueError, zlib.error):
            unreadable += 1
            if unreadable == 1:
                first = blob_id
    if unreadable:
        problems.append(f"{unreadable} parsed blob(s) have missing or unreadable facts (first: {first})")
    return problems


def _parser_map(conn) -> list[str]:
    """The parser map: only for complete versions; every hop belongs to a mapped name."""
    problems = []
    q = conn.execute
    n = q(
        "select count(*) from parser_map p join versions v on v.id = p.version_id"
        " where v.status != 'complete'"
    ).fetchone()[0]
    if n:
        problems.append(f"{n} parser_map row(s) belong to incomplete versions")
    n = q(
        "select count(*) from parser_hops h left join parser_map p on p.version_id = h.version_id"
        " and p.kind = h.kind and p.name = h.name where p.name is null"
    ).fetchone()[0]
    if n:
        problems.append(f"{n} parser_hops row(s) belong to no parser_map row")
    for (label,) in q(
        "select label from versions v where registry = 'found' and status = 'complete'"
        " and not exists (select 1 from parser_map p where p.version_id = v.id)"
    ):
        problems.append(f"version {label} has a registry but no parser_map rows")
    return problems


def _views(conn) -> list[str]:
    from ..store import database as store

    problems = []
    for view in store.VIEWS:
        try:
            conn.execute(f"select * from {view} limit 1").fetchall()
        except sqlite3.DatabaseError as e:
            problems.append(f"view {view} fails: {e}")
    return problems


def _stale_extractor(conn) -> list[str]:
    from ..extract import extractor_id

    stale = [
        r[0]
        for r in conn.execute(
            "select label from versions where extractor != ? order by ord", [extractor_id()]
        )
    ]
    if stale:
        return [
            f"{len(stale)} version(s) were indexed by another extractor ({', '.join(stale[:5])}"
            f"{' ...' if len(stale) > 5 else ''}); the next build re-indexes them"
        ]
    return []


def _stored_upstream(conn) -> list[str]:
    from ..core.links import upstream_problem

    row = conn.execute("select value from meta where key = 'upstream'").fetchone()
    if row and upstream_problem(str(row[0])):
        return [
            f"the stored upstream is not valid ({upstream_problem(str(row[0]))}): serve shows files"
            " without links; serve --upstream URL, or build with --upstream URL, sets one"
        ]
    return []


def _unmapped_units(conn) -> list[str]:
    n = conn.execute(
        "select count(*) from units u where not exists (select 1 from files f where f.unit_id = u.id)"
    ).fetchone()[0]
    return [f"{n} unit(s) are mapped by no version (left by re-indexed versions; harmless)"] if n else []


def _summary(conn, found) -> str:
    versions = _versions(conn)
    counts = conn.execute("""select (select count(*) from files), (select count(*) from blobs),
        (select count(*) from blobs where status not in ('ok', 'not-parsed')),
        (select count(distinct kind || ':' || name) from parser_map), (select count(*) from markers)""").fetchone()
    labels = [v[1] for v in sorted(versions, key=lambda v: (v[3] is None, v[3] or 0))]
    span = f" ({labels[0]} .. {labels[-1]})" if labels else ""
    return (
        f"{len(versions)} version(s){span}, {counts[0]} file row(s), {counts[1]} blob(s)"
        f" ({counts[2]} with parse errors), {counts[3]} parser name(s), {counts[4]} marker(s);"
        f" schema {found}"
    )


def _incomplete_versions(conn) -> list[str]:
    """Versions from source archives whose file list looks cut short, as an older tpindex read a damaged
    archive (a damaged header taken for the end of the archive): files in scope but not one Python file
    under vllm/, or a registry naming a module missing from a directory that is indexed (a release whose
    registry names a file it does not ship would fail to import that name; none of vLLM's does). Git
    trees and directories are always listed whole."""
    out = []
    for label, n in conn.execute(
        "select label, file_count from versions v where status = 'complete' and source = 'pypi'"
        " and file_count > 0"
        " and not exists (select 1 from files f where f.version_id = v.id and f.path glob 'vllm/*.py')"
    ):
        out.append(
            f"version {label} maps {n} file(s) but no Python file under vllm/: its file list is"
            " incomplete (a damaged source archive?)"
        )
    missing: dict[str, list[str]] = {}
    for vid, label, name, module in conn.execute(
        "select distinct v.id, v.label, p.name, p.reg_module from parser_map p join versions v"
        " on v.id = p.version_id and v.status = 'complete' and v.source = 'pypi'"
        " where p.reg_module like 'vllm.%' and p.reg_file is null"  # resolve found no file for it
        " order by v.ord, p.name"
    ):
        path = module.replace(".", "/")
        present = conn.execute(
            "select count(*) from files where version_id = ? and path in (?, ?)",
            [vid, path + ".py", path + "/__init__.py"],
        ).fetchone()[0]
        directory = path.rpartition("/")[0] + "/"
        if (
            not present
            and conn.execute(
                "select 1 from files where version_id = ? and substr(path, 1, ?) = ? and instr(substr(path, ?),"
                " '/') = 0 limit 1",
                [vid, len(directory), directory, len(directory) + 1],
            ).fetchone()
        ):
            missing.setdefault(label, []).append(f"{name} -> {module}")
    for label, names in missing.items():
        out.append(
            f"version {label}: {len(names)} registered name(s) point at modules missing from it although"
            f" their directory is indexed ({', '.join(names[:3])}{' ...' if len(names) > 3 else ''}):"
            " its file list is likely incomplete (a damaged source archive?)"
        )
    return out


def _underfed_files(conn) -> list[str]:
    from ..store.database import underfed_units

    units = {u: p for u, _, p in underfed_units(conn)}
    if not units:
        return []
    hits = []
    for label, unit_id in conn.execute(
        "select v.label, f.unit_id from files f join versions v on v.id = f.version_id"
        " and v.status = 'complete' order by v.ord, f.path"
    ):
        if unit_id in units:
            hits.append((label, units[unit_id]))
    if not hits:
        return []
    versions = list(dict.fromkeys(label for label, _ in hits))
    return [
        f"{len(hits)} file(s) in {len(versions)} version(s) ({', '.join(versions[:5])}"
        f"{' ...' if len(versions) > 5 else ''}) are at parsed paths but their content was never parsed, so"
        f" their facts are missing (first: {hits[0][0]} {hits[0][1]}); a build of those versions re-indexes"
        " them"
    ]


def _code(conn) -> list[str]:
    """In a database that stores code: every parsed blob a complete version maps has its code, and every
    code row's line ids are readable."""
    from ..store import code
    from ..store.database import SHALLOW_STATUSES

    if not code.present(conn):
        return []
    shallow = ", ".join(f"'{s}'" for s in SHALLOW_STATUSES)
    missing = conn.execute(f"""
        select count(distinct b.id), min(f.path) from blobs b join units u on u.blob_id = b.id
        join files f on f.unit_id = u.id join versions v on v.id = f.version_id and v.status = 'complete'
        where b.status not in ({shallow}) and b.facts is not null
          and not exists (select 1 from code_texts c where c.blob_id = b.id)""").fetchone()
    out = []
    if missing[0]:
        out.append(
            f"{missing[0]} parsed file content(s) have no stored code (first at {missing[1]}): show, grep"
            " and diff --code cannot read them"
        )
    _, bad = code.damaged(conn)  # every blob's code put together again and hashed: its id is its git sha1
    if bad:
        at = conn.execute(
            "select f.path, v.label from units u join files f on f.unit_id = u.id join versions v"
            " on v.id = f.version_id where u.blob_id = ? order by v.ord limit 1",
            [bad[0]],
        ).fetchone()
        where = f" (first: {bad[0][:12]}, {at[0]} at {at[1]})" if at else f" (first: {bad[0][:12]})"
        out.append(
            f"{len(bad)} stored file content(s) do not hash to their blob id: their stored code is damaged"
            f"{where}, and show, grep and diff --code answer wrongly from it"
        )
    unindexed = code.unindexed(conn)
    if unindexed:
        out.append(
            f"grep's index (code_postings) does not hold the lines of {len(unindexed)} stored file content(s)"
            f" as stored (first: {unindexed[0][:12]}): grep misses or misplaces lines that show prints; rebuild"
            " the database into a new --db"
        )
    return out


def _tree_words(conn) -> list[str]:
    """Where's words (tree_words, build --tree): every tree blob recorded as having its identifiers indexed
    has a document there, and every document is such a blob's (FTS5 keeps a row per document in
    tree_words_docsize, an empty document's too). The files' text is not stored: what each document holds
    cannot be compared."""
    try:
        docs = {r[0] for r in conn.execute("select id from tree_words_docsize")}
        wanted = {r[0] for r in conn.execute("select id from tree_blobs where words = 1")}
    except sqlite3.DatabaseError as e:
        return [f"where's words (tree_words) cannot be read ({e})"]
    out = []
    if wanted - docs:
        out.append(
            f"where's words (tree_words) hold nothing for {len(wanted - docs)} file content(s) recorded as indexed"
            f" (first tree blob {min(wanted - docs)}): where and check-doc miss their mentions; rebuild the"
            " database into a new --db"
        )
    if docs - wanted:
        out.append(
            f"where's words (tree_words) hold {len(docs - wanted)} document(s) of no indexed file content (first"
            f" row {min(docs - wanted)})"
        )
    return out


def _leftovers(conn) -> list[str]:
    """Rows a build should have removed or updated: whole-tree rows no version maps (versions re-indexed
    without --tree), record-only blob rows of another extractor or without a depth (a migration)."""
    from ..extract import extractor_id
    from ..store.database import leftovers

    found = leftovers(conn, extractor_id())
    out = []
    if found["tree"]:
        out.append(
            f"{found['tree']} whole-tree row(s) (tree blobs with their definitions and words, tree paths) are"
            " mapped by no version (left by versions indexed again without --tree): the next tpindex build"
            " removes them"
        )
    if found["blobs"]:
        out.append(
            f"{found['blobs']} record-only blob row(s) carry another extractor or no depth (left by a"
            " migration): the next tpindex build updates them"
        )
    return out


def _schema(conn) -> int | None:
    from ..store.database import Reader, schema_version

    try:
        return schema_version(Reader(conn))
    except sqlite3.OperationalError:
        return None


def _fts(conn) -> list[str]:
    q = conn.execute
    try:
        q("drop table if exists temp.tpindex_check_fts")
        q("create virtual table temp.tpindex_check_fts using fts5(text)")
        q("insert into temp.tpindex_check_fts(rowid, text) select id, text from markers")
        q("create virtual table temp.tpindex_check_have using fts5vocab(main, markers_fts, 'instance')")
        q("create virtual table temp.tpindex_check_want using fts5vocab(temp, tpindex_check_fts, 'instance')")
        cols = "term, doc, offset"
        extra = q(
            f"select count(*), min(doc) from (select {cols} from temp.tpindex_check_have"
            f" except select {cols} from temp.tpindex_check_want)"
        ).fetchone()
        lost = q(
            f"select count(*), min(doc) from (select {cols} from temp.tpindex_check_want"
            f" except select {cols} from temp.tpindex_check_have)"
        ).fetchone()
    except sqlite3.DatabaseError as e:
        return [f"the full-text index markers_fts cannot be read ({e})"]
    finally:
        for t in ("tpindex_check_have", "tpindex_check_want", "tpindex_check_fts"):
            try:
                q(f"drop table if exists temp.{t}")
            except sqlite3.DatabaseError:
                pass
    out = []
    if extra[0]:
        out.append(
            f"markers_fts is out of sync: {extra[0]} indexed term(s) match no marker text (first marker id"
            f" {extra[1]})"
        )
    if lost[0]:
        out.append(
            f"markers_fts is out of sync: {lost[0]} term(s) of marker texts are not indexed (first marker id"
            f" {lost[1]})"
        )
    return out


# the checks `run_checks` runs, in the order their findings print: each (conn) -> list of lines
PROBLEM_CHECKS = (
    _sqlite_integrity,
    _foreign_keys,
    _version_rows,
    _file_chain,
    _incomplete_versions,  # versions whose file list looks cut short (a damaged archive read by an older tpindex)
    _underfed_files,  # files at parsed paths whose content was never parsed (met first by an older tpindex)
    _fts,  # the markers' full-text index, rebuilt in a temporary table and compared term by term
    _code,
    _tree_words,
    _leftovers,
    _parser_map,
    _views,
)
NOTE_CHECKS = (_stale_extractor, _stored_upstream, _unmapped_units)
