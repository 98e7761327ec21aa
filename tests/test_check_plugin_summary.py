"""check-plugin leads with what to change (issue 41, item 3): the lines to change for the plugin to work at the
newest checked version, what to write instead, and the versions the changed file works at (checked again);
then each finding once, with the versions it holds at. On a `--tree` database an import from a package outside
the scope is checked against the whole tree. Fixture history and plugins: tests/fixtures/plugin_eras.py."""

from __future__ import annotations

import textwrap

import pytest
from fixtures.helpers import build_tags, line_of, make_repo, tpindex
from fixtures.plugin_eras import PLUGIN_TOKENIZER, PLUGIN_V10, history


@pytest.fixture(scope="module")
def eras_tree_db(tmp_path_factory):
    from indexer.core.scope import Scope

    base = tmp_path_factory.mktemp("plugin-summary")
    repo = make_repo(base / "repo", history())
    db = base / "i.db"
    build_tags(repo, db, "v0.10.0..", scope=Scope.named("default", tree=True))
    return db


def check(db, text, **kw):
    from indexer.api import Index

    return Index(db).check_plugin(textwrap.dedent(text).lstrip("\n").encode(), path="plugin.py", **kw)


def apply(text: str, changes) -> str:
    """The plugin with the summary's changes made, bottom up."""
    lines = textwrap.dedent(text).lstrip("\n").splitlines()
    for c in sorted(changes, key=lambda c: -c.line):
        assert c.instead is not None, c
        lines[c.line - 1 : c.end_line] = c.instead.splitlines()
    return "\n".join(lines) + "\n"


def test_the_summary_says_which_lines_to_change_and_where_the_changed_file_works(eras_tree_db):
    r = check(eras_tree_db, PLUGIN_V10)
    s = r.summary
    assert s.target == "v0.20.0" and not s.works_as_written
    by_line = {c.line: c for c in s.changes}
    assert by_line[2].instead == "from vllm.tool_parsers import ToolParser, ToolParserManager"
    assert by_line[1].instead.splitlines() == [
        "from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest",
        "from vllm.entrypoints.openai.protocol import ExtractedToolCallInformation",
    ]
    init = by_line[line_of(PLUGIN_V10, "def __init__")]
    assert init.instead == "    def __init__(self, tokenizer, tools=None):"
    adjust = by_line[line_of(PLUGIN_V10, "def adjust_request")]
    assert adjust.instead == "" and adjust.end_line == line_of(PLUGIN_V10, "return request")
    ext = by_line[line_of(PLUGIN_V10, "def extract_tool_calls")]
    assert ext.instead.strip().startswith("def extract_tool_calls(self, text: str, request")
    assert "model_output" in ext.why  # its uses in the body are renamed too
    assert s.works_after == ["v0.19.0", "v0.20.0"]
    fixed = check(eras_tree_db, apply(PLUGIN_V10, s.changes))
    assert fixed.compatible == s.works_after and fixed.summary.works_as_written


def test_the_text_leads_with_the_changes_and_gives_each_finding_once(eras_tree_db, tmp_path):
    plugin = tmp_path / "v10_plugin.py"
    plugin.write_text(textwrap.dedent(PLUGIN_V10).lstrip("\n"))
    out = tpindex("check-plugin", plugin, "--db", eras_tree_db, ok=False).output
    lines = out.splitlines()
    head = next(i for i, x in enumerate(lines) if x.startswith("to work at v0.20.0, change"))
    detail = next(i for i, x in enumerate(lines) if x.startswith("each finding once"))
    assert head < detail
    assert (
        f"{plugin}:2  from vllm.entrypoints.openai.tool_parsers import ToolParser, ToolParserManager" in out
    )
    assert "-> from vllm.tool_parsers import ToolParser, ToolParserManager" in out
    assert "then it works at v0.19.0 - v0.20.0" in out
    moved = [x for x in lines if "import ToolParser (plugin line 2)" in x]
    assert len(moved) == 1 and moved[0].lstrip().startswith("v0.14.0 - v0.20.0")
    md = tpindex("check-plugin", plugin, "--format", "markdown", "--db", eras_tree_db, ok=False).output
    assert (
        "To work at v0.20.0, change 5 place(s):" in md
        and "| 2 | `from vllm.entrypoints.openai.tool_parsers" in md
    )
    assert "Then it works at v0.19.0 - v0.20.0" in md


def test_a_plugin_that_works_at_the_newest_says_so(eras_tree_db):
    r = check(eras_tree_db, PLUGIN_TOKENIZER.replace("OldTokenizer, ", ""), tags="v0.19.0..")
    assert r.summary.works_as_written and r.summary.changes == []


def test_a_name_a_package_re_exports_is_checked_against_the_whole_tree(eras_tree_db, tmp_path_factory):
    r = check(eras_tree_db, PLUGIN_TOKENIZER, tags="v0.19.0..")
    (pv,) = [v for v in r.versions if v.version == "v0.20.0"]
    by = {f.subject: f for f in pv.findings if f.what == "import"}
    like = by["from vllm.tokenizers import TokenizerLike"]
    assert like.status == "ok" and "vllm/tokenizers/protocol.py" in like.message
    assert like.file == "vllm/tokenizers/protocol.py"
    old = by["from vllm.tokenizers import OldTokenizer"]
    assert old.status == "unchecked"  # named by the package, defined by no module of the tree
