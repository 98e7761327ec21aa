"""The query layer: one read-only `Index` over a tpindex database, asked by the command line, the browser
(Datasette plugin) and the MCP tools alike, so that they never disagree. Every method returns plain data
classes (indexer/answers/model.py); `.to_json()` gives the JSON contract of indexer/schemas/.

    from indexer.api import Index

    ix = Index("db/tpindex.db")
    ans = ix.which("glm47", at="v0.32.0", kind="tool")
    print(ans.parsers[0].real_file)          # vllm/parser/glm47_moe.py
    print(ix.diff("v0.31.0", "v0.32.0").changes[0].type)

Errors a user can fix raise `indexer.core.problems.Problem` (message + hint).
"""

from __future__ import annotations

import os
import sqlite3
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the answers' data classes are imported by the answers that make them (`where` needs few)
    from pathlib import Path

    from .answers.atlas_model import Atlas, AtlasChange, BehaviourRange
    from .answers.card import Card, CardSet
    from .answers.contract_model import Contract, ContractDiff, PluginReport
    from .answers.fit import Fit
    from .answers.grep import Plan as GrepPlan
    from .answers.grep import Result as GrepSearch
    from .answers.model import (
        CheckDoc,
        CheckReport,
        CodeDiff,
        Contains,
        Diff,
        Export,
        GrepResult,
        History,
        Log,
        NameCodeDiff,
        NameSpans,
        Shown,
        VersionInfo,
        Where,
        Which,
    )
    from .answers.pages import Found, ParserPage, SourcePage, VersionPage


def __getattr__(name: str):
    """Read without importing the answers before they are asked for: FIT_MAX_INPUT (the characters of a text
    `fit` reads), FIT_MAX_FILE (of a JSON file) and the answers' data classes (`from indexer.api import NameCodeDiff`)."""
    if name == "FIT_MAX_INPUT":  # what a page or an MCP tool takes (a whole tokenizer.json: the command line)
        from .answers.fitrun import MAX_TEXT

        return MAX_TEXT
    if name == "FIT_MAX_FILE":
        from .answers.fitrun import MAX_JSON

        return MAX_JSON
    if name[:1].isupper():  # a class name (never a dunder the import system asks for)
        from .answers import model

        if isinstance(getattr(model, name, None), type):
            return getattr(model, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Index:
    def __init__(
        self,
        db: str | Path | sqlite3.Connection | object,
        time_limit: float | None = None,
        cancel=None,
        serving: bool = False,
    ):
        """A database path (opened read-only), an open sqlite3 connection, or a store.Reader. `time_limit`:
        the seconds a search (or fit) may take unless its call says (default answers.grep.GREP_TIME_LIMIT,
        answers.fitrun.FIT_TIME_LIMIT). `cancel`: a threading.Event that, once set, stops the child processes
        its questions run (fit's, a replay's: a server's request gone). `serving`: it answers a server's
        requests, which never create the replay environment (its operator does: tpindex replay --setup)."""
        from .store.database import Reader, connect

        self.time_limit, self.cancel, self.serving = time_limit, cancel, serving
        if isinstance(db, (str, os.PathLike)):  # a path (pathlib's Path among them)
            self.db = connect(db, create=False, readonly=True)
        elif isinstance(db, sqlite3.Connection):
            self.db = Reader(db)
        else:
            self.db = db

    @classmethod
    def of_file(cls, path: str | Path, time_limit: float | None = None, cancel=None) -> Index:
        """An Index of a database file already found readable (the served one, opened again by a thread of its
        own, for a server's request), without connect()'s schema checks."""
        from .store.database import open_reader

        return cls(open_reader(path), time_limit=time_limit, cancel=cancel, serving=True)

    def close(self) -> None:
        self.db.conn.close()

    def versions(self) -> list[VersionInfo]:
        from .answers.versions import version_infos

        return version_infos(self.db)

    def which(self, name: str, at: str | None = None, kind: str | None = None) -> Which:
        from .answers.which import which

        return which(self.db, name, at, kind)

    def history(self, name: str, kind: str | None = None) -> History:
        from .answers.which import history

        return history(self.db, name, kind)

    def diff(self, a: str, b: str) -> Diff:
        from .answers.atlas import behaviour_changes, has_atlas
        from .answers.diff import diff

        d = diff(self.db, a, b)
        if has_atlas(self.db):  # the behaviour atlas's section, where it ran both versions
            changed = behaviour_changes(self.db, d.a, d.b)
            if changed:
                d.behaviour = [c.to_json() for c in changed]
        return d

    def contract(self, at: str | None = None) -> Contract:
        """The parser contract of a version (default: the newest indexed): the bases plugins derive from, the
        registration API, the utils helpers, the types their signatures name, how serving constructs parsers."""
        from .answers.contract import contract
        from .answers.versions import newest

        return contract(self.db, at or newest(self.db))

    def contract_diff(self, a: str, b: str) -> ContractDiff:
        """Typed changes of the parser contract from A to B (`diff A B --contract`)."""
        from .answers.contract import contract_diff

        return contract_diff(self.db, a, b)

    def check_plugin(
        self,
        data: bytes | str,
        path: str = "plugin.py",
        tags: str | None = None,
        since: str | None = None,
        replay=None,
    ) -> PluginReport:
        """A plugin file's source (read with tree-sitter, never executed) checked against the parser contract
        of each indexed version (`tags`: a spec among them; default all): imports, bases, overrides,
        constructor, super() calls, registrations and the built-ins they shadow (changes counted from
        `since`, default the first compatible version). `replay`: the seam for --replay (the replay issue)."""
        from .answers.plugin import check_plugin

        raw = data.encode() if isinstance(data, str) else data
        return check_plugin(self.db, raw, path, tags=tags, since=since, replay=replay)

    def cards(self, name: str | None = None, at: str | None = None, kind: str | None = None) -> list[Card]:
        """The card of NAME (one per kind it has, or only `kind`) at a version; every name's with name=None."""
        from .answers.atlas import behaviour, has_atlas
        from .answers.card import cards

        found = cards(self.db, name, at, kind)
        if has_atlas(self.db):  # the behaviour atlas's section, where it ran the name
            for c in found:
                ranges = behaviour(self.db, c.kind, c.name)
                if ranges:
                    c.behaviour = [b.to_json() for b in ranges]
        return found

    def card_set(self, name: str | None = None, at: str | None = None, kind: str | None = None) -> CardSet:
        """The cards of `cards()` as `card --format json` and the MCP tool answer them (schema `card`): with the
        version they are of (`at`, or "", when there is none)."""
        from .answers.card import CardSet

        found = self.cards(name, at, kind)
        return CardSet(version=found[0].version if found else (at or ""), cards=found)

    def card(self, name: str, at: str | None = None, kind: str | None = None) -> Card | list[Card]:
        found = self.cards(name, at, kind)
        return found[0] if len(found) == 1 else found

    def grep(
        self,
        pattern: str,
        tags: str | None = None,
        at: str | None = None,
        paths: list[str] | None = None,
        icase: bool = False,
        fixed: bool = False,
        max_lines: int | None = None,
        time_limit: float | None = None,
    ) -> GrepResult:
        """A POSIX extended regular expression (as `git grep -E` reads it) over the stored code of the indexed
        versions (`tags`: a spec among them, or one version `at`); each matching line once with its versions.
        Stopped after `time_limit` seconds (default answers.grep.GREP_TIME_LIMIT; 0: no limit)."""
        from .answers.model import GrepMatch, GrepResult

        res = self.search(
            pattern,
            tags=tags,
            at=at,
            paths=paths,
            icase=icase,
            fixed=fixed,
            max_lines=max_lines,
            time_limit=time_limit,
        )
        return GrepResult(
            pattern=pattern,
            versions=res.versions,
            truncated=res.truncated,
            matches=[GrepMatch(m.path, m.line, m.text, m.versions, m.binary) for m in res.matches],
        )

    def search(
        self,
        pattern: str,
        tags: str | None = None,
        at: str | None = None,
        paths: list[str] | None = None,
        icase: bool = False,
        fixed: bool = False,
        max_lines: int | None = None,
        time_limit: float | None = None,
        mark: int | None = 0,
    ) -> GrepSearch:
        """`grep` as its text needs it: answers.grep.Result, each match with its versions' ranges (`ranges`) and,
        unless `mark` is 0, the pieces of its line that match (`marks`). Arguments as `grep`."""
        from .answers.grep import GREP_TIME_LIMIT, search

        if time_limit is None:
            time_limit = GREP_TIME_LIMIT if self.time_limit is None else self.time_limit
        return search(
            self.db,
            pattern,
            tags=tags,
            at=at,
            paths=paths,
            icase=icase,
            fixed=fixed,
            max_lines=max_lines,
            time_limit=time_limit,
            mark=mark,
        )

    def grep_plan(
        self,
        pattern: str,
        tags: str | None = None,
        at: str | None = None,
        paths: list[str] | None = None,
        icase: bool = False,
        fixed: bool = False,
    ) -> GrepPlan:
        """A search read and checked against the database (a mistake raises here), run later by its `.run(
        time_limit, max_lines, mark)` outside the connection's thread (the browser's search page)."""
        from .answers.grep import plan

        return plan(self.db, pattern, tags=tags, at=at, paths=paths, icase=icase, fixed=fixed)

    def show(
        self, path: str, at: str | None = None, start: int | None = None, end: int | None = None
    ) -> Shown:
        """Lines start..end (default: all) of a file at a version (default: the newest), from the stored code."""
        from .answers.source import as_shown, show_span
        from .answers.versions import newest

        return as_shown(show_span(self.db, at or newest(self.db), path, start, end))

    def show_name(
        self, name: str, at: str | None = None, kind: str | None = None, method: str | None = None
    ) -> NameSpans:
        """The class that really implements a parser name (or one contract method as the name resolves it)."""
        from .answers.model import NameSpans, Span
        from .answers.namecode import name_spans
        from .answers.source import as_shown

        spans = name_spans(self.db, name, at, kind, method)
        return NameSpans(
            name=name,
            version=spans[0]["version"],
            spans=[
                Span(
                    kinds=s["kinds"],
                    class_=s["class"],
                    method=s["method"],
                    role=s["role"],
                    body=s["body"],
                    file=s["file"],
                    start=s["start"],
                    end=s["end"],
                    code=as_shown(s["code"]),
                )
                for s in spans
            ],
        )

    def file_lines(self, blob_id: str) -> list[str] | None:
        """Every line of a stored blob (None: its code is not stored, or a binary file)."""
        from .store import code

        return code.read_lines(self.db, blob_id)

    def stored_paths(self, version: str) -> frozenset[str]:
        """The paths of a version whose code is stored (the ones a page can link to its source page)."""
        from .answers.source import stored_paths

        return stored_paths(self.db, version)

    def labels(self) -> list[str]:
        """The complete versions' labels, in version order."""
        from .answers.versions import indexed

        return indexed(self.db)

    def version_range(self, first: str | None = None, last: str | None = None) -> list[str]:
        """The complete versions from `first` to `last` inclusive, in version order; each end read by the one
        resolver (`v0.31` is v0.31.0; one not indexed is an AnswerError naming the nearest), None: open."""
        from .answers.versions import AnswerError, indexed, require

        labels = indexed(self.db)
        lo = labels.index(require(self.db, first)) if first else 0
        hi = labels.index(require(self.db, last)) if last else len(labels) - 1
        if lo > hi:
            raise AnswerError(
                f"the range {labels[lo]} .. {labels[hi]} is empty: {labels[lo]} comes after {labels[hi]}",
                "swap the two versions",
            ).offering(versions=(labels[hi], labels[lo]))
        return labels[lo : hi + 1]

    def refs(self) -> dict[str, str]:
        """Each version's ref as upstream links name it (its tag, or its commit)."""
        from .answers.versions import upstream_refs

        return upstream_refs(self.db)[1]

    def stored_upstream(self) -> str | None:
        """The upstream the build stored, as written (None: none), before any checking or default."""
        from .store import queries

        return queries.value(self.db, "stored_upstream")

    def matrix_rows(self, kind: str = "", prefix: str = "") -> list[dict]:
        """The parser matrix's rows (queries/read/parser_matrix.sql): every (kind, name, complete version) with its
        impl, real file and class, adapter, reason, code signature and real file's blob; `kind`, `prefix`: ""
        for all."""
        from .store import queries

        return queries.rows(self.db, "parser_matrix", kind=kind, prefix=prefix)

    def kind_counts(self) -> list[tuple[str, int]]:
        """(kind, how many distinct names it has over every indexed version): tool, reasoning, then the others."""
        from .store import queries

        return [(r["kind"], r["names"]) for r in queries.rows(self.db, "kind_counts")]

    def upstream_linker(self):
        """(version, file, line=None) -> the upstream URL of that line at that version (the stored upstream)."""
        from .answers.diff import upstream_linker

        return upstream_linker(self.db)

    def source_page(self, version: str, path: str) -> SourcePage:
        """The browser's page of a file at a version (/-/source): its stored code, the versions holding it and
        its blob in each, its outline; or, for a directory, its files."""
        from .answers.pages import source_page

        return source_page(self.db, version, path)

    def diff_files(
        self, a: str, b: str, path_a: str = "", path_b: str = "", name: str = "", kind: str | None = None
    ) -> list[tuple]:
        """The browser's diff page (/-/diff): (diff, old lines, new lines) of one file (path_a / path_b) or of each
        of parser NAME's own code files, the whole files there for highlighting."""
        from .answers.pages import diff_files

        return diff_files(self.db, a, b, path_a, path_b, name, kind)

    def code_diff(self, a: str, b: str, path: str) -> CodeDiff:
        """A unified diff of one file's stored code from version A to version B."""
        from .answers.source import as_code_diff, diff_paths

        return as_code_diff(diff_paths(self.db, a, path, b, path))

    def name_code_diff(self, a: str, b: str, name: str, kind: str | None = None) -> NameCodeDiff:
        """A parser name's own code from A to B, file by file, following its real file when it moved."""
        from .answers.model import NameCodeDiff
        from .answers.namecode import name_code_diff
        from .answers.source import as_code_diff

        d = name_code_diff(self.db, a, b, name, kind)
        return NameCodeDiff(
            a=d["a"], b=d["b"], name=name, kinds=d["kinds"], files=[as_code_diff(f) for f in d["files"]]
        )

    def serve_line(self, card) -> object:
        """The `vllm serve ...` line of a tool or reasoning parser's card: the other parser from the pairing the
        version's documentation gives, else the code's; --chat-template only where the documentation's flags give
        it (answers/serveline.py); None for another kind."""
        from .answers.serveline import serve_line

        return serve_line(self.db, card)

    def find_names(self, query: str) -> list:
        """The parser names a model name, parser name (any case or punctuation), prefix, class or file name
        means, best first, each with how it matched (answers/search.py)."""
        from .answers.search import find_names

        return find_names(self.db, query)

    def parser_page(self, kind: str, name: str, at: str | None = None) -> ParserPage:
        """The browser's page of a parser name (/-/parser/KIND/NAME): its card at a version (default: the newest
        that has it), its hops, its history as ranges, each version where its own code changed."""
        from .answers.atlas import behaviour, has_atlas
        from .answers.pages import parser_page

        page = parser_page(self.db, kind, name, at)
        if has_atlas(self.db):  # the behaviour atlas's section, where it ran the name
            ranges = behaviour(self.db, kind, name)
            if ranges:
                page.card.behaviour = [b.to_json() for b in ranges]
        return page

    def version_page(self, label: str) -> VersionPage:
        """The browser's page of a version (/-/version/LABEL): its names by kind and impl, what changed from the
        previous indexed version (names, contract, +/- counts)."""
        from .answers.pages import version_page

        return version_page(self.db, label)

    def find(self, q: str) -> tuple | Found:
        """Where the search box goes: ("version", label), ("parser", kind, name), or a Found listing."""
        from .answers.pages import find

        return find(self.db, q)

    def which_empty(self, name: str, version: str) -> dict | None:
        """Why the `which` canned query has no rows for (name, version), with what to ask instead; None when it
        has rows."""
        from .answers.pages import which_empty

        return which_empty(self.db, name, version)

    def where(self, query: str, at: str | None = None, all_versions: bool = False) -> Where:
        """Where a symbol is defined (or mentioned), or whether a path exists, at a version or across every
        version indexed with --tree (schema `where`)."""
        from .answers.where import where

        return where(self.db, query, at, all_versions)

    def check_doc(self, text: str, at: list[str] | None = None, name: str = "document") -> CheckDoc:
        """The claims of a Markdown document checked at each version (default: the newest indexed; schema
        `check-doc`)."""
        from .answers import checkdoc

        return checkdoc.check_document(
            self.db, text, checkdoc.resolve_versions(self.db, tuple(at or ())), name=name
        )

    def fit(
        self,
        text: str | None = None,
        at: str | None = None,
        kind: str | None = None,
        name: str = "FILE",
        replay: bool = False,
        notice=None,
        model: str | None = None,
        proof: bool = True,
        template_path: str | None = "FILE",
        time_limit: float | None = None,
        cancel=None,
    ) -> Fit:
        """Which parser fits a model: the tool and reasoning parsers of a version (default: the newest) ranked by
        the evidence a chat template, tokenizer_config.json, tokenizer.json or raw output (its text) gives, or, with
        `model` (a Hugging Face id or a family name) instead of a text, what the version's documentation and parser
        names give it; with the `vllm serve` line, the pair it names and the evidence that decided it (schema
        `fit`). `name` is how the file is called in the answer, `template_path` how --chat-template names the given
        template (default `name`; None: not named). `replay` (a raw output): the top tool candidates are also run
        on it by the version's own code (`replay()`, non-streaming and one token per delta), their results weighed
        in. `proof`: the pair is replayed on the model's outputs (its template's turns, the raw output) by the
        version's own code, non-streaming, streamed and through serving, and a pair that fails is not recommended
        (answers/pairing.py). `notice(message)`: the replay's slow first-use steps. Computed in a child process
        stopped after `time_limit` seconds (default: the Index's, else answers.fitrun.FIT_TIME_LIMIT) or when
        `cancel` (a threading.Event) is set: it runs the candidates' regular expressions and templates
        (answers/fitrun.py); the replays it asks for run here, each in replay's own child."""
        from .answers.fitrun import run as fit

        def run(candidate: str, version: str, output: str):
            return self.replay(
                candidate,
                at=version,
                text=output,
                modes=["nonstream", "stream"],
                splits=["token"],
                notice=notice,
            )

        def prove(
            tool: str,
            version: str,
            output: str,
            reasoning: str | None,
            prompt: str | None = None,
            chat_template_kwargs: dict | None = None,
        ):
            from .answers.proof import MODES

            return self.replay(
                tool,
                at=version,
                text=output,
                prompt=prompt,
                chat_template_kwargs=chat_template_kwargs,
                reasoning_parser=reasoning,
                modes=MODES,
                splits=["token"],
                notice=notice,
            )

        if model is not None:
            if text is not None:
                from .core.problems import Problem

                raise Problem(
                    "give fit a FILE or --model NAME, not both", "tpindex fit --model Qwen/Qwen3-8B"
                )
            return fit(
                self.db,
                None,
                at,
                kind,
                name,
                prove=prove if proof else None,
                seconds=time_limit or self.time_limit,
                cancel=cancel or self.cancel,
                model=model,
            )
        if text is None:
            from .core.problems import Problem

            raise Problem(
                "fit needs a FILE (a chat template, tokenizer file or raw output) or --model NAME",
                "tpindex fit tokenizer_config.json, or tpindex fit --model Qwen/Qwen3-8B",
            )
        return fit(
            self.db,
            text,
            at,
            kind,
            name,
            run if replay else None,
            prove=prove if proof else None,
            template_path=template_path,
            seconds=time_limit or self.time_limit,
            cancel=cancel or self.cancel,
        )

    def log(
        self,
        name: str,
        a: str,
        b: str,
        kind: str | None = None,
        framework: bool = False,
        all_parents: bool = False,
    ) -> Log:
        """The commits from version A to version B that touched a parser name's code files at A or at B, oldest
        first (first parent unless `all_parents`; `framework` adds the shared framework files), from the
        history a build from a clone stored."""
        from .answers.history import log

        return log(self.db, name, a, b, kind, framework, all_parents)

    def contains(self, target: str) -> Contains:
        """Which indexed versions hold a commit (an id, abbreviated or whole) or a pull request ("#N", found by
        the commits' subjects): the first in version order, and every one."""
        from .answers.history import contains

        return contains(self.db, target)

    def export(self, at: str | None = None) -> Export:
        from .answers.export import COLUMNS, export_rows
        from .answers.model import Export

        version, rows = export_rows(self.db, at)
        return Export(version=version, columns=list(COLUMNS), parsers=rows)

    def atlas(
        self,
        names: list[str] | None = None,
        tags: str | None = None,
        kind: str = "tool",
        case: str | None = None,
        mode: str | None = None,
        sources: bool = True,
    ) -> Atlas:
        """The behaviour atlas as stored (schema `atlas`): every parser name asked (default: all) at every version
        asked (`tags`, default: all), each case of its own files in each mode ok, wrong, error or not-applicable,
        and where cells change; only `case` and `mode` when given; `sources`: where each row's cases come from
        (their raw outputs). Reads the store only: `run_atlas` runs it."""
        from .answers.atlas import atlas

        return atlas(self.db, names, tags=tags, kind=kind, case=case, mode=mode, sources=sources)

    def atlas_axes(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The behaviour atlas's cases and modes, in their order (what its filters offer)."""
        from .answers.atlas import CASE_IDS, MODES

        return CASE_IDS, MODES

    def behaviour(self, name: str, kind: str = "tool") -> list[BehaviourRange]:
        """The versions where a parser name's atlas cells are wrong or an error, by reason, with the version that
        fixed each (the card's and the parser page's behaviour section); [] when the atlas has not run it."""
        from .answers.atlas import behaviour

        return behaviour(self.db, kind, name)

    def behaviour_changes(self, a: str, b: str) -> list[AtlasChange]:
        """The atlas cells whose status differs from version A to version B (`diff A B`'s behaviour section)."""
        from .answers.atlas import behaviour_changes

        return behaviour_changes(self.db, a, b)

    def replay(
        self,
        name: str,
        at: str | None = None,
        tags: str | None = None,
        text: str | None = None,
        deltas: list | None = None,
        **options,
    ):
        """Run the version's own parser and serving code on a raw model output, in a child process (schema
        `replay`); options: splits, tools, tool_choice, reasoning_parser, tokenizer_file, modes, timeout, jobs,
        progress, cancel (default the Index's), create_environment (default: unless it is `serving`). See
        indexer/replay/."""
        from .replay.run import replay

        options.setdefault("cancel", self.cancel)
        options.setdefault("create_environment", not self.serving)
        return replay(self.db, name, at=at, tags=tags, text=text, deltas=deltas, **options)


def run_atlas(
    path: str | Path,
    names: list[str] | None = None,
    tags: str | None = None,
    kind: str = "tool",
    jobs: int | None = None,
    progress=None,
    notice=None,
) -> Atlas:
    """Run the behaviour atlas into the database at `path` (it writes its cells there): every parser name asked
    (default: all) at every version asked (default: all), what is not stored yet only; -> the Atlas as stored,
    with what this run did (`run`). `progress(message)`: a line per job; `notice(message)`: first-use steps."""
    from .replay.atlas import run_atlas as run
    from .store.database import connect

    db = connect(path, create=False)
    try:
        return run(db, names, tags=tags, kind=kind, jobs=jobs, progress=progress, notice=notice)
    finally:
        db.conn.close()


def prepare_connection(conn: sqlite3.Connection) -> None:
    """The SQL functions tpindex's canned queries call (tpindex_version(label): a version as the commands read
    it), on a connection another reader (Datasette) opened."""
    from .answers.versions import sql_resolver

    sql_resolver(conn)


def served_view(path: Path) -> tuple[Path, bool]:
    """How a reader that opens the file itself (Datasette) reads the database at `path`: (file, immutable)
    (store.database.read_view)."""
    from .store.database import read_view

    return read_view(path)


def check_database(path) -> CheckReport:
    """`tpindex check`: every check on the database file at `path`, read-only (it may not be a tpindex database,
    or an older or damaged one: the report says so)."""
    from .answers.check import check_report

    return check_report(path)


# -- the processes behind some answers (not questions: what a surface starts and stops around them) ----------


def warm_searches() -> None:
    """Start the fork server searches run from (core/bounded.py): a process with threads (a server) calls it
    before its first search."""
    from .core import bounded

    bounded.warm(["indexer.answers.grep", "indexer.answers.fit", "jinja2.sandbox"])


def stop_searches() -> None:
    """Stop every search still running, and the fork server."""
    from .core import bounded

    bounded.stop_all()


def setup_replay(progress=None):
    """Create (or check) the replay environment; its Python interpreter."""
    from .replay import env

    return env.setup(progress=progress or (lambda m: None))


def stop_replay_servers() -> list[int]:
    """Stop the warm replay servers; their process ids."""
    from .replay import server
    from .replay.trees import cache_root

    return server.stop(cache_root())
