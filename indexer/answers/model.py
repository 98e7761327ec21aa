"""The answers as plain data classes: what the command line prints, the browser shows and agents get.

`to_json()` gives the stable JSON contract (see indexer/schemas/): field names are the same in every
answer (`registered_file`, `real_file`, ...), booleans are JSON booleans, lists are lists, and a field
named `class_` is written `class`. A field whose value is `OMITTED` (declared with plain.omittable()) is left
out of the JSON: `where` says which question it answered by the keys it has.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

# the answers whose classes live apart, so that a command builds only the classes it answers with (issue 30);
# re-exported here, the one place every answer's classes are found (the schemas, `from indexer.api import ...`)
from .commit_model import Commit, CommitFile  # noqa: F401
from .diff_model import Change, CodePart, Diff  # noqa: F401
from .history_model import Contains, ContainsCommit, KindLog, Log  # noqa: F401
from .lifecycle_model import History, KindHistory, Lifecycle, Range  # noqa: F401
from .plain import Model  # the base class of every answer (its JSON, omittable fields: answers/plain.py)
from .where_model import Definition, Move, MoveHop, PathRange, SymbolRange, Where  # noqa: F401
from .which_model import Attribute, Hop, Parser, Which  # noqa: F401


@dataclass
class VersionInfo(Model):
    version: str
    source: str  # git | pypi | dir
    origin: str | None  # the repository path, package index or directory it was read from
    files: int
    tool: int  # registered names by kind
    reasoning: int
    engine: int
    status: str


@dataclass
class Export(Model):
    """The parser index of one version: one flat row per (kind, name), in `columns` order."""

    version: str
    columns: list[str]
    parsers: list[dict]


@dataclass
class CheckReport(Model):
    """What `tpindex check` found: ok is false when there is any problem."""

    ok: bool
    problems: list[str]
    notes: list[str]
    summary: str


@dataclass
class GrepMatch(Model):
    """A matching line (path, line number, text) once, with the indexed versions holding it; a binary file
    that matches has line and text null and binary true."""

    path: str
    line: int | None
    text: str | None
    versions: list[str]
    binary: bool


@dataclass
class GrepResult(Model):
    """`grep` for tools: what was searched and what matched (the CLI's JSON is the `matches` list)."""

    pattern: str
    versions: list[str]  # the versions searched, in version order
    truncated: bool
    matches: list[GrepMatch]


@dataclass
class Line(Model):
    line: int
    text: str


@dataclass
class Shown(Model):
    """Lines `start`..`end` of a file at a version, from the stored code."""

    version: str
    path: str
    blob_id: str
    kind: str  # text | non-utf8 | binary
    size: int
    line_count: int
    start: int
    end: int
    final_newline: bool
    lines: list[Line]
    truncated: bool = (
        False  # the lines asked for went past a limit (MCP's max_lines): `end` is where they stop
    )


@dataclass
class Span(Model):
    """The code of a parser name: the class that really implements it (role real), or one contract method as
    the name resolves it (role: whose resolution order answered)."""

    kinds: list[str]
    class_: str | None
    method: str | None
    role: str
    body: str | None
    file: str
    start: int
    end: int | None
    code: Shown


@dataclass
class NameSpans(Model):
    name: str
    version: str
    spans: list[Span]


@dataclass
class Hunk(Model):
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    lines: list[str]


@dataclass
class CodeDiff(Model):
    """A unified diff of one file's code from A to B (status added, deleted, modified, moved, unchanged)."""

    a: str
    b: str
    status: str
    path_a: str | None
    path_b: str | None
    blob_a: str | None
    blob_b: str | None
    binary: bool
    hunks: list[Hunk]


@dataclass
class NameCodeDiff(Model):
    """A parser name's own code from A to B, file by file (the real file followed when it moved)."""

    a: str
    b: str
    name: str
    kinds: list[str]
    files: list[CodeDiff]


@dataclass
class ReplayCall(Model):
    """One tool call a replay produced: `arguments` parsed as JSON (the raw text when it is not JSON);
    `chunks`: how many argument deltas streamed it (streaming modes)."""

    name: str | None
    arguments: dict | list | str | int | float | bool | None
    arguments_raw: str | None
    chunks: int | None = None


@dataclass
class ReplayLog(Model):
    """A record vLLM's loggers emitted while a mode ran (INFO and above, or one carrying an exception): what a
    parser caught and logged instead of raising. `where`: the exception's last frame in the tree (else the
    logging call's line); `count`: the same record repeated in a row."""

    level: str
    logger: str
    message: str
    exception: str | None
    where: str | None
    count: int


@dataclass
class ReplayMode(Model):
    """One mode of one version: nonstream, stream:SPLIT (the parser fed deltas as that split groups them),
    serving-full and serving-stream (the release's own chat-completion generators), responses-full,
    responses-stream and responses-completed (its Responses API generators: the full response, what the stream's
    events carried, the stream's final `response.completed`; `finish_reason` is then the response's status).
    `outcome` is the comparable summary the matrix compares; `unsupported`: why the version's code does not
    run this mode at all (its Responses API streams nothing before the stream generator exists)."""

    mode: str
    entry: str | None
    outcome: str
    tools_called: bool | None
    finish_reason: str | None
    calls: list[ReplayCall]
    content: str | None
    reasoning: str | None
    deltas: int | None
    messages: int | None
    errors: list[str]
    logged: list[ReplayLog] = field(default_factory=list)
    unsupported: str | None = None


@dataclass
class ReplayVersion(Model):
    """One version replayed: status ok, error (the tree could not be driven), timeout, crashed, killed,
    not-registered (NAME is not a tool parser there) or no-responses-api (`--api responses` and the version
    has no Responses API; not run); split_sensitive when the stream splits disagree;
    `standins_touched`: stand-ins of native/heavy packages the replay used (a result may depend on them)."""

    version: str
    status: str
    error: str | None
    modes: list[ReplayMode]
    split_sensitive: bool
    standins_touched: list[str]
    standins_imported: list[str]
    specials: list[str]
    tokens: int | None
    notes: list[str]
    seconds: float | None  # wall-clock seconds of its worker
    cpu_seconds: float | None  # CPU seconds of its worker (imports of its tree and the replay)
    # whether that version's server would start with the parser(s) and tokenizer, and what fails if not
    startup: str | None = None
    startup_logged: list[str] = field(default_factory=list)
    tokenizer: str | None = None  # what tokenized the output: synthetic (how it splits), a file, mistral
    # the rendered prompt given (--prompt): its tokens, whether the reasoning parser reads them as ending the
    # reasoning, and where this version's code reads them (None: no prompt given)
    prompt: str | None = None


@dataclass
class ReplayChange(Model):
    """A mode's result changed: `version` is the first version with the new outcome."""

    mode: str
    version: str
    before: str
    after: str
    previous: str | None = None  # the version before it (the old outcome's)
    code_diff: str | None = None  # the command showing the code diff between the two
    commits: list[str] | None = None  # on a clone: the commits from previous to version touching NAME's code
    # whether NAME's own code (its code signature: the files holding its code, framework files aside) differs
    # between previous and version; False: the outcome changed in other code that version runs (serving, a
    # shared framework file, the reasoning parser); None: unknown (not registered at one of them)
    code_changed: bool | None = None
    reasoning_code_changed: bool | None = None  # the same for the reasoning parser replayed with NAME


@dataclass
class Replay(Model):
    """tpindex replay NAME: per version and mode what the version's own code made of the raw output, and
    where each mode's outcome changes over the versions."""

    name: str
    reasoning_parser: str | None
    input: str
    splits: list[str]
    modes: list[str]
    versions: list[ReplayVersion]
    changes: list[ReplayChange]
    environment: str
    timing: dict  # server: started (by this run) or warm; seconds: materialize (trees made now), environment
    # (made now), preload (the server's imports; 0 when warm), replay (from the run's start to the last result)
    kind: str = "tool"  # NAME is a tool parser (with reasoning_parser, if any) or a reasoning parser alone
    request: dict = field(default_factory=dict)  # the request fields given (beyond tools and tool_choice)
    server_args: list[str] = field(default_factory=list)  # FLAG=VALUE as the serving code received them
    listed: bool = False  # the versions are not consecutive in the index: printed as a list, not ranges
    api: str = "chat"  # the serving modes' API: chat (completions) or responses


# -- check-doc --------------------------------------------------------------------------------------------------


@dataclass
class SourceEvidence(Model):
    """A file (at a line) of a version's tree."""

    type: Literal["source"]
    version: str
    file: str
    line: int | None


@dataclass
class ParserEvidence(Model):
    """A parser name as a version registers it."""

    type: Literal["parser"]
    version: str
    name: str


@dataclass
class PathEvidence(Model):
    """A path's history across the indexed versions (`tpindex where PATH --all`)."""

    type: Literal["path"]
    path: str


@dataclass
class ClaimResult(Model):
    """One claim of the document (its line, kind and text) checked at one version."""

    line: int
    kind: str
    claim: str
    status: Literal["ok", "stale", "too-new", "wrong", "unchecked"]
    message: str
    evidence: list[SourceEvidence | ParserEvidence | PathEvidence]


@dataclass
class VersionCheck(Model):
    """Every claim checked at one version; `counts`: status -> claims."""

    version: str
    counts: dict[str, int]
    results: list[ClaimResult]


@dataclass
class CheckDoc(Model):
    """Each claim of a Markdown document checked at each version: ok, stale, too-new, wrong or unchecked;
    `failed` when any is stale, too-new or wrong."""

    document: str
    claims: int
    versions: list[VersionCheck]
    failed: bool
