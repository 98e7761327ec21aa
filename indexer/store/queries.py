"""The read side's SQL: one file per fact kind an answer asks for, under queries/read/ (NAME.sql, with named
parameters), read once, run by `rows`, `column` or `value` over a Reader or a sqlite3 connection."""

from __future__ import annotations

from functools import cache

from ..extract.paths import queries_dir


@cache
def sql(name: str) -> str:
    return (queries_dir() / "read" / f"{name}.sql").read_text(encoding="utf-8")


def rows(db, query: str, /, **params) -> list[dict]:
    cur = db.execute(sql(query), params)
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r, strict=True)) for r in cur]


def column(db, query: str, /, **params) -> list:
    """The first column of every row."""
    return [r[0] for r in db.execute(sql(query), params)]


def value(db, query: str, /, **params):
    """The first column of the first row (None without a row)."""
    row = db.execute(sql(query), params).fetchone()
    return None if row is None else row[0]
