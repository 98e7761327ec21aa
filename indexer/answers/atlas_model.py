"""The behaviour atlas's answers (issue 44): typed models of `tpindex atlas --format json` (schema `atlas`) and
of the behaviour sections of the card, the parser page and `diff`."""

from __future__ import annotations

from dataclasses import dataclass, field

from .plain import Model, omittable


@dataclass
class AtlasCaseDef(Model):
    """A case of the battery, the same for every name: what it holds."""

    id: str
    description: str
    calls: list[dict]  # [{name, arguments}]
    content: str | None
    reasoning: str | None


@dataclass
class AtlasCell(Model):
    """One case in one mode: ok, wrong (what differs), error (the exception or what vLLM logged) or
    not-applicable (why)."""

    case: str
    mode: str
    status: str
    detail: str | None


@dataclass
class AtlasSource(Model):
    """Where a row's case comes from: the version's chat template (rendered), a test file's literal, the writer,
    or none (not applicable); the raw output and what it must give (null: not known)."""

    case: str
    source: str  # template | test | writer | none
    origin: str | None
    text: str | None
    expected: dict | None
    reasoning_parser: str | None
    note: str | None = None  # why the case is not its first source's (a template that cannot express it)


@dataclass
class AtlasRow(Model):
    name: str
    kind: str
    version: str
    cells: list[AtlasCell]
    sources: list[AtlasSource] = field(default_factory=list)


@dataclass
class AtlasChange(Model):
    """A cell whose status (or what differs) changes at `version`, the first version with the new behaviour
    among the versions the name has cells at."""

    name: str
    kind: str
    case: str
    mode: str | None
    version: str
    previous: str  # the version before, where it was `before`
    before: str  # a status
    after: str
    detail: str | None  # the cell's detail at `version` (what differs, the error, why not applicable)


@dataclass
class AtlasRun(Model):
    """What a run did: the cells it ran and those it read from the store (same code, same case)."""

    cells_run: int
    cells_reused: int
    ran: list[str]  # "name version" of each (name, version) with a cell run
    jobs: int
    seconds: float
    cpu_seconds: float  # tpindex's own and its replay workers'
    worker_cpu_seconds: float  # its replay workers' alone (they are the warm replay server's children)


@dataclass
class Atlas(Model):
    """`tpindex atlas`: every parser name at every version asked, run on the cases of its own files; each cell
    (case x mode) ok, wrong, error or not-applicable; `changes`: where a cell changes."""

    kind: str
    cases: list[AtlasCaseDef]
    modes: list[str]
    rows: list[AtlasRow]
    changes: list[AtlasChange]
    not_run: list[str]  # "name version": registered there, never run by the atlas
    run: AtlasRun = omittable()


@dataclass
class BehaviourRange(Model):
    """A behaviour of a parser name over consecutive versions (those it has cells at): the cells (case and
    mode) that are wrong or an error there for the same reason, and the version that fixed it."""

    what: str  # the reason, as a verdict words it (arguments not valid JSON, no call, ...)
    status: str  # wrong | error
    cells: list[str]  # "case mode"
    first: str
    last: str
    fixed_in: str | None  # the next version with cells, where it is no longer so
    before: str | None  # the version before `first` (the code diff at the change is before..first)
    example: str | None  # one cell's detail
