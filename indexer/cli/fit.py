"""`tpindex fit FILE`: which parser fits a model (indexer/answers/fit.py)."""

from __future__ import annotations

import click

from ..core.problems import Problem
from .commands import dumps, index
from .main import FILE_OR_DASH, db_option


@click.command(short_help="Which parser fits a model: from its name, chat template, tokenizer or output.")
@click.argument("file", type=FILE_OR_DASH, required=False)
@click.option(
    "--model",
    metavar="NAME",
    help="Start from a model instead of a FILE: a Hugging Face id (Qwen/Qwen3-8B) or a family name (Qwen3), any "
    "case, read against the version's own documentation (the reasoning page's model table and its notes, the "
    "tool-calling page's sections and flags) and its parser names.",
)
@click.option(
    "--at", "at", metavar="VERSION", help="The version whose parsers to rank (default: the newest indexed)."
)
@click.option(
    "--kind",
    type=click.Choice(["tool", "reasoning"]),
    help="Only tool parsers or only reasoning parsers (default: both).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="text: the ranked candidates with their evidence, then the serve line; json: every candidate "
    "with evidence (schema fit); markdown: tables for an issue or a runbook.",
)
@click.option(
    "--replay",
    is_flag=True,
    help="FILE is a raw output: also run the top three tool candidates on it with the version's own code "
    "(as tpindex replay does: non-streaming, then one token per delta) and weigh what each made of "
    "it (a call or none, call markup left in the content) into the ranking.",
)
@click.option(
    "--no-proof",
    "no_proof",
    is_flag=True,
    help="Skip the proof: by default the recommended pair is replayed by the version's own code (in a child "
    "process, as tpindex replay does) on what the model emits (its template's assistant turn with the tool call, "
    "with and without reasoning; a raw output as is), non-streaming, streamed and through serving; a pair whose "
    "call does not come back intact with finish_reason tool_calls and the reasoning separated is not recommended.",
)
@click.option(
    "--time-limit",
    "time_limit",
    type=click.FloatRange(0.1, 3600),
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="Stop the answer after this long: fit runs the parsers' regular expressions and FILE's template in a"
    " child process with a time and a memory limit (a template that loops, a pattern that backtracks).",
)
@db_option
def fit(file, model, at, kind, fmt, replay, no_proof, time_limit, db_path):
    """Which parser fits a model: rank the tool and reasoning parsers of a version by the evidence FILE gives,
    each with the evidence for and against it, and end with the vllm serve line.

    The pair comes from what vLLM says and does, in this order: the version's documentation (the model
    family's tool and reasoning parsers, or the reasoning parsers it pairs with the tool parser chosen), the
    model's template (its think markup, its generation prompt), the code's evidence below, then the proof. Each
    answer names the evidence that decided it; equal scores share a rank, and a tie no evidence breaks is said.

    \b
    FILE (read by its content, not its name; - for standard input) is one of:
      a Jinja chat template       rendered on one tool call: its call markup, tools prompt, text
      a tokenizer_config.json     its chat_template (a string or named templates) and added_tokens_decoder
      a tokenizer.json            its added_tokens (and vocabulary)
      a raw model output          text captured with skip_special_tokens: false

    Evidence: the parsers' sentinels found (exactly, or as look-alikes with the differing code points
    named), the shape of the call markup against the shape each parser expects (from its sentinels, its
    own regular expressions and its shipped templates), its regular expressions matching the markup,
    tokens it needs missing from the vocabulary, special tokens stripped unless its adjust_request sets
    skip_special_tokens = False. Names the chat template the version ships for the winner, with a
    character diff of the call markup when FILE is a template.
    """
    from ..api import FIT_MAX_FILE

    if model is not None or file is None:
        if file is not None:
            raise click.UsageError("give a FILE or --model NAME, not both")
        if model is None:
            raise click.UsageError(
                "give a FILE (a chat template, tokenizer file or raw output) or --model NAME"
            )
        if replay:
            raise click.UsageError("--replay runs parsers on a raw output FILE; --model has none")
        answer = index(db_path).fit(
            at=at,
            kind=kind,
            model=model,
            proof=not no_proof,
            notice=lambda m: click.echo(m, err=True),
            time_limit=time_limit,
        )
        _show(answer, fmt)
        return
    try:
        with click.open_file(file, "rb") as fh:
            data = fh.read(FIT_MAX_FILE + 1)  # a larger file is refused with a hint (answers/fitrun.py)
    except OSError as e:
        raise Problem(
            f"cannot read {file} ({e.strerror or e})",
            "pass a chat template, a tokenizer_config.json, a tokenizer.json or a model output (- for "
            "standard input)",
        ) from None
    text = data.decode("utf-8", errors="replace")
    answer = index(db_path).fit(
        text,
        at,
        kind,
        name="-" if file == "-" else file,
        replay=replay,
        notice=lambda m: click.echo(m, err=True),
        proof=not no_proof,
        time_limit=time_limit,
    )
    _show(answer, fmt)


def _show(answer, fmt: str) -> None:
    from ..render import fit as f

    if fmt == "json":
        click.echo(dumps(answer))
    elif fmt == "markdown":
        click.echo(f.format_markdown(answer), nl=False)
    else:
        click.echo(f.format_text(answer))
