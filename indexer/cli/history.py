"""Click commands for the history of a clone: log and contains (answers/history.py)."""

from __future__ import annotations

import click

from .commands import KIND, dumps, index
from .main import db_option


@click.command(short_help="The commits between two versions that touched a parser name's code.")
@click.argument("name")
@click.argument("a")
@click.argument("b")
@KIND
@click.option(
    "--framework",
    is_flag=True,
    help="Also the shared framework files the name's code runs through (engine base, abstract parser, "
    "adapters).",
)
@click.option(
    "--all-parents",
    is_flag=True,
    help="Every commit of B's history not in A's, through merged branches (a merge itself only where it "
    "changed a file on its own); default: B's first-parent line, as git log --first-parent.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="text: a line per commit and its files; json: {name, a, b, first_parent, framework, kinds: "
    "[{kind, files_a, files_b, commits: [{sha, date, author, subject, pr, merge, url, pr_url, "
    "files}]}], note}; markdown: a table with links.",
)
@db_option
def log(name, a, b, kind, framework, all_parents, fmt, db_path):
    """The commits from version A to version B that touched any file of parser NAME's own code at A or at B
    (its registered, real, engine and wrapper classes' files, and bases defining its methods: where its code
    moved is followed), oldest first, each with its id, date, subject, pull request and the lines added and
    removed in those files. Needs a database built from a git clone (build --repo); the clone itself is not
    read."""
    from ..render import history as rh
    from ..render import text as textfmt

    ans = index(db_path).log(name, a, b, kind, framework, all_parents)
    if fmt == "json":
        click.echo(dumps(ans))
    elif fmt == "markdown":
        click.echo(rh.format_log_markdown(ans), nl=False)
    else:
        click.echo("\n".join(rh.format_log(ans, textfmt.output_width())))


@click.command(short_help="Which indexed versions hold a commit or a pull request.")
@click.argument("target", metavar="COMMIT|#PR")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text for people; json: {query, commits: [{commit, first, versions}], first, versions, "
    "not_containing, without_history}.",
)
@db_option
def contains(target, fmt, db_path):
    """The first indexed version (in version order) whose history holds COMMIT (its id, 4 to 40 hex digits),
    and every indexed version that does; for a pull request #N, the commits whose subject names it
    ("... (#N)", "Merge pull request #N ..."), a fix cherry-picked onto a release branch included. Needs a
    database built from a git clone (build --repo); the clone itself is not read. Exit status 0 when an
    indexed version holds it, 1 when none does, 2 on error."""
    from ..render import history as rh
    from ..render import text as textfmt

    ix = index(db_path)
    ans = ix.contains(target)
    if fmt == "json":
        click.echo(dumps(ans))
    else:
        click.echo("\n".join(rh.format_contains(ans, ix.labels(), textfmt.output_width())))
    raise SystemExit(0 if ans.versions else 1)
