"""Resolution of each registered name to the file that really implements it (issue 4), on fixture
repositories written here that imitate the unified-engine eras (v0.24.0 .. v0.33.0) and the
hard-coded era (v0.6.0)."""

from __future__ import annotations

import pytest
from conftest import build_tags, line_of, make_repo, rows
from eras import PLAIN_ABSTRACT, engine_stub, lazy_registry, tool_names
from test_registry_eras import HISTORY as ERAS

# alpha_too is a second name for alpha's class; broken names a module that does not exist
INIT = lazy_registry("tool", {
    **tool_names("alpha"),
    "alpha_too": ("alpha_tool_parser", "AlphaToolParser"),
    **tool_names("beta", "gamma", "delta", "eps", "child"),
    "broken": ("missing_tool_parser", "MissingToolParser"),
})

ALPHA = '''
from vllm.tool_parsers.abstract_tool_parser import ToolParser


class AlphaToolParser(ToolParser):
    def extract_tool_calls(self, text):
        return text
'''

CHILD = '''
from .alpha_tool_parser import AlphaToolParser


class ChildToolParser(AlphaToolParser):
    def extract_tool_calls(self, text):
        return text.strip()
'''

BETA_STANDALONE = '''
from vllm.tool_parsers.abstract_tool_parser import ToolParser


class BetaToolParser(ToolParser):
    def extract_tool_calls(self, text):
        return []
'''

BETA_STUB = engine_stub("BetaToolParser", "BetaParserToolAdapter", "supports_required_and_named = False")

GAMMA_STUB = '''
from vllm.parser.gamma import GammaParserToolAdapter


class GammaToolParser(GammaParserToolAdapter):
    pass
'''

GAMMA_MODEL = '''
from vllm.parser.engine.adapters import make_adapters


class GammaParser:
    def parse(self, text):
        return text


GammaParserReasoningAdapter, GammaParserToolAdapter = make_adapters(GammaParser)
'''

DELTA = '''
from vllm.tool_parsers.delta_base import DeltaBase


class DeltaToolParser(DeltaBase):
    structural_tag_model = "delta"
'''

DELTA_BASE = '''
from vllm.parser.engine import registered_adapters


class DeltaBase(registered_adapters.DeltaParserToolAdapter):
    pass
'''

EPS = '''
from vllm.parser.eps import EpsToolParser

__all__ = ["EpsToolParser"]
'''

EPS_MODEL = '''
from vllm.tool_parsers.abstract_tool_parser import ToolParser


class EpsToolParser(ToolParser):
    def extract_tool_calls(self, text):
        return None
'''

ADAPTERS = '''
from vllm.parser.beta import BetaParser
from vllm.parser.delta import DeltaParser
from vllm.parser.engine.adapters import make_adapters

(
    BetaParserReasoningAdapter,
    BetaParserToolAdapter,
) = make_adapters(BetaParser)

(DeltaParserReasoningAdapter, DeltaParserToolAdapter) = make_adapters(DeltaParser)
'''

ENGINE = '''
def make_adapters(parser_cls):
    return parser_cls, parser_cls
'''

BETA_MODEL = '''
class BetaParser:
    def parse(self, text):
        return text
'''

DELTA_MODEL = '''
from vllm.parser.beta import BetaParser


class DeltaParser(BetaParser):
    pass
'''

MANAGER = '''
KAPPA = "beta"


class ParserManager:
    @classmethod
    def get_parser(cls, tool_parser_name=None, reasoning_parser_name=None):
        if tool_parser_name == "alpha" and reasoning_parser_name is None:
            print("no import here: not a composition")
        if tool_parser_name == KAPPA:
            from vllm.parser.beta_v2 import BetaV2Parser

            return BetaV2Parser
        return None
'''

BETA_V2 = '''
class BetaV2Parser:
    def parse(self, text):
        return text
'''

TAG_A = {
    "vllm/tool_parsers/__init__.py": INIT,
    "vllm/tool_parsers/abstract_tool_parser.py": PLAIN_ABSTRACT,
    "vllm/tool_parsers/alpha_tool_parser.py": ALPHA,
    "vllm/tool_parsers/child_tool_parser.py": CHILD,
    "vllm/tool_parsers/beta_tool_parser.py": BETA_STANDALONE,
    "vllm/tool_parsers/gamma_tool_parser.py": GAMMA_STUB,
    "vllm/tool_parsers/delta_tool_parser.py": DELTA,
    "vllm/tool_parsers/delta_base.py": DELTA_BASE,
    "vllm/tool_parsers/eps_tool_parser.py": EPS,
    "vllm/parser/__init__.py": "",
    "vllm/parser/gamma.py": GAMMA_MODEL,
    "vllm/parser/beta.py": BETA_MODEL,
    "vllm/parser/delta.py": DELTA_MODEL,
    "vllm/parser/eps.py": EPS_MODEL,
    "vllm/parser/engine/__init__.py": "",
    "vllm/parser/engine/adapters.py": ENGINE,
    "vllm/parser/engine/registered_adapters.py": ADAPTERS,
}
TAG_B = {"vllm/tool_parsers/beta_tool_parser.py": BETA_STUB}
TAG_C = {"vllm/parser/parser_manager.py": MANAGER, "vllm/parser/beta_v2.py": BETA_V2}


@pytest.fixture(scope="module")
def unified_db(tmp_path_factory):
    base = tmp_path_factory.mktemp("unified")
    repo = make_repo(base / "repo", {"v0.24.0": TAG_A, "v0.25.0": TAG_B, "v0.27.0": TAG_C})
    db = base / "index.db"
    build_tags(repo, db, "v0.24.0..")
    return db


def parser(db, version, name, kind="tool"):
    cols = ("impl", "reg_file", "reg_class", "real_class", "real_file", "real_line", "adapter", "alias_of", "stub",
            "reexport", "parent_class", "parent_file", "reason")
    got = rows(db, f"select {', '.join(cols)} from parser_map_v where version = ? and name = ? and kind = ?",
               (version, name, kind))
    assert len(got) == 1, (name, version, got)
    return dict(zip(cols, got[0], strict=True))


def hops(db, version, name, kind="tool"):
    return rows(db, "select hop, class, file, line from parser_hops_v where version = ? and name = ? and kind = ?"
                    " order by step", (version, name, kind))


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
    assert (p["parent_class"], p["parent_file"]) == ("AlphaToolParser", "vllm/tool_parsers/alpha_tool_parser.py")


def test_stub_subclassing_an_adapter_from_the_registry_of_adapters_is_unified(unified_db):
    p = parser(unified_db, "v0.25.0", "beta")
    assert p["impl"] == "unified"
    assert (p["real_class"], p["real_file"]) == ("BetaParser", "vllm/parser/beta.py")
    assert p["adapter"] == "BetaParserToolAdapter"
    assert p["stub"] == 1
    assert hops(unified_db, "v0.25.0", "beta") == [
        ("registered", "BetaToolParser", "vllm/tool_parsers/__init__.py", line_of(INIT, '"beta"')),
        ("class", "BetaToolParser", "vllm/tool_parsers/beta_tool_parser.py", line_of(BETA_STUB, "class Beta")),
        ("adapter", "BetaParserToolAdapter", "vllm/parser/engine/registered_adapters.py",
         line_of(ADAPTERS, "(", 1)),
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
    assert [h[0] for h in hops(unified_db, "v0.24.0", "delta")] == ["registered", "class", "base", "adapter", "real"]
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
    assert ("name-check", "BetaV2Parser", "vllm/parser/parser_manager.py", line_of(MANAGER, "== KAPPA")) in \
        hops(unified_db, "v0.27.0", "beta")
    # a comparison whose branch imports nothing does not make a composition
    assert parser(unified_db, "v0.27.0", "alpha")["impl"] == "standalone"


def test_a_name_changes_kind_across_three_tags(unified_db):
    got = rows(unified_db, "select version, impl, real_file from parser_map_v where name = 'beta' and kind = 'tool'"
                           " order by version_ord")
    assert got == [
        ("v0.24.0", "standalone", "vllm/tool_parsers/beta_tool_parser.py"),
        ("v0.25.0", "unified", "vllm/parser/beta.py"),
        ("v0.27.0", "name-check", "vllm/parser/beta_v2.py"),
    ]


def test_lifecycle_view(unified_db):
    got = rows(unified_db, "select first_version, last_version, became_unified, real_file_changed_in, removed_in"
                           " from lifecycle where name = 'beta' and kind = 'tool'")
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
            assert conn.execute(*lifecycle_of(name, kind)).fetchall() == [r for r in every if r[:2] == (kind, name)]
            assert sorted(conn.execute(*lifecycle_of(name)).fetchall()) == [r for r in every if r[1] == name]
        cols = conn.execute(*lifecycle_of("beta", "tool", columns="last_version, removed_in")).fetchall()
        assert cols == conn.execute("select last_version, removed_in from lifecycle where kind = 'tool'"
                                    " and name = 'beta'").fetchall()
        assert conn.execute(*lifecycle_of("nosuchname")).fetchall() == []
    finally:
        conn.close()


def test_hard_coded_dispatch_era(tmp_path):
    repo = make_repo(tmp_path / "repo", {"v0.6.0": ERAS["v0.6.0"]})
    db = tmp_path / "x.db"
    build_tags(repo, db, "v0.6.0")
    got = rows(db, "select name, impl, form, real_class, real_file from parser_map_v order by name")
    assert got == [
        ("hermes", "dispatch", "cli-choices", "Hermes2ProToolParser",
         "vllm/entrypoints/openai/tool_parsers/hermes_tool_parser.py"),
        ("mistral", "dispatch", "cli-choices", "MistralToolParser",
         "vllm/entrypoints/openai/tool_parsers/mistral_tool_parser.py"),
    ]
    assert [h[0] for h in hops(db, "v0.6.0", "hermes")] == ["registered", "dispatch", "reexport", "real"]
