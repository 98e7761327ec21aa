"""Click commands for the answers: which, diff, export, show, grep."""

from __future__ import annotations

import json

import click

from ..cli import Fail, db_option, open_db

COLOR = click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
                     help="Colour the text output: auto colours on a terminal (unless NO_COLOR is set).")


def use_color(choice: str) -> bool:
    import os
    import sys

    if choice != "auto":
        return choice == "always"
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


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
@click.option("--code", "code_path", metavar="PATH",
              help="Instead: a unified diff of the code of PATH between A and B (an added or deleted file "
                   "shows whole); json gives the hunks {old_start, old_lines, new_start, new_lines, lines}.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True,
              help="text: one line per change; json: {a, b, changes: [{type, subject, detail, ...}]}; "
                   "markdown: a table for issues and pull requests (with --code: a diff block).")
@COLOR
@db_option
def diff(a, b, code_path, fmt, color, db_path):
    """What changed from version A to version B: names added / removed, implementations moved, aliases,
    adapter imports, classes, markers and plants; with --code PATH, the code of one file. Exit status 0
    when nothing changed, 1 when something did, 2 on error (like diff(1))."""
    from . import diff as d

    db = open_db(db_path)
    if code_path:
        from .source import diff_paths, format_diff

        result = diff_paths(db, a, code_path, b, code_path)
        if fmt == "json":
            click.echo(json.dumps(result, indent=2))
        elif fmt == "markdown":
            click.echo("\n".join([f"`{code_path}` from {result['a']} to {result['b']}", "", "```diff",
                                  *format_diff(result), "```"]))
        else:
            on = use_color(color)
            lines = format_diff(result, on)
            if lines:
                click.echo("\n".join(lines), color=on)
            else:
                click.echo(f"no change to {code_path} from {result['a']} to {result['b']}", err=True)
        raise SystemExit(0 if result["status"] in ("unchanged", "moved") else 1)
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
@click.argument("location", metavar="PATH[:LINE[-END]]")
@click.option("--at", "at", metavar="VERSION", help="The version to show (default: the newest indexed).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text: the lines with their numbers; json: {version, path, blob_id, kind, line_count, start, "
                   "end, lines: [{line, text}]}.")
@COLOR
@db_option
def show(location, at, fmt, color, db_path):
    """The code of a file at a version, from the database, with line numbers: PATH for the whole file,
    PATH:LINE for one line, PATH:START-END (or PATH:START-) for a span. Syntax colour on a terminal."""
    from .source import format_show, parse_location, show_span
    from .versions import newest

    db = open_db(db_path)
    path, start, end = parse_location(location)
    d = show_span(db, at or newest(db), path, start, end)
    if fmt == "json":
        click.echo(json.dumps({k: v for k, v in d.items() if not k.startswith("_")}, indent=2))
        return
    on = use_color(color)
    if on:
        span = "" if (d["start"], d["end"]) == (1, d["line_count"]) else f", lines {d['start']}-{d['end']}"
        click.echo(f"\x1b[2m{d['path']} at {d['version']} ({d['line_count']} lines{span})\x1b[0m", color=True)
    lines = format_show(d, on)
    if lines:
        click.echo("\n".join(lines), color=on)


@click.command()
@click.argument("pattern")
@click.option("--tags", "tags", metavar="SPEC", help="Search these indexed versions (the tag-spec grammar of build: "
              "A..B, lists, globs; default: every indexed version).")
@click.option("--at", "at", metavar="VERSION", help="Search one version.")
@click.option("--path", "paths", multiple=True, metavar="GLOB",
              help="Only paths matching GLOB (fnmatch, * crosses /) or under a directory. Repeatable.")
@click.option("-i", "--ignore-case", "icase", is_flag=True, help="Case-insensitive, like git grep -i.")
@click.option("-F", "--fixed-strings", "fixed", is_flag=True, help="PATTERN is a plain string, like git grep -F.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help='text: "VERSIONS  path:line:text"; json: [{path, line, text, versions: [...]}] (binary files: '
                   'line and text null, binary true).')
@COLOR
@db_option
def grep(pattern, tags, at, paths, icase, fixed, fmt, color, db_path):
    """Search the stored code of the indexed versions for PATTERN, a POSIX extended regular expression as
    git grep -E reads it. Each matching line is printed once with the versions that hold it, as ranges
    over the indexed versions; the results are those of git grep -n -E over the same tags and paths.
    Exit status 0 when something matched, 1 when nothing did, 2 on error.

    \b
    Syntax: . [...] [^...] [[:alpha:]] (...) | * + ? {n,m} ^ $ \\1-\\9, and \\w \\W \\s \\S \\b \\B \\< \\>;
    other backslash escapes (\\d, \\t ...) are refused, as are [[=a=]] and [[.a.]]. Only Python files
    under vllm/ are stored (templates and tests are not searched).
    """
    from .grep import format_text, search

    db = open_db(db_path)
    res = search(db, pattern, tags=tags, at=at, paths=list(paths), icase=icase, fixed=fixed)
    if fmt == "json":
        click.echo(json.dumps([m.json() for m in res.matches], indent=1))
    elif res.matches:
        on = use_color(color)
        click.echo("\n".join(format_text(res, on)), color=on)
    else:
        n = len(res.versions)
        click.echo(f"no match in {n} version{'s' if n != 1 else ''}", err=True)
    raise SystemExit(0 if res.matches else 1)
