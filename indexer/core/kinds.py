"""The closed vocabularies of resolution and of diff: hop kinds, impl kinds, change types.

Each is a StrEnum whose values are the strings stored in the database and printed today, so a member is
that string everywhere (SQLite, JSON, text, comparisons): the enums name the vocabulary and document
each word, they change no output. The docstring of a member is the string literal written after it."""

from __future__ import annotations

from enum import StrEnum


class HopKind(StrEnum):
    """One step of a name's chain from its registration to the class that really implements it
    (parser_hops.hop, `which`'s hops)."""

    REGISTERED = "registered"
    """The registration itself: the registry entry (or list) that names the class."""
    CLASS = "class"
    """The registered class, where it is defined."""
    REEXPORT = "reexport"
    """A module that imports the class from another and is named in its place."""
    ALIAS = "alias"
    """A module-level name bound to the class (X = Y)."""
    BASE = "base"
    """A base class the chain goes through on its way to an adapter."""
    ADAPTER = "adapter"
    """The adapter class the registered class subclasses (the engine era's make_adapters bindings)."""
    INIT = "init"
    """An `__init__` of a class more derived than the real one (the registered class, or a class between) that
    rebinds attributes the real class's parsing methods read (its regular expressions, its tokens): part of
    where the logic is, with its lines (parser_hops.end_line) and the attributes (parser_hops.detail)."""
    REAL = "real"
    """The class whose code really runs for the name."""
    WRAPPER = "wrapper"
    """A composed class that only delegates to the real one."""
    ENGINE_ATTRIBUTE = "engine attribute"
    """A class attribute of an engine-era class that names the engine class."""
    UNIFIED_PARSER_CLS = "unified_parser_cls"
    """The `unified_parser_cls` a tool or reasoning adapter is bound to."""
    UNIFIED_REGISTRY = "unified-registry"
    """The unified registry's entry for a name also registered as a tool or reasoning parser."""
    NAME_CHECK = "name-check"
    """A branch of the serving code that compares the parser's name (no class is registered)."""
    CLASS_CHECK = "class-check"
    """A branch of the serving code that picks the class by checking the class."""
    DISPATCH = "dispatch"
    """A hard-coded dispatch on the name (the --tool-call-parser choices of the first era)."""


class ImplKind(StrEnum):
    """How a registered name is implemented (parser_map.impl)."""

    STANDALONE = "standalone"
    """A parser class of its own, in its file."""
    UNIFIED = "unified"
    """An adapter over an engine-era parser: the logic is in the engine class."""
    NAME_CHECK = "name-check"
    """No class: the serving code checks the name."""
    DISPATCH = "dispatch"
    """A hard-coded dispatch of the first era (cli choices)."""
    UNRESOLVED = "unresolved"
    """The chain could not be followed; `reason` says why (nothing is guessed)."""


class ChangeType(StrEnum):
    """The type of one change of `diff` (Change.type)."""

    NAME_ADDED = "name-added"
    """A name registered in B and not in A."""
    NAME_REMOVED = "name-removed"
    """A name registered in A and not in B."""
    NAME_RENAMED = "name-renamed"
    """A name gone from A whose successor in B is another name (the same code)."""
    ALIAS_ADDED = "alias-added"
    """Another name now registered to the same class."""
    ALIAS_REMOVED = "alias-removed"
    """A name no longer registered to the same class."""
    IMPL_CHANGED = "impl-changed"
    """The implementation kind changed (standalone, unified, ...)."""
    REAL_FILE_CHANGED = "real-file-changed"
    """The file that really implements the name moved."""
    REAL_CLASS_CHANGED = "real-class-changed"
    """The class that really implements the name is another."""
    REGISTERED_CLASS_CHANGED = "registered-class-changed"
    """The registration names another class."""
    WRAPPER_CHANGED = "wrapper-changed"
    """The delegating wrapper class changed."""
    CODE_CHANGED = "code-changed"
    """The code that runs for the name changed."""
    FRAMEWORK_CHANGED = "framework-changed"
    """A shared framework file changed (reported once, with the names it affects)."""
    CLASS_ADDED = "class-added"
    """A class new in a file."""
    CLASS_REMOVED = "class-removed"
    """A class gone from a file."""
    CLASS_MOVED = "class-moved"
    """A class moved inside its file (another enclosing scope)."""
    CLASS_REBASED = "class-rebased"
    """A class's bases changed."""
    ADAPTER_IMPORT_ADDED = "adapter-import-added"
    """An adapter import new in a file."""
    ADAPTER_IMPORT_REMOVED = "adapter-import-removed"
    """An adapter import gone from a file."""
    MARKER_ADDED = "marker-added"
    """A tool-call marker new in a file."""
    MARKER_REMOVED = "marker-removed"
    """A tool-call marker gone from a file."""
    PLANT_ADDED = "plant-added"
    """A planted marker (a token written into the output) new in a file."""
    PLANT_REMOVED = "plant-removed"
    """A planted marker gone from a file."""
