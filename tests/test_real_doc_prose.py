"""check-doc on prose nobody here wrote (issue 26): vLLM's own `docs/features/tool_calling.md` and
`docs/features/reasoning_outputs.md` as released in v0.12.0, read from the release's source archive at test
time (never kept in this repository), each checked at its own version (v0.12.0), one later (v0.13.0, the next
release, when the tool-parser package moved to `vllm/tool_parsers/`) and the newest (v0.33.0), against the
releases' archives built with --tree for those three versions only.

Every verdict that is not ok or unchecked is listed below with its reason, each confirmed by reading the
release (`git show vX:path`, `git ls-tree` of the tags):
- v0.13.0 has `vllm/tool_parsers/hermes_tool_parser.py` (class Hermes2ProToolParser at line 31) and its old
  package `vllm/entrypoints/openai/tool_parsers/` holds only `__init__.py`: the page's link to
  `../../vllm/entrypoints/openai/tool_parsers/hermes_tool_parser.py` is stale from v0.13.0 on.
- `examples/tool_chat_template_minimax_m1.jinja` and the `minimax` tool-parser name are in v0.13.0 and not in
  v0.33.0 (they went at v0.24.0, a version not indexed here: "removed at v0.33.0" names the first indexed
  version without them, "last at v0.13.0" the last with them).
- `examples/online_serving/openai_chat_completion_with_reasoning_streaming.py` and
  `.../openai_chat_completion_tool_calls_with_reasoning.py` are `examples/reasoning/...` at v0.33.0.
At v0.12.0, its own version, each page gets no verdict but ok and unchecked: no "wrong", none "stale".
Skipped, loudly, only when the package index cannot be reached.
"""

from __future__ import annotations

import json

import pytest
from fixtures.helpers import tpindex

pytestmark = pytest.mark.network

OWN, LATER, NEWEST = "v0.12.0", "v0.13.0", "v0.33.0"
OLD_HERMES = "vllm/entrypoints/openai/tool_parsers/hermes_tool_parser.py"
NEW_HERMES = "vllm/tool_parsers/hermes_tool_parser.py"
MINIMAX = "examples/tool_chat_template_minimax_m1.jinja"

# document -> version -> [(line, kind, a fragment of the claim, status, a fragment of the reason)]
NOT_OK = {
    "tool_calling": {
        OWN: [],
        LATER: [
            # "You can write a ToolParser similar to the `Hermes2ProToolParser` in [vllm/entrypoints/...](...)"
            (
                410,
                "symbol",
                "Hermes2ProToolParser",
                "stale",
                f"{OLD_HERMES}: moved to {NEW_HERMES} at v0.13.0 (definitions: 1 of its 1 (Hermes2ProToolParser))"
                f"; at v0.13.0 defined at {NEW_HERMES}:31",
            ),
            (410, "path", OLD_HERMES, "stale", f"moved to {NEW_HERMES} at v0.13.0"),
        ],
        NEWEST: [
            (298, "path", MINIMAX, "stale", "removed at v0.33.0 (last at v0.13.0)"),  # a link in a list item
            (299, "path", MINIMAX, "stale", "removed at v0.33.0 (last at v0.13.0)"),
            (
                301,
                "parser",
                "minimax",
                "stale",
                "not registered at v0.33.0: removed at v0.33.0 (last at v0.13.0)",
            ),
            (301, "path", MINIMAX, "stale", "removed at v0.33.0 (last at v0.13.0)"),  # in the Flags: span
            (410, "symbol", "Hermes2ProToolParser", "stale", f"at v0.33.0 defined at {NEW_HERMES}"),
            (410, "path", OLD_HERMES, "stale", f"moved to {NEW_HERMES} at v0.13.0"),
        ],
    },
    "reasoning_outputs": {
        OWN: [],
        LATER: [],
        NEWEST: [
            (
                157,
                "path",
                "examples/online_serving/openai_chat_completion_with_reasoning_streaming.py",
                "stale",
                "moved to examples/reasoning/openai_chat_completion_with_reasoning_streaming.py at v0.33.0",
            ),
            (
                203,
                "path",
                "examples/online_serving/openai_chat_completion_tool_calls_with_reasoning.py",
                "stale",
                "moved to examples/reasoning/openai_chat_completion_tool_calls_with_reasoning.py at v0.33.0",
            ),
        ],
    },
}
# what stays unchecked at every version, and why: (line, kind, a fragment of the reason)
UNCHECKED = {
    "tool_calling": [
        # the model's tokenizer_config.json, no file of vLLM's tree
        (121, "path", "a bare file name that is in no file of the tree"),
        (121, "symbol", "tokenizer_config.json is a bare file name"),
        *[(n, "path", "a bare file name that is in no file of the tree") for n in (122, 123, 150)],
        (469, "parser", "the document's own code registers it"),  # the plugin example registers "example"
    ],
    "reasoning_outputs": [
        # "... `ReasoningParser` ... `vllm/reasoning/deepseek_r1_reasoning_parser.py`": one sentence, not a pairing
        (211, "symbol", "the sentence may not pair them"),
        (275, "symbol", "the sentence may not pair them"),
        (308, "parser", "the document's own code registers it"),
    ],
}


@pytest.fixture(scope="module")
def docs(pypi):  # noqa: F811
    """The two pages as released in v0.12.0, from its source archive."""
    from indexer.sources.pypi import read_members

    path, _ = pypi.archive(OWN)
    wanted = {f"docs/features/{name}.md": name for name in NOT_OK}
    members = read_members(path, lambda n: wanted.get(n.split("/", 1)[-1]))
    assert sorted(name for name, _ in members) == sorted(wanted.values())
    return {name: data.decode() for name, data in members}


@pytest.fixture(scope="module")
def three_db(pypi, tmp_path_factory):  # noqa: F811
    db = tmp_path_factory.mktemp("real-prose") / "three.db"
    tpindex("build", "--from-pypi", "--tree", "--tags", f"{OWN},{LATER},{NEWEST}", "--db", db, "-q")
    return db


@pytest.mark.parametrize("name", list(NOT_OK))
def test_vllms_own_page_at_its_version_one_later_and_the_newest(name, docs, three_db, tmp_path):
    doc = tmp_path / f"{name}.md"
    doc.write_text(docs[name])
    r = tpindex(
        "check-doc",
        doc,
        "--at",
        OWN,
        "--at",
        LATER,
        "--at",
        NEWEST,
        "--format",
        "json",
        "--db",
        three_db,
        ok=False,
    )
    rep = json.loads(r.output)
    assert r.exit_code == (1 if any(NOT_OK[name].values()) else 0), r.output[:500]
    for v in rep["versions"]:
        results = v["results"]
        got = [
            (x["line"], x["kind"], x["claim"], x["status"], x["message"])
            for x in results
            if x["status"] not in ("ok", "unchecked")
        ]
        want = NOT_OK[name][v["version"]]
        assert len(got) == len(want), (v["version"], got)
        for (line, kind, claim, status, message), (eline, ekind, frag, estatus, reason) in zip(
            got, want, strict=True
        ):
            assert (line, kind, status) == (eline, ekind, estatus) and frag in claim, (v["version"], got)
            assert reason in message, (v["version"], line, claim, message)
        unchecked = [(x["line"], x["kind"], x["message"]) for x in results if x["status"] == "unchecked"]
        assert len(unchecked) == len(UNCHECKED[name]), (v["version"], unchecked)
        for (line, kind, message), (eline, ekind, reason) in zip(unchecked, UNCHECKED[name], strict=True):
            assert (line, kind) == (eline, ekind) and reason in message, (v["version"], line, message)
        assert not [x for x in results if x["status"] == "wrong"]
    # the page's claims are read: flags, chat templates named in command spans and links, parser names
    kinds = {x["kind"] for x in rep["versions"][0]["results"]}
    assert {"path", "parser"} <= kinds
    if name == "tool_calling":
        paths = {x["claim"] for x in rep["versions"][0]["results"] if x["kind"] == "path"}
        assert f"`{OLD_HERMES}`" in paths and "`examples/tool_chat_template_granite_20b_fc.jinja`" in paths
