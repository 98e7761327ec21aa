"""The per-blob work of the extraction (issue 30): a blob's tree is walked by one query cursor, and work a
blob cannot need (decided from its bytes, provably) is not done. The facts stay those every kind's own
tests state; these tests say how much work gives them."""

from __future__ import annotations

import textwrap

import pytest

from indexer.core.scope import FULL, MODULE
from indexer.extract import parse, ts

PARSER = textwrap.dedent("""
    import re

    from vllm.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager

    START = "<tool_call>"


    @ToolParserManager.register_module("probe")
    class ProbeToolParser(ToolParser):
        bot_token = "<tool_call>"
        pattern = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)

        def __init__(self, tokenizer):
            super().__init__(tokenizer)
            self.prev_tool_call_arr = [{"arguments": {}}]

        def extract_tool_calls(self, model_output, request):
            if START in model_output:
                return self.pattern.findall(model_output)
            return []
    """).lstrip()


class Walks:
    """Counts the query cursors run over whole trees and the nodes they start from."""

    def __init__(self, monkeypatch):
        self.roots: list[str] = []
        real = ts.QueryCursor
        walks = self

        class Counting:
            def __init__(self, query, *a, **kw):
                self.cursor = real(query, *a, **kw)

            def matches(self, node, *a, **kw):
                walks.roots.append(node.type)
                return self.cursor.matches(node, *a, **kw)

            def captures(self, node, *a, **kw):
                walks.roots.append(node.type)
                return self.cursor.captures(node, *a, **kw)

        monkeypatch.setattr(ts, "QueryCursor", Counting)


@pytest.mark.parametrize("depth", [FULL, MODULE])
@pytest.mark.parametrize("marker", ["", "  # TODO: a marker\n"])
def test_each_blob_is_walked_by_one_query_cursor(monkeypatch, depth, marker):
    walks = Walks(monkeypatch)
    source = PARSER + marker
    got = parse(source.encode(), depth)
    assert got["status"] == "ok"
    assert walks.roots == ["module"], "one cursor over the whole tree, every pattern file in it"
    assert [m["kind"] for m in got["facts"]["markers"]] == (["TODO"] if marker else [])
    if depth == FULL:
        assert got["facts"]["sentinels"] and got["facts"]["regexes"] and got["facts"]["plants"]


def _matches_of(monkeypatch, source: str) -> int:
    """How many matches the one query walk over the source's tree turns into Python objects."""
    real = ts.QueryCursor
    found: list[int] = []

    class Counting:
        def __init__(self, query, *a, **kw):
            self.cursor = real(query, *a, **kw)

        def matches(self, node, *a, **kw):
            got = self.cursor.matches(node, *a, **kw)
            found.append(len(got))
            return got

    monkeypatch.setattr(ts, "QueryCursor", Counting)
    parse(textwrap.dedent(source).lstrip().encode())
    monkeypatch.undo()
    return sum(found)


def test_annotations_and_base_lists_cost_the_walk_no_matches(monkeypatch):
    """An annotation or a base list holds no fact: the uses kind decides from the names it finds, not
    from a match for every annotation of the file."""
    few = _matches_of(
        monkeypatch,
        """
        from typing import Any

        class Base:
            pass

        class Thing(Base):
            def run(self, a: Any) -> Any:
                return a
        """,
    )
    params = ", ".join(f"a{i}: Any" for i in range(100))
    many = _matches_of(
        monkeypatch,
        f"""
        from typing import Any

        class Base:
            pass

        class Thing(Base, metaclass=type):
            def run(self, {params}) -> Any:
                x: Any = a0
                return x
        """,
    )
    assert many == few


# -- the uses kind against a plain definition of it ------------------------------------------------------------
# What `uses` says, computed the slow and obvious way: every identifier of the tree visited once, knowing its
# ancestors; a definition's lines filtered one by one. The extractor must give the same names and digests.


def _reference_uses(data: bytes, rows: list[dict], bound: set[str]) -> dict[tuple[str, str], tuple[str, str]]:
    import hashlib

    from indexer.extract.uses import AFTER_NAME, _role

    lines = data.split(b"\n")
    groups: list[list[dict]] = []
    for r in rows:
        if r["what"] == "import":
            continue
        g = groups[-1] if groups else None
        if g and (g[0]["what"], g[0]["line"], g[0]["end_line"], g[0]["digest"], g[0]["names"]) == (
            r["what"],
            r["line"],
            r["end_line"],
            r["digest"],
            r["names"],
        ):
            g.append(r)
        else:
            groups.append([r])
    owner = [-1] * (len(lines) + 2)
    for i, g in enumerate(groups):
        owner[g[0]["line"] : g[0]["end_line"] + 1] = [i] * (g[0]["end_line"] + 1 - g[0]["line"])
    refs = [set() for _ in groups]
    local = [set() for _ in groups]
    root = ts.parser().parse(data).root_node
    stack = [(root, False)]
    while stack:
        node, skipped = stack.pop()
        parent = node.parent
        skipped = (
            skipped
            or node.type == "type"
            or (
                node.type == "argument_list"
                and parent is not None
                and parent.type == "class_definition"
                and parent.child_by_field_name("superclasses") == node
            )
        )
        stack.extend((c, skipped) for c in node.children)
        name = node.text.decode() if node.type == "identifier" else None
        after = node.start_byte and AFTER_NAME[data[node.start_byte - 1]]  # an attribute: x.name
        line_owner = owner[node.start_point.row + 1]
        if name in bound and not after and line_owner >= 0:
            role = _role(node)
            if role == "bind" or (role == "read" and not skipped):
                (local if role == "bind" else refs)[line_owner].add(name)
    out = {}
    for i, g in enumerate(groups):
        first = g[0]
        if first["what"] in ("function", "method"):
            refs[i] -= local[i]
        code = [
            lines[n - 1]
            for n in range(first["line"], first["end_line"] + 1)
            if n <= len(lines)
            and owner[n] == i
            and lines[n - 1].strip()
            and not lines[n - 1].lstrip().startswith(b"#")
        ]
        digest = hashlib.sha1(b"\n".join(code)).hexdigest()[:16]
        names = " ".join(sorted(refs[i] - {r["qualname"] for r in g}))
        for r in g:
            out[(r["what"], r["qualname"])] = (digest, names)
    return out


SNIPPETS = [
    "import json\n",
    "from typing import Any, Optional\n",
    "from vllm.x import helper as extend\n",
    "LIMIT = 3\n",
    "A, B = 1, 2\n",
    "PATTERN: Optional[str] = '<call>'\n",
    "# a comment about LIMIT\n",
    "\n",
    "def helper(text: Any, limit=LIMIT) -> Optional[Any]:\n    '''PATTERN'''\n    # LIMIT\n\n    return extend(text)[:limit]\n",
    "class Base:\n    pass\n",
    "class Thing(Base, metaclass=type):\n    start = PATTERN\n    kind: Any = LIMIT\n\n"
    "    def run(self, text: 'Any', helper=None) -> Any:\n        self.helper = text.helper\n"
    "        return json.loads(call(key=text, other=helper, n=A))\n\n"
    "    def other(self):\n        LIMIT = 4\n        for B in range(LIMIT):\n            pass\n        return LIMIT + B\n\n"
    "    class Inner(Base):\n        value = json . dumps(B)\n",
    "def outer():\n    class Local(Base):\n        x: Any = LIMIT\n    def inner(y: Any = PATTERN):\n        import json\n"
    "        return json\n    return Local, inner\n",
    "if LIMIT:\n    EXTRA = helper(PATTERN)\nelse:\n    EXTRA = None\n",
    "x: (lambda: Any) = lambda a=LIMIT: a\n",
]


def _check_uses(data: bytes) -> None:
    from indexer.extract.uses import bound_names

    got = parse(data)
    if got["status"] not in ("ok", "syntax-errors"):
        return
    facts = got["facts"]
    rows = facts["uses"]
    want = _reference_uses(data, rows, bound_names(facts))
    for r in rows:
        if r["what"] != "import":
            assert (r["digest"], r["names"]) == want[(r["what"], r["qualname"])], (r, data.decode())


def test_uses_agrees_with_its_plain_definition_on_every_snippet_together():
    _check_uses("".join(SNIPPETS).encode())


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=150,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    parts=st.lists(st.sampled_from(SNIPPETS), min_size=1, max_size=10),
    cut=st.tuples(st.integers(0, 2000), st.integers(0, 12)),
    broken=st.booleans(),
)
def test_uses_agrees_with_its_plain_definition_on_generated_and_broken_programs(parts, cut, broken):
    data = "".join(parts).encode()
    if broken:  # a syntax error somewhere: the tree has error nodes
        at = cut[0] % (len(data) + 1)
        data = data[:at] + data[at + cut[1] :]
    _check_uses(data)


def test_uses_of_a_file_starting_with_blank_lines_digest_its_own_lines():
    """The root node's text starts at the first token: read that way, every line and byte offset of a file
    opening with blank lines was shifted (a name's digest was of the wrong lines, its reads missed)."""
    got = {
        (u["what"], u["qualname"]): u
        for u in parse(b"\n\nLIMIT = 3\n\n\ndef f():\n    return LIMIT\n")["facts"]["uses"]
    }
    same = {
        (u["what"], u["qualname"]): u
        for u in parse(b"LIMIT = 3\n\n\ndef f():\n    return LIMIT\n")["facts"]["uses"]
    }
    assert got[("name", "LIMIT")]["digest"] == same[("name", "LIMIT")]["digest"]
    assert got[("function", "f")]["names"] == same[("function", "f")]["names"] == "LIMIT"
    assert got[("function", "f")]["digest"] == same[("function", "f")]["digest"]


ENVS = """
import os

environment_variables = {
    "VLLM_ENFORCE_STRICT_TOOL_CALLING": lambda: os.getenv("VLLM_ENFORCE_STRICT_TOOL_CALLING", "1") == "1",
    "VLLM_PROBE_LIMIT": lambda: int(os.getenv("VLLM_PROBE_LIMIT", "16")),
}
"""


def test_an_environment_entry_read_in_an_earlier_version_is_not_read_again(monkeypatch):
    """vllm/envs.py's versions repeat most entries: a lambda's value is read once per process by its text
    (in a tree without errors), the same rows either way."""
    from indexer.extract import env_defaults, expr

    env_defaults._READ.clear()
    calls: list[str] = []
    real = expr.env_value

    def counting(node, read=None):
        calls.append(ts.text(node))
        return real(node, read)

    monkeypatch.setattr(expr, "env_value", counting)
    first = parse(ENVS.encode(), MODULE)["facts"]["env_defaults"]
    n = len(calls)
    assert n and [(r["name"], r["value"], r["variable"]) for r in first] == [
        ("VLLM_ENFORCE_STRICT_TOOL_CALLING", "True", "VLLM_ENFORCE_STRICT_TOOL_CALLING"),
        ("VLLM_PROBE_LIMIT", "16", "VLLM_PROBE_LIMIT"),
    ]
    moved = parse(("# a new first line\n" + ENVS).encode(), MODULE)["facts"]["env_defaults"]
    assert len(calls) == n, "read again"
    assert [{**r, "line": r["line"] - 1} for r in moved] == first
    broken = parse((ENVS + "def (:\n").encode(), MODULE)["facts"]["env_defaults"]  # errors: read afresh
    assert len(calls) > n and [r["value"] for r in broken] == [r["value"] for r in first]


def test_a_process_compiles_a_query_for_a_combination_of_patterns_once_it_has_met_it_often(monkeypatch):
    """A combination of patterns is compiled once per process, at its facts.COMPILE_AFTER-th blob; before, the
    blob runs every pattern of its depth (one query per depth), and no pattern file is compiled on its own
    while every tree is primed (compiling costs more than a walk)."""
    from indexer.extract import facts, plants

    compiled: list[int] = []
    real = ts.Query

    def counting(language, source):
        compiled.append(len(source))
        return real(language, source)

    def clear():
        for fn in (ts.query, ts.combined, plants.plant_names):
            fn.cache_clear()
        facts._ASKED.clear()

    clear()
    monkeypatch.setattr(ts, "Query", counting)
    try:
        for marker in ("", "  # TODO: a marker\n"):
            for _ in range(2):
                assert parse((PARSER + marker).encode(), FULL)["status"] == "ok"
        assert len(compiled) == 1, "every pattern: the FULL depth's query"
        for _ in range(facts.COMPILE_AFTER - 1):
            assert parse(PARSER.encode(), MODULE)["status"] == "ok"
        assert len(compiled) == 2, "every pattern of the MODULE depth"
        for marker in ("", "", "  # TODO: a marker\n"):
            assert parse((PARSER + marker).encode(), MODULE)["status"] == "ok"
        assert len(compiled) == 3 and compiled[2] < compiled[1], "the patterns a blob without a marker runs"
    finally:
        monkeypatch.undo()
        clear()


# -- patterns gated by words -------------------------------------------------------------------------------------
# Each gated kind's module says, for each pattern of its file, the words one of which a blob holds where the
# pattern's matches can give a row (extract/facts.py GATES). The facts must be those of every pattern run.


def test_each_gated_kind_names_words_for_every_pattern_of_its_file():
    from indexer.extract import facts

    counts: dict[str, int] = {}
    for file, _ in ts.patterns():
        counts[file] = counts.get(file, 0) + 1
    for file, words in facts.GATES.items():
        assert len(words) == counts[file], file
        assert all(w is None or (w and all(isinstance(x, bytes) and x for x in w)) for w in words), file


GATED = textwrap.dedent("""
    import os
    from typing import TYPE_CHECKING

    from vllm.tool_parsers import ToolParserManager
    from vllm.reasoning import make_adapters

    if TYPE_CHECKING:
        VLLM_PROBE: bool = True

    environment_variables = {
        "VLLM_PROBE": lambda: os.getenv("VLLM_PROBE", "0") == "1",
    }
    KIMI = "kimi"
    _TOOL_PARSERS_TO_REGISTER = {"probe": ("probe_tool_parser", "ProbeToolParser")}
    (ProbeReasoningAdapter, ProbeToolAdapter) = make_adapters(ProbeParser)
    ToolParserManager.register_module("other", module=OtherToolParser)
    ToolParserManager.register_lazy_module("lazy", "vllm.tool_parsers.lazy", "LazyToolParser")


    def pick(tool_parser_name, tool_parser_cls):
        if tool_parser_name == KIMI:
            from vllm.tool_parsers.kimi import KimiToolParser
            return KimiToolParser
        elif is_mistral_tool_parser(tool_parser_cls):
            return MistralToolParser


    def decorate(cls):
        setattr(cls, "flag", True)
        cls.other = 1
        return cls


    class Serving(Base):
        def __init__(self, tool_parser):
            super().__init__()
            self.tool_parser = tool_parser(self.tokenizer)  # TODO: a marker

        def unified_parser_cls(self):
            return ProbeParser


    def add(parser):
        parser.add_argument("--tool-call-parser", choices=["a", "b"])
    """).lstrip()


def _every_pattern(monkeypatch, data: bytes, depth: int) -> dict:
    from indexer.extract import facts

    monkeypatch.setattr(facts, "GATES", {})
    facts._plan.cache_clear()
    try:
        return parse(data, depth)
    finally:
        monkeypatch.undo()
        facts._plan.cache_clear()


@pytest.mark.parametrize("depth", [FULL, MODULE])
def test_gated_patterns_give_the_facts_every_pattern_gives(monkeypatch, depth):
    """The source holds every gated word; each variant takes some out (the lines holding it, or the word
    respelled), and the facts stay those the extraction running every pattern gives."""
    from indexer.extract import facts

    words = sorted({w.decode() for gates in facts.GATES.values() for gate in gates if gate for w in gate})
    variants = (
        [GATED]
        + [GATED.replace(w, w.upper() if not w.isupper() else w.lower()) for w in words]
        + ["\n".join(line for line in GATED.splitlines() if w not in line) + "\n" for w in words]
    )
    for source in variants:
        data = source.encode()
        got = parse(data, depth)
        assert got == _every_pattern(monkeypatch, data, depth), source
    full = parse(GATED.encode(), depth)["facts"]
    for kind in (
        "markers",
        "adapter_bindings",
        "registrations",
        "name_checks",
        "class_sets",
        "env_defaults",
        "parser_calls",
    ):
        assert full[kind], kind  # the source gives every gated kind rows


def test_a_module_without_the_gated_words_is_walked_by_fewer_patterns(monkeypatch):
    from indexer.extract import facts

    plain = b"import os\n\n\nclass A(B):\n    def f(self, x: int = 1):\n        self.x = x\n"
    every = [i for i, _ in facts.plan(MODULE)[0]]
    picked = [facts.chosen(MODULE, plain) for _ in range(facts.COMPILE_AFTER)][-1]
    assert len(picked) < len(every) / 2
    assert facts.chosen(MODULE, GATED.encode()) == tuple(every)
    assert parse(plain, MODULE) == _every_pattern(monkeypatch, plain, MODULE)
