"""Code facts (imports, adapters, classes, markers, plants, parse failures) through the views, per version."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest
from fixtures.helpers import build_tags, line_of, make_repo, rows
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.extract import parse
from indexer.extract.locate import absolute, locate

TP = "vllm/tool_parsers"

ABSTRACT = """
class ToolParser:
    def extract_tool_calls(self, text):
        return text

    def extract_tool_calls_streaming(self, delta):
        raise NotImplementedError


class ToolParserManager:
    tool_parsers = {}
"""
PKG_INIT = """
from vllm.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager
"""
HERMES = '''
import json
import re as regex
import vllm.envs
from typing import TYPE_CHECKING

from vllm.tool_parsers import ToolParser
from vllm.tool_parsers.abstract_tool_parser import ToolParserManager

if TYPE_CHECKING:
    from vllm.transformers_utils.tokenizer import AnyTokenizer
if not TYPE_CHECKING:
    from vllm.runtime import Loaded


@ToolParserManager.register_module("hermes")
class Hermes2ProToolParser(ToolParser):
    """A TODO in a docstring is not a marker."""

    supports_required_and_named = False
    structural_tag_model = "hermes_tag"
    bot_token = "<tool_call>"

    def __init__(self, tokenizer):
        self.prev_tool_call_arr = [{"arguments": {}}]  # HACK: prime the stream
        self.other_arr = [{"arguments": {"a": 1}}]
        self.prev_tool_call_arr = [{"arguments": {"a": 1}}]

    def extract_tool_calls_streaming(self, delta):
        # TODO: handle partial JSON
        from vllm.lazy_helpers import helper

        return helper(delta)  # FIXME end of line

    class Buffer:
        size = 4
'''
QWEN_DEEP = '''
from . import sibling
from ..a import b as c
from ...hermes_tool_parser import Hermes2ProToolParser
from .star_source import *


def make():
    from ...abstract_tool_parser import ToolParser as Base

    class Local(Base):
        pass

    return Local


class QwenToolParser(Hermes2ProToolParser):
    def extract_tool_calls_streaming(self, delta):
        """Streaming is not supported."""
        return None


class Quiet(QwenToolParser):
    def extract_tool_calls_streaming(self, delta):
        pass


class Helper:
    pass


class UsesHelper(Helper, c.Mixin, metaclass=c.Meta):
    pass
'''
PARSER = """
from typing import Generic, TypeVar

from vllm.parser.abstract_parser import Parser

T = TypeVar("T")


class Qwen3Parser(Parser, Generic[T]):
    def parse(self, text):
        return text
"""
ADAPTERS = """
from vllm.parser import glm as glm_mod
from vllm.parser.engine.make import make_adapters
from vllm.parser.qwen3 import Qwen3Parser

(Qwen3ParserReasoningAdapter, Qwen3ParserToolAdapter) = make_adapters(Qwen3Parser)
GlmParserReasoningAdapter, GlmParserToolAdapter = make_adapters(glm_mod.GlmParser)
OnlyToolAdapter = make_adapters(Qwen3Parser)


def not_module_level():
    (InsideReasoning, InsideTool) = make_adapters(Qwen3Parser)
"""
STUB = """
from vllm.parser.engine.registered_adapters import Qwen3ParserToolAdapter as _Adapter
from vllm.tool_parsers.abstract_tool_parser import ToolParserManager


@ToolParserManager.register_module("qwen3")
class Qwen3ToolParser(_Adapter):
    supports_required_and_named = False
"""
REASONING_STUB = """
from vllm.parser.qwen3 import Qwen3ParserReasoningAdapter, Qwen3ParserToolAdapter
from vllm.parser.helpers import ToolAdapterFactory


class Qwen3ReasoningParser(Qwen3ParserReasoningAdapter):
    pass
"""

V1 = {
    f"{TP}/__init__.py": PKG_INIT,
    f"{TP}/abstract_tool_parser.py": ABSTRACT,
    f"{TP}/hermes_tool_parser.py": HERMES,
    f"{TP}/models/deep/qwen_tool_parser.py": QWEN_DEEP,
    f"{TP}/qwen3_tool_parser.py": STUB,
    "vllm/parser/qwen3.py": PARSER,
    "vllm/parser/engine/registered_adapters.py": ADAPTERS,
    "vllm/reasoning/qwen3_reasoning_parser.py": REASONING_STUB,
}
HERMES_V2 = (
    HERMES.replace('    bot_token = "<tool_call>"\n', '    bot_token = "<tool_call>"\n    eot_token = None\n')
    .replace('[{"arguments": {}}]  # HACK: prime the stream', "[]")
    .replace("# TODO: handle partial JSON", "# XXX: partial JSON handled upstream")
)
V2 = {f"{TP}/hermes_tool_parser.py": HERMES_V2, f"{TP}/qwen3_tool_parser.py": None}


@pytest.fixture(scope="module")
def facts(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("facts")
    repo = make_repo(tmp / "repo", {"v1.0.0": V1, "v1.1.0": V2})
    db = tmp / "facts.db"
    build_tags(repo, db, "v1.0.0..")
    return db


def q(db, sql, params=()):
    return rows(db, sql, params)


# -- imports ---------------------------------------------------------------------------------------
def test_imports_resolve_relative_levels_from_the_files_path(facts):
    f = f"{TP}/models/deep/qwen_tool_parser.py"
    got = q(
        facts,
        "select line, module, name, alias, level, star, type_checking, in_function from imports_v"
        " where version = 'v1.0.0' and file = ? order by line, name",
        [f],
    )
    assert got == [
        (1, "vllm.tool_parsers.models.deep", "sibling", None, 1, 0, 0, None),
        (2, "vllm.tool_parsers.models.a", "b", "c", 2, 0, 0, None),
        (3, "vllm.tool_parsers.hermes_tool_parser", "Hermes2ProToolParser", None, 3, 0, 0, None),
        (4, "vllm.tool_parsers.models.deep.star_source", "*", None, 1, 1, 0, None),
        (8, "vllm.tool_parsers.abstract_tool_parser", "ToolParser", "Base", 3, 0, 0, "make"),
    ]


def test_imports_aliases_type_checking_and_function_level(facts):
    got = q(
        facts,
        "select line, module, name, alias, type_checking, in_function, in_class from imports_v"
        " where version = 'v1.0.0' and file = ? order by line, name",
        [f"{TP}/hermes_tool_parser.py"],
    )
    lazy = line_of(HERMES, "lazy_helpers")
    assert got == [
        (1, "json", None, None, 0, None, None),
        (2, "re", None, "regex", 0, None, None),
        (3, "vllm.envs", None, None, 0, None, None),
        (4, "typing", "TYPE_CHECKING", None, 0, None, None),
        (6, "vllm.tool_parsers", "ToolParser", None, 0, None, None),
        (7, "vllm.tool_parsers.abstract_tool_parser", "ToolParserManager", None, 0, None, None),
        (10, "vllm.transformers_utils.tokenizer", "AnyTokenizer", None, 1, None, None),
        (12, "vllm.runtime", "Loaded", None, 0, None, None),  # `if not TYPE_CHECKING:` runs at runtime
        (
            lazy,
            "vllm.lazy_helpers",
            "helper",
            None,
            0,
            "Hermes2ProToolParser.extract_tool_calls_streaming",
            "Hermes2ProToolParser",
        ),
    ]


@pytest.mark.parametrize(
    "path, module, level, expected",
    [
        ("vllm/tool_parsers/__init__.py", "x", 1, "vllm.tool_parsers.x"),
        ("vllm/tool_parsers/__init__.py", "", 2, "vllm"),
        ("vllm/tool_parsers/a.py", "", 1, "vllm.tool_parsers"),
        ("vllm/tool_parsers/a.py", "b.c", 2, "vllm.b.c"),
        ("vllm/a/b/c/d.py", "x.y", 3, "vllm.a.x.y"),
        ("vllm/a/b/c/__init__.py", "x", 3, "vllm.a.x"),
        ("vllm/a.py", "os", 0, "os"),
    ],
)
def test_relative_imports_from_modules_and_packages(path, module, level, expected):
    assert absolute(module, level, path) == expected


def test_same_blob_at_two_paths_locates_differently():
    raw = parse(b"from .helpers import Base\n\n\nclass P(Base):\n    pass\n")["facts"]
    a = locate(raw, "vllm/tool_parsers/p.py")
    b = locate(raw, "vllm/entrypoints/openai/tool_parsers/p.py")
    assert a["bases"][0]["resolved"] == "vllm.tool_parsers.helpers.Base"
    assert b["bases"][0]["resolved"] == "vllm.entrypoints.openai.tool_parsers.helpers.Base"
    assert a["classes"][0]["module"] == "vllm.tool_parsers.p"


def test_adapter_imports_view(facts):
    got = q(
        facts,
        "select version, file, importer, module, name, alias, role from adapter_imports"
        " order by version, file, name",
    )
    stub = (
        f"{TP}/qwen3_tool_parser.py",
        "vllm.tool_parsers.qwen3_tool_parser",
        "vllm.parser.engine.registered_adapters",
        "Qwen3ParserToolAdapter",
        "_Adapter",
        "tool",
    )
    reasoning = (
        "vllm/reasoning/qwen3_reasoning_parser.py",
        "vllm.reasoning.qwen3_reasoning_parser",
        "vllm.parser.qwen3",
    )
    assert got == [
        ("v1.0.0", *reasoning, "Qwen3ParserReasoningAdapter", None, "reasoning"),
        ("v1.0.0", *reasoning, "Qwen3ParserToolAdapter", None, "tool"),
        ("v1.0.0", *stub),
        ("v1.1.0", *reasoning, "Qwen3ParserReasoningAdapter", None, "reasoning"),
        ("v1.1.0", *reasoning, "Qwen3ParserToolAdapter", None, "tool"),
    ]


# -- adapter bindings ------------------------------------------------------------------------------------
def test_adapter_bindings_parenthesised_bare_and_single(facts):
    got = q(
        facts,
        "select file, adapter, pos, parser_written, parser, line from adapter_bindings_v"
        " where version = 'v1.0.0' order by line, pos",
    )
    f = "vllm/parser/engine/registered_adapters.py"
    first, second, third = (
        line_of(ADAPTERS, s)
        for s in ("(Qwen3ParserReasoningAdapter", "GlmParserReasoning", "OnlyToolAdapter")
    )
    assert got == [
        (f, "Qwen3ParserReasoningAdapter", 0, "Qwen3Parser", "vllm.parser.qwen3.Qwen3Parser", first),
        (f, "Qwen3ParserToolAdapter", 1, "Qwen3Parser", "vllm.parser.qwen3.Qwen3Parser", first),
        (f, "GlmParserReasoningAdapter", 0, "glm_mod.GlmParser", "vllm.parser.glm.GlmParser", second),
        (f, "GlmParserToolAdapter", 1, "glm_mod.GlmParser", "vllm.parser.glm.GlmParser", second),
        (f, "OnlyToolAdapter", 0, "Qwen3Parser", "vllm.parser.qwen3.Qwen3Parser", third),
    ]


def test_adapter_binding_with_keyword_parser():
    raw = parse(
        b"from vllm.parser.x import XParser\n(XParserReasoningAdapter, XParserToolAdapter) ="
        b" make_adapters(parser_cls=XParser)\n"
    )["facts"]
    got = locate(raw, "vllm/parser/engine/registered_adapters.py")["adapter_bindings"]
    assert [(b["adapter"], b["parser_written"], b["parser"]) for b in got] == [
        ("XParserReasoningAdapter", "XParser", "vllm.parser.x.XParser"),
        ("XParserToolAdapter", "XParser", "vllm.parser.x.XParser"),
    ]


# -- classes -------------------------------------------------------------------------------------------------
def test_classes_qualnames_spans_decorators(facts):
    got = q(
        facts,
        "select file, class, line, end_line, decorators, nested_in, no_methods, streaming from classes_v"
        " where version = 'v1.0.0' and file like ? and file != ? order by file, line",
        [f"{TP}/%parser.py", f"{TP}/abstract_tool_parser.py"],
    )
    h, d, s = (
        f"{TP}/hermes_tool_parser.py",
        f"{TP}/models/deep/qwen_tool_parser.py",
        f"{TP}/qwen3_tool_parser.py",
    )
    hermes_end = len(HERMES.strip("\n").splitlines())
    assert got == [
        (
            h,
            "Hermes2ProToolParser",
            line_of(HERMES, "@ToolParserManager"),
            hermes_end,
            json.dumps(['ToolParserManager.register_module("hermes")']),
            "module",
            0,
            "code",
        ),
        (
            h,
            "Hermes2ProToolParser.Buffer",
            line_of(HERMES, "class Buffer"),
            hermes_end,
            "[]",
            "class",
            1,
            None,
        ),
        (
            d,
            "make.<locals>.Local",
            line_of(QWEN_DEEP, "class Local"),
            line_of(QWEN_DEEP, "class Local") + 1,
            "[]",
            "function",
            1,
            None,
        ),
        (
            d,
            "QwenToolParser",
            line_of(QWEN_DEEP, "class QwenToolParser"),
            line_of(QWEN_DEEP, "return None"),
            "[]",
            "module",
            0,
            "returns-none",
        ),
        (
            d,
            "Quiet",
            line_of(QWEN_DEEP, "class Quiet"),
            line_of(QWEN_DEEP, "pass", 2),
            "[]",
            "module",
            0,
            "returns-none",
        ),
        (
            d,
            "Helper",
            line_of(QWEN_DEEP, "class Helper"),
            line_of(QWEN_DEEP, "class Helper") + 1,
            "[]",
            "module",
            1,
            None,
        ),
        (
            d,
            "UsesHelper",
            line_of(QWEN_DEEP, "class UsesHelper"),
            line_of(QWEN_DEEP, "class UsesHelper") + 1,
            "[]",
            "module",
            1,
            None,
        ),
        (
            s,
            "Qwen3ToolParser",
            line_of(STUB, "@ToolParserManager"),
            line_of(STUB, "supports_required"),
            json.dumps(['ToolParserManager.register_module("qwen3")']),
            "module",
            1,
            None,
        ),
    ]
    streaming = q(
        facts, "select class, streaming from classes_v where version = 'v1.0.0' and class = 'ToolParser'"
    )
    assert streaming == [("ToolParser", "raises-not-implemented")]


def test_bases_resolved_through_imports_and_keywords_apart(facts):
    got = q(
        facts,
        "select c.qualname, b.pos, b.written, b.resolved, b.base_module, b.keyword"
        " from bases b join classes c on c.unit_id = b.unit_id and c.qualname = b.class"
        " join version_files vf on vf.unit_id = b.unit_id"
        " where vf.version = 'v1.0.0' and vf.file in (?, ?) order by vf.file, c.line, b.pos is null, b.pos",
        [f"{TP}/models/deep/qwen_tool_parser.py", "vllm/parser/qwen3.py"],
    )
    deep = "vllm.tool_parsers.models.deep.qwen_tool_parser"
    assert got == [
        (
            "Qwen3Parser",
            0,
            "Parser",
            "vllm.parser.abstract_parser.Parser",
            "vllm.parser.abstract_parser",
            None,
        ),
        ("Qwen3Parser", 1, "Generic[T]", "typing.Generic", "typing", None),
        (
            "make.<locals>.Local",
            0,
            "Base",
            "vllm.tool_parsers.abstract_tool_parser.ToolParser",
            "vllm.tool_parsers.abstract_tool_parser",
            None,
        ),
        (
            "QwenToolParser",
            0,
            "Hermes2ProToolParser",
            "vllm.tool_parsers.hermes_tool_parser.Hermes2ProToolParser",
            "vllm.tool_parsers.hermes_tool_parser",
            None,
        ),
        ("Quiet", 0, "QwenToolParser", f"{deep}.QwenToolParser", deep, None),
        ("UsesHelper", 0, "Helper", f"{deep}.Helper", deep, None),
        (
            "UsesHelper",
            1,
            "c.Mixin",
            "vllm.tool_parsers.models.a.b.Mixin",
            "vllm.tool_parsers.models.a.b",
            None,
        ),
        (
            "UsesHelper",
            None,
            "c.Meta",
            "vllm.tool_parsers.models.a.b.Meta",
            "vllm.tool_parsers.models.a.b",
            "metaclass",
        ),
    ]


def test_class_hierarchy_view_fills_base_file_within_the_version(facts):
    got = q(
        facts,
        "select class, base_written, base, base_file from class_hierarchy where version = 'v1.0.0'"
        " and file in (?, ?, ?) order by file, line, pos",
        [
            f"{TP}/hermes_tool_parser.py",
            f"{TP}/qwen3_tool_parser.py",
            f"{TP}/models/deep/qwen_tool_parser.py",
        ],
    )
    assert got == [
        ("Hermes2ProToolParser", "ToolParser", "vllm.tool_parsers.ToolParser", f"{TP}/__init__.py"),
        (
            "make.<locals>.Local",
            "Base",
            "vllm.tool_parsers.abstract_tool_parser.ToolParser",
            f"{TP}/abstract_tool_parser.py",
        ),
        (
            "QwenToolParser",
            "Hermes2ProToolParser",
            "vllm.tool_parsers.hermes_tool_parser.Hermes2ProToolParser",
            f"{TP}/hermes_tool_parser.py",
        ),
        (
            "Quiet",
            "QwenToolParser",
            "vllm.tool_parsers.models.deep.qwen_tool_parser.QwenToolParser",
            f"{TP}/models/deep/qwen_tool_parser.py",
        ),
        (
            "UsesHelper",
            "Helper",
            "vllm.tool_parsers.models.deep.qwen_tool_parser.Helper",
            f"{TP}/models/deep/qwen_tool_parser.py",
        ),
        ("UsesHelper", "c.Mixin", "vllm.tool_parsers.models.a.b.Mixin", None),  # metaclass= is not a base
        (
            "Qwen3ToolParser",
            "_Adapter",
            "vllm.parser.engine.registered_adapters.Qwen3ParserToolAdapter",
            "vllm/parser/engine/registered_adapters.py",
        ),
    ]


def test_methods_and_class_attributes(facts):
    methods = q(
        facts,
        "select class, method, line, body from methods_v where version = 'v1.0.0' and file = ? order by line",
        [f"{TP}/hermes_tool_parser.py"],
    )
    assert methods == [
        ("Hermes2ProToolParser", "__init__", line_of(HERMES, "def __init__"), "code"),
        (
            "Hermes2ProToolParser",
            "extract_tool_calls_streaming",
            line_of(HERMES, "def extract_tool_calls_streaming"),
            "code",
        ),
    ]
    attrs = q(
        facts,
        "select class, attribute, value, line from class_attrs_v where version = 'v1.0.0'"
        " and file like ? and value_kind = 'literal' order by file, line",
        [f"{TP}/%"],
    )
    assert attrs == [
        ("ToolParserManager", "tool_parsers", "{}", line_of(ABSTRACT, "tool_parsers =")),
        (
            "Hermes2ProToolParser",
            "supports_required_and_named",
            "False",
            line_of(HERMES, "supports_required"),
        ),
        (
            "Hermes2ProToolParser",
            "structural_tag_model",
            '"hermes_tag"',
            line_of(HERMES, "structural_tag_model"),
        ),
        ("Hermes2ProToolParser", "bot_token", '"<tool_call>"', line_of(HERMES, "bot_token")),
        ("Hermes2ProToolParser.Buffer", "size", "4", line_of(HERMES, "size = 4")),
        ("Qwen3ToolParser", "supports_required_and_named", "False", line_of(STUB, "supports_required")),
    ]
    who = q(
        facts,
        "select version, file, class from class_attrs_v where attribute = 'supports_required_and_named'"
        " and value = 'False' order by version, file",
    )
    assert who == [
        ("v1.0.0", f"{TP}/hermes_tool_parser.py", "Hermes2ProToolParser"),
        ("v1.0.0", f"{TP}/qwen3_tool_parser.py", "Qwen3ToolParser"),
        ("v1.1.0", f"{TP}/hermes_tool_parser.py", "Hermes2ProToolParser"),
    ]


def test_streaming_overrides_query(facts):
    """Which classes override the streaming method, and which only stub it out."""
    got = q(
        facts,
        "select class, streaming from classes_v where version = 'v1.0.0' and streaming is not null"
        " order by class",
    )
    assert got == [
        ("Hermes2ProToolParser", "code"),
        ("Quiet", "returns-none"),
        ("QwenToolParser", "returns-none"),
        ("ToolParser", "raises-not-implemented"),
    ]


# -- class_tree.sql ------------------------------------------------------------------------------------------
def class_tree(db, version, cls):
    from indexer.answers.versions import sql_resolver
    from indexer.extract.ts import queries_dir

    sql = (queries_dir() / "canned" / "class_tree.sql").read_text()
    conn = sqlite3.connect(db)  # the canned questions read versions through tpindex_version(), as served
    sql_resolver(conn)
    try:
        got = [tuple(r) for r in conn.execute(sql, {"version": version, "class": cls})]
    finally:
        conn.close()
    assert len({r[6] for r in got}) <= 1  # the last column: the version answered (for links)
    return [r[:6] for r in got]


def test_class_tree_ancestors_and_descendants(facts):
    hermes = "vllm.tool_parsers.hermes_tool_parser"
    deep = "vllm.tool_parsers.models.deep.qwen_tool_parser"
    expected = [
        (
            "ancestor",
            1,
            "ToolParser",
            "vllm.tool_parsers.abstract_tool_parser",
            f"{TP}/abstract_tool_parser.py",
            1,
        ),
        (
            "self",
            0,
            "Hermes2ProToolParser",
            hermes,
            f"{TP}/hermes_tool_parser.py",
            line_of(HERMES, "@ToolParserManager"),
        ),
        (
            "descendant",
            1,
            "QwenToolParser",
            deep,
            f"{TP}/models/deep/qwen_tool_parser.py",
            line_of(QWEN_DEEP, "class QwenToolParser"),
        ),
        (
            "descendant",
            2,
            "Quiet",
            deep,
            f"{TP}/models/deep/qwen_tool_parser.py",
            line_of(QWEN_DEEP, "class Quiet"),
        ),
    ]
    assert class_tree(facts, "v1.0.0", "Hermes2ProToolParser") == expected
    assert class_tree(facts, "v1.0.0", f"{hermes}.Hermes2ProToolParser") == expected


def test_class_tree_of_the_base_lists_every_subclass(facts):
    got = class_tree(facts, "v1.0.0", "vllm.tool_parsers.abstract_tool_parser.ToolParser")
    assert [(r[0], r[1], r[2]) for r in got] == [
        ("self", 0, "ToolParser"),
        ("descendant", 1, "Hermes2ProToolParser"),
        ("descendant", 1, "make.<locals>.Local"),
        ("descendant", 2, "QwenToolParser"),
        ("descendant", 3, "Quiet"),
    ]


def test_class_tree_lists_bases_outside_the_version_and_follows_adapters(facts):
    got = class_tree(facts, "v1.0.0", "Qwen3Parser")
    assert [(r[0], r[1], r[2], r[4]) for r in got] == [
        ("ancestor", 1, "typing.Generic", None),
        ("ancestor", 1, "vllm.parser.abstract_parser.Parser", None),
        ("self", 0, "Qwen3Parser", "vllm/parser/qwen3.py"),
        ("descendant", 1, "OnlyToolAdapter", "vllm/parser/engine/registered_adapters.py"),
        ("descendant", 1, "Qwen3ParserReasoningAdapter", "vllm/parser/engine/registered_adapters.py"),
        ("descendant", 1, "Qwen3ParserToolAdapter", "vllm/parser/engine/registered_adapters.py"),
        ("descendant", 2, "Qwen3ToolParser", f"{TP}/qwen3_tool_parser.py"),
    ]
    assert class_tree(facts, "1.0.0", " Qwen3Parser ") == got  # version without v, spaces trimmed
    assert [r[2] for r in class_tree(facts, "", "Qwen3ToolParser")] == []  # blank: the newest, v1.1.0
    adapters = "vllm/parser/engine/registered_adapters.py"
    assert [r[:3] + r[4:] for r in class_tree(facts, "v1.0.0", "Qwen3ToolParser")] == [
        ("ancestor", 3, "typing.Generic", None, None),
        ("ancestor", 3, "vllm.parser.abstract_parser.Parser", None, None),
        ("ancestor", 2, "Qwen3Parser", "vllm/parser/qwen3.py", line_of(PARSER, "class Qwen3Parser")),
        (
            "ancestor",
            1,
            "Qwen3ParserToolAdapter",
            adapters,
            line_of(ADAPTERS, "(Qwen3ParserReasoningAdapter"),
        ),
        ("self", 0, "Qwen3ToolParser", f"{TP}/qwen3_tool_parser.py", line_of(STUB, "@ToolParserManager")),
    ]
    assert class_tree(facts, "v1.0.0", "vllm.parser.qwen3.Qwen3Parser") == got
    assert class_tree(facts, "v1.0.0", "NoSuchClass") == []
    assert class_tree(facts, "v9.9.9", "Qwen3Parser") == []


# -- markers -----------------------------------------------------------------------------------------------
def test_markers_in_comments_only_with_enclosing_scope(facts):
    got = q(
        facts,
        "select kind, line, text, class, function from markers_v where version = 'v1.0.0'"
        " and file = ? order by line",
        [f"{TP}/hermes_tool_parser.py"],
    )
    fn = "Hermes2ProToolParser.extract_tool_calls_streaming"
    assert got == [
        (
            "HACK",
            line_of(HERMES, "# HACK"),
            "HACK: prime the stream",
            "Hermes2ProToolParser",
            "Hermes2ProToolParser.__init__",
        ),
        ("TODO", line_of(HERMES, "# TODO"), "TODO: handle partial JSON", "Hermes2ProToolParser", fn),
        ("FIXME", line_of(HERMES, "# FIXME"), "FIXME end of line", "Hermes2ProToolParser", fn),
    ]


def test_marker_words_not_parts_of_words():
    src = (
        b"# TODOS are not markers, nor MYHACK, HACK_X, XXXL, todo\n"
        b"# (XXX) is one\n"
        b"s = '# TODO in a string'\n"
        b"x = 1  #FIXME: no space\n"
    )
    got = [(m["kind"], m["line"]) for m in parse(src)["facts"]["markers"]]
    assert got == [("XXX", 2), ("FIXME", 4)]


def test_markers_fts_search_joins_back_to_versions(facts):
    got = q(
        facts,
        "select m.version, m.file, m.kind, m.line from markers_fts"
        " join markers_v m on m.marker_id = markers_fts.rowid"
        " where markers_fts match 'HACK' order by m.version",
    )
    assert got == [("v1.0.0", f"{TP}/hermes_tool_parser.py", "HACK", line_of(HERMES, "# HACK"))]
    got = q(
        facts,
        "select m.version, m.kind from markers_fts join markers_v m on m.marker_id = markers_fts.rowid"
        " where markers_fts match 'partial' order by m.version",
    )
    assert got == [("v1.0.0", "TODO"), ("v1.1.0", "XXX")]


# -- plants ----------------------------------------------------------------------------------------------------
def test_plant_empty_arguments_matched_and_others_not(facts):
    got = q(facts, "select version, file, plant, line, text, class, function from plants_v order by version")
    assert got == [
        (
            "v1.0.0",
            f"{TP}/hermes_tool_parser.py",
            "prev_tool_call_arr_empty_arguments",
            line_of(HERMES, "# HACK"),
            'self.prev_tool_call_arr = [{"arguments": {}}]',
            "Hermes2ProToolParser",
            "Hermes2ProToolParser.__init__",
        )
    ]


@pytest.mark.parametrize(
    "stmt, hit",
    [
        ('self.prev_tool_call_arr = [{"arguments": {}}]', True),
        ("self.prev_tool_call_arr = [{'arguments': { }}]", True),
        ('self.prev_tool_call_arr: list = [{"arguments": {}}]', True),
        ('prev_tool_call_arr = [{"arguments": {}}]', True),
        ('self.prev_tool_call_arr = [{"arguments": {"a": 1}}]', False),
        ('self.prev_tool_call_arr = [{"arguments": {}}, {"arguments": {}}]', False),
        ('self.prev_tool_call_arr = [{"arguments": {}, "name": "f"}]', False),
        ("self.prev_tool_call_arr = []", False),
        ('self.my_prev_tool_call_arr = [{"arguments": {}}]', False),
        ('self.other = [{"arguments": {}}]', False),
    ],
)
def test_plant_pattern(stmt, hit):
    found = parse(f"def f(self):\n    {stmt}\n".encode())["facts"]["plants"]
    assert bool(found) is hit


def test_a_new_plant_file_is_picked_up_without_code(tmp_path, monkeypatch):
    import indexer.extract as extract
    from indexer.extract import plants, ts

    root = tmp_path / "queries"
    shutil.copytree(ts.queries_dir(), root)
    (root / "plants" / "tool_call_arr_reset.scm").write_text(
        '((assignment left: (_) @t right: (list) @v) @plant (#match? @t "streamed_args_for_tool$") (#eq? @v "[]"))\n'
    )
    for fn in (ts.query, ts.combined, plants.plant_names, extract.extractor_id):
        fn.cache_clear()
    for module in (ts, plants, extract):
        monkeypatch.setattr(module, "queries_dir", lambda: root)
    try:
        got = parse(b"class P:\n    def reset(self):\n        self.streamed_args_for_tool = []\n")
        assert [(p["plant"], p["line"], p["function"]) for p in got["facts"]["plants"]] == [
            ("tool_call_arr_reset", 3, "P.reset")
        ]
    finally:
        monkeypatch.undo()
        for fn in (ts.query, ts.combined, plants.plant_names, extract.extractor_id):
            fn.cache_clear()


# -- parse failures ---------------------------------------------------------------------------------------------
BROKEN = """
from vllm.tool_parsers.abstract_tool_parser import ToolParser


class Before(ToolParser):
    # TODO: still found
    flag = True


def broken(:
    pass


class After(ToolParser):
    def extract_tool_calls_streaming(self, delta):
        return None
"""


def test_broken_files_yield_what_they_can(tmp_path):
    files = {
        f"{TP}/broken_tool_parser.py": BROKEN,
        f"{TP}/nul_tool_parser.py": b"class NulA:\n    pass\n\x00\x00\nclass NulB(NulA):\n    pass\n",
        f"{TP}/latin1_tool_parser.py": b"# caf\xe9 TODO: latin-1\nclass Latin:\n    name = '\xff'\n",
        f"{TP}/empty_tool_parser.py": b"",
        f"{TP}/deep_tool_parser.py": b"x = " + b"(" * 3000 + b"1" + b")" * 3000 + b"\n",
    }
    repo = make_repo(tmp_path / "repo", {"v1.0.0": files})
    db = tmp_path / "db"
    build_tags(repo, db, "v1.0.0")
    status = dict(
        (r[0], r[1:])
        for r in q(db, "select file, parse_status, error_count, first_error_line from parse_errors")
    )
    assert status[f"{TP}/broken_tool_parser.py"] == ("syntax-errors", 1, line_of(BROKEN, "def broken"))
    assert status[f"{TP}/nul_tool_parser.py"][0] == "nul-bytes"
    assert status[f"{TP}/latin1_tool_parser.py"][0] == "not-utf8"
    assert set(status) == {
        f"{TP}/broken_tool_parser.py",
        f"{TP}/nul_tool_parser.py",
        f"{TP}/latin1_tool_parser.py",
    }
    classes = q(db, "select file, class from classes_v order by file, line")
    assert classes == [
        (f"{TP}/broken_tool_parser.py", "Before"),
        (f"{TP}/broken_tool_parser.py", "After"),
        (f"{TP}/latin1_tool_parser.py", "Latin"),
        (f"{TP}/nul_tool_parser.py", "NulA"),
        (f"{TP}/nul_tool_parser.py", "NulB"),
    ]
    assert q(db, "select file, kind, line from markers_v order by file") == [
        (f"{TP}/broken_tool_parser.py", "TODO", line_of(BROKEN, "# TODO")),
        (f"{TP}/latin1_tool_parser.py", "TODO", 1),
    ]
    assert q(db, "select class, streaming from classes_v where class = 'After'") == [
        ("After", "returns-none")
    ]
    assert q(db, "select status from versions") == [("complete",)]


@pytest.mark.parametrize(
    "data",
    [
        b"\xff\xfe\x00\x00",
        b"\x00" * 64,
        b"class",
        b"def f(:\n" * 50,
        b"\xef\xbb\xbfclass A:\n    pass\n",
        bytes(range(256)) * 4,
        b"'''" * 7,
    ],
)
def test_parse_never_raises(data):
    out = parse(data)
    assert out["status"] in ("ok", "syntax-errors", "nul-bytes", "not-utf8")
    assert set(out["facts"]) >= {"imports", "classes", "markers", "plants", "registrations"}


@settings(max_examples=150, deadline=None)
@given(
    st.binary(max_size=400)
    | st.text(alphabet="classdefimport()[]{}:=.,'\"#\\\n\t xTODO@", max_size=300).map(
        lambda t: t.encode("utf-8", "surrogatepass")
    )
)
def test_parse_and_locate_never_raise_on_any_bytes(data):
    out = parse(data)
    assert out["status"] != "extract-failed", out["error"]
    locate(out["facts"], "vllm/tool_parsers/x/y.py")


# -- versions ----------------------------------------------------------------------------------------------
def test_views_answer_for_the_right_version(facts):
    attrs = "select attribute from class_attrs_v where version = ? and class = 'Hermes2ProToolParser' order by line"
    assert [r[0] for r in q(facts, attrs, ["v1.0.0"])] == [
        "supports_required_and_named",
        "structural_tag_model",
        "bot_token",
    ]
    assert [r[0] for r in q(facts, attrs, ["v1.1.0"])] == [
        "supports_required_and_named",
        "structural_tag_model",
        "bot_token",
        "eot_token",
    ]
    assert q(
        facts,
        "select version, kind from markers_v where file = ? order by version, line",
        [f"{TP}/hermes_tool_parser.py"],
    ) == [("v1.0.0", "HACK"), ("v1.0.0", "TODO"), ("v1.0.0", "FIXME"), ("v1.1.0", "XXX"), ("v1.1.0", "FIXME")]
    assert q(facts, "select count(*) from plants_v where version = 'v1.1.0'") == [(0,)]
    assert q(facts, "select version from classes_v where class = 'Qwen3ToolParser'") == [("v1.0.0",)]
    # unchanged files are the same unit in both versions, so their facts are stored once
    assert q(
        facts,
        "select count(distinct unit_id), count(*) from version_files where file = ?",
        [f"{TP}/abstract_tool_parser.py"],
    ) == [(1, 2)]
    assert q(
        facts, "select count(*) from classes c join units u on u.id = c.unit_id where c.qualname = 'Quiet'"
    ) == [(1,)]
