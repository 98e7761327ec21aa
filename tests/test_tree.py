"""The whole-tree tier (`build --tree`, issue 17): every path, the definitions of every module under vllm/
(light parse outside the parser scope, derived from the full facts inside it), and the identifiers of
every text file; on the fixture repository of test_where."""

from __future__ import annotations

import pytest
from fixtures.helpers import build_tags, make_repo, rows, tpindex
from fixtures.where import HISTORY, TP, parser, registry
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.core.scope import Scope


def test_every_file_of_the_tree_is_recorded(tree_db):  # noqa: F811
    files = {r[0] for r in rows(tree_db, "select file from tree_files_v where version = 'v0.30.0'")}
    assert files == set(HISTORY["v0.30.0"])
    assert rows(
        tree_db,
        "select version, files, modules from version_trees t join versions v on v.id = t.version_id"
        " join (select label as version, id from versions) x on x.id = v.id order by v.ord",
    ) == [("v0.30.0", 12, 8), ("v0.31.0", 13, 9), ("v0.32.0", 14, 10), ("v0.33.0", 14, 10)]
    # the scope's files are exactly what a build without --tree maps
    scope = {r[0] for r in rows(tree_db, "select file from version_files where version = 'v0.30.0'")}
    assert scope == {p for p in files if Scope.named("default").matches(p)}


def test_definitions_of_modules_outside_and_inside_the_parser_scope(tree_db):  # noqa: F811
    got = set(
        rows(
            tree_db,
            "select file, kind, qualname from definitions_v where version = 'v0.30.0'"
            " and file not like 'vllm/handlers.py'",
        )
    )
    assert got == {
        ("vllm/entrypoints/launchers/cli_args.py", "class", "FrontendArgs"),
        ("vllm/entrypoints/launchers/cli_args.py", "function", "make_arg_parser"),
        ("vllm/entrypoints/launchers/cli_args.py", "function", "validate_args"),
        ("vllm/entrypoints/serve/api_utils.py", "function", "setup_env"),
        ("vllm/entrypoints/serve/api_utils.py", "function", "log_args"),
        ("vllm/entrypoints/chat/serving.py", "class", "ChatServing"),
        ("vllm/entrypoints/chat/serving.py", "method", "ChatServing.stream"),
        (f"{TP}/__init__.py", "name", "_TOOL_PARSERS_TO_REGISTER"),
        (f"{TP}/__init__.py", "function", "register_lazy_tool_parsers"),
        (f"{TP}/abstract_tool_parser.py", "class", "ToolParser"),
        (f"{TP}/abstract_tool_parser.py", "method", "ToolParser.extract_tool_calls"),
        (f"{TP}/abstract_tool_parser.py", "class", "ToolParserManager"),
        (f"{TP}/abstract_tool_parser.py", "method", "ToolParserManager.register_lazy_module"),
        (f"{TP}/alpha_tool_parser.py", "class", "AlphaToolParser"),
        (f"{TP}/alpha_tool_parser.py", "method", "AlphaToolParser.extract_tool_calls"),
        (f"{TP}/beta_tool_parser.py", "class", "BetaToolParser"),
        (f"{TP}/beta_tool_parser.py", "method", "BetaToolParser.extract_tool_calls"),
    }
    # a decorated definition starts at its decorator, as in classes_v
    assert rows(
        tree_db,
        "select line, end_line from definitions_v where version = 'v0.30.0'"
        " and qualname = 'ToolParserManager.register_lazy_module'",
    ) == [(7, 9)]


SAMPLE = b"""
import os
A = 1
B: int = 2
(C, D) = f()
E, *F = g()
x.y = 3
if TYPE_CHECKING:
    G = 1
else:
    H = 2
try:
    from fast import I
except ImportError:
    def I():
        pass
@decorate
class K(Base):
    attr = 1
    @property
    def m(self):
        def inner():
            pass
        class Local:
            def lm(self):
                pass
    if os.name == "nt":
        def only_on_windows(self):
            pass
    async def am(self): ...
def top():
    z = 1
"""


@pytest.mark.parametrize(
    "data",
    [
        SAMPLE,
        b"",
        b"def broken(:\n    pass\nclass Ok:\n    def m(self): pass\n",
        b"x = 1\n"
        + b"if x:\n" * 1
        + b"".join(b" " * i + b"if a:\n" for i in range(1, 1200))
        + b" " * 1200
        + b"pass\n",
        "def f():\n    return 'é'\nclass Ü: pass\n".encode(),
    ],
)
def test_light_and_full_extraction_give_the_same_definitions(data):
    from indexer.extract import definitions, parse
    from indexer.extract.ts import parser

    light = definitions.walk(parser().parse(data).root_node)
    assert light == definitions.from_facts(parse(data)["facts"])
    if data is SAMPLE:
        assert [(k, q) for k, q, _, _ in light] == [
            ("name", "A"),
            ("name", "B"),
            ("name", "C"),
            ("name", "D"),
            ("name", "E"),
            ("name", "F"),
            ("name", "G"),
            ("name", "H"),
            ("function", "I"),
            ("class", "K"),
            ("method", "K.m"),
            ("class", "K.m.<locals>.Local"),
            ("method", "K.m.<locals>.Local.lm"),
            ("method", "K.am"),
            ("function", "top"),
        ]


def test_identifiers_are_indexed_case_sensitively():
    from indexer.extract.words import encode_word, encode_words

    words = set(encode_words(b"class ToolParser: x_Y = config.Config  # TODO\n'hermes'").split())
    assert words == {"class", "$tool$parser", "x_$y", "config", "$config", "$t$o$d$o", "hermes"}
    assert encode_word("ToolParser") == '"$tool$parser"'


IDENTIFIER_BYTES = st.lists(
    st.sampled_from(
        [b"a", b"Z", b"_", b"0", b"9", b" ", b".", b"\n", b"\xc3\xa9", b"\x00", b"$", b"ab", b"1x", b"x1"]
    ),
    max_size=40,
).map(b"".join)


@given(IDENTIFIER_BYTES)
@settings(max_examples=300, deadline=None)
def test_identifiers_are_those_an_identifier_pattern_finds(data):
    """Every run of 2+ identifier characters that starts with a letter or _ (as the regular expression
    [A-Za-z_][A-Za-z0-9_]+ finds them in the bytes, non-ASCII bytes separating), once each."""
    import re

    from indexer.extract.words import encode_words

    expected = {w.decode() for w in re.findall(rb"[A-Za-z_][A-Za-z0-9_]+", data)}
    got = encode_words(data).split()
    assert len(got) == len(set(got))
    assert {re.sub(r"\$([a-z])", lambda m: m.group(1).upper(), w) for w in got} == expected


def test_parsed_blobs_derive_their_definitions_without_a_second_parse(where_repo, tmp_path, monkeypatch):  # noqa: F811
    import indexer.build.tree

    seen = []
    real = indexer.build.tree.light

    def spy(data, defs, words):
        seen.append((data, defs))
        return real(data, defs, words)

    monkeypatch.setattr(indexer.build.tree, "light", spy)
    db = tmp_path / "t.db"
    build_tags(where_repo, db, "v0.30.0", scope=Scope.named("default", tree=True), jobs=1)
    parsed_light = {d for d, defs in seen if defs}
    scope_blobs = [
        d.encode() if isinstance(d, str) else d for p, d in HISTORY["v0.30.0"].items() if p.startswith(TP)
    ]
    assert not any(d.lstrip(b"\n") in {x.lstrip(b"\n") for x in parsed_light} for d in scope_blobs)
    assert rows(db, "select count(*) from definitions_v where file like 'vllm/tool_parsers/%'")[0][0] == 10


def test_a_blob_met_first_outside_the_scope_gets_full_facts_in_it(tmp_path):
    """Definitions-only (light) first, then at a parsed path of the scope: fully parsed there."""
    code = parser("DeltaToolParser")
    delta_repo = make_repo(
        tmp_path / "repo",
        {
            "v0.30.0": {f"{TP}/__init__.py": registry({}), "vllm/staging/delta_tool_parser.py": code},
            "v0.31.0": {
                f"{TP}/__init__.py": registry({"delta": ("delta_tool_parser", "DeltaToolParser")}),
                f"{TP}/delta_tool_parser.py": code,
            },
        },
    )
    db = tmp_path / "t.db"
    build_tags(delta_repo, db, "v0.30.0..v0.31.0", scope=Scope.named("default", tree=True), jobs=1)
    assert rows(db, "select impl, real_class, real_file from parser_map_v where name = 'delta'") == [
        ("standalone", "DeltaToolParser", f"{TP}/delta_tool_parser.py")
    ]
    assert rows(db, "select count(*) from classes_v where class = 'DeltaToolParser'") == [(1,)]
    assert rows(
        db, "select version, file from definitions_v where qualname = 'DeltaToolParser' order by 1, 2"
    ) == [
        ("v0.30.0", "vllm/staging/delta_tool_parser.py"),
        ("v0.31.0", "vllm/staging/delta_tool_parser.py"),
        ("v0.31.0", f"{TP}/delta_tool_parser.py"),
    ]


def test_the_tier_changes_no_parser_fact_and_toggles_by_reindexing(where_repo, tree_db, tmp_path):  # noqa: F811
    db = tmp_path / "plain.db"
    build_tags(where_repo, db, "v0.30.0..v0.33.0", jobs=2)
    cols = "version, kind, name, impl, reg_file, real_file, real_class, alias_of"
    assert rows(db, f"select {cols} from parser_map_v order by 1, 2, 3") == rows(
        tree_db, f"select {cols} from parser_map_v order by 1, 2, 3"
    )
    assert rows(db, "select count(*) from tree_files") == [(0,)]
    assert rows(db, "select distinct scope from versions") == [("default",)]
    out = tpindex("build", "--repo", where_repo, "--tags", "v0.32.0..v0.33.0", "--tree", "--db", db).output
    assert "2 of them re-indexed" in out
    assert rows(db, "select label, scope from versions order by ord") == [
        ("v0.30.0", "default"),
        ("v0.31.0", "default"),
        ("v0.32.0", "default+tree"),
        ("v0.33.0", "default+tree"),
    ]
    assert rows(db, "select count(*) from version_trees") == [(2,)]
    tpindex("check", "--db", db)
