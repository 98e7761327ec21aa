"""`tpindex atlas`: the behaviour atlas (issue 44)."""

from __future__ import annotations

import click

from ..core.problems import Problem
from .main import db_option

CASES = ("single", "parallel", "no-args", "nested", "unicode", "content-before", "content-only", "reasoning")
MODES = ("nonstream", "stream:token", "stream:char", "serving-full", "serving-stream")


@click.command(short_help="Every parser at every version, run on its own cases: a stored matrix.")
@click.argument("names", nargs=-1, metavar="[NAME...]")
@click.option(
    "--tags",
    metavar="SPEC",
    help="The versions (a spec among the indexed ones, e.g. v0.20.0..; default all).",
)
@click.option(
    "--kind",
    type=click.Choice(["tool", "reasoning"]),
    default="tool",
    show_default=True,
    help="Which parsers: tool parsers (a reasoning parser runs in their `reasoning` case, paired by name).",
)
@click.option("--case", "case", type=click.Choice(CASES), help="Only this case's cells in the answer.")
@click.option("--mode", "mode", type=click.Choice(MODES), help="Only this mode's cells in the answer.")
@click.option(
    "--no-run",
    "no_run",
    is_flag=True,
    help="Answer from what earlier runs stored; run nothing (what was never run is listed as not run).",
)
@click.option("-j", "--jobs", type=click.IntRange(1, 64), help="Replay workers at once (default: CPUs).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="text: per name, version ranges by case; json: schema atlas; markdown: the same tables.",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress lines.")
@db_option
def atlas(names, tags, kind, case, mode, no_run, jobs, fmt, quiet, db_path):
    """Run every registered parser NAME (default: all) at every indexed version (or --tags) on a battery of
    cases made from that version's own files, through that version's own code (replay, in a child process
    with limits), and show the matrix: per case (single, parallel, no-args, nested, unicode, content-before,
    content-only, reasoning) and mode (nonstream, stream:token, stream:char, serving-full, serving-stream) ok,
    wrong (what differs), error or not-applicable (why), with the first version where each cell changes.

    Cases come from the version's chat template rendered with known calls, else its test files' model-output
    literals, else a writer from the parser's facts. Cells are stored in the database by what determines them
    (the case, the name's code, the serving code): a run runs only what is not stored yet, so an unchanged
    parser is not run again for the next release. --no-run answers from the store.

    \b
    Examples:
      tpindex atlas                       # every tool parser at every version
      tpindex atlas hermes --tags v0.20.0..
      tpindex atlas --no-run --case single --mode stream:char --format json
    """
    import sys

    from ..render import atlas as render

    if kind != "tool" and not no_run:
        raise Problem(
            "the atlas runs tool parsers; a reasoning parser runs in the `reasoning` case of the tool parser "
            "of its name",
            "use --kind tool (the default)",
        )
    say = None if quiet else (lambda m: click.echo(m, err=True))
    if no_run:
        from ..api import Index

        ans = Index(db_path).atlas(list(names) or None, tags=tags, kind=kind, case=case, mode=mode)
    else:
        from ..api import run_atlas

        ticks = (lambda m: click.echo(f"atlas: {m}", err=True)) if say and sys.stderr.isatty() else None
        ans = run_atlas(
            db_path, list(names) or None, tags=tags, kind=kind, jobs=jobs, progress=ticks, notice=say
        )
        if case or mode:
            from ..api import Index

            run = ans.run
            ans = Index(db_path).atlas(list(names) or None, tags=tags, kind=kind, case=case, mode=mode)
            ans.run = run
    if fmt == "json":
        import json

        click.echo(json.dumps(ans.to_json(), indent=2, ensure_ascii=False))
    elif fmt == "markdown":
        click.echo(render.format_markdown(ans))
    else:
        click.echo(render.format_text(ans))
