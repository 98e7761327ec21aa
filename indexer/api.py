"""The query layer: one read-only `Index` over a tpindex database, asked by the command line, the browser
(Datasette plugin) and the MCP tools alike, so that they never disagree. Every method returns plain data
classes (indexer/answers/model.py); `.to_json()` gives the JSON contract of indexer/schemas/.

    from indexer.api import Index

    ix = Index("db/tpindex.db")
    ans = ix.which("glm47", at="v0.32.0", kind="tool")
    print(ans.parsers[0].real_file)          # vllm/parser/glm47_moe.py
    print(ix.diff("v0.31.0", "v0.32.0").changes[0].type)

Errors a user can fix raise `indexer.problems.Problem` (message + hint).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from .answers.card import Card
from .answers.model import Diff, Export, History, VersionInfo, Which


class Index:
    def __init__(self, db: str | Path | sqlite3.Connection | object):
        """A database path (opened read-only), an open sqlite3 connection, or a store.Reader."""
        from .store import Reader, connect

        if isinstance(db, (str, Path)):
            self.db = connect(db, create=False, readonly=True)
        elif isinstance(db, sqlite3.Connection):
            self.db = Reader(db)
        else:
            self.db = db

    def close(self) -> None:
        self.db.conn.close()

    def versions(self) -> list[VersionInfo]:
        from .answers.versions import version_infos

        return version_infos(self.db)

    def which(self, name: str, at: str | None = None, kind: str | None = None) -> Which:
        from .answers.which import which

        return which(self.db, name, at, kind)

    def history(self, name: str, kind: str | None = None) -> History:
        from .answers.which import history

        return history(self.db, name, kind)

    def diff(self, a: str, b: str) -> Diff:
        from .answers.diff import diff

        return diff(self.db, a, b)

    def cards(self, name: str | None = None, at: str | None = None, kind: str | None = None) -> list[Card]:
        """The card of NAME (one per kind it has, or only `kind`) at a version; every name's with name=None."""
        from .answers.card import cards

        return cards(self.db, name, at, kind)

    def card(self, name: str, at: str | None = None, kind: str | None = None) -> Card | list[Card]:
        found = self.cards(name, at, kind)
        return found[0] if len(found) == 1 else found

    def export(self, at: str | None = None) -> Export:
        from .answers.export import COLUMNS, export_rows

        version, rows = export_rows(self.db, at)
        return Export(version=version, columns=list(COLUMNS), parsers=rows)
