"""tpindex's command line: build, versions, which, diff, show, grep, export, serve, check.

Imports of heavy modules (gitpython, tree-sitter, Datasette) happen inside the commands that need them,
so that read-only commands start fast.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

DEFAULT_DB = "db/tpindex.db"
UPSTREAM = "https://github.com/vllm-project/vllm"


class Fail(click.ClickException):
    """A user-facing error: one line saying what is wrong, one saying what to do; exit code 2."""

    exit_code = 2

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.hint = hint

    def format_message(self) -> str:
        return self.message + (f"\nHint: {self.hint}" if self.hint else "")


def db_option(f):
    return click.option("--db", "db_path", default=DEFAULT_DB, show_default=True, type=click.Path(dir_okay=False),
                        help="The SQLite database to read or write.")(f)


def open_db(path: str):
    """Open an existing database read-only for a query command."""
    from .store import connect

    return connect(path, create=False, readonly=True)


class LazyGroup(click.Group):
    """Commands living in other modules are imported only when they run (fast start-up)."""

    lazy = {
        "which": "indexer.answers.commands:which",
        "diff": "indexer.answers.commands:diff",
        "export": "indexer.answers.commands:export",
        "show": "indexer.answers.commands:show",
        "grep": "indexer.answers.commands:grep",
        "serve": "indexer.serve.command:serve",
        "check": "indexer.check:check",
    }

    def invoke(self, ctx):
        import sqlite3

        from .problems import Problem

        try:
            return super().invoke(ctx)
        except Problem as e:  # every stage's user-fixable error, shown the same way
            raise Fail(e.message, e.hint) from None
        except sqlite3.DatabaseError as e:  # a damaged page met mid-query, in any read command
            from .store import is_damaged

            if not is_damaged(e):
                raise
            raise Fail(f"the database is damaged ({e})",
                       "run tpindex check for details, then rebuild it into a new --db") from None

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def get_command(self, ctx, name):
        if name in self.lazy:
            import importlib

            module, _, attr = self.lazy[name].partition(":")
            try:
                return getattr(importlib.import_module(module), attr)
            except ImportError:
                return None
        return super().get_command(ctx, name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="tpindex")
def main():
    """Index vLLM's tool-calling code across versions and answer questions about it.

    \b
    tpindex build   walk versions (git tags, released archives, a directory) into the database
    tpindex which   which file really implements a parser name, at one version or all
    tpindex diff    what changed in the parser map between two versions (--code PATH: in a file's code)
    tpindex show    the code of a file at a version, with line numbers
    tpindex grep    a regular expression over the code of every indexed version, like git grep
    tpindex export  the parser index of a version as JSON, CSV or Markdown
    tpindex serve   browse the database in Datasette
    tpindex check   verify a database
    """


@main.command()
@click.option("--repo", default=".", show_default=True, type=click.Path(file_okay=False),
              help="A vLLM git clone or bare repository. Trees and blobs are read through git; the work tree "
                   "and index are never touched.")
@click.option("--from-pypi", is_flag=True,
              help="Read vllm's released source archives from the package index pip is configured with "
                   "(PIP_INDEX_URL, pip's global.index-url, else PyPI) instead of a git repository.")
@click.option("--path", "paths", multiple=True, metavar="DIR|GLOB",
              help="A directory (an installed vllm in site-packages, an unpacked archive, a checkout) to index "
                   "as one version. A value with glob characters (* ? [) instead adds paths to the scope, like "
                   "--include. Repeatable for globs.")
@click.option("--label", help="With --path DIR: the version label (default: read from the package's version file).")
@click.option("--tags", "spec", metavar="SPEC",
              help="Versions to index: A..B (inclusive, in version order), A.. or ..B, comma-separated lists, "
                   "shell globs (v0.3*), or any other ref (branch, commit) as one version. Required with "
                   "--repo and --from-pypi.")
@click.option("--pre", is_flag=True, help="Include pre-releases (rc, dev, a, b) in ranges and globs.")
@db_option
@click.option("--scope", type=click.Choice(["default", "all"]), default="default", show_default=True,
              help="default: the tool-calling subsystem (every path the tool-parser and reasoning-parser "
                   "packages have had, vllm/parser/, the CLI arguments and serving-chat files, chat templates "
                   "and parser tests); all: every .py under vllm/.")
@click.option("--include", "includes", multiple=True, metavar="GLOB",
              help="Add paths to the scope (fnmatch; * crosses /), e.g. 'vllm/entrypoints/*.py'. Repeatable.")
@click.option("--cache-dir", type=click.Path(file_okay=False),
              help="With --from-pypi: where downloaded archives are kept (default: the user cache dir).")
@click.option("--upstream", default=None,
              help=f"Repository URL for links to source lines (default {UPSTREAM}); stored in the database.")
@click.option("-j", "--jobs", type=click.IntRange(1, 64), default=None,
              help="Parser worker processes (default: number of CPUs).")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar and no summary.")
@click.option("-v", "--verbose", is_flag=True, help="Also list the tags that ranges ignored because they are not versions.")
@click.option("--no-dedup", is_flag=True, hidden=True, help="(benchmarking) parse every file of every version.")
@click.option("--no-code", is_flag=True, hidden=True,
              help="(benchmarking) do not store the code (show, grep and diff --code then have nothing to read).")
def build(repo, from_pypi, paths, label, spec, pre, db_path, scope, includes, cache_dir, upstream, jobs, quiet,
          verbose, no_dedup, no_code):
    """Index versions of vLLM into the database.

    \b
    Examples:
      tpindex build --repo ~/src/vllm --tags v0.30.0..v0.32.0
      tpindex build --from-pypi --tags v0.30.0..
      tpindex build --path .venv/lib/python3.11/site-packages/vllm
    """
    import sqlite3

    from .build import build as run_build
    from .scope import Scope
    from .specs import SpecError, select

    dirs = [p for p in paths if not any(c in p for c in "*?[")]
    includes = tuple(includes) + tuple(p for p in paths if p not in dirs)
    if len(dirs) > 1:
        raise Fail("--path DIR takes one directory", "run one build per directory, each with its --label")
    if from_pypi and dirs:
        raise Fail("--from-pypi and --path DIR are two different sources", "choose one")
    if label and not dirs:
        raise Fail("--label names the version of a --path DIR build", "drop --label, or add --path DIR")
    if dirs and spec:
        raise Fail("--tags selects versions of a repository or the package index; --path DIR is one version",
                   "drop --tags (use --label to name the directory's version)")
    db_file = Path(db_path)
    if not db_file.parent.is_dir():
        raise Fail(f"the database directory {db_file.parent} does not exist",
                   f"create it (mkdir -p {db_file.parent}) or pass another --db")
    if not os.access(db_file.parent, os.W_OK) or (db_file.exists() and not os.access(db_file, os.W_OK)):
        raise Fail(f"cannot write {db_file}", "check its permissions or pass another --db")
    the_scope = Scope.named(scope, includes)
    try:
        if dirs:
            from .sources.directory import DirectorySource

            source = DirectorySource(dirs[0], label, scope=the_scope)
            versions = [source.ref(source.names()[0])]
        else:
            if not spec:
                raise Fail("--tags is required", "e.g. --tags v0.30.0..v0.32.0 (see tpindex build --help)")
            if from_pypi:
                from .sources.pypi import PypiSource

                source = PypiSource(cache_dir=cache_dir, progress=not quiet and sys.stderr.isatty())
            else:
                from .sources.git import GitSource, NotARepository

                try:
                    source = GitSource(repo)
                except NotARepository:
                    raise Fail(f"{repo} is not a git repository",
                               "pass --repo PATH to a vLLM clone, or use --from-pypi for released versions") from None
            chosen = select(spec, source.names(), pre=pre, is_ref=source.is_ref)
            if verbose and chosen.ignored:
                click.echo(f"ignored (not versions): {', '.join(chosen.ignored)}", err=True)
            versions = [source.ref(n) for n in chosen.names + chosen.refs]
    except SpecError as e:
        if getattr(source, "offline", None):  # only the cached archives could be listed
            raise Fail(f"{e} (the package index cannot be reached: only cached archives are known)",
                       "reconnect to the package index, or choose among the cached versions") from None
        raise Fail(str(e), "see tpindex build --help for the spec grammar") from None
    except OSError as e:  # the package index, a download, the cache: before anything is written
        raise Fail(str(e), "nothing was indexed; run the build again once this is fixed") from None
    except ValueError as e:
        raise Fail(str(e), "see tpindex build --help for --repo, --tags and --path") from None

    show = not quiet and sys.stderr.isatty()
    bar = click.progressbar(length=len(versions), label="indexing", file=sys.stderr) if show else None
    try:
        if bar:
            bar.__enter__()
        stats = run_build(db_file, source, versions, the_scope, jobs=jobs, dedup=not no_dedup,
                          progress=(lambda: bar.update(1)) if bar else None, upstream=upstream, code=not no_code)
    except OSError as e:  # a source that fails mid-build (archive, repository); complete versions are kept
        raise Fail(str(e), "versions indexed before the failure are kept; run the build again") from None
    except sqlite3.Error as e:  # a full disk, an I/O error: the version being written is rolled back
        from .store import is_damaged

        if is_damaged(e):
            raise Fail(f"{db_file} is damaged ({e})", f"rebuild it into another --db (tpindex check --db {db_file}"
                       " says what is wrong)") from None
        raise Fail(f"cannot write {db_file} ({e})", "versions indexed before the failure are kept; free disk"
                   " space (or pass another --db) and run the build again") from None
    finally:
        if bar:
            bar.__exit__(None, None, None)
    for w in stats.warnings:
        click.echo(f"warning: {w}", err=True)
    if not quiet:
        click.echo(stats.summary())


@main.command()
@db_option
def versions(db_path):
    """List indexed versions in version order, with their counts of files and registered names."""
    db = open_db(db_path)
    rows = db.execute("""
        select v.label, v.source, v.status, v.file_count,
          (select count(distinct name) from registry r where r.version = v.label and r.kind = 'tool'),
          (select count(distinct name) from registry r where r.version = v.label and r.kind = 'reasoning'),
          (select count(distinct name) from registry r where r.version = v.label and r.kind = 'unified')
        from versions v order by v.ord""").fetchall()
    if not rows:
        click.echo(f"{db_path}: no versions indexed yet")
        return
    click.echo(f"{'version':<16} {'source':<6} {'files':>6} {'tool':>5} {'reasoning':>9} {'unified':>7}  status")
    for label, source, status, files, tool, reasoning, unified in rows:
        click.echo(f"{label:<16} {source:<6} {files or 0:>6} {tool:>5} {reasoning:>9} {unified:>7}  {status}")


if __name__ == "__main__":
    main()
