"""tpindex's command line: build, versions, which, card, diff, show, grep, where, check-doc, fit, log, contains,
check-plugin, replay, atlas, export, serve, check, mcp, schema.

Imports of heavy modules (tree-sitter, jinja2, Datasette) happen inside the commands that need them,
so that read-only commands start fast.
"""

from __future__ import annotations

import os
import sys

import click

from ..core.problems import Problem

DEFAULT_DB = "db/tpindex.db"
UPSTREAM = "https://github.com/vllm-project/vllm"


class _Shown(click.ClickException):
    """How a Problem reaches the user, the one translation of the error model (LazyGroup.invoke, and
    LazyGroup.main for output that cannot be written): one line saying what is wrong, one saying what to
    do; exit code 2. Commands raise Problem (indexer/core/problems.py), never this."""

    exit_code = 2

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.hint = hint

    def format_message(self) -> str:
        from ..render.text import printable

        return printable(self.message + (f"\nHint: {self.hint}" if self.hint else ""))


class _Printable:
    """Standard output as every command writes it: control characters that came from a repository (a commit
    subject, a path, a line of code) escaped on their way (render.text.printable), whichever command and
    format wrote them."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        from ..render.text import printable

        self._stream.write(printable(text))
        return len(text)

    def __getattr__(self, name: str):  # isatty, flush, encoding, buffer, fileno ...: the stream's own
        return getattr(self._stream, name)


def _download_bar(total: int, label: str):
    """A release archive's download, on standard error."""
    return click.progressbar(length=total, label=label, file=sys.stderr)


# The path types, each made once and shared by the options taking one: a click.Path looks up its
# translated name when made (gettext searches the locale directories each time: about 0.1 ms), and every
# process defines every command's options.
FILE = click.Path(dir_okay=False)
DIRECTORY = click.Path(file_okay=False)
FILE_OR_DASH = click.Path(dir_okay=False, allow_dash=True)


def db_option(f):
    return click.option(
        "--db",
        "db_path",
        default=DEFAULT_DB,
        show_default=True,
        type=FILE,
        envvar="TPINDEX_DB",
        show_envvar=True,
        help="The SQLite database to read or write.",
    )(f)


class LazyGroup(click.Group):
    """Commands living in other modules are imported only when they run (fast start-up)."""

    lazy = {
        "which": "indexer.cli.commands:which",
        "card": "indexer.cli.commands:card",
        "diff": "indexer.cli.commands:diff",
        "export": "indexer.cli.commands:export",
        "show": "indexer.cli.commands:show",
        "grep": "indexer.cli.commands:grep",
        "serve": "indexer.cli.serve:serve",
        "check": "indexer.cli.check:check",
        "where": "indexer.cli.commands:where",
        "check-doc": "indexer.cli.commands:check_doc",
        "fit": "indexer.cli.fit:fit",
        "log": "indexer.cli.history:log",
        "contains": "indexer.cli.history:contains",
        "check-plugin": "indexer.cli.commands:check_plugin",
        "replay": "indexer.cli.commands:replay",
        "atlas": "indexer.cli.atlas:atlas",
    }

    def main(self, *args, **kwargs):
        """Output that cannot be written (a full disk or device), whichever command or option wrote it (--help
        too): one line and a hint, exit 2. (click itself ends quietly when a reader closes the pipe.)"""
        import errno

        try:
            return super().main(*args, **kwargs)
        except OSError as e:
            if e.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO):
                raise
            _quiet_stdout()
            fail = _Shown(
                f"cannot write the output ({e.strerror or e})",
                "free space where the output goes, or send it elsewhere",
            )
            fail.show()
            sys.exit(fail.exit_code)

    def invoke(self, ctx):
        import sqlite3

        stdout = sys.stdout
        sys.stdout = _Printable(stdout)
        try:
            return super().invoke(ctx)
        except Problem as e:  # every stage's user-fixable error, shown the same way
            raise _Shown(e.message, e.hint) from None
        except KeyboardInterrupt as e:  # a build's Ctrl-C says what it kept (BuildInterrupted)
            click.echo(str(e) or "interrupted", err=True)
            raise SystemExit(130) from None
        except (
            sqlite3.DatabaseError,
            UnicodeDecodeError,
        ) as e:  # a damaged page met mid-query, in any read command
            from ..store.database import is_damaged

            if not is_damaged(e):
                raise
            raise _Shown(
                f"the database is damaged ({e})",
                "run tpindex check for details, then rebuild it into a new --db",
            ) from None
        finally:
            sys.stdout = stdout

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def resolve_command(self, ctx, args):
        """A mistyped command suggests the closest ones."""
        name = args[0] if args else None
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            from ..core.suggest import close_names

            close = close_names(name, self.list_commands(ctx), n=3, cutoff=0.5)
            hint = f"did you mean {' or '.join(close)}?" if close else "tpindex --help lists the commands"
            raise Problem(f"no such command {name!r}", hint)
        return super().resolve_command(ctx, args)

    def get_command(self, ctx, name):
        if name in self.lazy:
            import importlib

            module, _, attr = self.lazy[name].partition(":")
            try:
                return getattr(importlib.import_module(module), attr)
            except ImportError:
                return None
        return super().get_command(ctx, name)


def _quiet_stdout() -> None:
    """After standard output failed, point it at /dev/null: what is still buffered must not fail again
    (with a traceback) when Python flushes it at exit."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, ValueError, OSError):
        return  # not a real file (tests capture it)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


@click.group(
    cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100}
)
@click.version_option(package_name="tpindex")
def main():
    """Index vLLM's tool-calling code across versions and answer questions about it.

    Start with `tpindex build` (or `make index`), then ask: `tpindex which NAME`. Every command takes
    --db (or the TPINDEX_DB environment variable) and -h for its own help.
    """


@main.command(short_help="Index versions (git tags, release archives, a directory).")
@click.option(
    "--repo",
    default=".",
    show_default=True,
    type=DIRECTORY,
    help="A vLLM git clone or bare repository. Trees and blobs are read through git; the work tree "
    "and index are never touched. The commits between the indexed tags are stored too (for log, "
    "contains and the commits diff lists).",
)
@click.option(
    "--from-pypi",
    is_flag=True,
    help="Read vllm's released source archives from the package index pip is configured with "
    "(PIP_INDEX_URL, pip's global.index-url, else PyPI) instead of a git repository.",
)
@click.option(
    "--path",
    "paths",
    multiple=True,
    metavar="DIR|GLOB",
    help="A directory (an installed vllm in site-packages, an unpacked archive, a checkout) to index "
    "as one version. A value with glob characters (* ? [) instead adds paths to the scope, like "
    "--include. Repeatable for globs.",
)
@click.option(
    "--label", help="With --path DIR: the version label (default: read from the package's version file)."
)
@click.option(
    "--tags",
    "spec",
    metavar="SPEC",
    help="Versions to index: A..B (inclusive, in version order), A.. or ..B, comma-separated lists, "
    "shell globs (v0.3*), or any other ref (branch, commit) as one version. Required with "
    "--repo and --from-pypi.",
)
@click.option("--pre", is_flag=True, help="Include pre-releases (rc, dev, a, b) in ranges and globs.")
@db_option
@click.option(
    "--scope",
    type=click.Choice(["default", "all"]),
    default="default",
    show_default=True,
    help="default: the tool-calling subsystem (every path the tool-parser and reasoning-parser "
    "packages have had, vllm/parser/, the CLI arguments and serving-chat files, chat templates, "
    "parser tests and the tool-calling documentation); all: every .py under vllm/.",
)
@click.option(
    "--tree",
    is_flag=True,
    help="Also record every path of each version's tree (docs/, tests/, examples/, ...), the definitions "
    "(classes, functions, methods, module-level names) of every module under vllm/, and which "
    "identifiers each text file uses: what tpindex where and check-doc read. Costs a light parse "
    "of every module once per unique file.",
)
@click.option(
    "--include",
    "includes",
    multiple=True,
    metavar="GLOB",
    help="Add paths to the scope (fnmatch; * crosses /), e.g. 'vllm/entrypoints/*.py': paths inside the "
    "version tree (no '..', not absolute). Repeatable.",
)
@click.option(
    "--cache-dir",
    type=DIRECTORY,
    help="With --from-pypi: where downloaded archives are kept (default: the user cache dir).",
)
@click.option(
    "--upstream",
    default=None,
    help=f"Repository URL for links to source lines (default {UPSTREAM}), http(s), or a template using "
    "{ref}, {path} and {line}; stored in the database.",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(1, 64),
    default=None,
    help="Parser worker processes (default: number of CPUs).",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress bar and no summary.")
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Also list the tags that ranges ignored because they are not versions.",
)
@click.option(
    "--replace",
    is_flag=True,
    help="Replace a version already indexed from another source under the same label (a --path DIR build "
    "labelled like a release, a tag indexed from the package index and now from git). Without it, "
    "such a build is refused.",
)
@click.option(
    "--no-dedup", is_flag=True, hidden=True, help="(benchmarking) parse every file of every version."
)
@click.option(
    "--no-code",
    is_flag=True,
    hidden=True,
    help="(benchmarking) do not store the code (show, grep and diff --code then have nothing to read).",
)
def build(
    repo,
    from_pypi,
    paths,
    label,
    spec,
    pre,
    db_path,
    scope,
    tree,
    includes,
    cache_dir,
    upstream,
    jobs,
    quiet,
    verbose,
    replace,
    no_dedup,
    no_code,
):
    """Index versions of vLLM into the database.

    \b
    Examples:
      tpindex build --repo ~/src/vllm --tags v0.30.0..v0.32.0
      tpindex build --from-pypi --tags v0.30.0.. --tree
      tpindex build --path .venv/lib/python3.11/site-packages/vllm
    """
    from pathlib import Path

    from ..build.choose import choose
    from ..build.pipeline import build as run_build
    from ..core.scope import Scope

    dirs = [p for p in paths if not any(c in p for c in "*?[")]
    includes = tuple(includes) + tuple(p for p in paths if p not in dirs)
    if len(dirs) > 1:
        raise Problem("--path DIR takes one directory", "run one build per directory, each with its --label")
    if from_pypi and dirs:
        raise Problem("--from-pypi and --path DIR are two different sources", "choose one")
    if label and not dirs:
        raise Problem("--label names the version of a --path DIR build", "drop --label, or add --path DIR")
    if dirs and spec:
        raise Problem(
            "--tags selects versions of a repository or the package index; --path DIR is one version",
            "drop --tags (use --label to name the directory's version)",
        )
    if upstream is not None:
        from ..core.links import UPSTREAM_HINT, upstream_problem

        if upstream_problem(upstream):
            raise Problem(upstream_problem(upstream), UPSTREAM_HINT)
        upstream = upstream.strip()
    db_file = Path(db_path)
    if not db_file.parent.is_dir():
        raise Problem(
            f"the database directory {db_file.parent} does not exist",
            f"create it (mkdir -p {db_file.parent}) or pass another --db",
        )
    if not os.access(db_file.parent, os.W_OK) or (db_file.exists() and not os.access(db_file, os.W_OK)):
        raise Problem(f"cannot write {db_file}", "check its permissions or pass another --db")
    from ..store.database import check_target

    check_target(db_file)  # a file that is not ours is refused before anything is downloaded or written
    the_scope = Scope.named(scope, includes, tree=tree)
    if dirs:
        from ..sources.directory import DirectorySource

        source = DirectorySource(dirs[0], label, scope=the_scope)
    elif not spec:
        raise Problem("--tags is required", "e.g. --tags v0.30.0..v0.32.0 (see tpindex build --help)")
    elif from_pypi:
        from ..sources.pypi import PypiSource

        source = PypiSource(
            cache_dir=cache_dir, progress=_download_bar if not quiet and sys.stderr.isatty() else None
        )
    else:
        from ..sources.git import GitSource

        source = GitSource(repo)

    def again(other: str) -> str:  # this build with another --tags, as a command that runs as written
        import shlex

        where = ["--from-pypi"] if from_pypi else ["--repo", str(repo)]
        cache = ["--cache-dir", str(cache_dir)] if from_pypi and cache_dir else []
        return shlex.join(["tpindex", "build", *where, *cache, "--tags", other, "--db", str(db_path)])

    versions, ignored = choose(source, spec if not dirs else None, pre=pre, again=again)
    if verbose and ignored:
        click.echo(f"ignored (not versions): {', '.join(ignored)}", err=True)

    show = not quiet and sys.stderr.isatty()
    bar = (
        click.progressbar(
            length=len(versions),
            label="indexing",
            file=sys.stderr,
            show_eta=False,
            show_pos=True,
            item_show_func=lambda label: f"writing {label}" if label else "",
        )
        if show
        else None
    )
    try:
        if bar:
            bar.__enter__()
        stats = run_build(
            db_file,
            source,
            versions,
            the_scope,
            jobs=jobs,
            dedup=not no_dedup,
            progress=(lambda label, done: bar.update(done, label)) if bar else None,
            upstream=upstream,
            replace=replace,
            code=not no_code,
        )
    finally:
        if bar:
            bar.__exit__(None, None, None)
    for w in stats.warnings:
        click.echo(f"warning: {w}", err=True)
    if not quiet:
        click.echo(stats.summary())


@main.command(short_help="The indexed versions, with their counts of files and names.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: a table; json: a list of {version, source, origin, files, tool, reasoning, engine, status}.",
)
@db_option
def versions(fmt, db_path):
    """List indexed versions in version order. Columns: version (the label, a tag upstream); source (git: a
    repository, pypi: a release archive, dir: a directory) and origin (which one); files (in-scope files
    recorded); tool, reasoning, engine (names registered in each registry: the tool-parser and
    reasoning-parser registries, and the parser engine's own registry of v0.16.0 - v0.22.x); status
    (complete, or building while a build writes it)."""
    import json

    from ..api import Index

    infos = Index(db_path).versions()
    if fmt == "json":
        click.echo(json.dumps([v.to_json() for v in infos], indent=2))
        return
    if not infos:
        click.echo(f"{db_path}: no versions indexed yet")
        return
    click.echo(
        f"{'version':<16} {'source':<6} {'files':>6} {'tool':>5} {'reasoning':>9} {'engine':>6}  status"
    )
    for v in infos:
        click.echo(
            f"{v.version:<16} {v.source:<6} {v.files:>6} {v.tool:>5} {v.reasoning:>9} {v.engine:>6}  {v.status}"
        )


@main.command(short_help="Serve the tools for agents over stdio (Model Context Protocol).")
@db_option
@click.option(
    "--time-limit",
    "time_limit",
    type=click.FloatRange(0.1, 3600),
    default=None,
    metavar="SECONDS",
    help="Time limit of a code search (grep) and of fit's work, each in a child process it stops (default:"
    " 10 s for a search, 30 s for fit).",
)
def mcp(db_path, time_limit):
    """Serve tpindex's tools to a local agent over stdio (the Model Context Protocol): versions, which,
    which_history, diff, export, ... with structured output following `tpindex schema`. Read-only. Configure
    your MCP client to run: tpindex mcp --db PATH (see the README, "Use from other tools")."""
    from ..api import Index

    Index(db_path).close()  # a StoreError says what is wrong, before stdio
    from ..mcp.tools import run_stdio, stdio_server

    run_stdio(stdio_server(db_path, time_limit))


@main.command(short_help="Print the JSON Schema of a --format json output.")
@click.argument("name", required=False)
def schema(name):
    """Print the JSON Schema of an output (which, which-all, diff, export, versions, check, ...): the
    contract tools can rely on. Without NAME, list the schemas and the contract version."""
    import json

    from ..schemas import CONTRACT, load, names

    if not name:
        click.echo(f"JSON contract v{CONTRACT}; schemas: {', '.join(names())}")
        return
    try:
        click.echo(json.dumps(load(name), indent=2))
    except KeyError:
        from ..core.suggest import close_names

        close = close_names(name, names(), n=3, cutoff=0.4)
        raise Problem(
            f"no schema named {name!r}",
            f"did you mean {' or '.join(close)}?" if close else f"one of: {', '.join(names())}",
        ) from None


if __name__ == "__main__":
    main()
