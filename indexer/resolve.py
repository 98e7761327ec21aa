"""Resolve: per version, cross-file work that needs the whole tree (filled in by the parser map)."""

from __future__ import annotations


def resolve_version(db, version_id: int) -> int:
    """Resolve one version inside its build transaction; returns how many names it registers."""
    row = db.conn.execute(
        "select count(*) from registrations r join files f on f.unit_id = r.unit_id where f.version_id = ?",
        [version_id]).fetchone()
    return row[0]
