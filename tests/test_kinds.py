"""The vocabularies of resolution and diff are enums (issue 24): each member documented, and every value
the build stores or diff emits is a member (the values are the strings stored and printed before)."""

from __future__ import annotations

import ast
import inspect
import json

from fixtures.helpers import rows, tpindex

from indexer.core import kinds
from indexer.core.kinds import ChangeType, HopKind, ImplKind


def test_every_member_has_a_docstring():
    tree = ast.parse(inspect.getsource(kinds))
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        body = cls.body
        for i, st in enumerate(body):
            if isinstance(st, ast.Assign):
                nxt = body[i + 1] if i + 1 < len(body) else None
                assert (
                    isinstance(nxt, ast.Expr)
                    and isinstance(nxt.value, ast.Constant)
                    and isinstance(nxt.value.value, str)
                    and nxt.value.value.strip()
                ), f"{cls.name}.{st.targets[0].id} has no docstring"


def test_a_member_is_its_string():
    assert HopKind.ENGINE_ATTRIBUTE == "engine attribute" and f"{ImplKind.NAME_CHECK}" == "name-check"
    assert json.dumps([ChangeType.CODE_CHANGED]) == '["code-changed"]'


def test_what_the_build_stores_and_diff_emits_are_members(unified_db):  # noqa: F811
    assert {r[0] for r in rows(unified_db, "select hop from parser_hops")} <= set(HopKind)
    assert {r[0] for r in rows(unified_db, "select impl from parser_map")} <= set(ImplKind)
    d = json.loads(
        tpindex("diff", "v0.24.0", "v0.27.0", "--format", "json", "--db", unified_db, ok=False).output
    )
    assert d["changes"] and {c["type"] for c in d["changes"]} <= set(ChangeType)
