"""The data classes of `which --all` (answers/which.py): a name's history over the indexed versions, as ranges,
and its lifecycle. Apart from which_model.py so that `which` at one version does not build them."""

from __future__ import annotations

from dataclasses import dataclass, field

from .plain import Model
from .which_model import Parser


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
