"""Regular expressions of a parser's code as a fact kind (`regexes`, issue 29): the pattern text as Python
reads it, the flags the call passes, and the name it is assigned to, so that `fit` can run a parser's own
regular expressions on a template's rendered call or a raw output."""

from __future__ import annotations

import re
import textwrap

from fixtures.eras import PLAIN_ABSTRACT, lazy_registry, tool_names
from fixtures.helpers import build_tags, line_of, make_repo, rows

from indexer.extract import parse

PARSER = r"""
import re
import regex

CALL_RE = re.compile(r"\[(\w+)\((.*?)\)\]", re.DOTALL | re.MULTILINE)
JOINED_PATTERN = ("<call>"
                  r"(?P<body>.*)")


class ZetaToolParser:
    name_regex = regex.compile(r"\{\s*\"name\"", flags=regex.S)

    def __init__(self, tokenizer):
        self.tool_call_regex = re.compile(r"<zeta_call>(.*?)</zeta_call>")

    def extract_tool_calls(self, text):
        found = re.findall(r"args=(\d+)", text, re.I)
        if re.search(JOINED_PATTERN, text):
            return found
        return re.sub(r"\s+", " ", text)

    def describe(self):
        return "not a regex: [x](y)"
"""


def regexes(data: str) -> list[dict]:
    return parse(textwrap.dedent(data).lstrip("\n").encode())["facts"]["regexes"]  # as `commit` writes it


def test_patterns_flags_and_the_names_they_are_assigned_to():
    got = {(r["attribute"], r["pattern"], r["flags"], r["how"]) for r in regexes(PARSER)}
    assert got == {
        ("CALL_RE", r"\[(\w+)\((.*?)\)\]", "DOTALL|MULTILINE", "compile"),
        ("JOINED_PATTERN", "<call>(?P<body>.*)", None, "assigned"),
        ("name_regex", r"\{\s*\"name\"", "DOTALL", "compile"),
        ("tool_call_regex", "<zeta_call>(.*?)</zeta_call>", "", "compile"),
        (None, r"args=(\d+)", "IGNORECASE", "findall"),
        (None, r"\s+", "", "sub"),
    }
    for r in regexes(PARSER):  # each one is what Python compiles
        re.compile(r["pattern"])
    by = {r["attribute"]: r for r in regexes(PARSER)}
    assert by["tool_call_regex"]["class"] == "ZetaToolParser"
    assert by["tool_call_regex"]["function"] == "ZetaToolParser.__init__"
    assert by["CALL_RE"]["class"] is None and by["CALL_RE"]["line"] == line_of(PARSER, "CALL_RE =")


def test_the_view_has_them_per_version_and_only_in_the_parser_packages(tmp_path):
    repo = make_repo(
        tmp_path / "repo",
        {
            "v0.12.0": {
                "vllm/tool_parsers/__init__.py": lazy_registry("tool", tool_names("zeta")),
                "vllm/tool_parsers/abstract_tool_parser.py": PLAIN_ABSTRACT,
                "vllm/tool_parsers/zeta_tool_parser.py": PARSER,
                "vllm/envs.py": 'SPLIT = re.compile(r"[,;]")\n',
            }
        },
    )
    db = tmp_path / "index.db"
    build_tags(repo, db, "v0.12.0")
    got = rows(
        db,
        "select file, class, attribute, pattern from regexes_v where version = 'v0.12.0'"
        " and attribute = 'tool_call_regex'",
    )
    assert got == [
        (
            "vllm/tool_parsers/zeta_tool_parser.py",
            "ZetaToolParser",
            "tool_call_regex",
            "<zeta_call>(.*?)</zeta_call>",
        )
    ]
    assert rows(db, "select count(*) from regexes_v where file = 'vllm/envs.py'") == [(0,)]
