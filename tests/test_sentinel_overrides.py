"""Sentinels through overrides (issue 23, item 4), on a fixture of the decorator era of vllm/reasoning
(v0.8.3 - v0.11.0) with a generic thinking-tags base no name registers (tests/test_streaming_from.py reuses
it for item 5).

A sentinel held by an attribute or property is the one the most-derived class defines: `marvel` overrides
`start_token` / `end_token` (properties returning a tokens object of a package outside the tree), so it
never uses r1's `<think>`, and shows the references; `plainattr` overrides them with class attributes.
f-string sentinels are patterns (`<think{self.suffix}>`), filled in where they only read module constants
of their own file; a helper class of the name's file counts for its token-shaped sentinels.
"""

from __future__ import annotations

import json

import pytest
from conftest import build_tags, line_of, make_repo, rows, tpindex

ABS = '''
class ReasoningParser:
    def __init__(self, tokenizer):
        self.model_tokenizer = tokenizer


class ReasoningParserManager:
    reasoning_parsers = {}

    @classmethod
    def register_module(cls, name=None, force=True, module=None):
        def wrap(module):
            cls.reasoning_parsers[name] = module
            return module
        return wrap
'''

BASIC = '''
from abc import abstractmethod

from vllm.reasoning.abs_reasoning_parsers import ReasoningParser


class ThinkingTagsParser(ReasoningParser):
    @property
    @abstractmethod
    def start_token(self) -> str:
        raise NotImplementedError

    @property
    @abstractmethod
    def end_token(self) -> str:
        raise NotImplementedError

    def is_reasoning_end(self, input_ids):
        return self.end_token_id in input_ids

    def extract_reasoning_content(self, model_output, request):
        head, _, tail = model_output.partition(self.end_token)
        return head.removeprefix(self.start_token), tail

    def extract_reasoning_content_streaming(self, previous_text, current_text, delta_text):
        return delta_text
'''

R1 = '''
from vllm.reasoning.abs_reasoning_parsers import ReasoningParserManager
from vllm.reasoning.basic_parsers import ThinkingTagsParser


@ReasoningParserManager.register_module("r1")
class R1ReasoningParser(ThinkingTagsParser):
    @property
    def start_token(self) -> str:
        return "<think>"

    @property
    def end_token(self) -> str:
        return "</think>"

    def extract_reasoning_content_streaming(self, previous_text, current_text, delta_text):
        out = super().extract_reasoning_content_streaming(previous_text, current_text, delta_text)
        return out.strip()
'''

MARVEL = '''
from functools import cached_property

from vllm.reasoning.abs_reasoning_parsers import ReasoningParserManager
from vllm.reasoning.r1_reasoning_parser import R1ReasoningParser


@ReasoningParserManager.register_module("marvel")
class MarvelReasoningParser(R1ReasoningParser):
    """Marvel models think between [THINK] and [/THINK] (prose, not a sentinel)."""

    def __init__(self, tokenizer):
        super().__init__(tokenizer)
        self.start_token_id = tokenizer.get_control_token(self.start_token)

    @cached_property
    def start_token(self) -> str:
        from outside_tokens.base import SpecialTokens

        return SpecialTokens.begin_think

    @cached_property
    def end_token(self) -> str:
        from outside_tokens.base import SpecialTokens

        return SpecialTokens.end_think
'''

PLAINATTR = '''
from vllm.reasoning.abs_reasoning_parsers import ReasoningParserManager
from vllm.reasoning.r1_reasoning_parser import R1ReasoningParser


@ReasoningParserManager.register_module("plainattr")
class PlainattrReasoningParser(R1ReasoningParser):
    start_token = "<reason>"
    end_token = "</reason>"
'''

NEMO = '''
from vllm.reasoning.abs_reasoning_parsers import ReasoningParserManager
from vllm.reasoning.r1_reasoning_parser import R1ReasoningParser


@ReasoningParserManager.register_module("nemo")
class NemoReasoningParser(R1ReasoningParser):
    def extract_reasoning_content(self, model_output, request):
        reasoning, content = super().extract_reasoning_content(model_output, request)
        return (content, reasoning) if content is None else (reasoning, content)
'''

STREAMY = '''
from vllm.reasoning.abs_reasoning_parsers import ReasoningParserManager
from vllm.reasoning.r1_reasoning_parser import R1ReasoningParser


@ReasoningParserManager.register_module("streamy")
class StreamyReasoningParser(R1ReasoningParser):
    def extract_reasoning_content_streaming(self, previous_text, current_text, delta_text):
        return delta_text.lstrip()
'''

SUFFIXED = '''
from vllm.reasoning.abs_reasoning_parsers import ReasoningParserManager
from vllm.reasoning.basic_parsers import ThinkingTagsParser

_MARK = "｜M｜"
OPEN_TAG = f"<{_MARK}open>"
CLOSE_TAG = f"{OPEN_TAG}</{_MARK}open>"


class SuffixScanner:
    """A helper the parser uses: its token-shaped sentinels are the name's."""

    def __init__(self, suffix):
        self.scan_start_token = f"<scan{suffix}>"
        self.sep_token = "$$"


@ReasoningParserManager.register_module("suffixed")
class SuffixedReasoningParser(ThinkingTagsParser):
    def __init__(self, tokenizer, suffix=""):
        super().__init__(tokenizer)
        self.suffix = suffix
        self.think_start_token: str = f"<think{self.suffix}>"
        self.note = f"thinking ends with {self.end_token}"

    @property
    def start_token(self) -> str:
        return self.think_start_token

    @property
    def end_token(self) -> str:
        return f"</think{self.suffix}>"
'''

TREE = {
    "vllm/reasoning/__init__.py": "",
    "vllm/reasoning/abs_reasoning_parsers.py": ABS,
    "vllm/reasoning/basic_parsers.py": BASIC,
    "vllm/reasoning/r1_reasoning_parser.py": R1,
    "vllm/reasoning/marvel_reasoning_parser.py": MARVEL,
    "vllm/reasoning/plainattr_reasoning_parser.py": PLAINATTR,
    "vllm/reasoning/nemo_reasoning_parser.py": NEMO,
    "vllm/reasoning/streamy_reasoning_parser.py": STREAMY,
    "vllm/reasoning/suffixed_reasoning_parser.py": SUFFIXED,
}

R1_FILE = "vllm/reasoning/r1_reasoning_parser.py"
R1_STREAMING = line_of(R1, "def extract_reasoning_content_streaming(")


@pytest.fixture(scope="module")
def over_db(tmp_path_factory):
    base = tmp_path_factory.mktemp("overrides")
    repo = make_repo(base / "repo", {"v0.11.0": TREE})
    db = base / "index.db"
    build_tags(repo, db, "v0.11.0")
    return db


def card(db, name):
    (one,) = json.loads(tpindex("card", name, "--kind", "reasoning", "--format", "json", "--db", db).output)["cards"]
    return one


def sentinels(c) -> dict[str, dict]:
    return {s["value"]: s for s in c["sentinels"]}


def test_a_property_returning_a_literal_holds_it_under_its_name(over_db):
    got = rows(over_db, "select attribute, value, how from sentinels_v where file = ? order by line", (R1_FILE,))
    assert got == [("start_token", "<think>", "attribute"), ("end_token", "</think>", "attribute")]


def test_an_overriding_property_hides_the_bases_token_and_keeps_the_reference(over_db):
    s = sentinels(card(over_db, "marvel"))
    assert "<think>" not in s and "</think>" not in s
    assert s["SpecialTokens.begin_think"]["attributes"] == ["start_token"]
    assert s["SpecialTokens.begin_think"]["places"][0]["how"] == "reference"
    assert s["SpecialTokens.end_think"]["places"][0]["line"] == line_of(MARVEL, "return SpecialTokens.end_think")
    assert not any("THINK" in v for v in s)  # the docstring is prose
    text = tpindex("card", "marvel", "--kind", "reasoning", "--db", over_db).output
    assert "<think>" not in text and "SpecialTokens.begin_think" in text


def test_an_overriding_class_attribute_hides_the_bases_property(over_db):
    s = sentinels(card(over_db, "plainattr"))
    assert set(s) == {"<reason>", "</reason>"}


def test_the_base_itself_keeps_its_tokens(over_db):
    assert {"<think>", "</think>"} <= set(sentinels(card(over_db, "r1")))
    assert {"<think>", "</think>"} <= set(sentinels(card(over_db, "nemo")))  # it overrides no token


def test_f_string_sentinels_are_patterns(over_db):
    s = sentinels(card(over_db, "suffixed"))
    assert s["<think{self.suffix}>"]["attributes"] == ["think_start_token"]
    assert s["<think{self.suffix}>"]["places"][0]["how"] == "pattern"
    assert s["</think{self.suffix}>"]["attributes"] == ["end_token"]
    assert not any(v.startswith("thinking") for v in s)  # an f-string of prose is no pattern
    # an f-string reading only a constant of its own module is the token itself
    assert s["<｜M｜open>"]["attributes"] == ["OPEN_TAG"] and s["<｜M｜open>"]["places"][0]["how"] == "attribute"
    assert "U+FF5C" in s["<｜M｜open>"]["non_ascii"]
    assert s["<｜M｜open></｜M｜open>"]["attributes"] == ["CLOSE_TAG"]  # built from constants only
    assert s["<scan{suffix}>"]["places"][0]["class"] == "SuffixScanner"  # a helper class of its file
    assert "$$" not in s  # a helper's sentinels count when shaped like a token
    text = tpindex("card", "suffixed", "--kind", "reasoning", "--db", over_db).output
    line = next(x for x in text.splitlines() if "<think{self.suffix}>" in x)
    assert "a pattern" in line and "self.suffix" in line


def test_one_names_sentinels_are_its_cards(over_db):
    """`name_sentinels` (what replay builds its vocabulary from) gives the card's sentinels, overrides applied."""
    from indexer.answers.card import name_sentinels
    from indexer.api import Index

    ix = Index(over_db)
    for name in ("marvel", "plainattr", "r1", "nemo"):
        assert [s["value"] for s in name_sentinels(ix.db, name, "v0.11.0", "reasoning")] == \
            list(sentinels(card(over_db, name)))
