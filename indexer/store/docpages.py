"""The documentation pages' reading, once per blob (table doc_pages): every tool-calling and reasoning page the
database holds (core/scope.py TOOL_DOCS, REASONING_DOCS) read by extract/docpages.py from its stored text, by the
build after the versions it wrote (and by the migration that made the table, from what the database held)."""

from __future__ import annotations

import sqlite3

from ..core.scope import REASONING_DOCS, TOOL_DOCS

KINDS = {**dict.fromkeys(TOOL_DOCS, "tool"), **dict.fromkeys(REASONING_DOCS, "reasoning")}


def fill(conn) -> int:
    """Read every documentation page blob without a reading of the current reader; -> how many were read. A
    blob whose text is not stored (a build without the code store) is left to be read from text again, never."""
    from ..extract.docpages import READER, facts
    from . import code

    paths = list(KINDS)
    found = conn.execute(
        f"select distinct blob_id, path from units where path in ({', '.join('?' * len(paths))})", paths
    ).fetchall()
    have = {(b, k) for b, k in conn.execute("select blob_id, kind from doc_pages where reader = ?", [READER])}
    done = 0
    for blob, path in found:
        kind = KINDS[path]
        if (blob, kind) in have:
            continue
        text = code.read_text(conn, blob)
        if text is None:
            continue
        conn.execute(
            "insert or replace into doc_pages(blob_id, kind, reader, facts) values (?, ?, ?, ?)",
            [blob, kind, READER, facts(kind, text)],
        )
        have.add((blob, kind))
        done += 1
    return done


def read(conn, blob: str, kind: str):
    """The stored reading of a page (rows or sections), None when there is none of the current reader."""
    from ..extract.docpages import READER, from_facts

    try:
        row = conn.execute(
            "select facts from doc_pages where blob_id = ? and kind = ? and reader = ?", [blob, kind, READER]
        ).fetchone()
    except (
        sqlite3.OperationalError
    ):  # a database without the table (opened at any schema): read from the text
        return None
    return from_facts(kind, row[0]) if row else None
