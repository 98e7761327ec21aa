"""The classes of one version as Python sees them: names resolved through imports, re-exports and aliases,
bases resolved across files (an adapter made by `make_adapters(P)` is a class too, with the generic adapter
as its base and `_parser_engine_cls = P`), and each class's method resolution order (C3, as Python computes
it), from which the method or attribute a class really uses is read."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ..core.kinds import HopKind

ADAPTER_SUFFIXES = ("ParserToolAdapter", "ParserReasoningAdapter")
ENGINE_ATTR = "_parser_engine_cls"  # an adapter declared by hand names its parser engine class here
MAX_HOPS = 12


@dataclass
class Hop:
    hop: HopKind
    cls: str | None
    module: str | None
    file: str | None
    line: int | None
    end_line: int | None = None  # init: the __init__'s last line
    detail: str | None = None  # init: the attributes it rebinds, space-separated


@dataclass(frozen=True, slots=True)
class Module:
    """The facts of one unit (a Python file's blob) that resolution reads, by name. Made once a unit and
    shared by every version holding it (Version.cache), so never changed after it is made."""

    path: str
    unit: int
    classes: dict[str, dict]  # qualname -> line, end_line, no_methods, decorators
    bases: dict[str, list[tuple[str, str | None]]]  # class -> its bases in order: (as written, resolved)
    imports: dict[str, tuple[str, str, int]]  # bound name -> (module, name, line) of a module-level import
    aliases: dict[str, tuple[str | None, str, int]]  # name -> (resolved, written, line) of `X = Y`
    bindings: dict[
        str, tuple[str | None, int]
    ]  # adapter -> (parser class, line) of a make_adapters() assignment
    dispatch: dict[str, tuple[str, int]]  # class -> (the class its unified_parser_cls() returns, line)
    engines: dict[str, tuple[str, int]]  # class -> (the class its _parser_engine_cls names, line)
    n_methods: int  # how many methods the file defines
    methods: dict[str, dict[str, dict]]  # class -> method -> line, end_line, body, calls_super, delegates
    attrs: dict[str, dict[str, dict]]  # class -> attribute -> value, value_kind, resolved, line
    sets: dict[tuple[str, str], list[dict]]  # (via, owner) -> what runs at class creation (class_sets rows)
    envs: dict[str, dict]  # environment flag -> how, value, line of its default
    held: dict[str, set[str]]  # class -> the attributes / properties of its own holding a sentinel
    init_held: dict[str, set[str]]  # class -> the attributes its __init__ binds to a sentinel or a regex
    binds: dict[tuple[str, str], dict[str, int]]  # (class, method) -> attribute -> line it stands bound at
    reads: dict[tuple[str, str], set[str]]  # (class, method) -> the instance attributes it reads
    uses: dict[tuple[str, str], tuple]  # (what, qualname) -> (line, end_line, digest, names)


class SymbolKind(StrEnum):
    """What a name is defined as, once re-exports and aliases are followed (Symbol.kind)."""

    CLASS = "class"
    """A class statement."""
    BINDING = "binding"
    """A module-level assignment from make_adapters(P): an adapter class made at import time."""


@dataclass(frozen=True, slots=True)
class Symbol:
    """Where a name is defined, through re-exports and aliases (find_symbol): `name` in `module` as a
    class or a make_adapters() binding, or not found (`kind` None) with the `reason`."""

    kind: SymbolKind | None
    module: str | None = None
    name: str | None = None
    reason: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return self.module, self.name

    @property
    def is_class(self) -> bool:
        return self.kind is SymbolKind.CLASS

    @property
    def is_binding(self) -> bool:
        return self.kind is SymbolKind.BINDING

    @classmethod
    def missing(cls, reason: str) -> Symbol:
        return cls(None, reason=reason)


class Version:
    """Lazy, cached views of one version's facts, by module."""

    def __init__(self, conn, version_id: int, cache: dict | None = None):
        self.conn, self.vid = conn, version_id
        self.cache = {} if cache is None else cache  # unit id -> facts; units never change, so shareable
        rows = conn.execute(
            "select u.module, f.path, u.id, u.blob_id from files f join units u on u.id = f.unit_id"
            " where f.version_id = ? and f.path like '%.py'",
            [version_id],
        ).fetchall()
        self.files = {m: (p, u) for m, p, u, _ in rows}
        self.blobs = {p: b for _, p, _, b in rows}  # path -> blob id
        self._mods: dict[str, Module] = {}
        self.bases_memo: dict[
            tuple[str, str], list[Base]
        ] = {}  # class key -> its direct bases (base_links())
        self.mro_memo: dict[
            tuple[str, str], list[Cls]
        ] = {}  # class key -> its resolution order (mro() below)
        self.creations: dict[
            frozenset, object
        ] = {}  # flags set -> indexer/creation.py's evaluation with them

    def module(self, module: str) -> Module | None:
        if module not in self.files:
            return None
        if module not in self._mods:
            path, unit = self.files[module]
            if unit not in self.cache:
                self.cache[unit] = self._load(path, unit)
            self._mods[module] = self.cache[unit]
        return self._mods[module]

    def _load(self, path: str, unit: int) -> Module:
        """The facts of one unit that resolution reads, by name."""
        c = self.conn
        classes = {
            q: {"line": ln, "end_line": end, "no_methods": nm, "decorators": deco}
            for q, ln, end, nm, deco in c.execute(
                "select qualname, line, end_line, no_methods, decorators from classes where unit_id = ?",
                [unit],
            )
        }
        methods: dict[str, dict[str, dict]] = {}
        for cls, name, ln, end, body, sup, dele in c.execute(
            "select class, name, line, end_line, body, calls_super, delegates from methods where unit_id = ?"
            " order by line",
            [unit],
        ):
            methods.setdefault(cls, {}).setdefault(
                name, {"line": ln, "end_line": end, "body": body, "calls_super": sup, "delegates": dele}
            )
        attrs: dict[str, dict[str, dict]] = {}
        for cls, name, val, kind, res, ln in c.execute(
            "select class, name, value, value_kind, resolved, line from class_attrs where unit_id = ?"
            " order by line",
            [unit],
        ):
            attrs.setdefault(cls, {})[name] = {"value": val, "value_kind": kind, "resolved": res, "line": ln}
        bases: dict[str, list] = {}
        for cls, written, resolved in c.execute(
            "select class, written, resolved from bases where unit_id = ? and keyword is null order by pos",
            [unit],
        ):
            bases.setdefault(cls, []).append((written, resolved))
        imports = {}
        for mod, name, alias, ln in c.execute(
            "select module, name, alias, line from imports where unit_id = ? and name is not null"
            " and star = 0 and in_function is null",
            [unit],
        ):
            imports[alias or name] = (mod, name, ln)
        aliases = {
            n: (r, w, ln)
            for n, r, w, ln in c.execute(
                "select name, resolved, written, line from aliases where unit_id = ?", [unit]
            )
        }
        bindings = {
            a: (p, ln)
            for a, p, ln in c.execute(
                "select adapter, parser, line from adapter_bindings where unit_id = ?", [unit]
            )
        }
        dispatch = {}
        for cls, owner, ln in c.execute(
            "select class, owner, line from name_checks where unit_id = ? and name is null"
            " and owner is not null",
            [unit],
        ):
            dispatch[owner] = (cls, ln)
        engines = {
            cls: (res or val, ln)
            for cls, val, res, ln in c.execute(
                "select class, value, resolved, line from class_attrs where unit_id = ? and name = ?"
                " and value_kind = 'name'",
                [unit, ENGINE_ATTR],
            )
        }
        sets: dict[tuple[str, str], list[dict]] = {}  # (via, owner) -> what runs at class creation
        for row in c.execute(
            "select via, owner, object, attribute, value, value_kind, guard, guard_text, params,"
            " target, line from class_sets where unit_id = ? order by line",
            [unit],
        ):
            r = dict(
                zip(
                    (
                        "via",
                        "owner",
                        "object",
                        "attribute",
                        "value",
                        "value_kind",
                        "guard",
                        "guard_text",
                        "params",
                        "target",
                        "line",
                    ),
                    row,
                    strict=True,
                )
            )
            sets.setdefault((r["via"], r["target"] or r["owner"]), []).append(r)
        envs: dict[str, dict] = {}
        for name, how, value, line in c.execute(
            "select name, how, value, line from env_defaults where unit_id = ? order by how desc, line",
            [unit],
        ):
            if name not in envs or (envs[name]["value"] is None and value is not None):
                envs[name] = {"how": how, "value": value, "line": line}  # environment first, then declared
        held: dict[str, set[str]] = {}  # class -> the attributes / properties of its own holding a sentinel
        for cls, fn, attr in c.execute(
            "select class, function, attribute from sentinels where unit_id = ?"
            " and class is not null and attribute is not null",
            [unit],
        ):
            if fn is None or fn == f"{cls}.{attr}":
                held.setdefault(cls, set()).add(attr)
        init_held: dict[str, set[str]] = {}  # class -> what its __init__ binds to a sentinel or a regex
        for cls, attr in c.execute(
            "select class, attribute from sentinels where unit_id = ? and attribute is not null"
            " and function = class || '.__init__' union select class, attribute from regexes where unit_id = ?"
            " and attribute is not null and function = class || '.__init__'",
            [unit, unit],
        ):
            init_held.setdefault(cls, set()).add(attr)
        binds: dict[tuple[str, str], dict[str, int]] = {}
        reads: dict[tuple[str, str], set[str]] = {}
        for cls, meth, attr, how, ln in c.execute(
            "select class, method, attribute, how, line from self_attrs where unit_id = ? order by line",
            [unit],
        ):
            if how == "binds":
                binds.setdefault((cls, meth), {})[attr] = ln
            else:
                reads.setdefault((cls, meth), set()).add(attr)
        n_methods = sum(len(ms) for ms in methods.values())
        uses: dict[tuple[str, str], tuple] = {}  # (what, qualname) -> (line, end_line, digest, names)
        for what, q, ln, end, digest, names in c.execute(
            "select what, qualname, line, end_line, digest, names from uses where unit_id = ?", [unit]
        ):
            uses.setdefault((what, q), (ln, end, digest, names.split() if names else ()))
        return Module(
            path=path,
            unit=unit,
            classes=classes,
            bases=bases,
            imports=imports,
            aliases=aliases,
            bindings=bindings,
            dispatch=dispatch,
            engines=engines,
            n_methods=n_methods,
            methods=methods,
            attrs=attrs,
            sets=sets,
            envs=envs,
            held=held,
            init_held=init_held,
            binds=binds,
            reads=reads,
            uses=uses,
        )

    def resolve_in(self, module: str, dotted: str) -> str | None:
        """What a name written in a module means (through its imports, else a class of its own)."""
        m = self.module(module)
        if m is None:
            return None
        head, _, rest = dotted.partition(".")
        if head in m.imports:
            mod, name, _ = m.imports[head]
            return f"{mod}.{name}" + ("." + rest if rest else "")
        if head in m.classes:
            return f"{module}.{dotted}"
        return None


def split(dotted: str, v: Version) -> tuple[str, str]:
    """Split a dotted name into (module, attribute path) on the longest module that is a file."""
    parts = dotted.split(".")
    for i in range(len(parts) - 1, 0, -1):
        mod = ".".join(parts[:i])
        if mod in v.files:
            return mod, ".".join(parts[i:])
    return dotted.rpartition(".")[0], dotted.rpartition(".")[2]


def find_symbol(v: Version, module: str, name: str, hops: list[Hop], depth: int = 0) -> Symbol:
    """Follow re-exports and aliases to where `name` is defined, appending a hop for each to `hops`."""
    m = v.module(module)
    if m is None:
        return Symbol.missing(f"module {module} is not a file of this version in scope")
    if name in m.classes:
        return Symbol(SymbolKind.CLASS, module, name)
    if name in m.bindings:
        return Symbol(SymbolKind.BINDING, module, name)
    if name in m.aliases and depth < MAX_HOPS:
        resolved, written, line = m.aliases[name]
        if not resolved:
            return Symbol.missing(
                f"{name} in {module} is an alias of {written}, which is neither imported nor defined there"
            )
        hops.append(Hop(HopKind.ALIAS, name, module, m.path, line))
        return find_symbol(v, *split(resolved, v), hops, depth + 1)
    if name in m.imports and depth < MAX_HOPS:
        src_mod, src_name, line = m.imports[name]
        target = src_mod if src_mod in v.files else None
        if target is None:
            sub = f"{src_mod}.{src_name}"
            if sub in v.files:  # `from pkg import submodule`
                return Symbol.missing(f"{module} imports module {sub}, not a class")
            return Symbol.missing(
                f"{name} is imported in {module} from {src_mod}, which is not a file of this version in scope"
            )
        hops.append(Hop(HopKind.REEXPORT, name, module, m.path, line))
        return find_symbol(v, target, src_name, hops, depth + 1)
    return Symbol.missing(f"{name} is not defined in {module}")


@dataclass(frozen=True)
class Cls:
    """A class of one version: defined in a file, or made by `make_adapters()` (`binding`: its line is the
    assignment's)."""

    module: str
    name: str
    path: str
    line: int
    end_line: int | None = None
    binding: bool = False

    @property
    def key(self) -> tuple[str, str]:
        return self.module, self.name


def class_at(v: Version, module: str, name: str) -> Cls | None:
    """The class (or make_adapters() binding) `name` defined in `module` itself."""
    m = v.module(module)
    if m is None:
        return None
    if name in m.classes:
        c = m.classes[name]
        return Cls(module, name, m.path, c["line"], c["end_line"])
    if name in m.bindings:
        return Cls(module, name, m.path, m.bindings[name][1], m.bindings[name][1], binding=True)
    return None


def lookup(v: Version, dotted: str | None) -> Cls | None:
    """The class a full dotted name means, through re-exports and aliases."""
    if not dotted:
        return None
    found = find_symbol(v, *split(dotted, v), [])
    return class_at(v, found.module, found.name) if found.kind is not None else None


@dataclass(frozen=True)
class Base:
    """One base a class statement writes, as this version resolves it: `target` is the (module, name) the
    written base names (split on the longest module that is a file), `symbol` where that is defined and
    `hops` the re-exports and aliases on the way, `cls` the class (or make_adapters() binding) it is, None
    when it is outside the scope."""

    written: str
    target: tuple[str, str] | None
    symbol: Symbol | None
    hops: tuple[Hop, ...]
    cls: Cls | None


def base_links(v: Version, c: Cls) -> list[Base]:
    """A class's bases in order as written, each resolved (an adapter made by make_adapters() has the
    generic adapter as its one base); memoized per version."""
    memo = v.bases_memo
    if c.key in memo:
        return memo[c.key]
    out: list[Base] = []
    if c.binding:
        generic = _generic_adapter(v, c)
        out = (
            [Base(generic.name, generic.key, Symbol(SymbolKind.CLASS, *generic.key), (), generic)]
            if generic
            else []
        )
    else:
        for written, resolved in v.module(c.module).bases.get(c.name, []):
            dotted = resolved or v.resolve_in(c.module, written.split("[")[0])
            if not dotted:
                out.append(Base(written, None, None, (), None))
                continue
            target = split(dotted, v)
            hops: list[Hop] = []
            found = find_symbol(v, *target, hops)
            base = class_at(v, found.module, found.name) if found.kind is not None else None
            out.append(Base(written, target, found, tuple(hops), base if base != c else None))
    memo[c.key] = out
    return out


def bases(v: Version, c: Cls) -> list[Cls]:
    """Direct bases in order, those that resolve to a class of this version (others are outside the scope)."""
    return [b.cls for b in base_links(v, c) if b.cls is not None]


def path_to(v: Version, c: Cls, ancestor: Cls) -> list[Base]:
    """The bases from `c` up to `ancestor` (a class of its resolution order), each step the first base
    whose own resolution order holds it: how `c` inherits from it."""
    out: list[Base] = []
    while c != ancestor and len(out) <= MAX_HOPS * 2:
        step = next((b for b in base_links(v, c) if b.cls is not None and ancestor in mro(v, b.cls)), None)
        if step is None:
            break
        out.append(step)
        c = step.cls
    return out


def _generic_adapter(v: Version, c: Cls) -> Cls | None:
    """The class make_adapters() subclasses for this binding: in the module make_adapters comes from, the
    class named like the binding's role (…ToolAdapter / …ReasoningAdapter)."""
    imported = v.module(c.module).imports.get("make_adapters")
    home = v.module(imported[0]) if imported else None
    if home is None:
        return None
    role = "ToolAdapter" if c.name.endswith("ToolAdapter") else "ReasoningAdapter"
    names = sorted((q for q in home.classes if q.endswith(role) and "." not in q), key=len)
    return class_at(v, imported[0], names[0]) if names else None


def mro(v: Version, c: Cls, _active: frozenset = frozenset()) -> list[Cls]:
    """The method resolution order Python computes (C3). An inconsistent hierarchy (Python would raise)
    falls back to depth-first order, so resolution still says something; a cycle stops."""
    memo = v.mro_memo
    if c.key in memo:
        return memo[c.key]
    if c.key in _active or len(_active) > MAX_HOPS * 2:
        return [c]
    direct = bases(v, c)
    seqs = [mro(v, b, _active | {c.key}) for b in direct] + [direct]
    merged = _c3([list(s) for s in seqs])
    if merged is None:
        merged = list(dict.fromkeys(x for s in seqs for x in s))
    memo[c.key] = out = [c] + merged
    return out


def _c3(seqs: list[list[Cls]]) -> list[Cls] | None:
    out: list[Cls] = []
    seqs = [s for s in seqs if s]
    while seqs:
        head = next((s[0] for s in seqs if not any(s[0] in t[1:] for t in seqs)), None)
        if head is None:
            return None
        out.append(head)
        seqs = [[x for x in s if x != head] for s in seqs]
        seqs = [s for s in seqs if s]
    return out


def methods(v: Version, c: Cls) -> dict[str, dict]:
    """The methods a class defines itself (name -> line, end_line, body, calls_super, delegates)."""
    return {} if c.binding else v.module(c.module).methods.get(c.name, {})


def attrs(v: Version, c: Cls) -> dict[str, dict]:
    """The class attributes a class sets itself (name -> value, value_kind, resolved, line); an adapter
    made by make_adapters(P) sets `_parser_engine_cls = P`."""
    if c.binding:
        parser, line = v.module(c.module).bindings[c.name]
        return {ENGINE_ATTR: {"value": parser, "value_kind": "name", "resolved": parser, "line": line}}
    return v.module(c.module).attrs.get(c.name, {})


def held(v: Version, c: Cls) -> set[str]:
    """The class attributes and properties (or methods) of a class's own that hold a sentinel."""
    return set() if c.binding else v.module(c.module).held.get(c.name, set())


def init_held(v: Version, c: Cls) -> set[str]:
    """The attributes a class's own __init__ binds to a sentinel or a regular expression."""
    return set() if c.binding else v.module(c.module).init_held.get(c.name, set())


def binds(v: Version, c: Cls, method: str) -> dict[str, int]:
    """The instance attributes a method of a class binds and that stand once it returns (attribute -> line)."""
    return {} if c.binding else v.module(c.module).binds.get((c.name, method), {})


def reads(v: Version, c: Cls, method: str) -> set[str]:
    """The instance attributes a method of a class reads."""
    return set() if c.binding else v.module(c.module).reads.get((c.name, method), set())


def resolve_method(v: Version, order: list[Cls], method: str, start: int = 0) -> tuple[Cls, dict] | None:
    """The first class of `order` (from position `start`) defining `method`, with the method."""
    for c in order[start:]:
        found = methods(v, c).get(method)
        if found is not None:
            return c, found
    return None


def resolve_attr(v: Version, order: list[Cls], attr: str) -> tuple[Cls, dict] | None:
    for c in order:
        found = attrs(v, c).get(attr)
        if found is not None:
            return c, found
    return None
