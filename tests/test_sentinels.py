"""Sentinels (token strings a parser looks for or emits) and request settings (what adjust_request sets):
extraction from hand-written snippets, and the views on a built fixture."""

from __future__ import annotations

import textwrap

import pytest
from fixtures.helpers import build_tags, line_of, make_repo, rows

from indexer.extract import parse
from indexer.extract.sentinels import non_ascii, regex_tokens, token_sequence

PARSER = '''
import re

THINK_START = "<think>"
TURNS = frozenset(("<|im_start|>", "<|im_end|>"))
FUNC_PREFIX = "<function="
GREETING = "Hello, <tool_call> is how calls start"
_TOOL_CALLS = SpecialTokens.tool_calls.value
_LIMIT = config.max_tokens
_MARK = "｜MARK｜"
CALLS_OPEN = "<｜MARK｜ calls>"
CHINESE = "杭州"


class FooToolParser:
    """Parses <tool_call> blocks (a docstring: prose, not a sentinel)."""

    tool_call_start_token: str = "<tool_call>"
    tool_call_end_token = "</tool_call>"
    structural_tag_model = "foo"
    call_regex = re.compile(r"<tool_call>(?P<body>.*?)</tool_call>|\\[TOOL_CALLS\\](.*)", re.DOTALL)

    def __init__(self, tokenizer):
        self.bot_token = "functools"
        self.calls_begin: str = "<｜tool▁calls▁begin｜>"
        self.dynamic_token = f"<tool_call{tokenizer.suffix}>"
        self.log_prefix = "two words"
        self.sep_pattern = r"<\\s*sep\\s*>"

    def extract_tool_calls(self, text):
        if "[TOOL_CALLS]" in text:
            return text.split("[TOOL_CALLS]")
        if text.startswith(b"<bytes>".decode()):
            return None
        raise ValueError("missing </tool_call> in output")

    def adjust_request(self, request):
        request = super().adjust_request(request)
        if request.tools and request.tool_choice != "none":
            request.skip_special_tokens = False
        else:
            request.max_tokens = 10
        other.skip_special_tokens = True
        return request

    def not_adjust(self, request):
        request.temperature = 0
'''


@pytest.fixture(scope="module")
def sentinels():
    out = parse(textwrap.dedent(PARSER).lstrip("\n").encode())
    assert out["status"] == "ok", out["error"]
    return out["facts"]


def found(facts, **where):
    return [
        (r["attribute"], r["value"], r["how"])
        for r in facts["sentinels"]
        if all(r[k] == v for k, v in where.items())
    ]


def test_class_attributes_and_module_constants(sentinels):
    assert found(sentinels, **{"class": "FooToolParser", "function": None, "how": "attribute"}) == [
        ("tool_call_start_token", "<tool_call>", "attribute"),
        ("tool_call_end_token", "</tool_call>", "attribute"),
    ]
    module = found(sentinels, **{"class": None})
    assert ("THINK_START", "<think>", "attribute") in module
    assert ("FUNC_PREFIX", "<function=", "attribute") in module
    assert ("TURNS", "<|im_start|>", "attribute") in module and ("TURNS", "<|im_end|>", "attribute") in module


def test_self_attributes_token_named_even_when_not_token_shaped(sentinels):
    init = found(sentinels, function="FooToolParser.__init__")
    assert ("bot_token", "functools", "attribute") in init
    assert ("calls_begin", "<｜tool▁calls▁begin｜>", "attribute") in init


def test_bare_literals_in_method_bodies(sentinels):
    assert found(sentinels, function="FooToolParser.extract_tool_calls") == [
        (None, "[TOOL_CALLS]", "literal"),
        (None, "[TOOL_CALLS]", "literal"),
    ]


def test_f_strings_are_patterns(sentinels):
    assert found(sentinels, how="pattern") == [("dynamic_token", "<tool_call{tokenizer.suffix}>", "pattern")]


def test_prose_docstrings_and_non_token_names_are_left_out(sentinels):
    values = {r["value"] for r in sentinels["sentinels"]}
    attributes = {r["attribute"] for r in sentinels["sentinels"]}
    assert "log_prefix" not in attributes  # token-named, but prose (whitespace inside)
    assert "structural_tag_model" not in attributes and "GREETING" not in attributes
    assert not any("missing" in v or "Parses" in v or "Hello" in v for v in values)


def test_tokens_inside_regular_expressions_one_row_each(sentinels):
    assert found(sentinels, attribute="call_regex") == [
        ("call_regex", "<tool_call>", "regex"),
        ("call_regex", "</tool_call>", "regex"),
        ("call_regex", "[TOOL_CALLS]", "regex"),
    ]  # the named group (?P<body>) is no token
    assert found(sentinels, attribute="sep_pattern") == []  # <\s*sep\s*> holds no literal token


def test_pieces_with_non_ascii_symbols_and_token_named_markup_with_a_space(sentinels):
    module = found(sentinels, **{"class": None})
    assert ("_MARK", "｜MARK｜", "attribute") in module
    assert ("CALLS_OPEN", "<｜MARK｜ calls>", "attribute") in module
    assert "CHINESE" not in {a for a, _, _ in module}  # letters, not symbols


def test_names_assigned_from_a_tokens_object_are_references(sentinels):
    assert found(sentinels, how="reference") == [
        ("_TOOL_CALLS", "SpecialTokens.tool_calls.value", "reference")
    ]


def test_non_ascii_characters_are_named(sentinels):
    row = next(r for r in sentinels["sentinels"] if r["attribute"] == "calls_begin")
    assert row["non_ascii"] == "U+FF5C FULLWIDTH VERTICAL LINE, U+2581 LOWER ONE EIGHTH BLOCK"
    assert all(r["non_ascii"] is None for r in sentinels["sentinels"] if r["value"].isascii())


def test_lines_and_enclosing_scopes(sentinels):
    row = next(r for r in sentinels["sentinels"] if r["attribute"] == "bot_token")
    assert row["line"] == line_of(PARSER, 'self.bot_token = "functools"')
    assert row["class"] == "FooToolParser"


@pytest.mark.parametrize(
    "value,token",
    [
        ("<tool_call>", True),
        ("</tool_call>", True),
        ("[TOOL_CALLS]", True),
        ("<|python_tag|>", True),
        ("<｜tool▁calls▁begin｜>", True),
        ("<seed:tool_call>", True),
        ("<minimax:tool_call>", True),
        ("[gMASK]<sop>", True),
        ("<tool_call>\n", True),
        ("</tool_call>\n<tool_call>", True),
        ("[/THINK]", True),
        ("<function=", True),
        ("<", False),
        ("</", False),
        ("[i]", False),
        ("[0]", False),
        ("<tool_call> text", False),
        ("a <b>", False),
        ("<=", False),
        ("[{.*}]", False),
        ("", False),
        ("<|>", False),
    ],
)
def test_token_sequence(value, token):
    assert token_sequence(value) is token


@pytest.mark.parametrize(
    "pattern,tokens",
    [
        (r"<tool_call>(.*?)</tool_call>|<tool_call>(.*)", ["<tool_call>", "</tool_call>"]),
        (r"\[TOOL_CALLS\]\s*(\[.*?\])", ["[TOOL_CALLS]"]),
        (r"<\|python_tag\|>", ["<|python_tag|>"]),
        (r"<arg_key>(?P<key>.*?)</arg_key>", ["<arg_key>", "</arg_key>"]),
        (r"(?<=<think>)(.*)", ["<think>"]),
        (r"<\s*parameter\s*=\s*([^>]*)>", []),
        (r"[A-Z]+\[(.*?)\]", []),
    ],
)
def test_regex_tokens(pattern, tokens):
    assert regex_tokens(pattern) == tokens


def test_non_ascii_names():
    assert non_ascii("<｜a｜▁>") == "U+FF5C FULLWIDTH VERTICAL LINE, U+2581 LOWER ONE EIGHTH BLOCK"
    assert non_ascii("<tool_call>") is None


def test_request_settings_inside_adjust_request_only(sentinels):
    got = [(r["field"], r["value"], r["guard"]) for r in sentinels["request_settings"]]
    assert got == [
        ("skip_special_tokens", "False", 'request.tools and request.tool_choice != "none"'),
        ("max_tokens", "10", 'not (request.tools and request.tool_choice != "none")'),
    ]
    assert sentinels["request_settings"][0]["class"] == "FooToolParser"
    assert sentinels["request_settings"][0]["line"] == line_of(PARSER, "request.skip_special_tokens = False")


def test_views_per_version(tmp_path, db):
    repo = make_repo(
        tmp_path / "repo",
        {
            "v0.30.0": {"vllm/tool_parsers/foo_tool_parser.py": PARSER},
            "v0.31.0": {"vllm/tool_parsers/foo_tool_parser.py": PARSER.replace('"<think>"', '"<thinking>"')},
        },
    )
    build_tags(repo, db, "v0.30.0..v0.31.0")
    got = rows(
        db,
        "select version, file, class, attribute, value, how, non_ascii from sentinels_v"
        " where attribute in ('THINK_START', 'calls_begin') order by version_ord, attribute",
    )
    file = "vllm/tool_parsers/foo_tool_parser.py"
    assert got == [
        ("v0.30.0", file, None, "THINK_START", "<think>", "attribute", None),
        (
            "v0.30.0",
            file,
            "FooToolParser",
            "calls_begin",
            "<｜tool▁calls▁begin｜>",
            "attribute",
            "U+FF5C FULLWIDTH VERTICAL LINE, U+2581 LOWER ONE EIGHTH BLOCK",
        ),
        ("v0.31.0", file, None, "THINK_START", "<thinking>", "attribute", None),
        (
            "v0.31.0",
            file,
            "FooToolParser",
            "calls_begin",
            "<｜tool▁calls▁begin｜>",
            "attribute",
            "U+FF5C FULLWIDTH VERTICAL LINE, U+2581 LOWER ONE EIGHTH BLOCK",
        ),
    ]
    assert rows(db, "select version, field, value from request_settings_v order by version_ord, line") == [
        ("v0.30.0", "skip_special_tokens", "False"),
        ("v0.30.0", "max_tokens", "10"),
        ("v0.31.0", "skip_special_tokens", "False"),
        ("v0.31.0", "max_tokens", "10"),
    ]
