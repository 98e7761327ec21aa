"""What a build records beside the versions it writes, and reads of them to decide what to re-index:

- the scope's patterns each version was indexed with (table version_scopes, their digest): a version indexed with
  other patterns, or before they were recorded, is re-indexed, so a path the scope gained (the reasoning
  documentation page, core/scope.py REASONING_DOCS) is recorded in every version the next build meets, though the
  scope's name is the same;
- the documentation pages' reading, once per blob (table doc_pages, store/docpages.py), after the versions."""

from __future__ import annotations

import hashlib


def digest(scope) -> str:
    """The scope's patterns, as one digest (their order aside)."""
    return hashlib.sha1("\n".join(sorted(scope.patterns)).encode()).hexdigest()[:16]


def indexed_with(conn, scope) -> set[int]:
    """The versions (ids) indexed with these patterns."""
    return {
        r[0]
        for r in conn.execute("select version_id from version_scopes where patterns = ?", [digest(scope)])
    }


def record(conn, version_id: int, scope) -> None:
    conn.execute(
        "insert or replace into version_scopes(version_id, patterns) values (?, ?)",
        [version_id, digest(scope)],
    )


def read_pages(db) -> int:
    """The documentation pages without a current reading, read and stored (one transaction)."""
    from ..store import docpages

    with db.conn:
        db.conn.execute("begin immediate")
        return docpages.fill(db.conn)
