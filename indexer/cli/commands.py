"""Click commands for the answers: which, diff, export, card, where, check-doc, check-plugin, show, grep."""

from __future__ import annotations

import click

from ..core.problems import Problem
from .main import FILE, FILE_OR_DASH, db_option


def index(db_path: str):
    from ..api import Index

    return Index(db_path)


def dumps(answer) -> str:
    import json  # here, as in every command writing or reading JSON: text answers need no json (5 M instructions)

    return json.dumps(answer.to_json(), indent=2, ensure_ascii=False)


COLOR = click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour the text output: auto colours on a terminal (unless NO_COLOR is set).",
)


def use_color(choice: str) -> bool:
    import os
    import sys

    if choice != "auto":
        return choice == "always"
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


GREP_TIME_LIMIT = 10.0  # answers.grep.GREP_TIME_LIMIT (not imported: click reads it before any search)

KIND = click.option(
    "--kind",
    type=click.Choice(["tool", "reasoning", "engine"]),
    help="Only this kind of parser (default: every kind the name has).",
)


@click.command(short_help="Which file really implements a parser name.")
@click.argument("name")
@click.option(
    "--at", "at", metavar="VERSION", help="The version to answer for (default: the newest indexed)."
)
@click.option(
    "--all",
    "all_",
    is_flag=True,
    help="Every indexed version, equal consecutive versions collapsed into ranges, and the lifecycle.",
)
@KIND
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text for people; json (the same facts, every hop) for tools.",
)
@db_option
def which(name, at, all_, kind, fmt, db_path):
    """Which file really implements parser NAME: the chain from the registration to the class whose code
    does the parsing, with file:line for every hop, and notes on inherited methods, stubs and wrappers."""
    from ..render import text as textfmt
    from ..render import which as rw

    if at and all_:
        raise Problem("--at and --all ask different questions", "use one of them")
    ix = index(db_path)
    if all_:
        h = ix.history(name, kind)
        click.echo(dumps(h) if fmt == "json" else "\n".join(rw.format_history(h, textfmt.output_width())))
        return
    ans = ix.which(name, at, kind)
    if fmt == "json":
        click.echo(dumps(ans))
        return
    width = textfmt.output_width()
    click.echo("\n\n".join("\n".join(rw.format_chain(p, width)) for p in ans.parsers))
    if ans.models:
        click.echo("\n" + "\n".join(rw.format_models(ans)))


@click.command(short_help="What changed between two versions (exit 1 when something did).")
@click.argument("a")
@click.argument("b")
@click.option(
    "--code",
    "code_path",
    metavar="PATH|NAME",
    help="Instead: a unified diff of the code of PATH between A and B (an added or deleted file "
    "shows whole), or of parser NAME's own code files, file by file, its real file at A against its "
    "real file at B when it moved; json gives the hunks {old_start, old_lines, new_start, new_lines, "
    "lines}.",
)
@click.option(
    "--kind",
    type=click.Choice(["tool", "reasoning", "engine"]),
    help="With --code NAME: only this kind of parser (default: every kind the name has).",
)
@click.option(
    "--contract",
    is_flag=True,
    help="Instead: what changed in the parser contract plugins depend on (bases, their methods' signatures "
    "and attributes, the registration API, utils helpers, the types they name and where they are "
    "imported from, how serving constructs and calls parsers), typed as griffe's breakage check does, "
    "with file:line on both sides; exit 1 only when a change breaks plugins.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="text: one line per change; json: {a, b, changes: [{type, kind, name, before, after, file, line, "
    "detail, ...}]}; markdown: a table with links, for issues and pull requests (with --code: a "
    "diff block).",
)
@COLOR
@db_option
def diff(a, b, code_path, kind, contract, fmt, color, db_path):
    """What changed from version A to version B: names added / removed, implementations moved, code that
    changed, wrappers, aliases, adapter imports, classes, markers and plants; with --code PATH, the code of
    one file. Exit status 0 when nothing changed, 1 when something did, 2 on error (like diff(1))."""
    from ..render import diff as rd
    from ..render import text as textfmt

    ix = index(db_path)
    if kind and not code_path:
        raise Problem("--kind goes with --code NAME", "drop --kind, or add --code NAME")
    if contract:
        if code_path:
            raise Problem("--contract and --code ask different questions", "use one of them")
        from ..render import contract as rc

        result = ix.contract_diff(a, b)
        if fmt == "json":
            click.echo(dumps(result))
        elif fmt == "markdown":
            click.echo(rc.format_markdown(result, ix.upstream_linker()))
        else:
            click.echo(rc.format_text(result, textfmt.output_width()))
        raise SystemExit(1 if result.breaking else 0)
    if code_path:
        from ..core.paths import is_path_argument
        from ..render.source import format_diff

        if is_path_argument(code_path):
            diffs, named = [ix.code_diff(a, b, code_path)], None
        else:
            named = ix.name_code_diff(a, b, code_path, kind)
            diffs = named.files
        if fmt == "json":
            click.echo(dumps(named or diffs[0]))
        else:
            on = use_color(color) if fmt == "text" else False
            lines = [line for d in diffs for line in format_diff(d.to_json(), on)]
            if fmt == "markdown":
                click.echo("\n".join([f"`{code_path}` from {a} to {b}", "", "```diff", *lines, "```"]))
            elif lines:
                click.echo("\n".join(lines), color=on)
            else:
                click.echo(f"no change to {code_path} from {a} to {b}", err=True)
        raise SystemExit(0 if all(d.status in ("unchanged", "moved") for d in diffs) else 1)
    result = ix.diff(a, b)
    if fmt == "json":
        click.echo(dumps(result))
    elif fmt == "markdown":
        click.echo(rd.format_markdown(result, ix.upstream_linker()))
    else:
        click.echo(rd.format_text(result, textfmt.output_width()))
    raise SystemExit(1 if result.changes else 0)


@click.command(short_help="The parser index of a version as JSON, CSV or Markdown.")
@click.option("--at", "at", metavar="VERSION", help="The version to export (default: the newest indexed).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["json", "csv", "markdown"]),
    default="json",
    show_default=True,
    help="json: {version, columns, parsers: [...]}; csv: one row per name with a header; markdown: a table.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(allow_dash=True),
    default="-",
    help="Write here instead of standard output (never over the database or another SQLite file).",
)
@db_option
def export(at, fmt, output, db_path):
    """The parser index of a version: kind, name, impl, registered file and class, real file and class,
    adapter, aliases, stub, re-export, parent parser, chat templates and tests (where the scope holds
    them). Sorted by kind and name; the same database gives the same bytes."""
    from ..render.export import render

    ex = index(db_path).export(at)
    text = render(ex.version, ex.parsers, fmt)
    if output == "-":
        click.echo(text, nl=False)
        return
    write_output(output, text, db_path)


def write_output(path: str, text: str, db_path: str) -> None:
    """Write a command's output to a file; never over the database (however it is reached: a link) or
    any other SQLite file; every failure as one line and a hint."""
    import errno
    import os

    from ..store.database import SQLITE_MAGIC

    target = os.path.abspath(path)
    if os.path.isdir(target):
        raise Problem(f"-o {path} is a directory", "give a file name, e.g. -o parsers.json")
    if not os.path.isdir(os.path.dirname(target)):
        raise Problem(
            f"-o {path}: directory {os.path.dirname(target)} does not exist", "create it or choose another -o"
        )
    if os.path.exists(target):
        real = os.path.realpath(
            db_path
        )  # a database reached through a link keeps its files beside the real one
        own = [db_path] + [real + suffix for suffix in ("", "-wal", "-shm", "-journal", ".lock")]
        if any(_same_file(target, f) for f in own):
            raise Problem(
                f"-o {path} is the database {db_path} (or one of its files); refusing to write over it",
                "choose another -o",
            )
        if os.path.isfile(target):
            try:
                with open(target, "rb") as f:
                    is_sqlite = f.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
            except OSError:
                is_sqlite = False  # unreadable: opening it for writing says why
            if is_sqlite:
                raise Problem(
                    f"-o {path} is an SQLite database; refusing to write over it", "choose another -o"
                )
    try:
        with open(target, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        why = e.strerror or str(e)
        hint = (
            "free some space or choose another -o"
            if e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
            else "check its permissions or choose another -o"
        )
        raise Problem(f"cannot write -o {path} ({why})", hint) from None


def _same_file(a: str, b: str) -> bool:
    import os

    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


@click.command(short_help="Everything about one parser name at a version (or --all).")
@click.argument("name", required=False)
@click.option("--at", "at", metavar="VERSION", help="The version to describe (default: the newest indexed).")
@click.option(
    "--all",
    "all_",
    is_flag=True,
    help="Every registered name of the version: one document (with --format markdown, a table with a "
    "row per name and a section per name: a version-stamped operator reference).",
)
@KIND
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="text for people; json (every fact, with upstream links) for tools; markdown for documents.",
)
@db_option
def card(name, at, all_, kind, fmt, db_path):
    """Everything an operator needs about parser NAME at one version: impl, registered / real / engine /
    wrapper classes and code files with lines, streaming, contract methods, behaviour attributes, what
    adjust_request sets, sentinels (token strings, non-ASCII characters named), the parser of the same
    name in the other registry, chat templates and tests, plants and markers, lifecycle, upstream links."""
    from ..render import card as c

    if all_ and name:
        raise Problem("--all describes every name; NAME describes one", "drop NAME or --all")
    if not all_ and not name:
        raise Problem("which name?", "tpindex card NAME, or tpindex card --all --at VERSION")
    ix = index(db_path)
    found = ix.card_set(None if all_ else name, at, kind)
    cards = found.cards
    if fmt == "json":
        click.echo(dumps(found))
    elif fmt == "markdown":
        if all_:
            version = cards[0].version if cards else (at or "")
            click.echo(c.format_all_markdown(version, cards), nl=False)
        else:
            click.echo("\n".join(c.format_markdown(x) for x in cards), nl=False)
    else:
        click.echo("\n\n".join(c.format_text(x) for x in cards))


@click.command(short_help="Where a symbol is defined or a path is, across versions.")
@click.argument("query", metavar="SYMBOL|PATH")
@click.option(
    "--at",
    "at",
    metavar="VERSION",
    help="The version to answer for (default: the newest indexed with --tree).",
)
@click.option(
    "--all",
    "all_",
    is_flag=True,
    help="Every indexed version: ranges with the same files, moves and removals.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text for people (long lists capped); json (everything) for tools.",
)
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
    if at and all_:
        raise Problem("--at and --all ask different questions", "use one of them")
    ans = index(db_path).where(query, at, all_)
    if fmt == "json":
        import json

        click.echo(json.dumps(ans.to_json(), indent=2))
    else:
        from ..render import where as w

        click.echo("\n".join(w.format_text(ans)))


@click.command("check-doc", short_help="Check a Markdown document's claims against the index.")
@click.argument("document", type=FILE_OR_DASH)
@click.option(
    "--at",
    "at",
    multiple=True,
    metavar="VERSION|SPEC",
    help="The version(s) to check against (default: the newest indexed). Repeatable; a spec "
    "(v0.30.0..v0.33.0, lists, globs) selects among the indexed versions. Each is checked.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="text: one line per claim; json: every claim with its evidence; markdown: a table per version.",
)
@db_option
def check_doc(document, at, fmt, db_path):
    """Check the claims of a Markdown DOCUMENT (runbook, pointer map, skill file) against the index: paths
    exist, symbols are defined or mentioned in the files they are named with, parser names are registered,
    aliases are one class, version claims ("(v0.29.0+)", "since", "removed at", "moved at", "before") and
    counts ("54 tool parser names at v0.32.0") hold. Each claim: ok, stale (true once; what is true now and
    since when), too-new (true only from a later version), wrong (never true; the true version) or
    unchecked (why).

    Exit status 0 when nothing is stale, too-new or wrong, 1 when something is, 2 on error. Paths and symbols need
    versions indexed with --tree. DOCUMENT may be - for standard input.
    """
    import json

    from ..render import checkdoc

    try:
        with click.open_file(document, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise Problem(
            f"cannot read {document} ({e.strerror or e})", "pass a Markdown file, or - for standard input"
        ) from None
    report = index(db_path).check_doc(text, list(at), name=document)
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), indent=2))
    elif fmt == "markdown":
        click.echo(checkdoc.format_markdown(report))
    else:
        click.echo("\n".join(checkdoc.format_text(report)))
    raise SystemExit(1 if report.failed else 0)


@click.command(
    "check-plugin", short_help="Check a parser plugin file against each indexed version's contract."
)
@click.argument("plugin", type=FILE_OR_DASH)
@click.option(
    "--tags",
    metavar="SPEC",
    help="The versions to check (the tag-spec grammar of build, over the indexed versions; default: all).",
)
@click.option(
    "--since",
    metavar="VERSION",
    help="The version the plugin was written against: a built-in name it shadows has its code changes "
    "counted from there (default: the first compatible version).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="text: the compatible versions, then each range of versions with what breaks or warns there; "
    "json: every check at every version; markdown: a summary table and a table per version.",
)
@db_option
def check_plugin(plugin, tags, since, fmt, db_path):
    """Check a tool or reasoning parser PLUGIN file (a --tool-parser-plugin file, a module of a plugin
    package) against the parser contract of each indexed version, without running it: its vLLM imports
    (and where they moved), its bases, each method it overrides against the base's signature and the calls
    vLLM makes, its constructor against how serving constructs parsers, its super() calls, its registrations
    and the built-in names they shadow; then the first and last compatible version.

    Exit status 0 when every checked version is compatible, 1 when one breaks it, 2 on error. PLUGIN may be
    - for standard input. Imports of modules outside the scope are checked only at versions built with
    --tree; constructors against serving's calls only where the scope holds them (build --include).
    """
    from ..render import plugin as rp
    from ..render import text as textfmt

    try:
        with click.open_file(plugin, "rb") as f:
            data = f.read()
    except OSError as e:
        raise Problem(
            f"cannot read {plugin} ({e.strerror or e})", "pass a Python file, or - for standard input"
        ) from None
    report = index(db_path).check_plugin(
        data, path=plugin if plugin != "-" else "<stdin>", tags=tags, since=since
    )
    if fmt == "json":
        click.echo(dumps(report))
    elif fmt == "markdown":
        click.echo(rp.format_markdown(report))
    else:
        click.echo(rp.format_text(report, textfmt.output_width()))
    raise SystemExit(1 if report.broken else 0)


@click.command(short_help="The code of a file or of a parser name at a version.")
@click.argument("location", metavar="PATH[:LINE[-END]]|NAME")
@click.option("--at", "at", metavar="VERSION", help="The version to show (default: the newest indexed).")
@KIND
@click.option(
    "--method",
    metavar="METHOD",
    help="With a NAME: the method as the name resolves it (e.g. extract_tool_calls_streaming, parse).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: the lines with their numbers; json: {version, path, blob_id, kind, line_count, start, "
    "end, lines: [{line, text}]}.",
)
@COLOR
@db_option
def show(location, at, kind, method, fmt, color, db_path):
    """The code of a file, or of a parser name, at a version, from the database, with line numbers.

    \b
    PATH                 the whole file; PATH:LINE one line; PATH:START-END (or PATH:START-) a span
    NAME                 the class that really implements parser NAME (its span; one per kind it has,
                         or only --kind), as `tpindex which NAME` names it
    NAME --method M      the method M (extract_tool_calls_streaming, parse, ...) as NAME resolves it
                         through the class hierarchy: the class whose definition is used
    Syntax colour on a terminal, plain in a pipe."""
    from ..core.paths import is_path_argument, parse_location
    from ..render.source import format_show

    ix = index(db_path)
    if is_path_argument(location):
        if kind or method:
            raise Problem(
                "--kind and --method go with a parser NAME, not a PATH", "drop them, or give a name"
            )
        path, start, end = parse_location(location)
        shown = ix.show(path, at, start, end)
        if fmt == "json":
            click.echo(dumps(shown))
            return
        blocks = [(None, shown)]
    else:
        spans = ix.show_name(location, at, kind, method)
        if fmt == "json":
            click.echo(dumps(spans))
            return
        blocks = []
        for sp in spans.spans:
            what = f"{sp.class_}.{sp.method}" if sp.method else sp.class_
            kinds = " and ".join(sp.kinds)
            title = (
                f"{location} ({kinds} parser) at {spans.version}: {what}, {sp.file}:{sp.start}-{sp.end}"
                + (
                    f" ({sp.role}{', ' + sp.body if sp.body and sp.body != 'code' else ''})"
                    if sp.method
                    else ""
                )
            )
            blocks.append((title, sp.code))
    on = use_color(color)
    out = []
    for title, s in blocks:
        if title:
            out.append(f"\x1b[1m{title}\x1b[0m" if on else f"== {title}")
        elif on:
            span = "" if (s.start, s.end) == (1, s.line_count) else f", lines {s.start}-{s.end}"
            out.append(f"\x1b[2m{s.path} at {s.version} ({s.line_count} lines{span})\x1b[0m")
        # colour needs the whole file (the lexer's context); without it the lines already read are enough
        out.extend(format_show(s, ix.file_lines(s.blob_id) if on and s.kind != "binary" else None))
    if out:
        click.echo("\n".join(out), color=on)


@click.command(short_help="Search the code of every indexed version, like git grep.")
@click.argument("pattern")
@click.option(
    "--tags",
    "tags",
    metavar="SPEC",
    help="Search these indexed versions (the tag-spec grammar of build: "
    "A..B, lists, globs; default: every indexed version).",
)
@click.option("--at", "at", metavar="VERSION", help="Search one version.")
@click.option(
    "--path",
    "paths",
    multiple=True,
    metavar="GLOB",
    help="Only paths matching GLOB (fnmatch, * crosses /) or under a directory. Repeatable.",
)
@click.option("-i", "--ignore-case", "icase", is_flag=True, help="Case-insensitive, like git grep -i.")
@click.option(
    "-F", "--fixed-strings", "fixed", is_flag=True, help="PATTERN is a plain string, like git grep -F."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help='text: "VERSIONS  path:line:text"; json: [{path, line, text, versions: [...]}] (binary files: '
    "line and text null, binary true).",
)
@click.option(
    "--time-limit",
    "time_limit",
    type=click.FloatRange(0, 3600),
    default=GREP_TIME_LIMIT,
    show_default=True,
    metavar="SECONDS",
    help="Stop a search that takes longer (a pattern with nested repetition can take"
    " exponential time); 0: no limit.",
)
@COLOR
@db_option
def grep(pattern, tags, at, paths, icase, fixed, fmt, time_limit, color, db_path):
    """Search the stored code of the indexed versions for PATTERN, a POSIX extended regular expression as
    git grep -E reads it. Each matching line is printed once with the versions that hold it, as ranges
    over the indexed versions; the results are those of git grep -n -E over the same tags and paths.
    Exit status 0 when something matched, 1 when nothing did, 2 on error.

    \b
    Syntax: . [...] [^...] [[:alpha:]] (...) | * + ? {n,m} ^ $ \\1-\\9, and \\w \\W \\s \\S \\b \\B \\< \\>;
    other backslash escapes (\\d, \\t ...) are refused, as are [[=a=]] and [[.a.]]. Every file in the
    build's scope is stored: the parser code, and the chat templates and tests.
    """
    import json

    from ..render.grep import format_text

    on = fmt == "text" and use_color(color)
    res = index(db_path).search(
        pattern,
        tags=tags,
        at=at,
        paths=list(paths),
        icase=icase,
        fixed=fixed,
        time_limit=time_limit,
        mark=None if on else 0,
    )
    if fmt == "json":
        click.echo(json.dumps([m.json() for m in res.matches], indent=1))
    elif res.matches:
        click.echo("\n".join(format_text(res, on)), color=on)
    else:
        n = len(res.versions)
        click.echo(f"no match in {n} version{'s' if n != 1 else ''}", err=True)
    raise SystemExit(0 if res.matches else 1)


@click.command(short_help="Run a version's own parser and serving code on a raw model output.")
@click.argument("name", required=False)
@click.option("--at", "at", metavar="VERSION", help="One version (default: the newest indexed).")
@click.option(
    "--tags", metavar="SPEC", help="Versions among the indexed ones (A..B, A.., lists, globs), as a matrix."
)
@click.option(
    "--text",
    "text_file",
    type=FILE_OR_DASH,
    help="The raw model output (the text the model generated, sentinels included); - reads stdin.",
)
@click.option(
    "--deltas",
    "deltas_file",
    type=FILE_OR_DASH,
    help="The exact deltas from a log instead: a JSON list of strings, or of {text, ids} objects.",
)
@click.option(
    "--split",
    "split",
    default="token",
    show_default=True,
    metavar="HOW",
    help="How tokens are grouped into streaming deltas: token, char, word, random:SEED, interval:K.",
)
@click.option(
    "--splits",
    "splits",
    metavar="HOW,HOW",
    help="Try several splits (comma-separated) and mark a version split-sensitive when they disagree.",
)
@click.option(
    "--tools",
    "tools_file",
    type=FILE,
    help="The request's tools (an OpenAI tools JSON list; default: one get_weather tool).",
)
@click.option(
    "--tool-choice", default="auto", show_default=True, help="auto, required, none or a function name."
)
@click.option(
    "--reasoning-parser", metavar="R", help="Also a reasoning parser, composed as serving composes it."
)
@click.option(
    "--kind",
    type=click.Choice(["tool", "reasoning"]),
    default="tool",
    show_default=True,
    help="NAME is a tool parser, or a reasoning parser replayed on its own (no tool parser, as serving runs "
    "one without --tool-call-parser).",
)
@click.option(
    "--request",
    "request_file",
    type=FILE_OR_DASH,
    help="The chat request's fields as a JSON object (tools, tool_choice, chat_template_kwargs, "
    "parallel_tool_calls, response_format, reasoning_effort, skip_special_tokens, include_reasoning, ...); a "
    "field a version's ChatCompletionRequest does not define is refused by name.",
)
@click.option(
    "--chat-template-kwargs",
    "chat_template_kwargs",
    metavar="JSON",
    help="The request's chat_template_kwargs (a JSON object, e.g. '{\"enable_thinking\": true}'), merged "
    "into --request's.",
)
@click.option(
    "--prompt",
    "prompt_file",
    type=FILE_OR_DASH,
    help="The rendered prompt the output continues (the chat template's text up to the generation, e.g. with "
    "thinking off), tokenized by the replay's tokenizer: its ids are the prompt's to the version's code (serving's "
    "res.prompt_token_ids, the engine's parse_delta), whose reasoning parser may read them as ending the "
    "reasoning. Default: none (prompt ids [1]).",
)
@click.option(
    "--tokenizer-mode",
    type=click.Choice(["auto", "hf", "mistral"]),
    default="auto",
    show_default=True,
    help="How --tokenizer is loaded: hf (a tokenizer.json), mistral (tekken.json or a SentencePiece .model "
    "through mistral_common, as vLLM's --tokenizer-mode mistral), auto (by the file).",
)
@click.option(
    "--eos",
    metavar="TOKEN",
    help="The end-of-sequence token serving's last step carries (default: the tokenizer's own; the "
    "synthetic tokenizer's is <|replay_eos|>).",
)
@click.option(
    "--server-arg",
    "server_args",
    multiple=True,
    metavar="FLAG=VALUE",
    help="A server flag the version's serving code reads (repeatable): enable-auto-tool-choice=false, "
    "tool-strict-level=..., exclude-tools-when-tool-choice-none=true, or a VLLM_ environment variable "
    "(VLLM_ENFORCE_STRICT_TOOL_CALLING=0); refused by name where a version does not read it.",
)
@click.option("--full", is_flag=True, help="Text: every outcome whole (the legend is cut at the line's end).")
@click.option(
    "--tokenizer",
    "tokenizer_file",
    type=click.Path(dir_okay=False, exists=True),
    help="The model's tokenizer.json instead of the synthetic tokenizer (needs the tokenizers package "
    "in the replay environment).",
)
@click.option(
    "--special",
    "specials",
    multiple=True,
    metavar="TOKEN",
    help="A special token of the synthetic tokenizer, instead of the name's sentinels (repeatable): a "
    "parser may read the vocabulary (mistral's takes [ARGS] in it for a v11 tokenizer).",
)
@click.option(
    "--mode",
    "modes",
    multiple=True,
    type=click.Choice(["nonstream", "stream", "serving"]),
    help="Only these modes (repeatable; default: all three, or serving alone with --api responses).",
)
@click.option(
    "--api",
    type=click.Choice(["chat", "responses"]),
    default="chat",
    show_default=True,
    help="The API the serving mode replays: chat (OpenAIServingChat: serving-full, serving-stream) or "
    "responses (the version's Responses API, OpenAIServingResponses: responses-full, responses-stream, "
    "responses-completed; a version without it is no-responses-api).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(1, 3600),
    default=60,
    show_default=True,
    help="Seconds one version may take (wall clock) before its process is killed.",
)
@click.option("-j", "--jobs", type=click.IntRange(1, 64), help="Versions replayed at once (default: CPUs).")
@click.option(
    "--setup", is_flag=True, help="Only create the replay environment (a virtualenv in the user cache)."
)
@click.option(
    "--stop-server",
    "stop_server",
    is_flag=True,
    help="Only stop the warm replay server (it otherwise ends after TPINDEX_REPLAY_IDLE seconds unused, "
    "default 300).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="text: one version in detail, several as a matrix; json: schema replay; markdown: the matrix.",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress lines.")
@db_option
def replay(
    name,
    at,
    tags,
    text_file,
    deltas_file,
    split,
    splits,
    tools_file,
    tool_choice,
    reasoning_parser,
    kind,
    request_file,
    chat_template_kwargs,
    prompt_file,
    tokenizer_mode,
    eos,
    server_args,
    full,
    tokenizer_file,
    specials,
    modes,
    api,
    timeout,
    jobs,
    setup,
    stop_server,
    fmt,
    quiet,
    db_path,
):
    """Run the indexed version's own vLLM tool parser (and reasoning parser, and chat-completion serving
    code) on a raw model output, in a child process with time and memory limits: non-streaming, streaming
    (deltas fed as that version's serving loop feeds them) and through serving (finish_reason, the flush of
    unstreamed arguments). Over several versions: a matrix marking where each result changes.

    Trees are materialized once per version into the user cache, from the source the version was indexed
    from; the replay environment (pure-Python packages from the package index) is created on first use.

    \b
    Examples:
      tpindex replay hermes --at v0.33.0 --text out.txt
      tpindex replay hermes --tags v0.6.3.. --text out.txt --splits token,char
      tpindex replay qwen3 --kind reasoning --at v0.20.0 --text out.txt --chat-template-kwargs '{"enable_thinking": true}'
      tpindex replay mistral --tags v0.11.0.. --text out.txt --tokenizer tekken.json
      tpindex replay hermes --tags v0.10.0.. --text out.txt --api responses
      tpindex replay hermes --reasoning-parser qwen3 --tags v0.9.0.. --text out.txt --prompt prompt.txt
      tpindex replay --setup
      tpindex replay --stop-server

    Runs are served by a warm replay server (the packages imported once, kept for later runs): it ends
    after TPINDEX_REPLAY_IDLE seconds without a run (default 300; 0: no warm server) or on --stop-server.
    """
    import json
    import sys

    from ..render import replay as render

    say = None if quiet else (lambda m: click.echo(m, err=True))
    if stop_server:
        if name or text_file or deltas_file or setup:
            raise Problem("--stop-server only stops the warm replay server", "run it alone")
        from ..api import stop_replay_servers

        pids = stop_replay_servers()
        click.echo(
            f"stopped {len(pids)} replay server{'s' if len(pids) != 1 else ''}"
            + (f" (pid {', '.join(map(str, pids))})" if pids else "")
        )
        return
    if setup:
        if name or text_file or deltas_file:
            raise Problem("--setup only creates the replay environment", "run it alone, then replay")
        from ..api import setup_replay

        python = setup_replay(progress=say or (lambda m: None))
        click.echo(f"replay environment: {python.parent.parent}")
        return
    if not name:
        raise Problem("which parser name?", "e.g. tpindex replay hermes --text out.txt")
    if at and tags:
        raise Problem("--at and --tags both choose versions", "use one of them")
    if bool(text_file) == bool(deltas_file):
        raise Problem("give the raw model output: --text FILE or --deltas FILE.json", "one of them")
    text = deltas = None
    if text_file:
        text = _read_input(text_file)
    else:
        deltas = _read_deltas(deltas_file)
    tools = None
    if tools_file:
        try:
            tools = json.loads(_read_input(tools_file))
        except ValueError as e:
            raise Problem(f"--tools {tools_file} is not JSON ({e})", "give an OpenAI tools list") from None
        if not isinstance(tools, list):
            raise Problem(
                f"--tools {tools_file} is not a JSON list", "give an OpenAI tools list: [{type, function}]"
            )
    request = None
    if request_file:
        try:
            request = json.loads(_read_input(request_file))
        except ValueError as e:
            raise Problem(
                f"--request {request_file} is not JSON ({e})", "give the chat request as a JSON object"
            ) from None
    ctk = None
    if chat_template_kwargs:
        try:
            ctk = json.loads(chat_template_kwargs)
        except ValueError as e:
            raise Problem(
                f"--chat-template-kwargs is not JSON ({e})",
                "e.g. --chat-template-kwargs '{\"enable_thinking\": true}'",
            ) from None
    prompt = _read_input(prompt_file) if prompt_file else None
    split_list = [s.strip() for s in splits.split(",") if s.strip()] if splits else [split]
    ticks = (lambda m: click.echo(f"replay: {m}", err=True)) if say and sys.stderr.isatty() else None
    ans = index(db_path).replay(
        name,
        at=at,
        tags=tags,
        text=text,
        deltas=deltas,
        splits=split_list,
        tools=tools,
        tool_choice=tool_choice,
        reasoning_parser=reasoning_parser,
        tokenizer_file=tokenizer_file,
        modes=list(modes) or None,
        timeout=timeout,
        jobs=jobs,
        progress=ticks,
        notice=say,
        specials=list(specials) if specials else None,
        kind=kind,
        request=request,
        chat_template_kwargs=ctk,
        tokenizer_mode=tokenizer_mode,
        eos=eos,
        server_args=list(server_args) or None,
        api=api,
        prompt=prompt,
    )
    if fmt == "json":
        click.echo(dumps(ans))
    elif fmt == "markdown":
        click.echo(render.format_markdown(ans))
    else:
        click.echo(render.format_text(ans, full=full))


def _read_input(path: str) -> str:
    import sys

    try:
        if path == "-":
            return sys.stdin.read()
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise Problem(f"cannot read {path} ({e.strerror or e})", "check the path") from None
    except UnicodeDecodeError:
        raise Problem(f"{path} is not UTF-8 text", "give the model output as UTF-8 text") from None


def _read_deltas(path: str) -> list[dict]:
    import json

    try:
        data = json.loads(_read_input(path))
    except ValueError as e:
        raise Problem(
            f"--deltas {path} is not JSON ({e})", "a JSON list of strings or of {text, ids}"
        ) from None
    if isinstance(data, dict) and isinstance(data.get("deltas"), list):
        data = data["deltas"]
    if not isinstance(data, list) or not data:
        raise Problem(
            f"--deltas {path} is not a non-empty JSON list", "a JSON list of strings or of {text, ids}"
        )
    out = []
    for k, d in enumerate(data):
        if isinstance(d, str):
            out.append({"text": d, "ids": None})
        elif (
            isinstance(d, dict)
            and isinstance(d.get("text"), str)
            and (
                d.get("ids") is None
                or (isinstance(d["ids"], list) and all(isinstance(i, int) for i in d["ids"]))
            )
        ):
            out.append({"text": d["text"], "ids": d.get("ids")})
        else:
            raise Problem(
                f"--deltas {path}: item {k} is neither a string nor {{text, ids}}",
                'each delta: "text" or {"text": "...", "ids": [1, 2]}',
            )
    return out
