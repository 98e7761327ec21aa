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

import pytest
from fixtures.helpers import build_tags, line_of, make_repo, rows, tpindex
from fixtures.sentinels import MARVEL, R1_FILE, TREE, card


@pytest.fixture(scope="module")
def over_db(tmp_path_factory):
    base = tmp_path_factory.mktemp("overrides")
    repo = make_repo(base / "repo", {"v0.11.0": TREE})
    db = base / "index.db"
    build_tags(repo, db, "v0.11.0")
    return db


def sentinels(c) -> dict[str, dict]:
    return {s["value"]: s for s in c["sentinels"]}


def test_a_property_returning_a_literal_holds_it_under_its_name(over_db):
    got = rows(
        over_db, "select attribute, value, how from sentinels_v where file = ? order by line", (R1_FILE,)
    )
    assert got == [("start_token", "<think>", "attribute"), ("end_token", "</think>", "attribute")]


def test_an_overriding_property_hides_the_bases_token_and_keeps_the_reference(over_db):
    s = sentinels(card(over_db, "marvel"))
    assert "<think>" not in s and "</think>" not in s
    assert s["SpecialTokens.begin_think"]["attributes"] == ["start_token"]
    assert s["SpecialTokens.begin_think"]["places"][0]["how"] == "reference"
    assert s["SpecialTokens.end_think"]["places"][0]["line"] == line_of(
        MARVEL, "return SpecialTokens.end_think"
    )
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
    assert (
        s["<｜M｜open>"]["attributes"] == ["OPEN_TAG"] and s["<｜M｜open>"]["places"][0]["how"] == "attribute"
    )
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
        assert [s["value"] for s in name_sentinels(ix.db, name, "v0.11.0", "reasoning")] == list(
            sentinels(card(over_db, name))
        )
