"""The atlas's readers of test files (issue 44): strings a test builds, folded from what the file binds (never
run), and calls read and written by the shape of their markup, not by parser name. Every text here is written
for these tests."""

from __future__ import annotations

import textwrap

import pytest

from indexer.answers.atlas_literals import code_blocks, literals
from indexer.answers.atlas_shapes import classify, read_calls, write

TEST_FILE = textwrap.dedent(
    """
    import json

    BEGIN = "<calls>"
    END = "</calls>"
    ARGS = {"city": "Oslo", "days": 2}


    def _call(name, args):
        return f"<call>{name}<sep>{args}</call>"


    def _wrap(*calls):
        return BEGIN + "".join(calls) + END


    CASES = [
        _wrap(_call("get_weather", '{"city": "Oslo"}')),
        "Sure. " + _wrap(_call("a", "{}"), _call("b", "{}")),
        f"[{json.dumps({'name': 'get_weather', 'arguments': ARGS})}]",
    ]


    def test_local(parser):
        local = "<tool_call>" + json.dumps({"name": "f", "arguments": ARGS}) + "</tool_call>"
        assert parser.parse(local)


    def test_malformed_call_is_content(parser):
        assert not parser.parse("<tool_call>" + json.dumps({"name": "g", "arguments": ARGS}))
    """
)


def test_literals_are_folded_from_what_the_file_binds():
    values = [v for _, v, _ in literals(TEST_FILE)]
    assert '<calls><call>get_weather<sep>{"city": "Oslo"}</call></calls>' in values
    assert "Sure. <calls><call>a<sep>{}</call><call>b<sep>{}</call></calls>" in values
    assert '[{"name": "get_weather", "arguments": {"city": "Oslo", "days": 2}}]' in values
    assert '<tool_call>{"name": "f", "arguments": {"city": "Oslo", "days": 2}}</tool_call>' in values
    lines = {v: line for line, v, _ in literals(TEST_FILE)}
    assert lines['[{"name": "get_weather", "arguments": {"city": "Oslo", "days": 2}}]'] == 20
    negative = {v for _, v, neg in literals(TEST_FILE) if neg}
    assert negative == {'<tool_call>{"name": "g", "arguments": {"city": "Oslo", "days": 2}}'}


def test_code_blocks_of_a_page():
    page = 'Text\n\n```json\n<tool_call>{"name": "f", "arguments": {}}</tool_call>\n```\n\nand `inline code here`\n'
    assert [v for _, v, _ in code_blocks(page)] == [
        '<tool_call>{"name": "f", "arguments": {}}</tool_call>',
        "inline code here",
    ]


@pytest.mark.parametrize(
    ("text", "tokens", "calls", "before", "case"),
    [
        ('<tc>{"name": "f", "arguments": {"a": 1}}</tc>', ["<tc>", "</tc>"], [("f", {"a": 1})], "", "single"),
        (
            'Hi.<tc>{"name": "f", "arguments": "{}"}</tc>',
            ["<tc>", "</tc>"],
            [("f", {})],
            "Hi.",
            "content-before",
        ),
        (
            '[{"name": "f", "arguments": {"a": 1}}, {"name": "g", "arguments": {}}]',
            [],
            [("f", {"a": 1}), ("g", {})],
            "",
            "parallel",
        ),
        (
            "<tc>\n<function=f>\n<parameter=a>\n3\n</parameter>\n</function>\n</tc>",
            ["<tc>", "</tc>"],
            [("f", {"a": 3})],
            "",
            "single",
        ),
        (
            '<x:invoke name="f"><x:parameter name="q">say "hi"</x:parameter></x:invoke>',
            [],
            [("f", {"q": 'say "hi"'})],
            "",
            "nested",
        ),
        (
            "<tc>f<arg_key>a</arg_key><arg_value>Zürich</arg_value></tc>",
            ["<tc>", "</tc>"],
            [("f", {"a": "Zürich"})],
            "",
            "unicode",
        ),
        ("[f(a='x', b=True), g()]", [], [("f", {"a": "x", "b": True}), ("g", {})], "", "parallel"),
        (
            '<b><c>functions.f:0<s>{"a": 1}</c></b>',
            ["<b>", "</b>", "<c>", "</c>", "<s>"],
            [("f", {"a": 1})],
            "",
            "single",
        ),
    ],
)
def test_calls_are_read_by_the_shape_of_their_markup(text, tokens, calls, before, case):
    r = read_calls(text, tokens)
    assert r is not None and r.calls == calls and r.before == before
    assert classify(r) == case


def test_text_after_the_calls_is_not_read_as_a_whole_output():
    assert (
        read_calls('<tc>{"name": "f", "arguments": {}}</tc> and then some words', ["<tc>", "</tc>"]) is None
    )


def test_the_writer_writes_other_calls_in_an_example_s_shape_and_reads_them_back():
    toks = ["<tc>", "</tc>"]
    one = read_calls('<tc>\n{"name": "f", "arguments": {"a": 1}}\n</tc>', toks)
    two, why = write(one, [("g", {"x": "y"}), ("h", {})], "Let me see.", toks)
    assert why == "" and two.startswith("Let me see.<tc>\n{") and two.count("<tc>") == 2
    assert read_calls(two, toks).calls == [("g", {"x": "y"}), ("h", {})]
    xml = read_calls(
        "<f:x>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</f:x>", ["<f:x>", "</f:x>"]
    )
    text, _ = write(xml, [("g", {"q": "Paris", "n": 3, "ok": True})], None, ["<f:x>", "</f:x>"])
    assert "<parameter=n>\n3\n</parameter>" in text and read_calls(text, ["<f:x>", "</f:x>"]).calls[0][1] == {
        "q": "Paris",
        "n": 3,
        "ok": True,
    }
    bare = read_calls('{"name": "f", "parameters": {"a": 1}}', [])
    text, why = write(bare, [("g", {})], "Hi.", [])
    assert text is None and "no token" in why
    text, why = write(bare, [("g", {}), ("h", {})], None, [])
    assert text is None and "joins two" in why


def test_the_battery_s_axes_are_one_everywhere():
    """The cases and modes each surface offers are the battery's (the command line's choices are written out
    so that click reads them without importing the answers)."""
    from indexer.answers import atlas, atlas_cases, atlas_verdict
    from indexer.cli import atlas as cli

    assert atlas.CASE_IDS == atlas_cases.CASE_IDS == cli.CASES
    assert atlas.MODES == atlas_verdict.MODES == cli.MODES
