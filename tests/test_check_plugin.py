"""`tpindex check-plugin FILE.py` (issue 28): a plugin read with tree-sitter (never executed), checked at each
indexed version: its imports (and where they moved), its bases, each override against the base's signature
and against the calls vLLM makes, its constructor against how serving constructs parsers, its super() calls,
its registrations (and the built-ins they shadow), and the first and last compatible version.
Fixture history and plugins: tests/fixtures/plugin_eras.py."""

from __future__ import annotations

import json

import pytest
from fixtures.helpers import build_tags, line_of, make_repo, tpindex
from fixtures.plugin_eras import NEW, OLD, PLUGIN_ANYWHERE, PLUGIN_NEW, PLUGIN_V10, SERVING, history, serving

ALL = ["v0.10.0", "v0.13.0", "v0.14.0", "v0.19.0", "v0.20.0"]


@pytest.fixture(scope="module")
def eras_repo(tmp_path_factory):
    return make_repo(tmp_path_factory.mktemp("plugin-repo") / "repo", history())


@pytest.fixture(scope="module")
def plugin_db(eras_repo, tmp_path_factory):
    db = tmp_path_factory.mktemp("plugin") / "i.db"
    build_tags(eras_repo, db, "v0.10.0..")
    return db


@pytest.fixture(scope="module")
def tree_db(eras_repo, tmp_path_factory):
    from indexer.core.scope import Scope

    db = tmp_path_factory.mktemp("plugin-tree") / "i.db"
    build_tags(eras_repo, db, "v0.10.0..", scope=Scope.named("default", tree=True))
    return db


def check(db, text, **kw):
    import textwrap

    from indexer.api import Index

    return Index(db).check_plugin(textwrap.dedent(text).lstrip("\n").encode(), path="plugin.py", **kw)


def at(report, version):
    (v,) = [v for v in report.versions if v.version == version]
    return v


def found(pv, what, status=None, subject=None):
    return [
        f
        for f in pv.findings
        if f.what == what
        and (status is None or f.status == status)
        and (subject is None or f.subject.endswith(subject))
    ]


def test_what_is_read_from_the_plugin(plugin_db):
    r = check(plugin_db, PLUGIN_V10)
    assert [(i.module, i.name, i.line) for i in r.plugin.imports] == [
        ("vllm.entrypoints.openai.protocol", "ChatCompletionRequest", 1),
        ("vllm.entrypoints.openai.protocol", "ExtractedToolCallInformation", 1),
        ("vllm.entrypoints.openai.tool_parsers", "ToolParser", 2),
        ("vllm.entrypoints.openai.tool_parsers", "ToolParserManager", 2),
    ]
    (cls,) = r.plugin.classes
    assert (cls.name, cls.resolved_bases) == (
        "MyAlphaToolParser",
        ["vllm.entrypoints.openai.tool_parsers.ToolParser"],
    )
    assert [m.name for m in cls.methods] == ["__init__", "adjust_request", "extract_tool_calls"]
    assert [(g.name, g.kind, g.form, g.line) for g in r.plugin.registrations] == [
        ("alpha", "tool", "decorator", line_of(PLUGIN_V10, "@ToolParserManager"))
    ]


def test_a_plugin_of_the_old_package_and_the_old_constructor(plugin_db):
    r = check(plugin_db, PLUGIN_V10)
    assert [v.version for v in r.versions] == ALL
    assert r.compatible == ["v0.10.0", "v0.13.0"]
    assert (r.first_compatible, r.last_compatible) == ("v0.10.0", "v0.13.0")
    assert r.broken == ["v0.14.0", "v0.19.0", "v0.20.0"]
    # v0.13.0: the old package is a shim that still provides the names
    (imp,) = found(at(r, "v0.13.0"), "import", subject="import ToolParser")
    assert imp.status == "ok" and "__getattr__" in imp.message and "vllm.tool_parsers" in imp.message
    assert imp.file == f"{OLD}/__init__.py"
    # v0.14.0: gone, and where it went
    (imp,) = found(at(r, "v0.14.0"), "import", subject="import ToolParser")
    assert imp.status == "broken"
    assert "vllm.entrypoints.openai.tool_parsers" in imp.message and "vllm.tool_parsers" in imp.message
    assert imp.plugin_line == 2
    # v0.19.0: the constructor serving uses takes tools
    con = found(at(r, "v0.19.0"), "constructor", "broken")
    assert con and any(f.file == SERVING and f.line == line_of(serving(), "tool_parser = self") for f in con)
    assert any("self.tool_parser(tokenizer, request.tools)" in f.message for f in con)
    # v0.20.0: adjust_request is no longer the base's; serving passes text= to extract_tool_calls
    (adj,) = found(at(r, "v0.20.0"), "override", "broken", "adjust_request")
    assert "no longer" in adj.message
    ext = found(at(r, "v0.20.0"), "override", "broken", "extract_tool_calls")
    assert ext and any("text" in f.message for f in ext)


def test_a_shadowed_built_in_and_what_it_changed_since(plugin_db):
    r = check(plugin_db, PLUGIN_V10)
    assert r.since == "v0.10.0"
    for version in ALL:
        (sh,) = found(at(r, version), "shadow")
        assert sh.status == "warning" and "alpha" in sh.message
    (sh,) = found(at(r, "v0.10.0"), "shadow")
    assert sh.file == f"{OLD}/alpha_tool_parser.py"
    (sh,) = found(at(r, "v0.19.0"), "shadow")
    assert sh.file == f"{NEW}/alpha_tool_parser.py"
    assert "v0.13.0" in sh.message  # the built-in's real file moved there, after the plugin's base version
    (reg,) = found(at(r, "v0.13.0"), "registration")
    assert reg.status == "ok" and 'register_module("alpha")' in reg.message
    # at v0.19.0 the manager is not importable as written; the call would still bind to the one there
    assert {f.status for f in found(at(r, "v0.19.0"), "registration")} == {"broken", "ok"}


def test_a_plugin_of_the_new_package_calls_its_base_with_tools(plugin_db):
    r = check(plugin_db, PLUGIN_NEW)
    assert r.compatible == ["v0.19.0", "v0.20.0"]
    (imp,) = found(at(r, "v0.10.0"), "import", "broken", "import ToolParser")
    assert "vllm.tool_parsers" in imp.message
    for version in ("v0.13.0", "v0.14.0"):
        pv = at(r, version)
        assert not found(pv, "import", "broken")
        (sup,) = found(pv, "super-call", "broken")
        assert (
            "super().__init__(tokenizer, tools)" in sup.message
            and sup.file == f"{NEW}/abstract_tool_parser.py"
        )
        assert sup.plugin_line == line_of(PLUGIN_NEW, "super().__init__")
    assert not found(at(r, "v0.19.0"), "shadow")


def test_a_plugin_compatible_everywhere(plugin_db):
    r = check(plugin_db, PLUGIN_ANYWHERE)
    assert r.compatible == ALL and r.broken == []
    imports = found(at(r, "v0.10.0"), "import")
    assert {f.status for f in imports} == {"ok"}
    assert any("alternative" in f.message for f in imports)
    # the parameter is named as in v0.20.0's base; before that serving passes it by position: a warning
    ren = found(at(r, "v0.19.0"), "override", "warning", "extract_tool_calls")
    assert ren and "model_output" in ren[0].message
    assert not found(at(r, "v0.20.0"), "override", "warning", "extract_tool_calls")
    (reg,) = found(at(r, "v0.20.0"), "registration")
    assert reg.status == "ok" and "steady" in reg.subject


def test_imports_outside_the_scope_are_unchecked_without_the_tree_and_checked_with_it(plugin_db, tree_db):
    r = check(plugin_db, PLUGIN_V10, tags="v0.19.0")
    (req,) = found(at(r, "v0.19.0"), "import", subject="ChatCompletionRequest")
    assert req.status == "unchecked"
    assert (
        "vllm.entrypoints.openai.chat_completion.protocol" in req.message
    )  # where the contract imports it from
    r = check(tree_db, PLUGIN_V10, tags="v0.19.0")
    (req,) = found(at(r, "v0.19.0"), "import", subject="ChatCompletionRequest")
    assert req.status == "broken"
    assert "vllm.entrypoints.openai.chat_completion.protocol" in req.message
    assert req.file == "vllm/entrypoints/openai/chat_completion/protocol.py"
    (ok,) = found(at(r, "v0.19.0"), "import", subject="ExtractedToolCallInformation")
    assert ok.status == "ok"


def test_cli(plugin_db, tmp_path):
    v10 = tmp_path / "v10_plugin.py"
    v10.write_text(PLUGIN_V10.lstrip("\n"))
    out = tpindex("check-plugin", v10, "--db", plugin_db, ok=False)
    assert out.exit_code == 1
    text = out.output
    assert "compatible: v0.10.0 - v0.13.0" in text
    assert "first compatible v0.10.0, last compatible v0.13.0" in text
    assert "broken" in text and "v0.14.0" in text
    assert tpindex("check-plugin", v10, "--tags", "v0.10.0..v0.13.0", "--db", plugin_db).exit_code == 0
    out = tpindex("check-plugin", v10, "--format", "json", "--db", plugin_db, ok=False)
    data = json.loads(out.output)
    import jsonschema

    from indexer.schemas import load

    jsonschema.validate(data, load("check-plugin"))
    assert data["first_compatible"] == "v0.10.0"
    md = tpindex("check-plugin", v10, "--format", "markdown", "--db", plugin_db, ok=False).output
    assert "| version | compatible |" in md
    anywhere = tmp_path / "steady.py"
    anywhere.write_text(PLUGIN_ANYWHERE.lstrip("\n"))
    assert tpindex("check-plugin", anywhere, "--db", plugin_db).exit_code == 0
    missing = tpindex("check-plugin", tmp_path / "nope.py", "--db", plugin_db, ok=False)
    assert missing.exit_code == 2 and "Hint:" in missing.output
    bad_since = tpindex("check-plugin", v10, "--since", "v9", "--db", plugin_db, ok=False)
    assert bad_since.exit_code == 2 and "Hint:" in bad_since.output
    broken = tmp_path / "broken.py"
    broken.write_text("from vllm.tool_parsers import ToolParser\nclass X(ToolParser:\n")
    out = tpindex("check-plugin", broken, "--db", plugin_db, ok=False)
    assert out.exit_code in (0, 1) and "syntax" in out.output


def test_a_call_the_base_cannot_take_is_not_held_against_an_override(tmp_path):
    """Serving may call a method with arguments only one parser takes (a branch for it, `# type: ignore`):
    the base's own signature rejects that call, so it is not the contract's, and an override is not broken
    by it (it is named in the finding)."""
    special = """
class OpenAIServingChat:
    def full(self, tokenizer, request, output, token_ids):
        tool_parser = self.tool_parser(tokenizer)
        if self.use_special:
            return tool_parser.extract_tool_calls("", request=request, token_ids=token_ids)  # type: ignore
        return tool_parser.extract_tool_calls(output, request=request)
"""
    repo = make_repo(
        tmp_path / "repo",
        {
            "v0.11.0": {
                f"{OLD}/__init__.py": "from .abstract_tool_parser import ToolParser, ToolParserManager\n",
                f"{OLD}/abstract_tool_parser.py": history()["v0.10.0"][f"{OLD}/abstract_tool_parser.py"],
                f"{OLD}/alpha_tool_parser.py": history()["v0.10.0"][f"{OLD}/alpha_tool_parser.py"],
                SERVING: special,
            }
        },
    )
    db = tmp_path / "i.db"
    build_tags(repo, db, "v0.11.0")
    r = check(db, PLUGIN_V10)
    assert r.compatible == ["v0.11.0"]
    (ext,) = found(at(r, "v0.11.0"), "override", subject="extract_tool_calls")
    assert ext.status == "ok"
    assert f"{SERVING}:{line_of(special, 'token_ids=token_ids')}" in ext.message and "left out" in ext.message
