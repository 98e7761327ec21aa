"""Renames and successors (issue 23, item 9), derived from the facts on a fixture repository written here:

- v0.10.0 -> v0.10.1: glm4_moe is registered as glm45 instead (same registered class, same file): a rename;
  olmo becomes olmo3 with its class renamed in the same file: a rename by real file; hermes_v1, an alias
  of hermes's class, is dropped: a removal whose class continues under hermes (no new name: no rename);
- v0.10.1 -> v0.24.0: minimax goes (its file too) while minimax_m2 stays and minimax_m3 comes with a file of
  its own: a removal whose successors are its family; lonely goes and nothing takes over.

`diff` says `name-renamed` (text, JSON, Markdown) and names the successors of a removal; the lifecycle, `which`
and `card` of the old name point to the new one.
"""

from __future__ import annotations

import json

import pytest
from fixtures.eras import PLAIN_ABSTRACT, lazy_registry
from fixtures.helpers import build_tags, make_repo, tpindex

TP = "vllm/tool_parsers"


def parser(cls: str, body: str = "return text") -> str:
    return (
        f"from vllm.tool_parsers.abstract_tool_parser import ToolParser\n\n\n"
        f"class {cls}(ToolParser):\n    def extract_tool_calls(self, text):\n        {body}\n"
    )


def registry(names: dict[str, tuple[str, str]]) -> str:
    return lazy_registry("tool", names, inline=True, imports="ToolParserManager")


N_10 = {
    "glm4_moe": ("glm4_moe_tool_parser", "Glm4MoeModelToolParser"),
    "olmo": ("olmo_tool_parser", "OlmoToolParser"),
    "hermes": ("hermes_tool_parser", "HermesToolParser"),
    "hermes_v1": ("hermes_tool_parser", "HermesToolParser"),
    "minimax": ("minimax_tool_parser", "MinimaxToolParser"),
    "minimax_m2": ("minimax_m2_tool_parser", "MinimaxM2ToolParser"),
    "lonely": ("lonely_tool_parser", "LonelyToolParser"),
}
N_101 = {k: v for k, v in N_10.items() if k not in ("glm4_moe", "olmo", "hermes_v1")} | {
    "glm45": ("glm4_moe_tool_parser", "Glm4MoeModelToolParser"),
    "olmo3": ("olmo_tool_parser", "Olmo3ToolParser"),
}
N_24 = {k: v for k, v in N_101.items() if k not in ("minimax", "lonely")} | {
    "minimax_m3": ("minimax_m3_tool_parser", "MinimaxM3ToolParser")
}

HISTORY = {
    "v0.10.0": {
        f"{TP}/__init__.py": registry(N_10),
        f"{TP}/abstract_tool_parser.py": PLAIN_ABSTRACT,
        **{f"{TP}/{f}.py": parser(c) for f, c in N_10.values()},
    },
    "v0.10.1": {f"{TP}/__init__.py": registry(N_101), f"{TP}/olmo_tool_parser.py": parser("Olmo3ToolParser")},
    "v0.24.0": {
        f"{TP}/__init__.py": registry(N_24),
        f"{TP}/minimax_tool_parser.py": None,
        f"{TP}/lonely_tool_parser.py": None,
        f"{TP}/minimax_m3_tool_parser.py": parser("MinimaxM3ToolParser"),
    },
}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    base = tmp_path_factory.mktemp("successors")
    repo = make_repo(base / "repo", HISTORY)
    path = base / "index.db"
    build_tags(repo, path, "v0.10.0..")
    return path


def changes(db, a, b) -> list[dict]:
    r = tpindex("diff", a, b, "--format", "json", "--db", db, ok=False)
    assert r.exit_code == 1, r.output
    return [c for c in json.loads(r.output)["changes"] if c["type"].startswith("name-")]


def test_a_name_whose_class_continues_under_a_new_name_is_renamed(db):
    got = {(c["type"], c["name"]): c for c in changes(db, "v0.10.0", "v0.10.1")}
    assert ("name-removed", "glm4_moe") not in got and ("name-added", "glm45") not in got
    glm = got[("name-renamed", "glm4_moe")]
    assert (glm["kind"], glm["before"], glm["after"]) == ("tool", "glm4_moe", "glm45")
    assert glm["successors"] == ["glm45"] and glm["successors_by"] == "registered class"
    assert glm["file"] == f"{TP}/glm4_moe_tool_parser.py"
    olmo = got[("name-renamed", "olmo")]
    assert (olmo["after"], olmo["successors_by"]) == ("olmo3", "real file")
    assert ("name-added", "olmo3") not in got


def test_a_dropped_alias_is_a_removal_whose_class_continues(db):
    got = {(c["type"], c["name"]): c for c in changes(db, "v0.10.0", "v0.10.1")}
    alias = got[("name-removed", "hermes_v1")]
    assert alias["successors"] == ["hermes"] and alias["successors_by"] == "registered class"
    assert "its class continues as hermes" in alias["detail"]


def test_a_removed_name_suggests_its_family_and_nothing_is_guessed(db):
    got = {(c["type"], c["name"]): c for c in changes(db, "v0.10.1", "v0.24.0")}
    mm = got[("name-removed", "minimax")]
    assert mm["successors"] == ["minimax_m2", "minimax_m3"] and mm["successors_by"] == "family"
    assert "successors (same family): minimax_m2, minimax_m3" in mm["detail"]
    lonely = got[("name-removed", "lonely")]
    assert lonely["successors"] is None and "successor" not in lonely["detail"]
    assert ("name-added", "minimax_m3") in got


def test_text_and_markdown_say_renamed(db):
    text = tpindex("diff", "v0.10.0", "v0.10.1", "--db", db, ok=False).output
    line = next(s for s in text.splitlines() if s.startswith("name-renamed") and "glm4_moe" in s)
    assert "glm4_moe (tool): renamed to glm45 (same registered class Glm4MoeModelToolParser" in line
    md = tpindex("diff", "v0.10.0", "v0.10.1", "--format", "markdown", "--db", db, ok=False).output
    assert "| name-renamed | tool | glm4_moe | glm4_moe | glm45 |" in md


def test_the_old_names_lifecycle_which_and_card_point_to_the_new_one(db):
    out = tpindex("which", "glm4_moe", "--all", "--db", db).output
    life = next(s for s in out.splitlines() if "lifecycle:" in s)
    assert "removed in v0.10.1, renamed to glm45" in life
    data = json.loads(tpindex("which", "glm4_moe", "--all", "--format", "json", "--db", db).output)
    lc = data["kinds"][0]["lifecycle"]
    assert (lc["renamed_to"], lc["successors"], lc["successors_by"]) == (
        "glm45",
        ["glm45"],
        "registered class",
    )
    new = json.loads(tpindex("which", "glm45", "--all", "--format", "json", "--db", db).output)
    assert new["kinds"][0]["lifecycle"]["renamed_from"] == ["glm4_moe"]
    assert "first in v0.10.1 (renamed from glm4_moe)" in tpindex("which", "glm45", "--all", "--db", db).output
    r = tpindex("which", "glm4_moe", "--db", db, ok=False)  # the newest version: gone, under its new name
    assert r.exit_code == 2 and "renamed to glm45 at v0.10.1" in r.output and "which glm45" in r.output
    card = tpindex("card", "glm4_moe", "--at", "v0.10.0", "--db", db).output
    assert "removed in v0.10.1, renamed to glm45" in card
    r = tpindex("card", "glm4_moe", "--db", db, ok=False)
    assert r.exit_code == 2 and "renamed to glm45 at v0.10.1" in r.output


def test_a_removed_names_lifecycle_names_its_successors(db):
    out = tpindex("which", "minimax", "--all", "--db", db).output
    assert "removed in v0.24.0, successors (same family): minimax_m2, minimax_m3" in out
    card = tpindex("card", "minimax", "--at", "v0.10.1", "--db", db).output
    assert "removed in v0.24.0, successors (same family): minimax_m2, minimax_m3" in card
    r = tpindex("which", "minimax", "--db", db, ok=False)
    assert "successors (same family): minimax_m2, minimax_m3" in r.output
    lonely = json.loads(tpindex("which", "lonely", "--all", "--format", "json", "--db", db).output)
    assert lonely["kinds"][0]["lifecycle"]["successors"] == []


def test_diff_and_which_json_follow_their_schemas(db):
    import jsonschema

    from indexer.schemas import load

    r = tpindex("diff", "v0.10.0", "v0.24.0", "--format", "json", "--db", db, ok=False)
    jsonschema.Draft202012Validator(load("diff")).validate(json.loads(r.output))
    jsonschema.Draft202012Validator(load("which-all")).validate(
        json.loads(tpindex("which", "glm4_moe", "--all", "--format", "json", "--db", db).output)
    )


def test_the_browser_shows_renames_and_successors(db):
    from fixtures.serve import serve

    client = serve(db)
    try:
        page = client.html("/-/parser/tool/glm4_moe")
        assert 'renamed to <a class="tpindex-name" href="/-/parser/tool/glm45?v=v0.10.1">glm45</a>' in page
        assert "renamed from" in client.html("/-/parser/tool/glm45") and "glm4_moe" in client.html(
            "/-/parser/tool/glm45"
        )
        page = client.html("/-/parser/tool/minimax")
        assert "successors (family)" in page and "minimax_m3" in page
        version = client.html("/-/version/v0.10.1")
        assert '<td class="type">name-renamed</td>' in version
        assert 'href="/-/parser/tool/glm4_moe?v=v0.10.0"' in version
    finally:
        client.close()
