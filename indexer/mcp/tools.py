"""tpindex's tools for agents (Model Context Protocol): the same questions as the command line, through the
same query layer (indexer/api.py), with structured output that follows the JSON contract (indexer/schemas/).

Served two ways: by `tpindex serve` at /-/mcp (the datasette-mcp plugin, beside its read-only
`execute_sql` and schema tools; our tools are registered through its `register_mcp_tools` hook), and by
`tpindex mcp` over stdio for local agents. Read-only always: every tool only reads the database.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations

from ..core.problems import Problem

INSTRUCTIONS = (
    "tpindex answers questions about vLLM's tool-calling code (tool parsers and reasoning parsers, chosen "
    "with --tool-call-parser / --reasoning-parser) across released versions. Start with `versions` to see "
    "what is indexed; `which` says which file and class really implement a parser name at a version (and "
    "notes on inherited methods, stubs, wrappers); `which_history` gives every indexed version of a name; "
    "`diff` lists what changed between two versions; `card` gathers everything about one name (files, streaming, "
    "sentinels, templates, tests); `show_parser` and `show` print code, `code_diff` diffs it, `grep` searches "
    "every indexed version's code at once; `export` gives a version's whole parser index; `fit` says which "
    "parser fits a model from its chat template, tokenizer files or a raw output; from a database built "
    "from a git clone, `log` lists the commits that changed a name's code between two versions and `contains` "
    "says which versions hold a commit or a pull request; `contract_diff` and "
    "`check_plugin` answer plugin authors (what changed in the contract their plugins depend on, and whether a "
    "plugin's source works at each version); `replay` runs a version's own parser on a raw model output; `atlas` "
    "answers how every parser behaved at every version on cases of its own files (as `tpindex atlas` stored it)."
)
# served at /-/mcp beside datasette-mcp's SQL tools, whose own instructions send agents to SQL first
SERVED_INSTRUCTIONS = INSTRUCTIONS + (
    " Ask these tools first: they resolve what SQL over the raw tables gets wrong (registrations through stubs, "
    "adapters and wrappers; versions as every command reads them). Only for what none of them answers, use the "
    "SQL tools on the tpindex database: list_databases, get_database_schema, then execute_sql (read-only)."
)
READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
# replay reads the database only, but runs a version's code in a child process and may create its environment
REPLAY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=True
)
Kind = Literal["tool", "reasoning", "engine"]
MAX_SHOW_LINES = 2000  # lines of code one `show` answer holds at most
MAX_TEXT = 200_000  # characters of a document, plugin or raw output a tool reads
# runs a question against an Index (the transport decides where and how); -> the answer; a Problem it raises
# becomes the tool's error in one place (_tool_function)
Runner = Callable[..., Awaitable[object]]


def _result(answer) -> CallToolResult:
    """An answer as the tool's result: its JSON as text and as structured content (its outputSchema is set
    from SCHEMAS by _publish_schemas)."""
    data = answer.to_json() if hasattr(answer, "to_json") else answer
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(data, ensure_ascii=False))], structured_content=data
    )


def problem_as_tool_error(e: Problem) -> ToolError:
    """The one translation of the error model for agents: the message, then the hint."""
    return ToolError(e.message + (f". Hint: {e.hint}" if e.hint else ""))


# -- the tools, one row each --------------------------------------------------------------------------------

_REQUIRED = inspect.Parameter.empty


@dataclass(frozen=True)
class Arg:
    """An argument of a tool: its name, type and default (none: required). The tool's input schema is
    generated from these by the SDK, as from a function's signature."""

    name: str
    type: object
    default: object = _REQUIRED

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED


NAME, TEXT, A, B = Arg("name", str), Arg("text", str), Arg("a", str), Arg("b", str)
VERSION, KIND = Arg("version", str | None, None), Arg("kind", Kind | None, None)


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name, its description, its arguments and the question it asks the Index (`ask(ix, args)`,
    args a namespace of the arguments, -> the answer); what it answers at most (`paged`: the lists an answer
    is cut into pages of, see _page)."""

    name: str
    description: str
    args: tuple[Arg, ...]
    ask: Callable[[object, SimpleNamespace], object]
    annotations: ToolAnnotations = field(default_factory=lambda: READ_ONLY)
    paged: tuple[str, ...] = ()
    schema_name: str = ""  # the JSON contract's schema of the answer (default: the name, "-" for "_")
    runs_code: bool = (
        False  # it runs code in child processes (fit, replay): a server queues it (serve/work.py)
    )

    @property
    def schema(self) -> str:
        return self.schema_name or self.name.replace("_", "-")

    @property
    def text(self) -> str:
        """The description agents read; a paged tool's says how to get the rest."""
        return self.description + (PAGE_NOTE if self.paged else "")


# -- large answers, in pages ---------------------------------------------------------------------------------

PAGE_CHARS = 40_000  # characters of JSON the items of a paged answer hold at most, unless max_chars says more
MAX_PAGE_CHARS = 2_000_000
PAGE_NOTE = (
    " Bounded: the answer's lists hold at most `max_chars` characters of JSON (default 40000, at least one "
    "item); `truncated` says more items follow, `totals` counts each list's items in the whole answer, and "
    "`next_offset` is the `offset` to ask for the next page."
)


def _page(answer, lists: tuple[str, ...], offset: int, max_chars: int) -> dict:
    """One page of an answer: the items of `lists` (one sequence, the lists in that order) from `offset`, as
    many as fit in `max_chars` characters of JSON (at least one), the rest of the answer whole; with `offset`,
    `next_offset` (None: nothing follows), `truncated` (items follow) and `totals` (each list's length)."""
    data = answer.to_json() if hasattr(answer, "to_json") else dict(answer)
    budget, offset = max(1, min(max_chars, MAX_PAGE_CHARS)), max(0, offset)
    items = [(name, item) for name in lists for item in data[name]]
    page: dict[str, list] = {name: [] for name in lists}
    used, i = 0, offset
    while i < len(items):
        name, item = items[i]
        size = len(json.dumps(item, ensure_ascii=False)) + 2
        if used + size > budget and i > offset:
            break
        page[name].append(item)
        used, i = used + size, i + 1
    more = i < len(items)
    return {
        **data,
        **page,
        "offset": offset,
        "next_offset": i if more else None,
        "truncated": more,
        "totals": {name: len(data[name]) for name in lists},
    }


def _paged_schema(schema: dict, lists: tuple[str, ...]) -> dict:
    """The answer's schema with the page's fields (_page)."""
    extra = {
        "offset": {"type": "integer", "minimum": 0},
        "next_offset": {"type": ["integer", "null"], "minimum": 0},
        "truncated": {"type": "boolean"},
        "totals": {
            "type": "object",
            "properties": {n: {"type": "integer", "minimum": 0} for n in lists},
            "required": list(lists),
            "additionalProperties": False,
        },
    }
    return {
        **schema,
        "properties": {**schema["properties"], **extra},
        "required": list(schema.get("required", [])) + list(extra),
    }


def _too_long(value: str | None, limit: int, message: str) -> None:
    if value is not None and len(value) > limit:
        raise Problem(message)


def _show(ix, a):
    limit = max(1, min(a.max_lines, MAX_SHOW_LINES))
    shown = ix.show(a.path, a.version, a.start, a.end)
    if len(shown.lines) > limit:
        shown.lines, shown.truncated = shown.lines[:limit], True
        shown.end = shown.lines[-1].line
    return shown


def _card(ix, a):
    return ix.card_set(a.name, a.version, a.kind)


def _code_diff(ix, a):
    from ..core.paths import is_path_argument

    if is_path_argument(a.target):
        from ..api import NameCodeDiff

        d = ix.code_diff(a.a, a.b, a.target)
        return NameCodeDiff(a=d.a, b=d.b, name=a.target, kinds=[], files=[d])
    return ix.name_code_diff(a.a, a.b, a.target, a.kind)


def _fit(ix, a):
    from ..api import FIT_MAX_INPUT as MAX_INPUT

    if a.text is not None:
        _too_long(
            a.text,
            MAX_INPUT,
            f"the text is over {MAX_INPUT // (1 << 20)} MB; for a tokenizer.json, send its added_tokens",
        )
    return ix.fit(a.text, a.version, a.kind, model=a.model, proof=a.proof, template_path=None)


MAX_LOG_COMMITS = 1000  # commits a `log` answer lists per kind (a 100k-commit clone made a 62 MB answer)


def _log(ix, a):
    ans = ix.log(a.name, a.a, a.b, a.kind, a.framework, a.all_parents)
    cut = 0
    for k in ans.kinds:
        if len(k.commits) > MAX_LOG_COMMITS:
            cut += len(k.commits) - MAX_LOG_COMMITS
            k.commits = k.commits[-MAX_LOG_COMMITS:]  # the newest
    if cut:
        said = (
            f"the {cut} oldest commits are not listed (at most {MAX_LOG_COMMITS} a kind): ask a narrower range"
            " (a, b closer together), or run tpindex log"
        )
        ans.note = f"{ans.note}; {said}" if ans.note else said
    return ans


def _replay(ix, a):
    _too_long(a.text, MAX_TEXT, "the text is over 200 kB")
    return ix.replay(
        a.name,
        at=a.version,
        tags=a.versions,
        text=a.text,
        splits=a.splits,
        tool_choice=a.tool_choice,
        reasoning_parser=a.reasoning_parser,
        modes=a.modes,
        api=a.api,
    )


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "versions",
        (
            "List the vLLM versions indexed in this database, in version order, with how many tool, reasoning "
            "and engine parser names each registers. Use a `version` from here in the other tools."
        ),
        (),
        lambda ix, a: {"versions": [v.to_json() for v in ix.versions()]},
    ),
    ToolSpec(
        "which",
        (
            "Which file and class really implement a vLLM parser name (the value of --tool-call-parser or "
            "--reasoning-parser) at one version: every hop from the registration through stubs, re-exports, "
            "adapters and parser-manager wrappers to the class whose code does the parsing (real_file, "
            "real_class, real_line), plus notes (inherited methods, streaming that returns None, selector "
            "stubs). `version` defaults to the newest indexed; `kind` restricts to tool, reasoning or engine."
        ),
        (NAME, VERSION, KIND),
        lambda ix, a: ix.which(a.name, a.version, a.kind),
    ),
    ToolSpec(
        "which_history",
        (
            "A vLLM parser name across every indexed version: ranges of consecutive versions with the same "
            "implementation (each range's `parser` is the answer at its last version; `code_changed` marks a range "
            "whose code changed in the same real file), and the lifecycle (first/last version, when it became "
            "unified, when its real file or code changed, when it was removed) over the indexed versions only."
        ),
        (NAME, KIND),
        lambda ix, a: ix.history(a.name, a.kind),
        schema_name="which-all",
    ),
    ToolSpec(
        "diff",
        (
            "What changed from version `a` to version `b`: parser names added or removed, implementations moved "
            "(standalone -> unified, real file changed), code that changed in a name's own files, shared framework "
            "files that changed (with the names they affect), wrappers, aliases, adapter imports, classes, "
            "HACK/TODO markers and known workaround patterns. Each change has type, kind, name, before, after, "
            "file, line and detail."
        ),
        (A, B),
        lambda ix, a: ix.diff(a.a, a.b),
        paged=("changes",),
    ),
    ToolSpec(
        "card",
        (
            "Everything an operator needs about one vLLM parser name at one version (default: the newest "
            "indexed), one card per kind it is registered as (or only `kind`): registered, real and wrapper "
            "classes with files and lines, streaming support as resolved, contract methods and the class defining "
            "each, behaviour attributes (supports_required_and_named ...), what adjust_request sets, sentinels (the "
            "token strings it looks for, non-ASCII characters named), the parser of the same name in the other "
            "registry, chat templates and tests, markers, lifecycle and upstream links."
        ),
        (NAME, VERSION, KIND),
        _card,
    ),
    ToolSpec(
        "grep",
        (
            "Search the code of the indexed vLLM versions with a POSIX extended regular expression, as `git grep "
            "-n -E` over their tags: each matching line once (path, line, text) with the versions that hold it. "
            "`versions` restricts to a tag spec among the indexed versions (v0.30.0..v0.32.0, a list, a glob); "
            "`path` to a glob (vllm/tool_parsers/*); `ignore_case` and `fixed_strings` as git grep's -i and -F. The "
            "parser code, chat templates (examples/tool_chat_template_*.jinja) and parser tests are stored. At most "
            "`max_lines` distinct matching lines (truncated says so)."
        ),
        (
            Arg("pattern", str),
            Arg("versions", str | None, None),
            Arg("path", str | None, None),
            Arg("ignore_case", bool, False),
            Arg("fixed_strings", bool, False),
            Arg("max_lines", int, 500),
        ),
        lambda ix, a: ix.grep(
            a.pattern,
            tags=a.versions,
            paths=[a.path] if a.path else None,
            icase=a.ignore_case,
            fixed=a.fixed_strings,
            max_lines=max(1, min(a.max_lines, 5000)),
        ),
    ),
    ToolSpec(
        "show",
        (
            "The code of one file of a vLLM version, with line numbers, from the database: `path` such as "
            "vllm/tool_parsers/hermes_tool_parser.py or examples/tool_chat_template_hermes.jinja, lines "
            "`start`..`end` (default: the whole file), `version` (default: the newest indexed). At most `max_lines` "
            "lines (default 2000): past them `truncated` is true, `end` the last line given and `line_count` the "
            "file's total; ask the next lines with `start`."
        ),
        (
            Arg("path", str),
            VERSION,
            Arg("start", int | None, None),
            Arg("end", int | None, None),
            Arg("max_lines", int, MAX_SHOW_LINES),
        ),
        _show,
    ),
    ToolSpec(
        "show_parser",
        (
            "The code that really implements a vLLM parser name at a version: the class whose code does the "
            "parsing (its whole span), or with `method` (extract_tool_calls, extract_tool_calls_streaming, parse, "
            "parse_delta, extract_reasoning, adjust_request, ...) that method as the name resolves it through the "
            "class hierarchy, with the class that defines it."
        ),
        (NAME, VERSION, KIND, Arg("method", str | None, None)),
        lambda ix, a: ix.show_name(a.name, a.version, a.kind, a.method),
        schema_name="show-name",
    ),
    ToolSpec(
        "code_diff",
        (
            "A unified diff of code from version `a` to version `b`: of a parser name's own code (`target` a "
            "name, file by file, its real file at a against its real file at b when it moved), or of one file "
            "(`target` a path). Unchanged files are left out."
        ),
        (A, B, Arg("target", str), KIND),
        _code_diff,
        schema_name="diff-code-name",
    ),
    ToolSpec(
        "where",
        (
            "Where a Python symbol of vLLM is defined (Name, Class.method, pkg.mod.Class.method, path.py:Name) or "
            "whether a path exists (a file, a directory, a <placeholder> or * pattern), at one version or, with "
            "`all_versions`, across every version indexed with --tree, with moves and removals. A symbol no file "
            "defines is looked up as a mention."
        ),
        (Arg("query", str), VERSION, Arg("all_versions", bool, False)),
        lambda ix, a: ix.where(a.query, a.version, a.all_versions),
    ),
    ToolSpec(
        "check_doc",
        (
            "Check an operator reference about vLLM (Markdown text: a runbook, a skill file, a pointer map) against "
            "the index: its paths, symbols named with files, parser names, aliases, version claims ((v0.29.0+), "
            "since, removed at, moved at) and counts, each ok, stale (with what is true now and since when), too-new "
            "(true only from a later version), wrong or unchecked (why), at `versions` (default: the newest indexed)."
        ),
        (Arg("document", str), Arg("versions", list[str] | None, None)),
        lambda ix, a: (
            _too_long(a.document, MAX_TEXT, "the document is over 200 kB; check it in parts")
            or ix.check_doc(a.document, a.versions)
        ),
    ),
    ToolSpec(
        "fit",
        (
            "Which vLLM parser fits a model: `text` is the content of a Jinja chat template, a tokenizer_config.json, "
            "a tokenizer.json or a raw model output (captured with skip_special_tokens false), told apart by its "
            "content; or, instead of `text`, `model`: a Hugging Face id (Qwen/Qwen3-8B) or a family name, any case. "
            "The pair comes from the version's documentation first (the reasoning page's model table and notes, the "
            "tool-calling page's sections and flags), then the model's template, then the evidence of the parsers' "
            "own code: sentinels found (or look-alikes, code points named), the call markup's shape against each "
            "parser's regexes and shipped templates, tokens missing from the vocabulary, special tokens stripped "
            "unless adjust_request keeps them. Ranks the tool and reasoning parsers of `version` (default: the "
            "newest indexed; `kind` tool or reasoning for one kind), equal scores sharing a rank; `pair` names the "
            "evidence that decided each parser and any tie; with `proof` (default true) the pair is replayed by the "
            "version's own code on the model's outputs (non-streaming, streamed, through serving) and a pair that "
            "fails is not recommended (`proof`). Gives the `vllm serve ...` line (serve) or says nothing fits."
        ),
        (
            Arg("text", str | None, None),
            VERSION,
            Arg("kind", Literal["tool", "reasoning"] | None, None),
            Arg("model", str | None, None),
            Arg("proof", bool, True),
        ),
        _fit,
        runs_code=True,
    ),
    ToolSpec(
        "contract",
        (
            "The parser contract of one vLLM version (default: the newest indexed), what parser plugins depend on: "
            "the base classes (ToolParser, ReasoningParser, the engine's Parser, ParserEngine and adapters) with their "
            "methods' signatures as written, the kind of body each has and their class attributes, the managers' "
            "registration API, the utils helpers, the modules each can be imported from, the types the signatures "
            "name with the module they are imported from, and the calls vLLM's code makes on parser objects."
        ),
        (VERSION,),
        lambda ix, a: ix.contract(a.version),
        paged=("classes", "helpers", "types", "calls", "notes"),
    ),
    ToolSpec(
        "contract_diff",
        (
            "What changed in the parser contract plugin authors depend on, from version `a` to version `b`: the bases "
            "(ToolParser, ReasoningParser, the engine's Parser and adapters), their methods' signatures and class "
            "attributes, the registration API (register_module, register_lazy_module), the utils helpers, the types "
            "the signatures name and the modules they are imported from, where each is importable, and how serving "
            "constructs and calls parsers. Each change is typed as griffe's API breakage check does (parameter-added, "
            "parameter-removed, parameter-renamed, ..., class-moved, import-path-removed, construction-changed), with "
            "file:line on both sides, `breaking` from a plugin's side and an explanation."
        ),
        (A, B),
        lambda ix, a: ix.contract_diff(a.a, a.b),
        schema_name="diff-contract",
    ),
    ToolSpec(
        "check_plugin",
        (
            "Check a vLLM tool or reasoning parser plugin (its Python source as text; it is read, never run) against "
            "the parser contract of each indexed version (`versions`: a tag spec among them, default all): its vLLM "
            "imports and where they moved, its bases, each override against the base's signature and vLLM's calls, "
            "its constructor against how serving constructs parsers, its super() calls, its registrations and the "
            "built-in names they shadow (with the built-in's code changes since `since`). Gives the compatible "
            "versions, the first and last, and why the others break."
        ),
        (Arg("source", str), Arg("versions", str | None, None), Arg("since", str | None, None)),
        lambda ix, a: (
            _too_long(a.source, MAX_TEXT, "the plugin is over 200 kB; check its modules one by one")
            or ix.check_plugin(a.source, "plugin.py", tags=a.versions, since=a.since)
        ),
    ),
    ToolSpec(
        "export",
        (
            "The whole parser index of one version (default: the newest indexed): one row per (kind, name) with "
            "where it is registered, its registered class, the class and file that really implement it, adapter, "
            "wrapper, aliases, streaming support, notes, chat templates and tests."
        ),
        (VERSION,),
        lambda ix, a: ix.export(a.version),
        paged=("parsers",),
    ),
    ToolSpec(
        "log",
        (
            "The commits from version `a` to version `b` that touched a vLLM parser name's own code files at a or at "
            "b (followed where its code moved), oldest first: id, date, subject, pull request number and link, the "
            "files and lines added/removed. First-parent by default (merged pull requests as one commit); "
            "`all_parents` lists the commits of merged branches instead; `framework` adds the shared framework files. "
            "Only for versions indexed from a git clone."
        ),
        (NAME, A, B, KIND, Arg("framework", bool, False), Arg("all_parents", bool, False)),
        _log,
    ),
    ToolSpec(
        "contains",
        (
            "Which indexed vLLM versions contain a commit (`target` its id, 4 to 40 hex digits) or a pull request "
            '(`target` "#12345", found by the commits\' subjects, cherry-picks onto release branches included): the '
            "first version in version order, every version that does, those that do not, and those that cannot be "
            'asked (indexed from the package index or a directory: no commits). Answers "which version fixed '
            '#N?" and "does v0.28.0 contain #N?".'
        ),
        (Arg("target", str),),
        lambda ix, a: ix.contains(a.target),
    ),
    ToolSpec(
        "atlas",
        (
            "The behaviour atlas as stored by `tpindex atlas` (this tool runs nothing): every vLLM tool parser at "
            "every version it ran, on cases made from that version's own files (its chat template rendered with "
            "known calls, its test files' model-output literals, a writer in their call shape): per case (single, "
            "parallel, no-args, nested, unicode, content-before, content-only, reasoning) and mode (nonstream, "
            "stream:token, stream:char, serving-full, serving-stream) ok, wrong (what differs), error or "
            "not-applicable (why), each row's case sources, and `changes`: the first version where each cell "
            "changes. `names` (default all), `versions` (a spec such as v0.20.0..), `case` and `mode` narrow it."
        ),
        (
            Arg("names", list[str] | None, None),
            Arg("versions", str | None, None),
            Arg("case", str | None, None),
            Arg("mode", str | None, None),
        ),
        lambda ix, a: ix.atlas(a.names, tags=a.versions, case=a.case, mode=a.mode),
        paged=("rows", "changes"),
    ),
    ToolSpec(
        "replay",
        (
            "Run a vLLM version's own tool parser (and serving code) on a raw model output `text`, in a child "
            "process with time and memory limits, and say what it makes of it: per version and mode (nonstream, "
            "stream:SPLIT, serving-full, serving-stream) the tool calls with parsed arguments, content, "
            "finish_reason, argument chunks and errors, plus `changes`: the first version where each mode's "
            "outcome differs. `version` (one) or `versions` (a spec such as v0.20.0..); `splits` among token, "
            "char, word, random:SEED, interval:K. `api`: the API the serving mode replays, chat (OpenAIServingChat) or "
            "responses (the version's OpenAIServingResponses: responses-full, responses-stream, responses-completed; "
            "the serving mode only, a version without it no-responses-api). Reads the database; runs code from the "
            "user cache."
        ),
        (
            NAME,
            TEXT,
            VERSION,
            Arg("versions", str | None, None),
            Arg("splits", list[str] | None, None),
            Arg("tool_choice", str, "auto"),
            Arg("reasoning_parser", str | None, None),
            Arg("modes", list[Literal["nonstream", "stream", "serving"]] | None, None),
            Arg("api", Literal["chat", "responses"], "chat"),
        ),
        _replay,
        annotations=REPLAY,
        paged=("versions", "changes"),  # one version's modes hold a whole output (a 199 kB one made 59 MB)
        runs_code=True,
    ),
)


def _tool_function(spec: ToolSpec, run: Runner):
    """The function the SDK registers for a row: its signature is the row's arguments (then the context), so
    the SDK generates the input schema and the argument model as from a hand-written function."""
    args = spec.args + ((Arg("offset", int, 0), Arg("max_chars", int, PAGE_CHARS)) if spec.paged else ())

    async def tool(ctx: Context | None = None, **arguments) -> CallToolResult:
        a = SimpleNamespace(**arguments)

        def question(ix):
            answer = spec.ask(ix, a)
            return _page(answer, spec.paged, a.offset, a.max_chars) if spec.paged else answer

        question.runs_code = spec.runs_code  # a server queues what runs code (serve/work.py)
        try:
            return _result(await run(ctx, question))
        except Problem as e:
            raise problem_as_tool_error(e) from None

    params = [
        inspect.Parameter(x.name, inspect.Parameter.KEYWORD_ONLY, default=x.default, annotation=x.type)
        for x in args
    ]
    params.append(
        inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Context | None)
    )
    tool.__signature__ = inspect.Signature(params, return_annotation=CallToolResult)
    tool.__annotations__ = {x.name: x.type for x in args} | {"ctx": Context | None, "return": CallToolResult}
    tool.__name__ = tool.__qualname__ = spec.name
    return tool


def register(mcp: MCPServer, run: Runner) -> None:
    """Add tpindex's tools (TOOLS) to an MCP server. `run(ctx, question)` awaits `question(index)` (its
    `runs_code` says when it runs code in child processes: a server queues it); a Problem it raises is the
    tool's error."""
    for spec in TOOLS:
        mcp.add_tool(
            _tool_function(spec, run), name=spec.name, description=spec.text, annotations=spec.annotations
        )
    _publish_schemas(mcp)
    _strict_arguments(mcp, [spec.name for spec in TOOLS])


def _strict_arguments(mcp: MCPServer, tools: list[str]) -> None:
    """An argument a tool does not take is an error, not ignored (`which` with `at` instead of `version`
    answered for the newest version): each tool's input schema says `additionalProperties: false`, and its
    argument model refuses other names, saying which it takes."""
    from pydantic import ConfigDict, model_validator

    for name in tools:
        tool = mcp._tool_manager.get_tool(name)
        base = tool.fn_metadata.arg_model
        taken = sorted(f.alias or n for n, f in base.model_fields.items())

        def refuse(cls, data, _tool=name, _taken=taken):
            if isinstance(data, dict):
                unknown = sorted(set(data) - set(_taken))
                if unknown:
                    from ..core.suggest import close_names

                    close = {u: close_names(u, _taken, n=1, cutoff=0.5) for u in unknown}
                    meant = "; ".join(f"did you mean {c[0]!r} for {u!r}?" for u, c in close.items() if c)
                    raise ValueError(
                        f"{_tool} takes no argument {', '.join(map(repr, unknown))}; its arguments are "
                        f"{', '.join(_taken) or 'none'}" + (f" ({meant})" if meant else "")
                    )
            return data

        strict = type(
            base.__name__,
            (base,),
            {
                "model_config": ConfigDict(**{**base.model_config, "extra": "forbid"}),
                "refuse_unknown": model_validator(mode="before")(classmethod(refuse)),
                "__module__": base.__module__,
            },
        )
        tool.fn_metadata.arg_model = strict
        tool.parameters = {**tool.parameters, "additionalProperties": False}


SCHEMAS = {spec.name: spec.schema for spec in TOOLS}  # tool -> the JSON contract's schema of its answer
PAGED = {spec.name: spec.paged for spec in TOOLS if spec.paged}


def _publish_schemas(mcp: MCPServer) -> None:
    """Each tool's outputSchema is the JSON contract's schema of the same answer."""
    from ..schemas import load

    for tool, name in SCHEMAS.items():
        schema = load(name)
        if tool == "grep":  # the tool's answer says what was searched too: the GrepResult around the rows
            from ..api import GrepResult

            schema = _grep_result_schema(schema, GrepResult)
        elif schema.get("type") != "object":  # MCP structured output is an object: wrap a list
            schema = {
                k: v
                for k, v in schema.items()
                if k in ("$schema", "$id", "title", "x-tpindex-contract", "$defs")
            } | {
                "type": "object",
                "properties": {tool: {k: v for k, v in schema.items() if k in ("type", "items")}},
                "required": [tool],
                "additionalProperties": False,
            }
        if PAGED.get(tool):
            schema = _paged_schema(schema, PAGED[tool])
        registered = mcp._tool_manager.get_tool(tool)
        registered.fn_metadata.output_schema = schema


def _grep_result_schema(rows: dict, model) -> dict:
    from ..schemas import _object

    defs = dict(rows.get("$defs", {}))
    body = _object(model, defs)
    body["properties"]["matches"] = {k: v for k, v in rows.items() if k in ("type", "items")}
    return (
        {k: v for k, v in rows.items() if k in ("$schema", "$id", "title", "x-tpindex-contract")}
        | body
        | {"$defs": defs}
    )


def stdio_server(db_path: str, time_limit: float | None = None) -> MCPServer:
    """`tpindex mcp`: the tools over stdio, on one database opened read-only; `time_limit`: the seconds a
    search or a fit may take (default: each one's own)."""
    import threading

    import anyio

    from ..api import Index, warm_searches

    mcp = MCPServer("tpindex", instructions=INSTRUCTIONS)
    local = threading.local()  # an Index per worker thread (a connection serves the thread that opened it)

    def ask(question):
        if getattr(local, "index", None) is None:
            local.index = Index(db_path, time_limit=time_limit)
        return question(local.index)

    async def run(ctx, question):
        # in a worker thread: a long question (a search waits for its child process up to its time limit)
        # never holds the event loop, which goes on reading requests, answering others, and seeing stdin close
        # (then the question is abandoned: its search process ends with this one)
        return await anyio.to_thread.run_sync(ask, question, abandon_on_cancel=True)

    warm_searches()  # this process has threads: its searches fork through the fork server

    register(mcp, run)
    return mcp


GRACE_SECONDS = 0.5  # after stdin closes, answers still being written get this long


def run_stdio(mcp: MCPServer) -> None:
    """Serve over stdin and stdout. A request whose JSON holds a lone surrogate (valid JSON, not valid
    Unicode: the SDK's parser drops such a message, and the client would wait for an answer forever) gets
    an error answer."""
    import sys
    from io import TextIOWrapper

    import anyio
    from mcp.server.stdio import stdio_server

    async def main():
        source = anyio.wrap_file(TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
        lines = _Lines(source)
        async with stdio_server(stdin=lines) as (read, write), anyio.create_task_group() as tg:
            lines.write = write
            lines.ready.set()
            server = mcp._lowlevel_server

            async def serve():
                await server.run(read, write, server.create_initialization_options())
                tg.cancel_scope.cancel()

            async def until_the_input_ends():  # the client closed stdin: it wants us gone, whatever still runs
                await lines.ended.wait()
                await anyio.sleep(GRACE_SECONDS)
                tg.cancel_scope.cancel()

            tg.start_soon(serve)
            tg.start_soon(until_the_input_ends)

    from ..api import stop_searches

    try:
        anyio.run(main)
    finally:
        stop_searches()  # the questions abandoned at the end: their threads return, and the process exits


class _Lines:
    """stdin's lines for the SDK's reader, but for requests holding a lone surrogate, answered here."""

    def __init__(self, source):
        import anyio

        self.source, self.write, self.ready, self.ended = source, None, anyio.Event(), anyio.Event()

    def __aiter__(self):
        return self._lines()

    async def _lines(self):
        try:
            async for line in self._read():
                yield line
        finally:
            self.ended.set()

    async def _read(self):
        async for line in self.source:
            bad = _lone_surrogate(line)
            if bad is None:
                yield line
                continue
            if bad[0] is None:  # a notification: nothing to answer
                continue
            from mcp.shared.message import SessionMessage
            from mcp_types import ErrorData, JSONRPCError

            await self.ready.wait()
            await self.write.send(
                SessionMessage(
                    JSONRPCError(
                        jsonrpc="2.0",
                        id=bad[0],
                        error=ErrorData(
                            code=-32602,
                            message="invalid params: a string holds a lone surrogate (\\ud800-\\udfff), which is"
                            " not Unicode text",
                        ),
                    )
                )
            )


def _lone_surrogate(line: str) -> tuple | None:
    """(the request's id,) when the JSON line holds a string with a lone surrogate, else None."""
    if "\\ud" not in line.lower():
        return None
    try:
        msg = json.loads(line)  # Python's parser keeps lone surrogates
    except ValueError:
        return None

    def bad(x) -> bool:
        if isinstance(x, str):
            return any("\ud800" <= c <= "\udfff" for c in x)
        if isinstance(x, dict):
            return any(bad(k) or bad(v) for k, v in x.items())
        if isinstance(x, list):
            return any(map(bad, x))
        return False

    if not bad(msg):
        return None
    return (msg.get("id") if isinstance(msg, dict) else None,)
