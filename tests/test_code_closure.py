"""The code that runs for a name (issue 23, items 1 and 2): what a name's classes inherit and call, the
module-level functions and constants they call or read (a config builder making a transition table, a
regex), and helpers imported from another parser's module. A change there is a change of every name that
runs it, classified by what changed: imports only, module-level functions / constants, its classes'
methods, its extraction or streaming methods.

The fixture imitates the unified-engine era (v0.32.0-v0.33.0) with hand-written classes:

- `qwen9` (vllm/parser/qwen9.py): `Qwen9Parser(ParserEngine)` whose `__init__` builds its engine
  configuration with the module-level `qwen9_config()`, a transition table that uses the helper
  `_value_extender`; `seedy` subclasses it and only sets class attributes (the real seed_oss / Qwen3 shape);
- `mimi`: its own `ParserEngine` subclass, whose config function uses `_value_extender` imported from
  vllm.parser.qwen9 (the real mimo shape);
- `hermit` (standalone): its `__init__` reads a module-level regex; `cat` subclasses it, overrides both
  extraction methods and inherits the `__init__` only (the real longcat / hermes shape).

`cat`'s streaming method also calls `common_prefix` from vllm/tool_parsers/utils.py, a module of helpers
holding no parser class (framework).

Versions: v0.31.0; v0.32.0 adds a transition to `qwen9_config`, changes `HermitToolParser.__init__` and a
helper of utils.py nobody calls; v0.33.0 changes `_value_extender`, moves hermit's import of
`make_call_id` to another module (nothing else in that file changes), changes `cat`'s streaming method
and `common_prefix`.
"""

from __future__ import annotations

import json

import pytest
from fixtures.eras import ABS_REASONING, abstract_module, engine_adapters, engine_stub, lazy_registry
from fixtures.helpers import build_tags, make_repo, rows, tpindex

UNIFIED = ("qwen9", "seedy", "mimi")

TOOL_INIT = lazy_registry(
    "tool",
    {
        **{n: (f"{n}_tool_parser", f"{n.capitalize()}ToolParser") for n in UNIFIED},
        "hermit": ("hermit_tool_parser", "HermitToolParser"),
        "cat": ("cat_tool_parser", "CatToolParser"),
    },
)
REASONING_INIT = lazy_registry(
    "reasoning", {n: (f"{n}_reasoning_parser", f"{n.capitalize()}ReasoningParser") for n in UNIFIED}
)

ABSTRACT = abstract_module(
    """
class ToolParser:
    def __init__(self, tokenizer):
        self.tokenizer = tokenizer

    def extract_tool_calls(self, text, request):
        raise NotImplementedError

    def extract_tool_calls_streaming(self, previous, current, delta):
        raise NotImplementedError
""",
    "ToolParserManager",
)

ADAPTERS = engine_adapters(
    engine="""
class ParserEngine:
    def __init__(self, tokenizer, tools=None, **kwargs):
        self.config = kwargs.get("parser_engine_config")

    def parse(self, text, request):
        return self.config["transitions"], text

    def parse_delta(self, delta, request):
        return self.config["extender"](delta)

    def extract_tool_calls(self, text, request):
        return self.parse(text, request)
""",
    tool_adapter="",
)

REGISTERED = """
from vllm.parser.engine.adapters import make_adapters
from vllm.parser.mimi import MimiParser
from vllm.parser.qwen9 import Qwen9Parser
from vllm.parser.seedy import SeedyParser

(Qwen9ParserReasoningAdapter, Qwen9ParserToolAdapter) = make_adapters(Qwen9Parser)
(SeedyParserReasoningAdapter, SeedyParserToolAdapter) = make_adapters(SeedyParser)
(MimiParserReasoningAdapter, MimiParserToolAdapter) = make_adapters(MimiParser)
"""

QWEN9 = """
from functools import partial

from vllm.parser.engine.adapters import ParserEngine

THINK_START = "<think>"
TOOL_START = "<tool_call>"


def _value_extender(raw, trim=True):
    return raw.strip() if trim else raw


def qwen9_config(thinking=True, name="qwen9", tool_start=TOOL_START):
    return {
        "name": name,
        "initial": "REASONING" if thinking else "CONTENT",
        "transitions": {
            ("REASONING", THINK_START): "REASONING",
            ("CONTENT", tool_start): "TOOL_ARGS",
        },
        "extender": partial(_value_extender, trim=True),
    }


def unused_helper():
    return "nobody calls this"


class Qwen9Parser(ParserEngine):
    CONFIG_NAME = "qwen9"
    TOOL_START = TOOL_START

    def __init__(self, tokenizer, tools=None, **kwargs):
        config = qwen9_config(name=self.CONFIG_NAME, tool_start=self.TOOL_START)
        kwargs.setdefault("parser_engine_config", config)
        super().__init__(tokenizer, tools, **kwargs)

    def extract_reasoning(self, text, request):
        return text.partition("</think>")
"""

SEEDY = """
from vllm.parser.qwen9 import Qwen9Parser


class SeedyParser(Qwen9Parser):
    CONFIG_NAME = "seedy"
    TOOL_START = "<seed:tool_call>"
"""

MIMI = """
from vllm.parser.engine.adapters import ParserEngine
from vllm.parser.qwen9 import _value_extender


def mimi_config(name="mimi"):
    return {"name": name, "transitions": {}, "extender": _value_extender}


class MimiParser(ParserEngine):
    def __init__(self, tokenizer, tools=None, **kwargs):
        kwargs.setdefault("parser_engine_config", mimi_config())
        super().__init__(tokenizer, tools, **kwargs)

    def extract_reasoning(self, text, request):
        return None, text
"""

HERMIT = """
import re

from vllm.entrypoints.chat_utils import make_call_id
from vllm.tool_parsers.abstract_tool_parser import ToolParser

CALL_RE = re.compile(r"<call>(.*?)</call>")


class HermitToolParser(ToolParser):
    def __init__(self, tokenizer):
        super().__init__(tokenizer)
        self.start = "<call>"
        self.pattern = CALL_RE

    def extract_tool_calls(self, text, request):
        return [(make_call_id(), m) for m in self.pattern.findall(text)]

    def extract_tool_calls_streaming(self, previous, current, delta):
        return delta
"""

CAT = """
from vllm.tool_parsers.hermit_tool_parser import HermitToolParser
from vllm.tool_parsers.utils import common_prefix


class CatToolParser(HermitToolParser):
    def extract_tool_calls(self, text, request):
        return [m.strip() for m in self.pattern.findall(text)]

    def extract_tool_calls_streaming(self, previous, current, delta):
        return common_prefix(previous, current) and delta
"""

UTILS = """
def common_prefix(a, b):
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def unused_helper(text):
    return text
"""

TREE = {
    "vllm/tool_parsers/__init__.py": TOOL_INIT,
    "vllm/tool_parsers/abstract_tool_parser.py": ABSTRACT,
    "vllm/tool_parsers/hermit_tool_parser.py": HERMIT,
    "vllm/tool_parsers/cat_tool_parser.py": CAT,
    "vllm/tool_parsers/utils.py": UTILS,
    "vllm/reasoning/__init__.py": REASONING_INIT,
    "vllm/reasoning/abs_reasoning_parsers.py": ABS_REASONING,
    "vllm/parser/__init__.py": "",
    "vllm/parser/qwen9.py": QWEN9,
    "vllm/parser/seedy.py": SEEDY,
    "vllm/parser/mimi.py": MIMI,
    "vllm/parser/engine/__init__.py": "",
    "vllm/parser/engine/adapters.py": ADAPTERS,
    "vllm/parser/engine/registered_adapters.py": REGISTERED,
    **{
        f"vllm/tool_parsers/{n}_tool_parser.py": engine_stub(
            f"{n.capitalize()}ToolParser", f"{n.capitalize()}ParserToolAdapter"
        )
        for n in UNIFIED
    },
    **{
        f"vllm/reasoning/{n}_reasoning_parser.py": engine_stub(
            f"{n.capitalize()}ReasoningParser", f"{n.capitalize()}ParserReasoningAdapter"
        )
        for n in UNIFIED
    },
}

QWEN9_V32 = QWEN9.replace(
    """            ("CONTENT", tool_start): "TOOL_ARGS",
""",
    """            ("CONTENT", tool_start): "TOOL_ARGS",
            ("TOOL_ARGS", "</tool_call>"): "CONTENT",
""",
)
HERMIT_V32 = HERMIT.replace('self.start = "<call>"', 'self.start = "<call>".strip()')
UTILS_V32 = UTILS.replace("return text", "return text.strip()")  # a helper nobody calls
V32 = {
    "vllm/parser/qwen9.py": QWEN9_V32,
    "vllm/tool_parsers/hermit_tool_parser.py": HERMIT_V32,
    "vllm/tool_parsers/utils.py": UTILS_V32,
}

V33 = {
    "vllm/parser/qwen9.py": QWEN9_V32.replace(
        "return raw.strip() if trim else raw", 'return raw.strip("\\n") if trim else raw'
    ),
    "vllm/tool_parsers/hermit_tool_parser.py": HERMIT_V32.replace(
        "from vllm.entrypoints.chat_utils import make_call_id\n", ""
    ).replace(
        "from vllm.tool_parsers.abstract_tool_parser import ToolParser\n",
        "from vllm.renderers.chat_utils import make_call_id\nfrom vllm.tool_parsers.abstract_tool_parser import ToolParser\n",
    ),
    "vllm/tool_parsers/cat_tool_parser.py": CAT.replace("and delta\n", "and delta.strip()\n"),
    "vllm/tool_parsers/utils.py": UTILS_V32.replace("    return a[:n]", "    return a[: n + 1]"),
}


@pytest.fixture(scope="module")
def closure_db(tmp_path_factory):
    base = tmp_path_factory.mktemp("closure")
    repo = make_repo(base / "repo", {"v0.31.0": TREE, "v0.32.0": V32, "v0.33.0": V33})
    db = base / "index.db"
    build_tags(repo, db, "v0.31.0..")
    return db


def code_changes(db, a, b) -> dict[tuple[str, str], dict]:
    out = tpindex("diff", a, b, "--format", "json", "--db", db, ok=False)
    return {
        (c["name"], c["kind"]): c for c in json.loads(out.output)["changes"] if c["type"] == "code-changed"
    }


def parts(change: dict) -> dict[str, list[str]]:
    return {p["part"]: p["names"] for p in change["parts"]}


def test_a_config_function_building_the_transition_table_is_the_code_of_every_name_that_runs_it(closure_db):
    changes = code_changes(closure_db, "v0.31.0", "v0.32.0")
    for key in [("qwen9", "tool"), ("qwen9", "reasoning"), ("seedy", "tool"), ("seedy", "reasoning")]:
        assert key in changes, key
        assert parts(changes[key]) == {"functions": ["qwen9_config"]}, key
        assert changes[key]["files"][0]["file"] == "vllm/parser/qwen9.py"
        assert "qwen9_config" in changes[key]["detail"]
    assert ("mimi", "tool") not in changes and ("mimi", "reasoning") not in changes  # it runs mimi_config


def test_an_inherited_init_is_the_code_of_the_subclass(closure_db):
    changes = code_changes(closure_db, "v0.31.0", "v0.32.0")
    for name in ("hermit", "cat"):
        assert parts(changes[(name, "tool")]) == {"methods": ["HermitToolParser.__init__"]}, name
    files = dict(
        rows(
            closure_db,
            "select file, roles from parser_code_v where version = 'v0.32.0' and name = 'cat' and shared = 0",
        )
    )
    assert "vllm/tool_parsers/hermit_tool_parser.py" in files


def test_a_helper_imported_from_another_parsers_module(closure_db):
    changes = code_changes(closure_db, "v0.32.0", "v0.33.0")
    for kind in ("tool", "reasoning"):
        c = changes[("mimi", kind)]
        assert parts(c) == {"functions": ["_value_extender"]}
        assert [f["file"] for f in c["files"]] == ["vllm/parser/qwen9.py"]
        # the callers of qwen9_config run it too
        assert parts(changes[("seedy", kind)]) == {"functions": ["_value_extender"]}
    card = json.loads(
        tpindex("card", "mimi", "--kind", "tool", "--format", "json", "--db", closure_db).output
    )
    files = {f["file"]: f["roles"] for f in card["cards"][0]["code_files"]}
    assert "vllm/parser/qwen9.py" in files and "helper" in files["vllm/parser/qwen9.py"]


def test_a_moved_import_is_an_imports_only_change(closure_db):
    changes = code_changes(closure_db, "v0.32.0", "v0.33.0")
    hermit = changes[("hermit", "tool")]
    assert [p["part"] for p in hermit["parts"]] == ["imports"]
    assert hermit["parts"][0]["names"] == ["make_call_id"]
    assert hermit["detail"].startswith("imports only")
    (f,) = hermit["files"]
    assert (f["added"], f["removed"]) == (1, 1)
    # cat overrides the method that calls make_call_id: only its own streaming method changed
    assert parts(changes[("cat", "tool")]) == {"extraction": ["CatToolParser.extract_tool_calls_streaming"]}


def test_a_function_nobody_calls_is_no_ones_code(closure_db, tmp_path):
    repo = make_repo(
        tmp_path / "repo",
        {
            "v0.31.0": TREE,
            "v0.32.0": {"vllm/parser/qwen9.py": QWEN9.replace('"nobody calls this"', '"still nobody"')},
        },
    )
    db = tmp_path / "x.db"
    build_tags(repo, db, "v0.31.0..")
    assert code_changes(db, "v0.31.0", "v0.32.0") == {}


def test_diff_code_name_which_all_and_the_lifecycle_follow_the_code_that_runs(closure_db):
    data = json.loads(
        tpindex(
            "diff",
            "v0.31.0",
            "v0.32.0",
            "--code",
            "seedy",
            "--kind",
            "tool",
            "--format",
            "json",
            "--db",
            closure_db,
            ok=False,
        ).output
    )
    assert [f["path_a"] for f in data["files"]] == ["vllm/parser/qwen9.py"]
    # hermit's file changed at v0.33.0 in an import only hermit's own method uses: not cat's code
    data = json.loads(
        tpindex(
            "diff", "v0.32.0", "v0.33.0", "--code", "cat", "--format", "json", "--db", closure_db, ok=False
        ).output
    )
    assert [f["path_a"] for f in data["files"]] == ["vllm/tool_parsers/cat_tool_parser.py"]
    out = tpindex("which", "seedy", "--kind", "tool", "--all", "--db", closure_db).output
    assert "code changed" in out
    life = rows(closure_db, "select code_changed_in from lifecycle where name = 'seedy' and kind = 'tool'")
    assert life == [("v0.32.0, v0.33.0",)]
    life = rows(closure_db, "select code_changed_in from lifecycle where name = 'cat' and kind = 'tool'")
    assert life == [("v0.32.0, v0.33.0",)]


def test_diff_text_and_markdown_say_what_changed(closure_db):
    text = tpindex("diff", "v0.32.0", "v0.33.0", "--db", closure_db, ok=False).output
    line = next(s for s in text.splitlines() if "hermit (tool)" in s)
    assert "imports only" in line
    line = next(s for s in text.splitlines() if "mimi (tool)" in s)
    assert "functions _value_extender" in line
    md = tpindex("diff", "v0.32.0", "v0.33.0", "--format", "markdown", "--db", closure_db, ok=False).output
    assert any("hermit" in s and "imports only" in s for s in md.splitlines())


def test_diff_json_with_parts_follows_its_schema(closure_db):
    import jsonschema

    from indexer.schemas import load

    data = json.loads(
        tpindex("diff", "v0.32.0", "v0.33.0", "--format", "json", "--db", closure_db, ok=False).output
    )
    jsonschema.Draft202012Validator(load("diff")).validate(data)
    props = load("diff")["$defs"]["Change"]["properties"]
    assert "parts" in props


def uses_of(source: str) -> dict[tuple[str, str], dict]:
    import textwrap

    from indexer.extract import parse

    return {
        (u["what"], u["qualname"]): u
        for u in parse(textwrap.dedent(source).lstrip().encode())["facts"]["uses"]
    }


def test_uses_names_the_module_level_bindings_a_definition_reads():
    got = uses_of('''
        from typing import Any

        from vllm.parser.qwen9 import _value_extender as extend

        LIMIT = 3
        PATTERN = "<call>"


        def helper(text: Any, limit=LIMIT) -> Any:
            """Mentions PATTERN in its docstring only."""
            # and LIMIT in a comment
            return extend(text)[:limit]


        class Base:
            pass


        class Thing(Base):
            start = PATTERN

            def run(self, text, helper=None):
                self.helper = text.helper
                return call(key=text, other=helper)

            def other(self):
                LIMIT = 4
                return LIMIT
        ''')
    assert got[("function", "helper")]["names"] == "LIMIT extend"  # a default, a call; not the annotation
    assert got[("class", "Thing")]["names"] == "PATTERN"  # its attribute; not its base
    assert got[("method", "Thing.run")]["names"] == ""  # a parameter, an attribute, a keyword's name
    assert got[("method", "Thing.other")]["names"] == ""  # its own local LIMIT
    assert got[("import", "extend")]["line"] == 3
    assert (got[("class", "Thing")]["line"], got[("class", "Thing")]["end_line"]) == (19, 28)


def test_uses_digests_ignore_comments_blank_lines_and_where_an_import_stands():
    first = uses_of("""
        import json
        from vllm.renderers.chat_utils import make_call_id


        def helper(text):
            return json.loads(text)
        """)
    second = uses_of("""
        from vllm.renderers.chat_utils import make_call_id
        import json


        def helper(text):
            # parse it

            return json.loads(text)
        """)
    for key in (("function", "helper"), ("import", "json"), ("import", "make_call_id")):
        assert first[key]["digest"] == second[key]["digest"], key
    moved = uses_of("""
        from vllm.entrypoints.chat_utils import make_call_id
        """)
    assert moved[("import", "make_call_id")]["digest"] != first[("import", "make_call_id")]["digest"]


def test_the_parser_and_version_pages_say_what_changed_in_the_code_that_runs(closure_db):
    from fixtures.serve import serve

    c = serve(closure_db)
    try:
        page = c.html("/-/parser/tool/seedy")
        changes = page[page.index('id="changes"') :]
        assert "vllm/parser/qwen9.py" in changes and "functions qwen9_config" in changes
        page = c.html("/-/parser/tool/cat")
        changes = page[page.index('id="changes"') :]
        assert "imports" not in changes  # hermit's moved import is not cat's code
        assert "extraction CatToolParser.extract_tool_calls_streaming" in changes
        page = c.html("/-/version/v0.33.0")
        assert "imports only: make_call_id (+1 -1) in vllm/tool_parsers/hermit_tool_parser.py" in page
    finally:
        c.close()


def test_a_shared_helper_module_affects_the_names_whose_helpers_changed(closure_db):
    def framework(a, b):
        out = tpindex("diff", a, b, "--format", "json", "--db", closure_db, ok=False)
        return {c["file"]: c for c in json.loads(out.output)["changes"] if c["type"] == "framework-changed"}

    assert "vllm/tool_parsers/utils.py" not in framework("v0.31.0", "v0.32.0")  # only unused_helper changed
    utils = framework("v0.32.0", "v0.33.0")["vllm/tool_parsers/utils.py"]
    assert utils["names"] == ["cat (tool)"]
    assert "common_prefix" in utils["detail"]
    assert "functions" not in parts(code_changes(closure_db, "v0.32.0", "v0.33.0")[("cat", "tool")])
