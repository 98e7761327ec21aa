"""Attributes as Python computes them at class creation (issue 23, item 3): the class body first, then
`__init_subclass__` of the bases (on the new class, when its guard holds), then class decorators, then
assignments after the class body. A guard may read the new class's attributes (`cls.grammar_tag is not
None`) and environment flags, whose defaults come from the tree's own `vllm/envs.py` (the declared
`if TYPE_CHECKING:` defaults and the `os.getenv(NAME, default)` the lazy table reads). The value shown is the
one of vLLM's default configuration, with the condition that changes it.

The fixture imitates the lazy-registry era (v0.28.0 on) with hand-written classes whose attribute and flag
names are not vLLM's, so nothing can be keyed on names.
"""

from __future__ import annotations

import json

import pytest
from fixtures.eras import abstract_module, lazy_registry, tool_names
from fixtures.helpers import build_tags, line_of, make_repo, rows, tpindex

NAMES = ("tagged", "plain", "insists", "heir", "untagged", "decorated", "after", "factory")

ENVS = """
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    VLLM_STRICT_CALLS: bool = True
    VLLM_LOOSE_MODE: bool = False
    VLLM_DECLARED_ONLY: bool = True

environment_variables = {
    "VLLM_STRICT_CALLS": lambda: os.getenv("VLLM_STRICT_CALLS", "True").lower() in ("true", "1"),
    "VLLM_LOOSE_MODE": lambda: bool(int(os.getenv("VLLM_LOOSE_MODE", "0"))),
}


def __getattr__(name):
    return environment_variables[name]()
"""

ABSTRACT = abstract_module(
    """
from typing import Any

import vllm.envs as envs


class ToolParser:
    forced_choice_ok: bool = True
    grammar_tag: str | None = None
    lenient = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if (
            cls.grammar_tag is not None
            and envs.VLLM_STRICT_CALLS
        ):
            cls.forced_choice_ok = False
        if envs.VLLM_LOOSE_MODE:
            cls.lenient = True

    def extract_tool_calls(self, text, request):
        raise NotImplementedError
""",
    "ToolParserManager",
)


def parser(name: str, body: str, base: str = "ToolParser") -> str:
    """A registered tool parser with its own extraction method over `base` and `body` as its attributes."""
    module = "abstract" if base == "ToolParser" else base.removesuffix("ToolParser").lower()
    return f"""
from vllm.tool_parsers.{module}_tool_parser import {base}


class {name.capitalize()}ToolParser({base}):
{body}
    def extract_tool_calls(self, text, request):
        return text.split("<call>")
"""


TAGGED = parser("tagged", '    grammar_tag = "tagged_v1"\n')
PLAIN = parser("plain", "    pass\n")
INSISTS = parser("insists", '    grammar_tag = "insists"\n    forced_choice_ok = True\n')
HEIR = parser("heir", "    pass\n", base="TaggedToolParser")
UNTAGGED = parser("untagged", "    grammar_tag = None\n", base="TaggedToolParser")

UTILS = """
def no_forced_choice(cls):
    cls.forced_choice_ok = False
    return cls


def with_choice(value):
    def apply(klass):
        setattr(klass, "forced_choice_ok", value)
        return klass

    return apply
"""

DECORATED = """
from vllm.tool_parsers.abstract_tool_parser import ToolParser
from vllm.tool_parsers.utils import no_forced_choice


@no_forced_choice
class DecoratedToolParser(ToolParser):
    def extract_tool_calls(self, text, request):
        return []
"""

FACTORY = """
from vllm.tool_parsers.abstract_tool_parser import ToolParser
from vllm.tool_parsers import utils


@utils.with_choice(False)
class FactoryToolParser(ToolParser):
    def extract_tool_calls(self, text, request):
        return []
"""

AFTER = """
from vllm.tool_parsers.abstract_tool_parser import ToolParser


class AfterToolParser(ToolParser):
    def extract_tool_calls(self, text, request):
        return []


AfterToolParser.forced_choice_ok = False
"""

TREE = {
    "vllm/envs.py": ENVS,
    "vllm/tool_parsers/__init__.py": lazy_registry("tool", tool_names(*NAMES)),
    "vllm/tool_parsers/abstract_tool_parser.py": ABSTRACT,
    "vllm/tool_parsers/utils.py": UTILS,
    "vllm/tool_parsers/tagged_tool_parser.py": TAGGED,
    "vllm/tool_parsers/plain_tool_parser.py": PLAIN,
    "vllm/tool_parsers/insists_tool_parser.py": INSISTS,
    "vllm/tool_parsers/heir_tool_parser.py": HEIR,
    "vllm/tool_parsers/untagged_tool_parser.py": UNTAGGED,
    "vllm/tool_parsers/decorated_tool_parser.py": DECORATED,
    "vllm/tool_parsers/factory_tool_parser.py": FACTORY,
    "vllm/tool_parsers/after_tool_parser.py": AFTER,
}

HOOK_LINE = line_of(ABSTRACT, "cls.forced_choice_ok = False")
ENV_LINE = line_of(ENVS, '"VLLM_STRICT_CALLS": lambda')
LOOSE_LINE = line_of(ENVS, '"VLLM_LOOSE_MODE": lambda')


@pytest.fixture(scope="module")
def creation_db(tmp_path_factory):
    base = tmp_path_factory.mktemp("creation")
    # v0.29.0: the flag defaults to off (its declared default is still on: what runs wins)
    off = {"vllm/envs.py": ENVS.replace('"VLLM_STRICT_CALLS", "True"', '"VLLM_STRICT_CALLS", "0"')}
    repo = make_repo(base / "repo", {"v0.28.0": TREE, "v0.29.0": off})
    db = base / "index.db"
    build_tags(repo, db, "v0.28.0..")
    return db


def attr(db, name, attribute="forced_choice_ok", version="v0.28.0"):
    got = rows(
        db,
        "select value, defining_class, file, line, set_by, condition from parser_attrs_v where version = ?"
        " and kind = 'tool' and name = ? and role = 'registered' and attribute = ?",
        (version, name, attribute),
    )
    assert len(got) == 1, (name, attribute, got)
    return dict(zip(("value", "class", "file", "line", "set_by", "condition"), got[0], strict=True))


def test_env_defaults_are_read_from_the_trees_envs_module(creation_db):
    got = dict(
        (n, (v, how))
        for n, v, how in rows(
            creation_db, "select name, value, how from env_defaults_v where version = 'v0.28.0'"
        )
    )
    assert got["VLLM_STRICT_CALLS"] == ("True", "environment")  # os.getenv(..., "True").lower() in (...)
    assert got["VLLM_LOOSE_MODE"] == ("False", "environment")  # bool(int(os.getenv(..., "0")))
    assert got["VLLM_DECLARED_ONLY"] == ("True", "declared")  # only the TYPE_CHECKING declaration


def test_init_subclass_rewrites_an_attribute_while_an_env_flag_is_on(creation_db):
    a = attr(creation_db, "tagged")
    assert a["value"] == "False"
    assert (a["class"], a["file"], a["line"]) == (
        "TaggedToolParser",
        "vllm/tool_parsers/abstract_tool_parser.py",
        HOOK_LINE,
    )
    assert a["set_by"] == "ToolParser.__init_subclass__"
    assert "VLLM_STRICT_CALLS" in a["condition"] and f"vllm/envs.py:{ENV_LINE}" in a["condition"]
    assert a["condition"].endswith("True when VLLM_STRICT_CALLS is False")


def test_the_hook_runs_after_the_class_body(creation_db):
    assert attr(creation_db, "insists")["value"] == "False"  # the body's True is overwritten


def test_a_guard_that_does_not_hold_leaves_the_base_value(creation_db):
    a = attr(creation_db, "plain")
    assert (a["value"], a["class"], a["set_by"]) == ("True", "ToolParser", None)
    assert a["condition"] is None  # no flag changes it: grammar_tag is None


def test_subclasses_read_the_guard_through_their_own_resolution_order(creation_db):
    heir = attr(creation_db, "heir")  # inherits grammar_tag: the hook sets it on the subclass too
    assert (heir["value"], heir["class"]) == ("False", "HeirToolParser")
    untagged = attr(creation_db, "untagged")  # grammar_tag = None: no hook for it, the base's False shows
    assert (untagged["value"], untagged["class"]) == ("False", "TaggedToolParser")


def test_a_flag_off_by_default_names_what_turning_it_on_does(creation_db):
    a = attr(creation_db, "plain", attribute="lenient")
    assert (a["value"], a["class"], a["set_by"]) == ("False", "ToolParser", None)
    assert a["condition"] == (
        "True when VLLM_LOOSE_MODE is True (ToolParser.__init_subclass__,"
        f" vllm/tool_parsers/abstract_tool_parser.py:{line_of(ABSTRACT, 'cls.lenient = True')};"
        f" VLLM_LOOSE_MODE defaults to False, vllm/envs.py:{LOOSE_LINE})"
    )


def test_the_default_that_runs_is_the_one_read(creation_db):
    a = attr(creation_db, "tagged", version="v0.29.0")
    assert (a["value"], a["class"]) == ("True", "ToolParser")
    assert a["condition"].startswith("False when VLLM_STRICT_CALLS is True")


def test_class_decorators_and_assignments_after_the_body(creation_db):
    d = attr(creation_db, "decorated")
    assert (d["value"], d["class"], d["set_by"]) == (
        "False",
        "DecoratedToolParser",
        "decorator no_forced_choice",
    )
    assert (d["file"], d["line"]) == (
        "vllm/tool_parsers/utils.py",
        line_of(UTILS, "cls.forced_choice_ok = False"),
    )
    f = attr(creation_db, "factory")
    assert (f["value"], f["set_by"]) == ("False", "decorator with_choice")  # setattr(klass, name, value)
    a = attr(creation_db, "after")
    assert (a["value"], a["class"], a["set_by"]) == (
        "False",
        "AfterToolParser",
        "assignment after the class body",
    )
    assert a["line"] == line_of(AFTER, "AfterToolParser.forced_choice_ok = False")


def test_card_and_which_json_show_the_value_and_the_condition(creation_db):
    card = json.loads(
        tpindex("card", "tagged", "--at", "v0.28.0", "--format", "json", "--db", creation_db).output
    )
    (a,) = [a for a in card["cards"][0]["attributes"] if a["attribute"] == "forced_choice_ok"]
    assert (a["value"], a["set_by"]) == ("False", "ToolParser.__init_subclass__")
    assert a["condition"].endswith("True when VLLM_STRICT_CALLS is False")
    text = tpindex("card", "tagged", "--at", "v0.28.0", "--db", creation_db).output
    line = next(x for x in text.splitlines() if "forced_choice_ok = False" in x)
    assert "ToolParser.__init_subclass__" in line and "True when VLLM_STRICT_CALLS is False" in line
    which = json.loads(
        tpindex("which", "tagged", "--at", "v0.28.0", "--format", "json", "--db", creation_db).output
    )
    (w,) = [a for a in which["parsers"][0]["attributes"] if a["attribute"] == "forced_choice_ok"]
    assert (w["value"], w["set_by"], w["condition"]) == (a["value"], a["set_by"], a["condition"])


def test_the_browsers_parser_page_shows_what_set_it(creation_db):
    import html

    from fixtures.serve import serve

    client = serve(creation_db)
    try:
        page = html.unescape(client.html("/-/parser/tool/tagged?v=v0.28.0"))
    finally:
        client.close()
    page = page.replace("<wbr>", "")  # where a long name may wrap: not text
    row = next(x for x in page.split("<tr>") if "forced_choice_ok = False" in x)
    assert "ToolParser.__init_subclass__ on" in row and "True when VLLM_STRICT_CALLS is False" in row


@pytest.mark.parametrize(
    "written,value",
    [
        ('os.getenv("X", "True").lower() in ("true", "1")', True),
        ('bool(int(os.getenv("X", "0")))', False),
        ('os.environ.get("X", "1") == "1"', True),
        ('int(os.getenv("X", "16"))', 16),
        ('os.getenv("X")', None),
        ('(int(os.getenv("X", "0")) if "X" in os.environ else None)', None),
        ('os.getenv("X", "auto") if True else "never"', "auto"),
        ('maybe_convert_bool(os.getenv("X"))', "not readable"),  # a helper of the module: not read
    ],
)
def test_env_values_with_every_variable_unset(written, value):
    from indexer.extract.expr import UNKNOWN, env_value
    from indexer.extract.ts import parser

    node = parser().parse(written.encode()).root_node.named_children[0].named_children[0]
    got = env_value(node)
    assert (got is UNKNOWN) if value == "not readable" else got == value
