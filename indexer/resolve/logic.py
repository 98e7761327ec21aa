"""Where the logic lives: each name's contract methods and behaviour attributes resolved through the class
hierarchy as Python resolves them, the class whose code does the parsing, delegating wrappers, notes, and
the files holding the name's own code.

The rule (README, "Where the parsing code is"):

- behind an adapter (unified): the engine class `P` (`_parser_engine_cls`, set by `make_adapters(P)` or
  declared). A class the parser manager composes around it is a `wrapper` hop.
- standalone, streaming first: the registered class when it defines either extraction method itself (the
  primary `extract_tool_calls`; reasoning: `extract_reasoning`, or `extract_reasoning_content` before it;
  or the streaming one), with where the other comes from when it is another name's registered class; a
  class defining neither takes the class its streaming method comes from when that is another name's
  registered class, else the one its primary method comes from; inherited from framework bases no name
  registers (the abstract `ToolParser`, a generic thinking-tags base), the registered class stays the real
  one and a note names the base and its line.
- composed by a name check (or a class check, or the unified registry under the same name): the composed
  class is real when its own `parse` / `parse_delta` do the work; when they end in a class that hands
  extraction to the registered parser (`self._tool_parser.extract_tool_calls(...)`), possibly through
  overrides that call `super()`, it is a `wrapper` hop and the registered side is real.
- an `__init__` that runs for the registered class, defined by a class more derived than the real one, and
  that binds (after its super() call) attributes the parsing methods read (the real class's methods and those
  of the parser classes above it; not a framework base's, not the more derived classes' own) is part of where
  the logic is: an `init` hop with its lines
  and the attributes, its file a role of the name's code (`init`), its code the name's extraction, and the
  sentinels and regular expressions its bindings replace are not the name's (`overridden`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from . import creation
from .classgraph import (
    ENGINE_ATTR,
    MAX_HOPS,
    Cls,
    Module,
    Version,
    attrs,
    binds,
    class_at,
    held,
    init_held,
    methods,
    mro,
    reads,
    resolve_attr,
    resolve_method,
)
from .vocabulary import CONTRACT, ENGINE, PRIMARY, REASONING, STREAMING, TOOL

NOT_WORKING = {
    "returns-none": "returns None",
    "raises-not-implemented": "raises NotImplementedError",
    "abstract": "is abstract",
}


@dataclass(frozen=True)
class Rebind:
    """An `__init__` more derived than the real class that rebinds attributes its parsing methods read."""

    cls: Cls
    line: int
    end_line: int
    attributes: tuple[str, ...]  # in the order it binds them

    def place(self) -> str:
        return f"{self.cls.path}:{self.line}-{self.end_line}"


@dataclass
class Logic:
    """Where one name's logic is, in one version."""

    roles: dict[str, Cls] = field(default_factory=dict)  # registered | engine | wrapper | composed -> class
    real: Cls | None = None
    inherited_from: Cls | None = None  # another name's registered class the extraction comes from
    notes: list[str] = field(default_factory=list)
    streaming: str | None = None
    streaming_cls: Cls | None = None  # the class whose streaming method runs, and the method's line
    streaming_line: int | None = None
    streaming_from: list[str] = field(default_factory=list)  # other names whose registered class that is
    methods: list[dict] = field(default_factory=list)  # rows of parser_methods
    attrs: list[dict] = field(default_factory=list)  # rows of parser_attrs
    overridden: list[dict] = field(default_factory=list)  # rows of parser_overridden
    rebinds: list[Rebind] = field(default_factory=list)  # overriding __init__s that are part of the logic


def where(c: Cls, line: int | None = None) -> str:
    return f"{c.path}:{line if line is not None else c.line}"


def contract(v: Version, role: str, c: Cls, kind: str) -> list[dict]:
    """One row per contract method of `kind` as `c` resolves it (engine classes: parse and parse_delta too)."""
    wanted = CONTRACT[kind] if role == "registered" else tuple(dict.fromkeys(ENGINE + CONTRACT[kind]))
    order = mro(v, c)
    rows = []
    for name in wanted:
        found = resolve_method(v, order, name)
        if found is None:
            rows.append(
                {
                    "role": role,
                    "method": name,
                    "defining_class": None,
                    "module": None,
                    "file": None,
                    "line": None,
                    "end_line": None,
                    "body": "absent",
                    "own": 0,
                    "calls_super": None,
                    "delegates": None,
                }
            )
            continue
        d, m = found
        rows.append(
            {
                "role": role,
                "method": name,
                "defining_class": d.name,
                "module": d.module,
                "file": d.path,
                "line": m["line"],
                "end_line": m["end_line"],
                "body": m["body"],
                "own": int(d == c),
                "calls_super": m["calls_super"],
                "delegates": m["delegates"],
            }
        )
    return rows


def behaviour(v: Version, role: str, c: Cls, parser_keys: set) -> list[dict]:
    """Class attributes that decide behaviour: those a framework base in `c`'s resolution order declares
    (`supports_required_and_named`, `structural_tag_model`, ...), those what runs at class creation sets,
    and `_parser_engine_cls`, each as `c` has it once created in vLLM's default configuration
    (indexer/creation.py), with the class that has it, what set it and the condition that changes it."""
    names = {ENGINE_ATTR} | creation.names(v, c)
    for k in mro(v, c):
        if k.key not in parser_keys and k != c:
            names.update(attrs(v, k))
    return [
        {"role": role, "attribute": name, **found}
        for name in sorted(names)
        if (found := creation.attribute(v, c, name)) is not None
    ]


def overridden(v: Version, role: str, c: Cls) -> list[dict]:
    """The attributes and properties holding a sentinel in a class of `c`'s resolution order that a more
    derived class of that order defines again (a class attribute, a method or a property), and those a
    class's `__init__` binds to a sentinel or a regular expression that the `__init__` of a more derived class
    that runs binds again after its super() call (`by_method` __init__: that hides both): `c` uses the more
    derived one, so the sentinel the overridden one holds is not the name's. An instance attribute wins over a
    class attribute, and a class attribute does not override what a base's `__init__` binds."""
    order = mro(v, c)
    inits = {k for k, _ in init_chain(v, order)}
    rows = []
    for i, k in enumerate(order[1:], 1):
        for a in sorted(held(v, k) | init_held(v, k)):
            by_init = next((x for x in order[:i] if x in inits and a in binds(v, x, "__init__")), None)
            d = (
                next((x for x in order[:i] if a in attrs(v, x) or a in methods(v, x)), None)
                if a in held(v, k)
                else None
            )
            if by_init is not None:
                d, line, how = by_init, binds(v, by_init, "__init__")[a], "__init__"
            elif d is not None:
                line, how = (attrs(v, d).get(a) or methods(v, d)[a])["line"], None
            else:
                continue
            rows.append(
                {
                    "role": role,
                    "class": k.name,
                    "attribute": a,
                    "by_class": d.name,
                    "by_file": d.path,
                    "by_line": line,
                    "by_method": how,
                }
            )
    return rows


def init_chain(v: Version, order: list[Cls]) -> list[tuple[Cls, dict]]:
    """The `__init__`s that run for the first class of `order`: the first definer, then the next one for as
    long as each calls super().__init__()."""
    out, start = [], 0
    while (found := resolve_method(v, order, "__init__", start)) is not None:
        out.append(found)
        if not found[1]["calls_super"]:
            break
        start = order.index(found[0]) + 1
    return out


def rebinding_inits(v: Version, c: Cls, real: Cls, parser_keys: set) -> list[Rebind]:
    """The `__init__`s that run for `c`, of classes more derived than `real` in its resolution order, that
    bind attributes the parsing methods read: the methods Python resolves for `c` (other than `__init__`)
    defined by `real` or by another parser class further up (not a framework base). What only a method of the
    more derived classes reads is their own code, not a rebinding of the real class's."""
    order = mro(v, c)
    if real not in order or real == c:
        return []
    at = order.index(real)
    parsing = {
        k for i, k in enumerate(order) if not k.binding and (i == at or (i > at and k.key in parser_keys))
    }
    read: set[str] = set()
    for name in dict.fromkeys(n for k in parsing for n in methods(v, k)):
        if name == "__init__":
            continue
        start = 0
        while (found := resolve_method(v, order, name, start)) is not None:
            d, meth = found
            if d in parsing:
                read |= reads(v, d, name)
            if not meth["calls_super"]:
                break
            start = order.index(d) + 1
    out = []
    for k, meth in init_chain(v, order):
        if order.index(k) >= at:
            break
        bound = binds(v, k, "__init__")
        rebound = tuple(a for a in sorted(bound, key=bound.get) if a in read)
        if rebound:
            out.append(Rebind(k, meth["line"], meth["end_line"], rebound))
    return out


def _first(v: Version, order: list[Cls], names: tuple[str, ...]) -> tuple[Cls, dict, str] | None:
    """The first of `names` that some class of `order` defines: (defining class, the method, its name)."""
    return next(((*f, n) for n in names if (f := resolve_method(v, order, n)) is not None), None)


def _past_super(v: Version, order: list[Cls], name: str):
    """The definer of `name` whose body does the work: an override that calls super() passes on."""
    start = 0
    while (found := resolve_method(v, order, name, start)) is not None:
        if not found[1]["calls_super"]:
            return found
        start = order.index(found[0]) + 1
    return None


def delegates(v: Version, c: Cls, kind: str) -> bool:
    """Whether a composed class only hands extraction to the registered parsers: its parse / parse_delta
    end (past overrides calling super()) in a class whose extraction methods delegate to another parser
    object (`self._tool_parser.extract_tool_calls(...)`)."""
    order = mro(v, c)
    primaries = tuple(dict.fromkeys(PRIMARY[kind] + PRIMARY["tool"] + PRIMARY["reasoning"]))
    checked = False
    for name in ENGINE:
        found = _past_super(v, order, name)
        if found is None:
            continue
        checked = True
        own = methods(v, found[0])
        if not any(own.get(p, {}).get("delegates") for p in primaries):
            return False
    if checked:
        return True
    found = _first(v, order, PRIMARY[kind])
    return found is not None and bool(found[1]["delegates"])


def _not_working(what: str, found: tuple[Cls, dict, str]) -> str | None:
    d, m, name = found
    return (
        f"{what}: {d.name}.{name} {NOT_WORKING[m['body']]} ({where(d, m['line'])})"
        if m["body"] in NOT_WORKING
        else None
    )


def standalone(
    v: Version, kind: str, reg: Cls, registered: dict, logic: Logic, name: str | None = None
) -> None:
    """The real class of a name whose registered class (or the class the serving code dispatches to)
    carries its own logic or inherits it, with notes on what it inherits and on methods that do nothing.

    Streaming first (README, "Where the parsing code is"): a registered class that defines either
    extraction method itself is real; one that defines neither takes the class its streaming method comes
    from when that is another name's registered class, else the one its non-streaming method comes from,
    else (framework bases) stays real. `registered`: registered class key -> the names registering it."""
    order = mro(v, reg)
    primary = _first(v, order, PRIMARY[kind])
    streaming = _first(v, order, STREAMING[kind])
    logic.real = reg
    logic.streaming = streaming[1]["body"] if streaming else "absent"
    set_streaming(logic, streaming)

    def others(found) -> list[str]:  # the other names whose registered class defines it
        return (
            []
            if found is None or found[0] == reg
            else [n for n in registered.get(found[0].key, []) if n != name]
        )

    def whose(found) -> str:
        return possessive(others(found))

    logic.streaming_from = others(streaming)
    own = any(f is not None and f[0] == reg for f in (primary, streaming))
    if not own and others(streaming) and streaming[1]["body"] not in NOT_WORKING:
        d = streaming[0]
        logic.real, logic.inherited_from = d, d
        note = f"extraction inherited from {d.name} ({where(d)}), {whose(streaming)} registered parser"
        if (
            primary is not None and primary[0] != d
        ):  # the non-streaming method is another class's (noted below)
            note += (
                f", whose {streaming[2]} runs (streaming first: {reg.name} defines no extraction method of"
                " its own)"
            )
        logic.notes.append(note)
    if primary is not None and primary[0] != logic.real and primary[0] != reg:
        d, m, method = primary
        if others(primary) and not own and logic.real == reg:
            logic.real, logic.inherited_from = d, d
            logic.notes.append(
                f"extraction inherited from {d.name} ({where(d)}), {whose(primary)} registered parser"
            )
        elif others(primary):
            logic.notes.append(
                f"{method}: inherited from {d.name} ({where(d, m['line'])}), {whose(primary)}"
                " registered parser"
            )
        elif m["body"] not in NOT_WORKING:
            logic.notes.append(f"{method}: inherited from {d.name}, {where(d, m['line'])}")
    if primary and streaming and {primary[1]["body"], streaming[1]["body"]} == {"raises-not-implemented"}:
        logic.notes.append(
            f"selector stub: {primary[2]} and {streaming[2]} raise NotImplementedError ({reg.name},"
            f" {where(reg)}): the class only declares the name; another parser does the parsing"
        )
        return
    if primary is not None and (note := _not_working("extraction", primary)):
        logic.notes.append(note)
    if streaming is None:
        logic.notes.append("streaming: no streaming method in the resolution order")
    elif note := _not_working("streaming", streaming):
        logic.notes.append(note)
    elif streaming[0] != logic.real and others(streaming):
        logic.notes.append(
            f"streaming: inherited from {streaming[0].name} ({where(streaming[0], streaming[1]['line'])}),"
            f" {whose(streaming)} registered parser"
        )
    elif streaming[0] != logic.real and primary and primary[0] == logic.real:
        logic.notes.append(
            f"streaming: inherited from {streaming[0].name}, {where(streaming[0], streaming[1]['line'])}"
        )


def possessive(names: list[str]) -> str:
    """`r1's`, `a's / b's`: whose registered parser a class is."""
    return " / ".join(f"{n}'s" for n in names)


def set_streaming(logic: Logic, found: tuple[Cls, dict, str] | None) -> None:
    """Record the class whose streaming method runs (the first definer in the resolution order)."""
    logic.streaming_cls, logic.streaming_line = (found[0], found[1]["line"]) if found else (None, None)


def streaming_of(v: Version, c: Cls, kind: str, logic: Logic | None = None) -> str:
    found = _first(v, mro(v, c), STREAMING[kind])
    if logic is not None:
        set_streaming(logic, found)
    return found[1]["body"] if found else "absent"


def delegation_note(v: Version, c: Cls) -> str | None:
    """`tool_parser_cls = X` / `reasoning_parser_cls = Y` on a delegating class: what it hands work to."""
    parts = []
    for attr in ("tool_parser_cls", "reasoning_parser_cls"):
        found = resolve_attr(v, mro(v, c), attr)
        if found and found[1]["value_kind"] == "name" and found[1]["value"] not in ("None",):
            target = class_at(v, *_split_dotted(found[1]["resolved"])) if found[1]["resolved"] else None
            parts.append(f"{attr} = {found[1]['value']}" + (f" ({where(target)})" if target else ""))
    return ("delegates to " + ", ".join(parts)) if parts else None


def _split_dotted(dotted: str) -> tuple[str, str]:
    mod, _, name = dotted.rpartition(".")
    return mod, name


EXTRACTION = {k: frozenset(PRIMARY[k] + STREAMING[k] + ENGINE) for k in PRIMARY}
OTHER_KIND = {"tool": frozenset(REASONING), "reasoning": frozenset(TOOL), "engine": frozenset()}  # never run
MAX_PIECES = 800  # a closure stops growing here (a name's code is a few dozen definitions)


def own_paths(v: Version, own_keys: set) -> set[str]:
    """The files defining some name's own class (registered, real, engine, composed, wrapper): parser
    modules. A file defining none is framework (the abstract parsers, the engine, shared helpers)."""
    out = set()
    for module, name in own_keys:
        m = v.module(module)
        if m is not None and name in m.classes:
            out.add(m.path)
    return out


class Reach:
    """What each definition of one version reads or calls, transitively (code_pieces' second step), worked
    out once per definition and shared by the names that run it: (module, what, qualname) -> part."""

    def __init__(self, v: Version, own_keys: set, parsers: set[str]):
        self.v, self.own_keys, self.parsers = v, own_keys, parsers
        self.memo: dict[tuple, dict[tuple, str]] = {}
        self.files: dict[tuple, tuple] = {}  # code_files' answer for names with the same classes and kind

    def __call__(self, key: tuple) -> dict[tuple, str]:
        if key not in self.memo:
            found: dict[tuple, str] = {}
            queue = [key]
            while queue and len(found) < MAX_PIECES:
                module, what, qualname = queue.pop()
                m = self.v.module(module)
                for ref in m.uses[(what, qualname)][3]:
                    self._refer(m, module, ref, found, queue)
            self.memo[key] = found
        return self.memo[key]

    def _refer(self, m: Module, module: str, name: str, found: dict, queue: list, hops: int = 0) -> None:
        uses = m.uses

        def take(what: str, qualname: str, part: str) -> None:
            key = (module, what, qualname)
            if key not in found:
                found[key] = part
                queue.append(key)

        for what in ("function", "name"):
            if (what, name) in uses:
                take(what, name, "functions")
                return
        if ("class", name) in uses:
            if (module, name) in self.own_keys or m.path not in self.parsers:
                return  # another name's parser (its code is its own), or framework
            take("class", name, "functions")
            for what, q in uses:
                if what == "method" and q.rpartition(".")[0] == name:
                    take(what, q, "functions")
            return
        if ("import", name) in uses:
            take("import", name, "imports")
            target = m.imports.get(name)
            there = self.v.module(target[0]) if target is not None and hops < MAX_HOPS else None
            if there is not None:
                self._refer(there, target[0], target[1], found, queue, hops + 1)


def code_pieces(
    v: Version, logic: Logic, kind: str, own_keys: set, parsers: set[str], reach: Reach | None = None
) -> dict[tuple, str]:
    """The definitions that run for a name: (module, what, qualname) -> part (PARTS).

    From its role classes' resolution orders: the own statements of every class of a parser module
    (`parsers`) and each method such a class defines that Python resolves for the role class (an override
    calling super() passes on to the next); not the methods of the other kind's contract. Then what those
    name, transitively (Reach): module-level functions and constants, classes of a parser module that are
    no name's own (helpers, with their methods), and imports, followed to the definition they import
    (through re-exports). Framework classes are not entered."""
    reach = reach or Reach(v, own_keys, parsers)
    pieces: dict[tuple, str] = {}

    def take(module: str, what: str, qualname: str, part: str) -> None:
        m = v.module(module)
        if m is not None and (what, qualname) in m.uses:
            pieces.setdefault((module, what, qualname), part)

    for r in logic.rebinds:  # part of where the logic is, wherever its class is
        take(r.cls.module, "method", f"{r.cls.name}.__init__", "extraction")
        take(r.cls.module, "class", r.cls.name, "methods")
    for c in dict.fromkeys(c for c in (*logic.roles.values(), logic.real) if c is not None):
        order = mro(v, c)
        own = [k for k in order if not k.binding and k.path in parsers]
        for k in own:
            take(k.module, "class", k.name, "methods")
        for name in dict.fromkeys(n for k in own for n in methods(v, k)):
            if name in OTHER_KIND[kind]:
                continue
            part = "extraction" if name in EXTRACTION[kind] else "methods"
            start = 0
            while (found := resolve_method(v, order, name, start)) is not None:
                d, meth = found
                if not d.binding and d.path in parsers:
                    take(d.module, "method", f"{d.name}.{name}", part)
                if not meth["calls_super"]:
                    break
                start = order.index(d) + 1
    for found in {id(r): r for r in map(reach, list(pieces)) if r}.values():  # each closure once
        for k, part in found.items():
            if k not in pieces:
                if len(pieces) >= MAX_PIECES:
                    return pieces
                pieces[k] = part
    return pieces


def code_files(
    v: Version,
    logic: Logic,
    own_keys: set,
    kind: str = "tool",
    parsers: set[str] | None = None,
    reach: Reach | None = None,
) -> tuple[list[dict], str | None]:
    """The files holding a name's code: its role classes' files, those of every class in their resolution
    orders that defines a contract method or runs for it (code_pieces), and those holding the functions,
    constants and helpers it runs (`helper`). A file whose classes here are all framework (no name's
    registered, real, engine or composed class) is `shared`. Each row lists the file's pieces ([part,
    what, qualname]). -> (rows, digest of the pieces outside shared files: the name's code signature)."""
    parsers = own_paths(v, own_keys) if parsers is None else parsers
    memo = reach.files if reach is not None else {}
    same = (kind, tuple((r, c.key) for r, c in logic.roles.items()), logic.real.key if logic.real else None)
    if same not in memo:
        memo[same] = _code_files(v, logic, own_keys, kind, parsers, reach)
    rows, digest = memo[same]
    return [dict(r) for r in rows], digest


def _code_files(
    v: Version, logic: Logic, own_keys: set, kind: str, parsers: set[str], reach: Reach | None
) -> tuple[list[dict], str | None]:
    by_path: dict[str, dict] = {}

    def add(c: Cls, role: str) -> None:
        if c.binding:
            return  # the adapter's assignment line: its parser is followed as the engine
        entry = by_path.setdefault(c.path, {"roles": set(), "shared": True})
        entry["roles"].add(role)
        if c.key in own_keys or c.path in parsers:
            entry["shared"] = False

    for role, c in logic.roles.items():
        add(c, role)
    if logic.real is not None:
        add(logic.real, "real")
    for r in logic.rebinds:
        add(r.cls, "init")
    defining = {(r["module"], r["defining_class"]) for r in logic.methods if r["defining_class"]}
    pieces = code_pieces(v, logic, kind, own_keys, parsers, reach)
    running = {(m, q) for (m, what, q) in pieces if what == "class"}
    roles_of: dict[Cls, list[str]] = {}
    for role, c in logic.roles.items():
        roles_of.setdefault(c, []).append(role)
    for c in logic.roles.values():
        for k in mro(v, c):
            if k.key in defining or k.key in running:  # labelled as what it is, not as whose order holds it
                for role in ["real"] if k == logic.real else roles_of.get(k, ["base"]):
                    add(k, role)
    listed: dict[str, list] = {}
    own = []
    mods: dict[str, Module] = {}
    for (module, what, qualname), part in pieces.items():
        m = mods.get(module) or mods.setdefault(module, v.module(module))
        path = m.path
        if path not in by_path:
            by_path[path] = {"roles": {"helper"}, "shared": path not in parsers}
        listed.setdefault(path, []).append([part, what, qualname])
        if not by_path[path]["shared"]:
            own.append(f"{path}\0{what}\0{qualname}\0{m.uses[(what, qualname)][2]}")
    rows = [
        {
            "path": p,
            "roles": ",".join(sorted(e["roles"])),
            "shared": int(e["shared"]),
            "pieces": json.dumps(sorted(listed[p])) if p in listed else None,
        }
        for p, e in sorted(by_path.items())
    ]
    own.sort()
    digest = hashlib.sha1("\n".join(own).encode()).hexdigest()[:16] if own else None
    return rows, digest


def notes_json(notes: list[str]) -> str | None:
    return json.dumps(notes) if notes else None
