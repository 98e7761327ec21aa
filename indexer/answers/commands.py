"""Click commands for the answers: which, diff, export."""

from __future__ import annotations

import json

import click

from ..cli import Fail, db_option, open_db

KIND = click.option("--kind", type=click.Choice(["tool", "reasoning", "unified"]),
                    help="Only this kind of parser (default: every kind the name has).")


@click.command()
@click.argument("name")
@click.option("--at", "at", metavar="VERSION", help="The version to answer for (default: the newest indexed).")
@click.option("--all", "all_", is_flag=True,
              help="Every indexed version, equal consecutive versions collapsed into ranges, and the lifecycle.")
@KIND
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text for people; json (the same facts, every hop) for tools.")
@db_option
def which(name, at, all_, kind, fmt, db_path):
    """Which file really implements parser NAME: the chain from the registration to the real class,
    with file:line for every hop."""
    from . import which as w

    if at and all_:
        raise Fail("--at and --all ask different questions", "use one of them")
    db = open_db(db_path)
    if all_:
        h = w.history(db, name, kind)
        click.echo(json.dumps(h, indent=2, default=str) if fmt == "json" else "\n".join(w.format_history(h)))
        return
    ans = w.which(db, name, at, kind)
    if fmt == "json":
        click.echo(json.dumps(ans, indent=2, default=str))
        return
    click.echo("\n\n".join("\n".join(w.format_chain(r, ans["version"])) for r in ans["parsers"]))


@click.command()
@click.argument("a")
@click.argument("b")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True,
              help="text: one line per change; json: {a, b, changes: [{type, subject, detail, ...}]}; "
                   "markdown: a table for issues and pull requests.")
@db_option
def diff(a, b, fmt, db_path):
    """What changed from version A to version B: names added / removed, implementations moved, aliases,
    adapter imports, classes, markers and plants. Exit status 0 when nothing changed, 1 when something
    did, 2 on error (like diff(1))."""
    from . import diff as d

    db = open_db(db_path)
    result = d.diff(db, a, b)
    if fmt == "json":
        click.echo(json.dumps(result, indent=2))
    elif fmt == "markdown":
        click.echo(d.format_markdown(result))
    else:
        click.echo(d.format_text(result))
    raise SystemExit(1 if result["changes"] else 0)


@click.command()
@click.option("--at", "at", metavar="VERSION", help="The version to export (default: the newest indexed).")
@click.option("--format", "fmt", type=click.Choice(["json", "csv", "markdown"]), default="json", show_default=True,
              help="json: {version, columns, parsers: [...]}; csv: one row per name with a header; markdown: a table.")
@click.option("-o", "--output", type=click.File("w"), default="-", help="Write here instead of standard output.")
@db_option
def export(at, fmt, output, db_path):
    """The parser index of a version: kind, name, impl, registered file and class, real file and class,
    adapter, aliases, stub, re-export, parent parser, chat templates and tests (where the scope holds
    them). Sorted by kind and name; the same database gives the same bytes."""
    from .export import export_rows, render

    db = open_db(db_path)
    version, rows = export_rows(db, at)
    output.write(render(version, rows, fmt))


@click.command()
@click.argument("query", metavar="SYMBOL|PATH")
@click.option("--at", "at", metavar="VERSION", help="The version to answer for (default: the newest indexed with --tree).")
@click.option("--all", "all_", is_flag=True,
              help="Every indexed version: ranges with the same files, moves and removals.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text for people (long lists capped); json (everything) for tools.")
@db_option
def where(query, at, all_, fmt, db_path):
    """Where SYMBOL is defined, or whether PATH exists, at a version or across all of them.

    \b
    SYMBOL: Name, Class.method, pkg.mod.Class.method, or path.py:Name (that file's).
    PATH:   vllm/x.py, a directory (docs/), a bare file name (cli_args.py), or a pattern
            (vllm/tool_parsers/*_tool_parser.py, <name> placeholders allowed).
    A symbol defined nowhere at the version is looked up as a mention (code, comments, strings). A path
    gone from a version says where it went: the same content at a new path, the file now holding most of
    its definitions, or the one new file with its name. Needs a database built with --tree.
    """
    from . import where as w

    if at and all_:
        raise Fail("--at and --all ask different questions", "use one of them")
    ans = w.where(open_db(db_path), query, at, all_)
    click.echo(json.dumps(ans, indent=2) if fmt == "json" else "\n".join(w.format_text(ans)))


@click.command("check-doc")
@click.argument("document", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--at", "at", multiple=True, metavar="VERSION|SPEC",
              help="The version(s) to check against (default: the newest indexed). Repeatable; a spec "
                   "(v0.30.0..v0.33.0, lists, globs) selects among the indexed versions. Each is checked.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True,
              help="text: one line per claim; json: every claim with its evidence; markdown: a table per version.")
@db_option
def check_doc(document, at, fmt, db_path):
    """Check the claims of a Markdown DOCUMENT (runbook, pointer map, skill file) against the index: paths
    exist, symbols are defined or mentioned in the files they are named with, parser names are registered,
    aliases are one class, version claims ("(v0.29.0+)", "since", "removed at", "moved at", "before") and
    counts ("54 tool parser names at v0.32.0") hold. Each claim: ok, stale (true once; what is true now and
    since when), wrong (never true; the true version) or unchecked (why).

    Exit status 0 when nothing is stale or wrong, 1 when something is, 2 on error. Paths and symbols need
    versions indexed with --tree. DOCUMENT may be - for standard input.
    """
    from . import checkdoc

    try:
        with click.open_file(document, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise Fail(f"cannot read {document} ({e.strerror or e})", "pass a Markdown file, or - for standard input") from None
    db = open_db(db_path)
    versions = checkdoc.resolve_versions(db, at)
    report = checkdoc.check_document(db, text, versions, name=document)
    if fmt == "json":
        click.echo(json.dumps(report, indent=2))
    elif fmt == "markdown":
        click.echo(checkdoc.format_markdown(report))
    else:
        click.echo("\n".join(checkdoc.format_text(report)))
    raise SystemExit(1 if report["failed"] else 0)
