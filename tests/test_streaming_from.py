"""Where streaming comes from (issue 23, item 5): a registered class that defines one extraction method and
inherits the other from another name's class, on the fixture of tests/test_sentinel_overrides.py (the
decorator era of vllm/reasoning, a generic thinking-tags base no name registers, r1's class with its own
streaming method). `nemo` overrides only the non-streaming method (streaming is r1's); `marvel` defines
neither: its streaming method is r1's and its non-streaming one the framework base's, so, streaming first,
r1's class is where its parsing code is; `streamy` overrides only streaming.
"""

from __future__ import annotations

import json

import pytest
from fixtures.helpers import build_tags, make_repo, rows, tpindex
from fixtures.sentinels import R1_FILE, R1_STREAMING, TREE, card


@pytest.fixture(scope="module")
def over_db(tmp_path_factory):
    base = tmp_path_factory.mktemp("streaming-from")
    repo = make_repo(base / "repo", {"v0.11.0": TREE})
    db = base / "index.db"
    build_tags(repo, db, "v0.11.0")
    return db


def pm(db, name):
    cols = (
        "real_class",
        "real_file",
        "reg_class",
        "streaming_class",
        "streaming_file",
        "streaming_line",
        "streaming_from",
        "notes",
    )
    (got,) = rows(
        db, f"select {', '.join(cols)} from parser_map_v where kind = 'reasoning' and name = ?", (name,)
    )
    out = dict(zip(cols, got, strict=True))
    out["notes"] = json.loads(out["notes"] or "[]")
    return out


def test_own_non_streaming_method_and_streaming_from_another_names_class(over_db):
    p = pm(over_db, "nemo")
    assert (p["real_class"], p["real_file"]) == (
        "NemoReasoningParser",
        "vllm/reasoning/nemo_reasoning_parser.py",
    )
    assert (p["streaming_class"], p["streaming_file"], p["streaming_line"]) == (
        "R1ReasoningParser",
        R1_FILE,
        R1_STREAMING,
    )
    assert p["streaming_from"] == "r1"
    assert any(
        n.startswith("streaming: inherited from R1ReasoningParser") and "r1's registered parser" in n
        for n in p["notes"]
    )
    out = tpindex("which", "nemo", "--kind", "reasoning", "--db", over_db).output
    assert (
        f"=> really implemented in vllm/reasoning/nemo_reasoning_parser.py (NemoReasoningParser); streaming in"
        f" {R1_FILE}:{R1_STREAMING} (R1ReasoningParser, r1's parser)"
    ) in " ".join(out.split())
    c = card(over_db, "nemo")
    assert (c["streaming_method"]["class"], c["streaming_from"]) == ("R1ReasoningParser", ["r1"])
    text = tpindex("card", "nemo", "--kind", "reasoning", "--db", over_db).output
    assert (
        f"R1ReasoningParser.extract_reasoning_content_streaming  {R1_FILE}:{R1_STREAMING}  (r1's parser)"
        in text
    )


def test_no_extraction_method_of_its_own_streaming_first(over_db):
    p = pm(over_db, "marvel")
    assert (p["reg_class"], p["real_class"], p["real_file"]) == (
        "MarvelReasoningParser",
        "R1ReasoningParser",
        R1_FILE,
    )
    assert (p["streaming_class"], p["streaming_from"]) == ("R1ReasoningParser", "r1")
    assert any("inherited from ThinkingTagsParser" in n for n in p["notes"])  # the non-streaming method
    out = tpindex("which", "marvel", "--kind", "reasoning", "--db", over_db).output
    assert f"=> really implemented in {R1_FILE} (R1ReasoningParser)" in " ".join(out.split())
    assert "; streaming in" not in out  # the real class is where streaming is


def test_own_streaming_method_stays_real(over_db):
    p = pm(over_db, "streamy")
    assert p["real_class"] == "StreamyReasoningParser" and p["streaming_from"] is None
    assert p["streaming_class"] == "StreamyReasoningParser"
    assert any(
        n.startswith("extract_reasoning_content: inherited from ThinkingTagsParser") for n in p["notes"]
    )


def test_the_base_name_itself_and_a_framework_streaming_method(over_db):
    assert pm(over_db, "r1")["streaming_from"] is None
    s = pm(over_db, "suffixed")  # streaming from the framework base: not another name's
    assert (s["streaming_class"], s["streaming_from"]) == ("ThinkingTagsParser", None)


def test_the_browsers_parser_page_says_it_too(over_db):
    import html

    from fixtures.serve import serve

    client = serve(over_db)
    try:
        page = html.unescape(client.html("/-/parser/reasoning/nemo?v=v0.11.0"))
    finally:
        client.close()
    row = next(x for x in page.split("<tr>") if x.startswith("<th>streaming</th>"))
    assert "R1ReasoningParser" in row and "r1's parser" in row
