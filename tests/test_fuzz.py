"""Fuzzing the extractors: `parse(bytes)` and `locate(facts, path)` never raise and always return facts
or an error record, for random bytes, for Python shaped by the grammar of the constructs tpindex reads
(registries in every era's form, imports, classes, adapters, name checks, markers, plants) and for
that Python broken by mutations. Rows from `locate` are inserted into the real schema, so a fact that
could not be stored fails here too. Hypothesis runs derandomized, the same examples on every run: 1000
each of random bytes and text, 300 each of grammar-shaped and broken Python, 150 of a registration
among anything."""

from __future__ import annotations

import keyword
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer.extract import parse
from indexer.extract.locate import locate
from indexer.store import database as store
from indexer.store.schema import setup as schema_setup

STATUSES = {"ok", "syntax-errors", "nul-bytes", "not-utf8", "extract-failed"}
FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=300,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FUZZ_MANY = settings(FUZZ, max_examples=1000)  # cheap to generate

# -- the schema the rows go into ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def schema(tmp_path_factory):
    db = store.connect(tmp_path_factory.mktemp("fuzz") / "fuzz.db", setup=schema_setup)
    db.conn.execute("pragma foreign_keys = off")
    yield db.conn
    db.conn.close()


def check(data: bytes, path: str, conn: sqlite3.Connection) -> dict:
    """The properties every input must have; -> parse's result."""
    out = parse(data)
    assert set(out) == {"status", "error_count", "first_error_line", "error", "facts"}
    assert out["status"] in STATUSES
    assert (out["status"] == "ok") == (out["error"] is None)
    assert isinstance(out["error_count"], int) and out["error_count"] >= 0
    assert out["status"] != "extract-failed", out["error"]  # an extractor raised: a bug, not bad input
    n_lines = data.count(b"\n") + 1
    rows = locate(out["facts"], path)
    assert isinstance(rows, dict)
    text = data.decode("utf-8", "replace")
    for table, table_rows in rows.items():
        assert table in store.FACT_TABLES, table
        for r in table_rows:
            for k, v in r.items():
                assert v is None or isinstance(v, (int, str, float)), (table, k, v)
            if r.get("line") is not None:
                assert 1 <= r["line"] <= n_lines, (table, r)
        if table_rows:
            cols = list(table_rows[0])
            conn.executemany(
                f"insert into {table}(unit_id, {', '.join(cols)}) values (1{', ?' * len(cols)})",
                [[r[c] for c in cols] for r in table_rows],
            )
    conn.rollback()
    # nothing is invented: every registered name and every class name is written in the file
    for r in rows.get("registrations", []):
        assert r["name"] in text, r
    for r in rows.get("classes", []):
        assert r["name"] in text, r
    return out


PATHS = st.sampled_from(
    [
        "vllm/entrypoints/openai/tool_parsers/x_tool_parser.py",
        "vllm/entrypoints/openai/tool_parsers/__init__.py",
        "vllm/tool_parsers/__init__.py",
        "vllm/reasoning/r.py",
        "vllm/parser/engine/registered_adapters.py",
        "vllm/parser/parser_manager.py",
        "vllm/x.py",
        "vllm/__init__.py",
        "vllm/entrypoints/openai/cli_args.py",
    ]
)

# -- random bytes -------------------------------------------------------------------------------------------------


@FUZZ_MANY
@given(data=st.binary(max_size=3000), path=PATHS)
def test_random_bytes(schema, data, path):
    check(data, path, schema)


@FUZZ_MANY
@given(text=st.text(max_size=1500), path=PATHS)
def test_random_text(schema, text, path):
    check(text.encode("utf-8", "surrogatepass"), path, schema)


# -- Python shaped by the grammar of what tpindex reads ------------------------------------------------------------

NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True).filter(
    lambda s: not keyword.iskeyword(s) and not keyword.issoftkeyword(s)
)
CLASS = st.builds(
    lambda a, b: a[:1].upper() + a[1:] + b,
    NAMES,
    st.sampled_from(
        ["ToolParser", "ReasoningParser", "Parser", "ParserToolAdapter", "ParserReasoningAdapter", ""]
    ),
)
DOTTED = st.lists(NAMES, min_size=1, max_size=4).map(".".join)
MODULE = st.one_of(
    DOTTED.map(lambda d: "vllm." + d),
    st.builds(lambda n, d: "." * n + d, st.integers(1, 6), DOTTED),
    st.integers(1, 4).map(lambda n: "." * n),
)
# names people register: anything a string literal can hold
REG_NAME = st.one_of(NAMES, st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12))
MANAGER = st.sampled_from(["ToolParserManager", "ReasoningParserManager", "ParserManager", "Manager"])


def lit(s: str) -> str:
    return repr(s)


def indent(block: str, by: str = "    ") -> str:
    return "".join(by + line if line.strip() else line for line in block.splitlines(True))


def imports() -> st.SearchStrategy[str]:
    alias = st.one_of(st.just(""), NAMES.map(lambda a: f" as {a}"))
    return st.one_of(
        st.builds(lambda m, a: f"import {m}{a}\n", DOTTED, alias),
        st.builds(
            lambda m, ns: f"from {m} import {', '.join(ns)}\n",
            MODULE,
            st.lists(st.builds(str.__add__, CLASS, alias), min_size=1, max_size=4),
        ),
        st.builds(
            lambda m, ns: f"from {m} import (\n" + "".join(f"    {n},  # why\n" for n in ns) + ")\n",
            MODULE,
            st.lists(CLASS, min_size=1, max_size=4),
        ),
        st.builds(lambda m: f"from {m} import *\n", MODULE),
        st.builds(lambda m, n: f"if TYPE_CHECKING:\n    from {m} import {n}\n", MODULE, CLASS),
    )


def decorator_args() -> st.SearchStrategy[str]:
    return st.one_of(
        st.just(""),
        REG_NAME.map(lit),
        st.lists(REG_NAME, max_size=4).map(lambda ns: repr(ns)),
        st.builds(lambda n: f"name={lit(n)}", REG_NAME),
        st.builds(lambda n: f"{lit(n)}, force=True", REG_NAME),
        st.builds(lambda n: f"name=[{lit(n)}], module=None", REG_NAME),
        CLASS,
    )


def class_body() -> st.SearchStrategy[str]:
    member = st.one_of(
        st.builds(
            lambda b: f"supports_required_and_named = {b}\n",
            st.sampled_from(["False", "True", "None", "x.y"]),
        ),
        st.builds(
            lambda m: f"def {m}(self, delta):\n    return delta\n",
            st.sampled_from(
                ["extract_tool_calls_streaming", "extract_tool_calls", "unified_parser_cls", "__init__"]
            )
            | NAMES,
        ),
        st.builds(lambda c: f"@classmethod\ndef unified_parser_cls(cls):\n    return {c}\n", CLASS),
        st.builds(
            lambda k, t: f"# {k}: {t}\npass\n",
            st.sampled_from(["TODO", "HACK", "FIXME", "XXX", "todo"]),
            st.text(alphabet="abc xyz()", max_size=20),
        ),
        st.just('def reset(self):\n    self.prev_tool_call_arr = [{"arguments": {}}]\n'),
        st.just("pass\n"),
    )
    return st.lists(member, min_size=1, max_size=4).map("".join)


def statements() -> st.SearchStrategy[str]:
    base = st.one_of(
        st.just(""),
        st.lists(st.one_of(CLASS, DOTTED), min_size=1, max_size=3).map(", ".join),
        st.builds(lambda c: f"{c}, metaclass=ABCMeta", CLASS),
    )
    entries = st.lists(st.tuples(REG_NAME, NAMES, CLASS), max_size=5)
    return st.one_of(
        imports(),
        st.builds(
            lambda m, a, c, b, body: f"@{m}.register_module({a})\nclass {c}({b}):\n{indent(body)}",
            MANAGER,
            decorator_args(),
            CLASS,
            base,
            class_body(),
        ),
        st.builds(lambda c, b, body: f"class {c}({b}):\n{indent(body)}", CLASS, base, class_body()),
        st.builds(
            lambda m, n, mod, c: f"{m}.register_module({lit(n)}, module={c})\n",
            MANAGER,
            REG_NAME,
            MODULE,
            CLASS,
        ),
        st.builds(
            lambda m, n, mod, c: f"{m}.register_lazy_module({lit(n)}, {lit(mod)}, {lit(c)})\n",
            MANAGER,
            REG_NAME,
            MODULE,
            CLASS,
        ),
        st.builds(
            lambda m, n, mod, c: (
                f"{m}.register_lazy_module(\n    name={lit(n)},\n    module_path={lit(mod)},"
                f"\n    class_name={lit(c)},\n)\n"
            ),
            MANAGER,
            REG_NAME,
            MODULE,
            CLASS,
        ),
        st.builds(
            lambda v, es: (
                f"_{v}_TO_REGISTER = {{\n"
                + "".join(f"    {lit(n)}: ({lit(f)}, {lit(c)}),\n" for n, f, c in es)
                + "}\n"
            ),
            st.sampled_from(["TOOL_PARSERS", "REASONING_PARSERS", "PARSERS", "X"]),
            entries,
        ),
        st.builds(
            lambda v, m, pkg: (
                f"for name, (file_name, class_name) in _{v}_TO_REGISTER.items():\n"
                f'    {m}.register_lazy_module(name, f"{pkg}.{{file_name}}", class_name)\n'
            ),
            st.sampled_from(["TOOL_PARSERS", "REASONING_PARSERS", "PARSERS"]),
            MANAGER,
            DOTTED,
        ),
        st.builds(
            lambda a, p: f"({a}ParserReasoningAdapter, {a}ParserToolAdapter) = make_adapters({p})\n",
            CLASS,
            st.one_of(CLASS, CLASS.map(lambda c: f"parser_cls={c}")),
        ),
        st.builds(
            lambda var, n, mod, c: f"if {var} == {lit(n)}:\n    from {mod} import {c}\n    return {c}\n",
            st.sampled_from(["tool_parser_name", "reasoning_parser_name", "name"]),
            REG_NAME,
            MODULE,
            CLASS,
        ),
        st.builds(
            lambda ns, mod, c: (
                f"if tool_parser_name in ({', '.join(map(lit, ns))},):\n    from {mod} import {c}\n"
            ),
            st.lists(REG_NAME, min_size=1, max_size=3),
            MODULE,
            CLASS,
        ),
        st.builds(
            lambda ns: f'parser.add_argument("--tool-call-parser", choices={ns!r})\n',
            st.lists(REG_NAME, max_size=4),
        ),
        st.builds(lambda a, c: f"{a} = {c}\n", NAMES, st.one_of(CLASS, DOTTED)),
        st.just('prev_tool_call_arr = [{"arguments": {}}]\n'),
        st.builds(
            lambda k: f"x = 1  # {k}(someone): fix\n", st.sampled_from(["TODO", "HACK", "FIXME", "XXX"])
        ),
    )


def nested(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Statements inside functions, classes, ifs and try blocks, nested to any depth."""

    def wrap(block: str, head: str) -> str:
        return head + indent(block or "pass\n")

    return st.builds(
        wrap,
        inner,
        st.sampled_from(
            ["def outer():\n", "class Outer:\n", "if True:\n", "try:\n", "with ctx():\n", "async def f():\n"]
        ),
    ).map(lambda s: s + ("except Exception:\n    pass\n" if s.startswith("try:") else ""))


MODULE_TEXT = st.recursive(
    statements(),
    lambda inner: st.one_of(nested(inner), st.lists(inner, max_size=3).map("".join)),
    max_leaves=25,
)
PROGRAM = st.lists(MODULE_TEXT, min_size=1, max_size=12).map("\n".join)


def top_level_decorated() -> st.SearchStrategy[tuple[str, str]]:
    """A module-level class registered by name with the decorator: (its code, the name)."""
    return st.builds(
        lambda m, n, c: (f"@{m}.register_module({lit(n)})\nclass {c}(ToolParser):\n    pass\n", n),
        st.sampled_from(["ToolParserManager", "ReasoningParserManager"]),
        NAMES,
        CLASS,
    )


@pytest.mark.slow
@FUZZ
@given(program=PROGRAM, path=PATHS)
def test_grammar_shaped_python(schema, program, path):
    data = program.encode()
    out = check(data, path, schema)
    assert out["status"] == "ok", (out["error"], program)  # the generator writes valid Python


@pytest.mark.slow
@settings(FUZZ, max_examples=150)  # two programs per example
@given(before=PROGRAM, reg=top_level_decorated(), after=PROGRAM, path=PATHS)
def test_a_registration_among_anything_is_found(schema, before, reg, after, path):
    code, name = reg
    program = f"{before}\n{code}\n{after}"
    check(program.encode(), path, schema)
    names = {r["name"] for r in locate(parse(program.encode())["facts"], path)["registrations"]}
    assert name in names, program


# -- that Python, broken --------------------------------------------------------------------------------------------

MUTATION = st.one_of(
    st.tuples(st.just("cut"), st.integers(0, 10_000), st.integers(0, 200)),
    st.tuples(
        st.just("insert"),
        st.integers(0, 10_000),
        st.sampled_from(
            [
                b"\0",
                b"\xff\xfe",
                b"\xc3",
                b"(",
                b")",
                b"'''",
                b'"',
                b"\n    ",
                b"\t",
                b"\\",
                b":",
                b"@",
                b"\r",
                b"#",
            ]
        ),
    ),
    st.tuples(st.just("truncate"), st.integers(0, 10_000), st.just(0)),
    st.tuples(st.just("dedent"), st.integers(0, 10_000), st.just(0)),
    st.tuples(st.just("flip"), st.integers(0, 10_000), st.integers(0, 7)),
)


def mutate(data: bytes, mutations) -> bytes:
    buf = bytearray(data)
    for kind, at, arg in mutations:
        at = at % (len(buf) + 1)
        if kind == "cut":
            del buf[at : at + arg]
        elif kind == "insert":
            buf[at:at] = arg
        elif kind == "truncate":
            del buf[at:]
        elif kind == "dedent":
            line = buf.rfind(b"\n", 0, at) + 1
            while buf[line : line + 1] == b" ":
                del buf[line]
        elif kind == "flip" and at < len(buf):
            buf[at] ^= 1 << arg
    return bytes(buf)


@pytest.mark.slow
@FUZZ
@given(program=PROGRAM, mutations=st.lists(MUTATION, min_size=1, max_size=5), path=PATHS)
def test_broken_python(schema, program, mutations, path):
    check(mutate(program.encode(), mutations), path, schema)
