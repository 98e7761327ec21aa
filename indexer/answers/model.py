"""The answers as plain data classes: what the command line prints, the browser shows and agents get.

`to_json()` gives the stable JSON contract (see indexer/schemas/): field names are the same in every
answer (`registered_file`, `real_file`, ...), booleans are JSON booleans, lists are lists, and a field
named `class_` is written `class`. A field whose value is `OMITTED` (declared with plain.omittable()) is left
out of the JSON: `where` says which question it answered by the keys it has.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

from .plain import Model  # the base class of every answer (its JSON, omittable fields: answers/plain.py)
from .where_model import Definition, Move, MoveHop, PathRange, SymbolRange, Where  # noqa: F401 (where's classes, re-exported)


@dataclass
class Hop(Model):
    step: int
    hop: str  # registered, reexport, alias, class, base, adapter, engine attribute, name-check, wrapper, real ...
    class_: str | None
    module: str | None
    file: str | None
    line: int | None


@dataclass
class Attribute(Model):
    """A behaviour attribute as one of the name's classes has it once created, in vLLM's default
    configuration (parser_attrs): the class that has it, where it is set, what set it at class creation
    (`ToolParser.__init_subclass__`, `decorator f`, `assignment after the class body`; null: the class body)
    and the condition that changes it (the guard, the flags' defaults, the value with a flag turned)."""

    role: str
    attribute: str
    value: str | None
    class_: str | None
    file: str | None
    line: int | None
    set_by: str | None
    condition: str | None


@dataclass
class Parser(Model):
    """One registered name at one version: where it is registered, its registered class, and the class whose
    code does the parsing (`real_*`), with every hop between them."""

    version: str
    kind: str  # tool | reasoning | engine
    name: str
    impl: str  # standalone | unified | name-check | dispatch | unresolved
    form: str | None
    registry_file: str | None
    registry_line: int | None
    registered_module: str | None
    registered_class: str | None
    registered_file: str | None
    registered_line: int | None
    real_class: str | None
    real_module: str | None
    real_file: str | None
    real_line: int | None
    adapter: str | None
    wrapper_class: str | None
    wrapper_file: str | None
    wrapper_line: int | None
    aliases: list[str]
    stub: bool | None
    reexport: bool
    parent_class: str | None
    parent_file: str | None
    streaming: str | None
    streaming_class: str | None  # the class whose streaming method runs
    streaming_file: str | None
    streaming_line: int | None  # the streaming method's line
    streaming_from: list[str]  # the other names whose registered class that is (streaming from another name's)
    notes: list[str]
    reason: str | None
    hops: list[Hop] = field(default_factory=list)
    attributes: list[Attribute] | None = None  # which: the behaviour attributes (None: not read)
    _code_sig: str | None = None  # internal: changes when the name's own code does

    @classmethod
    def from_row(cls, r: dict, hops: list[Hop] | None = None) -> Parser:
        return cls(
            version=r["version"], kind=r["kind"], name=r["name"], impl=r["impl"], form=r["form"],
            registry_file=r["registry_file"], registry_line=r["registry_line"], registered_module=r["reg_module"],
            registered_class=r["reg_class"], registered_file=r["reg_file"], registered_line=r["reg_line"],
            real_class=r["real_class"], real_module=r["real_module"], real_file=r["real_file"],
            real_line=r["real_line"], adapter=r["adapter"], wrapper_class=r["wrapper_class"],
            wrapper_file=r["wrapper_file"], wrapper_line=r["wrapper_line"],
            aliases=[a for a in (r["alias_of"] or "").split(", ") if a],
            stub=None if r["stub"] is None else bool(r["stub"]), reexport=bool(r["reexport"]),
            parent_class=r["parent_class"], parent_file=r["parent_file"], streaming=r["streaming"],
            streaming_class=r["streaming_class"], streaming_file=r["streaming_file"],
            streaming_line=r["streaming_line"], streaming_from=_listed(r["streaming_from"]),
            notes=json.loads(r["notes"]) if r["notes"] else [], reason=r["reason"], hops=hops or [],
            _code_sig=r["code_sig"])


def _listed(text: str | None) -> list[str]:
    return [x.strip() for x in (text or "").split(",") if x.strip()]


@dataclass
class Which(Model):
    name: str
    version: str
    parsers: list[Parser]


@dataclass
class Lifecycle(Model):
    """A name over the indexed versions only (`indexed_first` .. `indexed_last`)."""

    indexed_first: str
    indexed_last: str
    first_version: str  # the first indexed version registering the name
    last_version: str
    in_first_indexed: bool  # present in the first indexed version: it may be older
    in_newest_indexed: bool
    became_unified: str | None  # the first indexed version where it is unified
    unified_in_first_indexed: bool  # already unified in the first indexed version: it may have been earlier
    real_file_changed_in: list[str]
    code_changed_in: list[str]  # the real file stayed, the name's own code changed
    removed_in: str | None  # the first indexed version after last_version
    # at removed_in: the one new name its class or real file continues under, the names that took over its
    # class, real file or family, and how (answers/successors.py); the names renamed to it at first_version
    renamed_to: str | None = None
    successors: list[str] = field(default_factory=list)
    successors_by: str | None = None
    renamed_from: list[str] = field(default_factory=list)


@dataclass
class Range(Model):
    """Consecutive indexed versions with the same answer; `parser` is the answer at `last` (None: the name
    is absent there), which is also the version the browser's history links."""

    first: str
    last: str
    versions: int
    parser: Parser | None
    code_changed: bool  # same real file as the range before, other code


@dataclass
class KindHistory(Model):
    kind: str
    ranges: list[Range]
    lifecycle: Lifecycle | None


@dataclass
class History(Model):
    name: str
    kinds: list[KindHistory]


@dataclass
class CodePart(Model):
    """One part of a name's code that changed (README, "What runs for a name"): `extraction` (its extraction
    and streaming methods), `methods` (its classes' other methods and own statements), `functions`
    (module-level functions, constants and helper classes it runs, in its files or imported), `imports`
    (the imports binding names it uses), with the definitions that changed and the lines added and removed
    in them."""

    part: str
    names: list[str]  # qualified names; a class's own statements are `Cls (class body)`
    added: int | None  # lines, None when the code of a side is not stored
    removed: int | None
    pieces: list[dict]  # [{file, what, qualname, change: changed | added | removed}]


@dataclass
class Change(Model):
    """One typed change between two versions. Name-level changes carry `kind` and `name`; file-level ones
    (adapter imports, classes, markers, plants, framework code) carry `file` (and `line` at B, or at A for
    a removal)."""

    type: str
    subject: str
    detail: str
    kind: str | None = None
    name: str | None = None
    before: str | None = None
    after: str | None = None
    file: str | None = None
    line: int | None = None
    files: list[dict] | None = None  # code-changed: [{file, blob_a, blob_b, added, removed, file_added,
    # file_removed, compare}], added / removed: the lines of the name's code in the file
    parts: list[CodePart] | None = None  # code-changed: what changed, by part (imports only, functions, ...)
    names: list[str] | None = None  # framework-changed: the names it affects
    compare: str | None = None  # upstream compare link
    # name-renamed, name-removed: the names that took over its class, real file or family at B, and how
    # (registered class, real class, real file, family; answers/successors.py); None when nothing did
    successors: list[str] | None = None
    successors_by: str | None = None
    commits: list[Commit] | None = None  # a name whose code changed: the commits (`log NAME A B`), from a clone


@dataclass
class Diff(Model):
    a: str
    b: str
    changes: list[Change]


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
    truncated: bool = False  # the lines asked for went past a limit (MCP's max_lines): `end` is where they stop


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
class CommitFile(Model):
    file: str
    added: int | None  # lines, against the first parent (null: a binary file)
    removed: int | None


@dataclass
class Commit(Model):
    """A commit of the clone the database was built from; `files` are the files of the question it touched."""

    sha: str
    date: str  # author date, ISO 8601
    author: str
    subject: str
    pr: int | None  # the pull request its subject names ("... (#N)", "Merge pull request #N ...")
    merge: bool
    url: str | None  # upstream
    pr_url: str | None
    files: list[CommitFile]


@dataclass
class KindLog(Model):
    """The commits from A to B that touched a name's code files at A or at B, oldest first."""

    kind: str
    files_a: list[str]
    files_b: list[str]
    registered_a: bool  # the name is registered (as this kind) at A
    registered_b: bool
    commits: list[Commit]


@dataclass
class Log(Model):
    """`log NAME A B`: first_parent (the default) follows B's first parents down to A's history; otherwise
    every commit of B's history not in A's (a merge only for a file it changed itself). `note` says when A is
    not an ancestor of B."""

    name: str
    a: str
    b: str
    first_parent: bool
    framework: bool
    kinds: list[KindLog]
    note: str | None


@dataclass
class ContainsCommit(Model):
    commit: Commit
    first: str | None  # the first indexed version (in version order) whose history holds it
    versions: list[str]


@dataclass
class Contains(Model):
    """`contains COMMIT|#PR`: the commits found (one for a commit id; every commit whose subject names the
    PR), the first indexed version holding any, every one that does, the indexed versions with history that
    do not, and those without history (package index, directory) that cannot be asked."""

    query: str
    commits: list[ContainsCommit]
    first: str | None
    versions: list[str]
    not_containing: list[str]
    without_history: list[str]


@dataclass
class ReplayCall(Model):
    """One tool call a replay produced: `arguments` parsed as JSON (the raw text when it is not JSON);
    `chunks`: how many argument deltas streamed it (streaming modes)."""

    name: str | None
    arguments: dict | list | str | int | float | bool | None
    arguments_raw: str | None
    chunks: int | None = None


@dataclass
class ReplayMode(Model):
    """One mode of one version: nonstream, stream:SPLIT (the parser fed deltas as that split groups them),
    serving-full and serving-stream (the release's own chat-completion generators). `outcome` is the
    comparable summary the matrix compares."""

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


@dataclass
class ReplayVersion(Model):
    """One version replayed: status ok, error (the tree could not be driven), timeout, crashed, killed or
    not-registered (NAME is not a tool parser there); split_sensitive when the stream splits disagree;
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


@dataclass
class ReplayChange(Model):
    """A mode's result changed: `version` is the first version with the new outcome."""

    mode: str
    version: str
    before: str
    after: str


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
