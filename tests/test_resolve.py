"""Resolution of each registered name to the file that really implements it (issue 4), on fixture
repositories written here that imitate the unified-engine eras (v0.24.0 .. v0.33.0) and the
hard-coded era (v0.6.0)."""

from __future__ import annotations

from fixtures.eras import PLAIN_ABSTRACT, lazy_registry, tool_names
from fixtures.helpers import build_tags, line_of, make_repo, rows
from fixtures.registry_eras import HISTORY as ERAS
from fixtures.unified import ADAPTERS, ALPHA, BETA_MODEL, BETA_STANDALONE, BETA_STUB, INIT, MANAGER


def parser(db, version, name, kind="tool"):
    cols = (
        "impl",
        "reg_file",
        "reg_class",
        "real_class",
        "real_file",
        "real_line",
        "adapter",
        "alias_of",
        "stub",
        "reexport",
        "parent_class",
        "parent_file",
        "reason",
    )
    got = rows(
        db,
        f"select {', '.join(cols)} from parser_map_v where version = ? and name = ? and kind = ?",
        (version, name, kind),
    )
    assert len(got) == 1, (name, version, got)
    return dict(zip(cols, got[0], strict=True))


def hops(db, version, name, kind="tool"):
    return rows(
        db,
        "select hop, class, file, line from parser_hops_v where version = ? and name = ? and kind = ?"
        " order by step",
        (version, name, kind),
    )


def test_standalone_parser_is_its_own_file(unified_db):
    p = parser(unified_db, "v0.24.0", "alpha")
    assert p["impl"] == "standalone"
    assert (p["real_class"], p["real_file"]) == ("AlphaToolParser", "vllm/tool_parsers/alpha_tool_parser.py")
    assert p["real_line"] == line_of(ALPHA, "class AlphaToolParser")
    assert p["stub"] == 0 and p["reexport"] == 0 and p["adapter"] is None


def test_aliases_name_each_other(unified_db):
    assert parser(unified_db, "v0.24.0", "alpha")["alias_of"] == "alpha_too"
    assert parser(unified_db, "v0.24.0", "alpha_too")["alias_of"] == "alpha"
    assert parser(unified_db, "v0.24.0", "beta")["alias_of"] is None


def test_parent_parser_of_a_subclass(unified_db):
    p = parser(unified_db, "v0.24.0", "child")
    assert p["impl"] == "standalone"
    assert (p["parent_class"], p["parent_file"]) == (
        "AlphaToolParser",
        "vllm/tool_parsers/alpha_tool_parser.py",
    )


def test_stub_subclassing_an_adapter_from_the_registry_of_adapters_is_unified(unified_db):
    p = parser(unified_db, "v0.25.0", "beta")
    assert p["impl"] == "unified"
    assert (p["real_class"], p["real_file"]) == ("BetaParser", "vllm/parser/beta.py")
    assert p["adapter"] == "BetaParserToolAdapter"
    assert p["stub"] == 1
    assert hops(unified_db, "v0.25.0", "beta") == [
        ("registered", "BetaToolParser", "vllm/tool_parsers/__init__.py", line_of(INIT, '"beta"')),
        (
            "class",
            "BetaToolParser",
            "vllm/tool_parsers/beta_tool_parser.py",
            line_of(BETA_STUB, "class Beta"),
        ),
        (
            "adapter",
            "BetaParserToolAdapter",
            "vllm/parser/engine/registered_adapters.py",
            line_of(ADAPTERS, "(", 1),
        ),
        ("real", "BetaParser", "vllm/parser/beta.py", line_of(BETA_MODEL, "class BetaParser")),
    ]


def test_adapter_imported_from_the_model_module(unified_db):
    p = parser(unified_db, "v0.24.0", "gamma")
    assert p["impl"] == "unified"
    assert (p["real_class"], p["real_file"]) == ("GammaParser", "vllm/parser/gamma.py")
    assert p["adapter"] == "GammaParserToolAdapter"


def test_chain_of_two_hops_through_a_module_attribute_base(unified_db):
    p = parser(unified_db, "v0.24.0", "delta")
    assert p["impl"] == "unified"
    assert (p["real_class"], p["real_file"]) == ("DeltaParser", "vllm/parser/delta.py")
    assert [h[0] for h in hops(unified_db, "v0.24.0", "delta")] == [
        "registered",
        "class",
        "base",
        "adapter",
        "real",
    ]
    # DeltaParser subclasses BetaParser, which is no name's parser class at v0.24.0 (beta is standalone
    # there) but is beta's real class from v0.25.0 on: only then is it delta's parent parser
    assert p["parent_class"] is None
    p = parser(unified_db, "v0.25.0", "delta")
    assert (p["parent_class"], p["parent_file"]) == ("BetaParser", "vllm/parser/beta.py")


def test_reexport_of_a_class_defined_elsewhere(unified_db):
    p = parser(unified_db, "v0.24.0", "eps")
    assert p["impl"] == "standalone" and p["reexport"] == 1
    assert (p["real_class"], p["real_file"]) == ("EpsToolParser", "vllm/parser/eps.py")
    assert p["stub"] == 1  # the registered file defines no method of its own
    assert [h[0] for h in hops(unified_db, "v0.24.0", "eps")] == ["registered", "reexport", "class"]


def test_unresolvable_chain_says_why_and_guesses_nothing(unified_db):
    p = parser(unified_db, "v0.24.0", "broken")
    assert p["impl"] == "unresolved"
    assert p["real_file"] is None and p["real_class"] is None
    assert "vllm.tool_parsers.missing_tool_parser" in p["reason"]


def test_name_check_through_a_constant(unified_db):
    p = parser(unified_db, "v0.27.0", "beta")
    assert p["impl"] == "name-check"
    assert (p["real_class"], p["real_file"]) == ("BetaV2Parser", "vllm/parser/beta_v2.py")
    assert (
        "name-check",
        "BetaV2Parser",
        "vllm/parser/parser_manager.py",
        line_of(MANAGER, "== KAPPA"),
    ) in hops(unified_db, "v0.27.0", "beta")
    # a comparison whose branch imports nothing does not make a composition
    assert parser(unified_db, "v0.27.0", "alpha")["impl"] == "standalone"


def test_a_name_changes_kind_across_three_tags(unified_db):
    got = rows(
        unified_db,
        "select version, impl, real_file from parser_map_v where name = 'beta' and kind = 'tool'"
        " order by version_ord",
    )
    assert got == [
        ("v0.24.0", "standalone", "vllm/tool_parsers/beta_tool_parser.py"),
        ("v0.25.0", "unified", "vllm/parser/beta.py"),
        ("v0.27.0", "name-check", "vllm/parser/beta_v2.py"),
    ]


def test_lifecycle_view(unified_db):
    got = rows(
        unified_db,
        "select first_version, last_version, became_unified, real_file_changed_in, removed_in"
        " from lifecycle where name = 'beta' and kind = 'tool'",
    )
    assert got == [("v0.24.0", "v0.27.0", "v0.25.0", "v0.25.0, v0.27.0", None)]


def test_the_lifecycle_of_one_name_is_the_views_row(unified_db):
    """lifecycle_of (the view's query with the name, and the kind, filtered inside its window: the short
    commands ask for one name) gives the view's rows, for every name and kind, and a name not there none."""
    import sqlite3

    from indexer.store.database import lifecycle_of

    conn = sqlite3.connect(unified_db)
    try:
        every = conn.execute("select * from lifecycle order by kind, name").fetchall()
        assert len(every) > 2
        for kind, name in sorted({(r[0], r[1]) for r in every}):
            assert conn.execute(*lifecycle_of(name, kind)).fetchall() == [
                r for r in every if r[:2] == (kind, name)
            ]
            assert sorted(conn.execute(*lifecycle_of(name)).fetchall()) == [r for r in every if r[1] == name]
        cols = conn.execute(*lifecycle_of("beta", "tool", columns="last_version, removed_in")).fetchall()
        assert (
            cols
            == conn.execute(
                "select last_version, removed_in from lifecycle where kind = 'tool' and name = 'beta'"
            ).fetchall()
        )
        assert conn.execute(*lifecycle_of("nosuchname")).fetchall() == []
    finally:
        conn.close()


def test_hard_coded_dispatch_era(tmp_path):
    repo = make_repo(tmp_path / "repo", {"v0.6.0": ERAS["v0.6.0"]})
    db = tmp_path / "x.db"
    build_tags(repo, db, "v0.6.0")
    got = rows(db, "select name, impl, form, real_class, real_file from parser_map_v order by name")
    assert got == [
        (
            "hermes",
            "dispatch",
            "cli-choices",
            "Hermes2ProToolParser",
            "vllm/entrypoints/openai/tool_parsers/hermes_tool_parser.py",
        ),
        (
            "mistral",
            "dispatch",
            "cli-choices",
            "MistralToolParser",
            "vllm/entrypoints/openai/tool_parsers/mistral_tool_parser.py",
        ),
    ]
    assert [h[0] for h in hops(db, "v0.6.0", "hermes")] == ["registered", "dispatch", "reexport", "real"]


# Two bases that each lead to an engine class, and a parser subclassing two parsers: Python reads
# `_parser_engine_cls` (and the code a class reuses) through the class's method resolution order (C3), so
# the left branch wins even where the right base is nearer by depth.
MRO_INIT = lazy_registry("tool", tool_names("omega", "alpha", "beta", "kid"))

OMEGA = """
from vllm.tool_parsers.omega_bases import LeftMixin, RightBase


class OmegaToolParser(LeftMixin, RightBase):
    pass
"""

OMEGA_BASES = """
from vllm.parser.left import LeftEngine
from vllm.parser.right import RightEngine


class LeftBase:
    _parser_engine_cls = LeftEngine


class LeftMixin(LeftBase):
    pass


class RightBase:
    _parser_engine_cls = RightEngine
"""

KID = """
from vllm.tool_parsers.alpha_tool_parser import AlphaToolParser
from vllm.tool_parsers.beta_tool_parser import BetaToolParser


class KidMixin(AlphaToolParser):
    pass


class KidToolParser(KidMixin, BetaToolParser):
    def extract_tool_calls(self, text):
        return text
"""

MRO_TREE = {
    "vllm/tool_parsers/__init__.py": MRO_INIT,
    "vllm/tool_parsers/abstract_tool_parser.py": PLAIN_ABSTRACT,
    "vllm/tool_parsers/omega_tool_parser.py": OMEGA,
    "vllm/tool_parsers/omega_bases.py": OMEGA_BASES,
    "vllm/tool_parsers/alpha_tool_parser.py": ALPHA,
    "vllm/tool_parsers/beta_tool_parser.py": BETA_STANDALONE,
    "vllm/tool_parsers/kid_tool_parser.py": KID,
    "vllm/parser/__init__.py": "",
    "vllm/parser/left.py": "class LeftEngine:\n    def parse(self, text):\n        return text\n",
    "vllm/parser/right.py": "class RightEngine:\n    def parse(self, text):\n        return text\n",
}


def test_walks_over_bases_follow_the_method_resolution_order(tmp_path):
    repo = make_repo(tmp_path / "repo", {"v0.25.0": MRO_TREE})
    db = tmp_path / "x.db"
    build_tags(repo, db, "v0.25.0")
    p = parser(db, "v0.25.0", "omega")
    # OmegaToolParser.__mro__: Omega, LeftMixin, LeftBase, RightBase: LeftBase's engine class is Python's
    assert (p["impl"], p["real_class"], p["real_file"]) == ("unified", "LeftEngine", "vllm/parser/left.py")
    assert [h[:2] for h in hops(db, "v0.25.0", "omega")] == [
        ("registered", "OmegaToolParser"),
        ("class", "OmegaToolParser"),
        ("base", "LeftMixin"),
        ("base", "LeftBase"),
        ("engine attribute", "LeftBase"),
        ("real", "LeftEngine"),
    ]
    # KidToolParser.__mro__: Kid, KidMixin, AlphaToolParser, BetaToolParser, ToolParser: alpha's class first
    p = parser(db, "v0.25.0", "kid")
    assert (p["parent_class"], p["parent_file"]) == (
        "AlphaToolParser",
        "vllm/tool_parsers/alpha_tool_parser.py",
    )
