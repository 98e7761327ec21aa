"""Resolution reused across versions (issue 30): a version whose Python files are the same units (path and
content) as a version already resolved in the same build gets that version's resolution copied, not
worked out again. Whatever the order and the split of the builds, the stored facts are those of builds
that resolve every version in full."""

from __future__ import annotations

import random

import pytest
from fixtures.build import CROSSING, CROSSING_SCOPE, NEW, SHARED
from fixtures.crash import assert_same, dump
from fixtures.helpers import build_tags, make_repo, rows, tpindex

CHILD = """from vllm.tool_parsers.x_tool_parser import XToolParser
from vllm.tool_parsers.abstract_tool_parser import ToolParserManager


@ToolParserManager.register_module("child")
class ChildToolParser(XToolParser):
    supports_required_and_named = False
"""
STREAMING = (
    SHARED
    + """
    def extract_tool_calls_streaming(self, text, delta):
        return None
"""
)

# CROSSING's history (blobs met at recorded paths first and parsed later: facts refilled in place), with
# versions between them whose Python files repeat an earlier version's: a template changed only (v1.0.1,
# v1.1.1), a file put back as it was two versions before (v1.1.3 = v1.1.1's Python, but for a test), and a registered class
# whose subclass's resolution changes with it while the subclass's file stays the same (v1.1.2).
REPEATS = {}
for tag, files in CROSSING.items():
    REPEATS[tag] = files
    if tag == "v1.0.0":
        REPEATS["v1.0.1"] = {"examples/tool_chat_template_x.jinja": "{{ messages }} {{ tools }}\n"}
    if tag == "v1.1.0":
        REPEATS["v1.1.1"] = {
            f"{NEW}/child_tool_parser.py": CHILD,
            "examples/tool_chat_template_x.jinja": "{{ tools }}\n",
        }
        REPEATS["v1.1.2"] = {f"{NEW}/x_tool_parser.py": STREAMING}
        REPEATS["v1.1.3"] = {
            f"{NEW}/x_tool_parser.py": SHARED,  # and a test changed: recorded, no facts
            "tests/tool_parsers/test_x.py": SHARED + "# one more test\n",
        }


def build(repo, db, spec: str, reuse: bool, monkeypatch):
    from indexer.build import pipeline as builder
    from indexer.core.scope import Scope

    monkeypatch.setattr(builder, "REUSE_RESOLUTION", reuse)
    return build_tags(repo, db, spec, scope=Scope.named("default", CROSSING_SCOPE))


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path / "repo", REPEATS)


@pytest.fixture
def full(repo, tmp_path, monkeypatch):
    """Every version resolved in full, in one build."""
    db = tmp_path / "full.db"
    build(repo, db, "v1.0.0..", False, monkeypatch)
    return dump(db)


def test_a_version_repeating_another_reuses_its_resolution(repo, tmp_path, full, monkeypatch):
    db = tmp_path / "one.db"
    stats = build(repo, db, "v1.0.0..", True, monkeypatch)
    assert stats.resolutions_reused == 2  # v1.0.1 (as v1.0.0) and v1.1.3 (as v1.1.1)
    assert_same(dump(db), full, "one build, resolution reused")
    # the subclass's file is the same in v1.1.1 - v1.1.3, its resolution follows its base's file
    streaming = dict(rows(db, "select version, streaming from parser_map_v where name = 'child'"))
    assert streaming["v1.1.1"] == streaming["v1.1.3"] != streaming["v1.1.2"]


@pytest.mark.parametrize("trial", range(8))
def test_any_split_and_order_of_builds_reusing_resolution_gives_the_full_resolution(
    repo, tmp_path, full, monkeypatch, trial
):
    rng = random.Random(3000 + trial)
    tags = list(REPEATS)
    rng.shuffle(tags)
    cuts = sorted(rng.sample(range(1, len(tags)), rng.randint(1, len(tags) - 1)))
    groups = [tags[a:b] for a, b in zip([0, *cuts], [*cuts, len(tags)], strict=True)]
    db = tmp_path / "split.db"
    for group in groups:
        build(repo, db, ",".join(group), True, monkeypatch)
    assert_same(dump(db), full, f"builds {groups}")
    tpindex("check", "--db", db)
