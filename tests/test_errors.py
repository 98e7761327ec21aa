"""One error model (issue 24): everything a user can fix is a Problem (indexer/core/problems.py) raised with
its hint where it is detected, and each surface translates it in one place: the command line in
LazyGroup.invoke, the web in the plugin's handle_exception hook, MCP in one tool-error path."""

from __future__ import annotations

import ast
import inspect
import textwrap

import pytest
from fixtures.helpers import make_repo

from indexer.core.problems import BuildError, Problem

TP = "vllm/entrypoints/openai/tool_parsers"
HISTORY = {  # two versions with files in scope: what a build reads (no registry: the build only warns)
    "v0.6.3": {f"{TP}/__init__.py": "", f"{TP}/hermes_tool_parser.py": "class Hermes:\n    pass\n"},
    "v0.7.0": {f"{TP}/mistral_tool_parser.py": "class Mistral:\n    pass\n"},
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return make_repo(tmp_path_factory.mktemp("errors") / "repo", HISTORY)


# -- raised where detected, with the hint --------------------------------------------------------------------


def test_not_a_repository_is_a_problem_with_its_hint(tmp_path):
    from indexer.sources.git import GitSource

    (tmp_path / "plain").mkdir()
    with pytest.raises(Problem) as e:
        GitSource(str(tmp_path / "plain"))
    assert e.value.message == f"{tmp_path / 'plain'} is not a git repository"
    assert "--from-pypi" in e.value.hint


def test_a_failing_git_command_is_a_problem_and_still_an_os_error(repo):
    from indexer.sources.git import GitSource

    with pytest.raises(Problem) as e:
        GitSource(repo)._git("cat-file", "-t", "no-such-object")
    assert isinstance(e.value, OSError) and "git cat-file failed" in str(e.value)


def test_directory_source_problems_have_hints(tmp_path):
    from indexer.sources.directory import DirectorySource

    (tmp_path / "empty").mkdir()
    for path in (tmp_path / "empty", tmp_path / "missing"):
        with pytest.raises(Problem) as e:
            DirectorySource(path)
        assert isinstance(e.value, ValueError) and "--path" in e.value.hint
    (tmp_path / "tree" / "vllm").mkdir(parents=True)
    with pytest.raises(Problem, match="pass --label") as e:
        DirectorySource(tmp_path / "tree")
    assert e.value.hint


def test_spec_and_scope_errors_are_problems():
    from indexer.core.scope import Scope
    from indexer.core.specs import SpecError, select

    with pytest.raises(SpecError) as e:
        select("v9.9.9", ["v0.6.3"], hint="see the grammar")
    assert isinstance(e.value, Problem) and e.value.hint == "see the grammar" and "v0.6.3" in e.value.message
    with pytest.raises(SpecError) as e:
        select("v9.9.9", ["v0.6.3"], note=" (only the cached ones)")
    assert e.value.message.endswith(" (only the cached ones)") and e.value.hint is None
    with pytest.raises(Problem) as e:
        Scope.named("default", ("/etc/*",))
    assert isinstance(e.value, ValueError) and "--include" in e.value.hint


def test_package_index_errors_are_problems_whose_text_is_the_message():
    from indexer.sources.pypi import PackageIndexError

    e = PackageIndexError("cannot read the package index", "reconnect")
    assert isinstance(e, Problem) and isinstance(e, OSError)
    assert str(e) == "cannot read the package index" and e.hint == "reconnect"


# -- the build says what it kept -----------------------------------------------------------------------------


def _failing(source, after: str, error: BaseException):
    """The source, failing with `error` when the files of versions after `after` are read."""
    files = source.files

    def failing(version, scope):
        if version.label != after:
            raise error
        return files(version, scope)

    source.files = failing
    return source


def test_a_source_failing_mid_build_is_a_build_error_saying_what_was_kept(repo, tmp_path):
    from indexer.build.pipeline import build
    from indexer.core.scope import Scope
    from indexer.sources.git import GitSource

    source = _failing(GitSource(repo), "v0.6.3", OSError("git cat-file ended early"))
    with pytest.raises(BuildError) as e:
        build(
            tmp_path / "x.db",
            source,
            [source.ref("v0.6.3"), source.ref("v0.7.0")],
            Scope.named("default"),
            jobs=1,
        )
    assert e.value.message == "git cat-file ended early"
    assert e.value.hint == "versions indexed before the failure are kept; run the build again"


def test_ctrl_c_mid_build_says_what_was_kept(repo, tmp_path):
    from indexer.build.pipeline import build
    from indexer.core.scope import Scope
    from indexer.sources.git import GitSource

    source = _failing(GitSource(repo), "v0.6.3", KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt) as e:
        build(
            tmp_path / "x.db",
            source,
            [source.ref("v0.6.3"), source.ref("v0.7.0")],
            Scope.named("default"),
            jobs=1,
        )
    assert (
        str(e.value)
        == "interrupted: the versions indexed before are kept; run the same build again to index the rest"
    )


def test_choosing_versions_from_a_source_that_fails_says_nothing_was_indexed(repo):
    from indexer.build.choose import choose
    from indexer.sources.git import GitSource

    source = GitSource(repo)
    source.names = lambda: (_ for _ in ()).throw(OSError("git for-each-ref failed"))
    with pytest.raises(BuildError) as e:
        choose(source, "v0.6.3..", pre=False)
    assert e.value.hint == "nothing was indexed; run the build again once this is fixed"
    with pytest.raises(Problem) as e:
        choose(GitSource(repo), "v0.9.9", pre=False)
    # the nearest in version order (the newest tag below it), and how to read the spec grammar
    assert "v0.7.0" in e.value.message and e.value.hint == "see tpindex build --help for the spec grammar"


# -- translated once ---------------------------------------------------------------------------------------------


def _handlers(fn) -> list[str]:
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    return [
        ast.unparse(h.type) if h.type else "bare" for h in ast.walk(tree) if isinstance(h, ast.ExceptHandler)
    ]


def test_the_build_command_catches_nothing_itself():
    """cli/main.py's build raised Problems from five except clauses of its own; they are raised where the
    error is detected now, and LazyGroup.invoke shows every one the same way."""
    from indexer.cli.main import build

    assert _handlers(build.callback) == []


def test_a_problem_in_any_tool_is_its_error_with_the_hint():
    """The transports' runners let a Problem through; the tools turn it into the tool's error, message then
    hint, in one place (mcp/tools.py)."""
    import anyio
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from indexer.mcp.tools import TOOLS, register

    async def run(ctx, question):
        raise Problem("v9.9.9 is not indexed", "tpindex versions lists them")

    mcp = MCPServer("test")
    register(mcp, run)
    for spec in TOOLS:
        required = {a.name: "x" for a in spec.args if a.required}
        with pytest.raises(ToolError, match=r"v9\.9\.9 is not indexed\. Hint: tpindex versions lists them$"):
            anyio.run(mcp.call_tool, spec.name, required)
