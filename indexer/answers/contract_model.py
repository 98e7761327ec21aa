"""The answers of the parser contract (issue 28) as plain data classes: the contract of one version, its typed
changes between two versions (`diff --contract`), and a plugin checked against each version (`check-plugin`).
Their JSON schemas are generated from these (indexer/schemas/)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .plain import Model


@dataclass
class Param(Model):
    """One parameter as written; kind as Python's inspect names it (positional-only, positional-or-keyword,
    var-positional, keyword-only, var-keyword)."""

    name: str
    kind: str
    annotation: str | None
    default: str | None


@dataclass
class ImportPath(Model):
    """A module a plugin can import a contract name from: where it is defined, a package re-exporting it,
    or a module-level __getattr__ that imports it on demand (a compatibility shim)."""

    module: str
    how: str  # defined | re-export | getattr
    file: str
    line: int


@dataclass
class Signature(Model):
    """A method of a contract class or a helper function, as written."""

    name: str
    class_: str | None
    module: str
    file: str
    line: int
    params: list[Param]
    returns: str | None
    decorators: list[str]
    body: str | None  # code | abstract | raises-not-implemented | returns-none (methods; helpers: None)
    text: str  # the signature in one line: (self, tokenizer: X, tools: Y | None = None) -> Z
    import_paths: list[ImportPath] = field(default_factory=list)  # helpers: where a plugin imports them from


@dataclass
class Attribute(Model):
    name: str
    annotation: str | None
    value: str | None
    file: str
    line: int


@dataclass
class ContractClass(Model):
    """A class plugins build on: a framework base (`base`: no name registers it, its file holds no name's
    class, and two names derive from it or it is the root of one's hierarchy) or a registry (`manager`: it
    defines register_module / register_lazy_module)."""

    name: str
    module: str
    file: str
    line: int
    role: str  # base | manager
    kinds: list[str]  # the registries of the names deriving from it (tool, reasoning, engine)
    derived: int  # how many registered names derive from it
    bases: list[str]  # its bases as written
    methods: list[Signature]
    attributes: list[Attribute]
    import_paths: list[ImportPath] = field(default_factory=list)


@dataclass
class TypeRef(Model):
    """A type the contract's signatures name, and the module the contract's file imports it from."""

    name: str
    module: str
    file: str  # the file that imports it
    line: int  # the import's line
    used_by: list[str]  # Class.method / helper names whose annotations name it


@dataclass
class CallSite(Model):
    """A call vLLM's own code makes on a parser object: a construction (method __init__) or a method call."""

    kind: str  # tool | reasoning
    method: str
    callee: str
    positional: int
    keywords: list[str]
    star: bool
    dstar: bool
    args: list[str]
    file: str
    line: int
    function: str | None
    text: str  # callee(args) as a person reads it


@dataclass
class Contract(Model):
    version: str
    classes: list[ContractClass]
    helpers: list[Signature]  # the module-level functions of the parser packages' utils modules
    types: list[TypeRef]
    calls: list[CallSite]
    notes: list[str]


@dataclass
class ContractChange(Model):
    """One typed change of the contract, in the manner of griffe's breakage kinds, with file:line on both
    sides (a side is null where the thing is absent) and what it means for a plugin."""

    type: str
    subject: str
    explanation: str
    breaking: bool
    before: str | None = None
    after: str | None = None
    file_a: str | None = None
    line_a: int | None = None
    file_b: str | None = None
    line_b: int | None = None


@dataclass
class ContractDiff(Model):
    a: str
    b: str
    breaking: int  # how many changes break a plugin
    changes: list[ContractChange]
    notes: list[str] = field(default_factory=list)


# -- check-plugin ---------------------------------------------------------------------------------------------


@dataclass
class PluginImport(Model):
    module: str | None  # absolute module (None: a relative import of the plugin's own package)
    name: str | None  # None: `import module`
    alias: str | None
    line: int
    group: int | None  # imports in one try / except ImportError alternative share a group ...
    alternative: int | None  # ... and the branch they are in (0: the try body, 1..: the handlers)


@dataclass
class PluginMethod(Model):
    name: str
    line: int
    params: list[Param]
    text: str


@dataclass
class PluginClass(Model):
    name: str
    line: int
    bases: list[str]  # as written
    resolved_bases: list[str | None]  # through the plugin's imports (None: not a vLLM name)
    methods: list[PluginMethod]


@dataclass
class PluginRegistration(Model):
    name: str
    kind: str  # tool | reasoning | engine
    form: str  # decorator | call | lazy-call
    class_: str | None
    manager: str
    line: int


@dataclass
class PluginFile(Model):
    """What the plugin file says, read with tree-sitter (never executed)."""

    path: str
    status: str  # ok | syntax-errors | ...
    imports: list[PluginImport]
    classes: list[PluginClass]
    registrations: list[PluginRegistration]


@dataclass
class Finding(Model):
    """One check of the plugin at one version."""

    what: str  # import | base | override | constructor | super-call | registration | shadow | replay
    subject: str
    status: str  # ok | broken | warning | unchecked
    message: str
    plugin_line: int | None = None
    file: str | None = None  # the vLLM side of the evidence
    line: int | None = None


@dataclass
class PluginVersion(Model):
    version: str
    compatible: bool  # no finding is broken
    findings: list[Finding]


@dataclass
class Change(Model):
    """Lines of the plugin to change for it to work at the summary's target version."""

    line: int
    end_line: int
    written: str  # the lines as written
    instead: str | None  # what to write in their place ("": delete them; null: no replacement is known)
    why: str  # what breaks at the target version, and anything the change asks of the rest of the file


@dataclass
class PluginSummary(Model):
    """check-plugin's lead: what to change for the plugin to work at the newest checked version (`target`), and
    the versions where the file so changed is compatible (the changed file checked again, not guessed)."""

    target: str
    works_as_written: bool
    changes: list[Change]
    works_after: list[str]


@dataclass
class PluginReport(Model):
    plugin: PluginFile
    since: (
        str | None
    )  # the version the plugin was written against (shadowed names' changes are counted from it)
    versions: list[PluginVersion]
    compatible: list[str]
    broken: list[str]
    first_compatible: str | None
    last_compatible: str | None
    notes: list[str]
    summary: PluginSummary | None = None
