"""An overriding `__init__` that rebinds what the parsing methods read is part of where the logic is (issue 41,
item 1; README "Where the parsing code is"): shown as a hop with its lines by `which` and the card, its file
labelled for it, the sentinels and regular expressions it replaces left out of the name's, and its code counted
in the name's own. The fixture (tests/fixtures/rebind.py) imitates the lazy-registry era of vllm/tool_parsers."""

from __future__ import annotations

import json

from fixtures.helpers import line_of, rows, tpindex
from fixtures.rebind import STATELY, TAG5, TAG5_FILE, TAG7, TAG7_FILE

INIT_LINE = line_of(TAG7, "def __init__")
INIT_END = line_of(TAG7, "re.DOTALL,") + 1  # the closing parenthesis of the last binding


def hops(db, name, version="v0.14.0"):
    return rows(
        db,
        "select hop, class, file, line, end_line, detail from parser_hops_v where version = ? and kind = 'tool'"
        " and name = ? order by step",
        (version, name),
    )


def card(db, name, version="v0.14.0"):
    out = tpindex("card", name, "--kind", "tool", "--at", version, "--format", "json", "--db", db).output
    (one,) = json.loads(out)["cards"]
    return one


def test_which_shows_the_rebinding_init_as_a_hop_with_its_lines(rebind_db):
    got = hops(rebind_db, "tag7")
    assert [h[0] for h in got] == ["registered", "class", "init", "real"]
    assert got[2][1:] == ("Tag7ToolParser", TAG7_FILE, INIT_LINE, INIT_END, "detail_regex arg_regex")
    assert got[3][1:3] == ("Tag5ToolParser", TAG5_FILE)
    out = tpindex("which", "tag7", "--at", "v0.14.0", "--db", rebind_db).output
    init = next(x for x in out.splitlines() if x.strip().startswith("init"))
    assert f"{TAG7_FILE}:{INIT_LINE}-{INIT_END}" in init
    assert "Tag7ToolParser.__init__" in init and "detail_regex, arg_regex" in init
    assert f"{TAG7_FILE}:{INIT_LINE}-{INIT_END}" in out.split("=> really implemented in", 1)[1]
    js = json.loads(tpindex("which", "tag7", "--at", "v0.14.0", "--format", "json", "--db", rebind_db).output)
    (hop,) = [h for h in js["parsers"][0]["hops"] if h["hop"] == "init"]
    assert hop["end_line"] == INIT_END and hop["rebinds"] == ["detail_regex", "arg_regex"]


def test_a_token_rebound_counts_and_what_is_not_a_rebinding_does_not(rebind_db):
    tokenly = hops(rebind_db, "tokenly")
    assert [h[0] for h in tokenly] == ["registered", "class", "init", "real"]
    assert tokenly[2][5] == "call_start"
    # an attribute no parsing method reads; one bound before super().__init__ binds it again
    assert [h[0] for h in hops(rebind_db, "stately")] == ["registered", "class", "real"]
    assert [h[0] for h in hops(rebind_db, "early")] == ["registered", "class", "real"]
    assert [h[0] for h in hops(rebind_db, "tag5")] == ["registered", "class"]
    assert line_of(STATELY, "self.counted")  # the fixture says what it is meant to


def test_the_card_labels_the_files_and_shows_the_rebinding(rebind_db):
    c = card(rebind_db, "tag7")
    roles = {f["file"]: f["roles"] for f in c["code_files"]}
    assert roles[TAG5_FILE] == ["real"]  # not "registered": tag7 registers tag7's class
    assert roles[TAG7_FILE] == ["init", "registered"]
    (r,) = c["rebinds"]
    assert (r["class"], r["file"], r["line"], r["end_line"]) == (
        "Tag7ToolParser",
        TAG7_FILE,
        INIT_LINE,
        INIT_END,
    )
    assert r["attributes"] == ["detail_regex", "arg_regex"]
    text = tpindex("card", "tag7", "--kind", "tool", "--at", "v0.14.0", "--db", rebind_db).output
    line = next(x for x in text.splitlines() if x.strip().startswith("rebinds"))
    assert f"{TAG7_FILE}:{INIT_LINE}-{INIT_END}" in line and "detail_regex, arg_regex" in line
    assert "(real, registered)" not in text


def test_the_sentinels_and_regexes_it_replaces_are_not_the_names(rebind_db):
    c = card(rebind_db, "tag7")
    places = [(p["file"], p["line"], p["attribute"]) for s in c["sentinels"] for p in s["places"]]
    detail5 = line_of(TAG5, "self.detail_regex =")
    arg5 = line_of(TAG5, "self.arg_regex =")
    assert not [p for p in places if p[0] == TAG5_FILE and p[1] in (detail5, arg5)]
    assert (TAG7_FILE, line_of(TAG7, "self.detail_regex ="), "detail_regex") in places
    assert (TAG5_FILE, line_of(TAG5, "self.call_regex ="), "call_regex") in places  # not rebound: still read
    # tag5 itself keeps its own
    own = [(p["file"], p["line"]) for s in card(rebind_db, "tag5")["sentinels"] for p in s["places"]]
    assert (TAG5_FILE, detail5) in own
    from indexer.answers.fit import profiles
    from indexer.api import Index

    index = Index(rebind_db)
    try:
        got = {p.name: p for p in profiles(index.db, "v0.14.0", ["tool"], templates_too=False)["tool"]}
    finally:
        index.close()
    patterns7 = {(r["file"], r["attribute"]) for r in got["tag7"].regexes}
    assert (TAG5_FILE, "detail_regex") not in patterns7 and (TAG7_FILE, "detail_regex") in patterns7
    assert (TAG5_FILE, "call_regex") in patterns7
    assert (TAG5_FILE, "detail_regex") in {(r["file"], r["attribute"]) for r in got["tag5"].regexes}


def test_a_change_of_the_rebinding_init_alone_is_a_change_of_the_names_code(rebind_db):
    life = dict(rows(rebind_db, "select name, code_changed_in from lifecycle where kind = 'tool'"))
    assert life["tag7"] == "v0.15.0"
    assert life["tag5"] is None
    pieces = rows(
        rebind_db,
        "select pieces from parser_code_v where version = 'v0.15.0' and name = 'tag7' and file = ?",
        (TAG7_FILE,),
    )
    assert ["extraction", "method", "Tag7ToolParser.__init__"] in json.loads(pieces[0][0])
    out = tpindex("diff", "v0.14.0", "v0.15.0", "--db", rebind_db, ok=False).output
    assert "Tag7ToolParser.__init__" in out


def test_the_canned_which_question_says_what_the_init_hop_is(rebind_db):
    from fixtures.serve import canned, serve

    client = serve(rebind_db)
    try:
        rows = canned(client, "which", name="tag7", version="v0.14.0")
    finally:
        client.close()
    (init,) = [r for r in rows if r["hop"] == "init"]
    assert init["file"] == TAG7_FILE and init["line"] == INIT_LINE
    assert f"lines {INIT_LINE}-{INIT_END}" in init["note"] and "detail_regex, arg_regex" in init["note"]
