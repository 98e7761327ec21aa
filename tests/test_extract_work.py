"""The per-blob work of the extraction (issue 30): a blob's tree is walked by one query cursor, and work a
blob cannot need (decided from its bytes, provably) is not done. The facts stay those every kind's own
tests state; these tests say how much work gives them."""

from __future__ import annotations

import textwrap

import pytest

from indexer.core.scope import FULL, MODULE
from indexer.extract import parse, ts

PARSER = textwrap.dedent('''
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
    ''').lstrip()


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
