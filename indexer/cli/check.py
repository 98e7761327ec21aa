"""`tpindex check`: the command; the report is answers/check.py's (api.check_database)."""

from __future__ import annotations

import click

from ..api import check_database
from .main import db_option


@click.command(short_help="Verify a database (exit 1 when something is wrong).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: notes, problems and a summary line; json: {ok, problems, notes, summary}.",
)
@db_option
def check(fmt, db_path):
    """Verify a database: schema, complete versions, files and blobs, facts missing for parsed files,
    versions read from a damaged archive, foreign keys, the full-text index and the parser map. Prints
    "ok: ..." and exits 0 when all is well; else one line per problem and exit status 1 (2 when the file
    is not a tpindex database)."""
    report = check_database(db_path)
    if fmt == "json":
        import json

        click.echo(json.dumps(report.to_json(), indent=2))
        raise SystemExit(0 if report.ok else 1)
    problems, notes, summary = report.problems, report.notes, report.summary
    for n in notes:
        click.echo(f"note: {n}")
    if problems:
        for p in problems:
            click.echo(f"problem: {p}", err=True)
        click.echo(
            f"{db_path}: {len(problems)} problem(s). Hint: rebuild into a new --db (tpindex build --db NEW"
            " ...); a build also migrates an older schema and re-indexes incomplete versions.",
            err=True,
        )
        raise SystemExit(1)
    click.echo(f"ok: {summary}")
