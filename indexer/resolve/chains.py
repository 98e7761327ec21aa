"""Resolve: per version, each registered parser name to the file that really implements it.

    registered class --(re-export)--> defining class --bases--> ... --> adapter made by make_adapters(P)
                                                                       --> P: the real parser class
    parser manager name check: `if tool_parser_name == "x": from m import Real`  --> Real
    class-based dispatch: `def unified_parser_cls(): return Real`              --> Real
    hard-coded era: `--tool-call-parser` choices + `if tool_parser == "x": ... = Cls` --> Cls

Every hop is kept with its file and line. A chain that cannot be followed is `unresolved` with the
reason, never a guess. Runs inside the version's build transaction.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.kinds import HopKind, ImplKind
from .classgraph import (
    ADAPTER_SUFFIXES,
    Cls,
    Hop,
    Version,
    base_links,
    class_at,
    find_symbol,
    mro,
    path_to,
    split,
)
from .logic import (
    Logic,
    Reach,
    behaviour,
    code_files,
    contract,
    delegates,
    delegation_note,
    notes_json,
    overridden,
    own_paths,
    rebinding_inits,
    standalone,
    streaming_of,
    where,
)


@dataclass
class Resolution:
    impl: ImplKind = ImplKind.STANDALONE
    hops: list[Hop] = field(default_factory=list)
    real: Hop | None = None
    adapter: str | None = None
    reexport: bool = False
    reason: str | None = None
    reg_key: tuple[str, str] | None = None  # (module, class) where the registered class is defined


def resolve_class(v: Version, module: str, cls: str) -> Resolution:
    res = Resolution()
    found = find_symbol(v, module, cls, res.hops)
    if found.is_binding and found.name.endswith(ADAPTER_SUFFIXES):
        res.reexport = bool(res.hops)
        res.reg_key = found.key
        return _adapter(v, res, found.module, found.name)
    if not found.is_class:
        res.impl, res.reason = (
            ImplKind.UNRESOLVED,
            found.reason if found.kind is None else f"{cls} in {module} is not a class",
        )
        return res
    res.reexport = bool(res.hops)
    res.reg_key = found.key
    reg = class_at(v, found.module, found.name)
    here = Hop(HopKind.CLASS, reg.name, reg.module, reg.path, reg.line)
    res.hops.append(here)
    # the first class of the resolution order (as Python reads `_parser_engine_cls`) declaring an engine
    # class or a class-based dispatch, or subclassing an adapter; the hops keep the bases up to it
    for k in mro(v, reg):
        if k.binding:
            continue
        km = v.module(k.module)
        if k.name in km.engines:
            engine, line = km.engines[k.name]
            res.hops.extend(_base_hops(v, reg, k))
            res.adapter = k.name
            res.hops.append(Hop(HopKind.ENGINE_ATTRIBUTE, k.name, k.module, k.path, line))
            full = engine if engine.startswith("vllm.") else _written_in(v, k.module, engine)
            return _to_real(v, res, full, ImplKind.UNIFIED, engine, k.module)
        if k.name in km.dispatch:
            real_written, line = km.dispatch[k.name]
            res.hops.extend(_base_hops(v, reg, k))
            res.hops.append(Hop(HopKind.UNIFIED_PARSER_CLS, k.name, k.module, k.path, line))
            return _to_real(
                v, res, _written_in(v, k.module, real_written), ImplKind.UNIFIED, real_written, k.module
            )
        for b in base_links(v, k):
            if b.target is None:
                continue
            if b.target[1].endswith(ADAPTER_SUFFIXES) or (
                b.symbol.is_binding and b.symbol.name.endswith(ADAPTER_SUFFIXES)
            ):
                res.hops.extend(_base_hops(v, reg, k))  # a base named like an adapter, or bound to one
                return _adapter(v, res, *b.target)  # follow its make_adapters()
    res.real = here
    return res


def _base_hops(v: Version, c: Cls, ancestor: Cls) -> list[Hop]:
    """The hops from a class up to an ancestor of its resolution order: each base's re-exports, then it."""
    out: list[Hop] = []
    for b in path_to(v, c, ancestor):
        out.extend(b.hops)
        out.append(Hop(HopKind.BASE, b.cls.name, b.cls.module, b.cls.path, b.cls.line))
    return out


def _adapter(v: Version, res: Resolution, bmod: str, bname: str) -> Resolution:
    res.adapter = bname
    hops: list[Hop] = []
    found = find_symbol(v, bmod, bname, hops)
    res.hops.extend(hops)
    if not found.is_binding:
        res.impl = ImplKind.UNRESOLVED
        res.reason = (
            found.reason
            if found.kind is None
            else f"adapter {bname} in {found.module} is a class, not made by make_adapters()"
        )
        return res
    amod, aname = found.key
    am = v.module(amod)
    parser, line = am.bindings[aname]
    res.hops.append(Hop(HopKind.ADAPTER, aname, amod, am.path, line))
    if not parser:
        res.impl, res.reason = (
            ImplKind.UNRESOLVED,
            f"make_adapters() argument in {amod} is not an imported or local class",
        )
        return res
    return _to_real(v, res, parser, ImplKind.UNIFIED)


def _written_in(v: Version, mod: str, written: str) -> str | None:
    """The full dotted name of a name written in a module (None: neither imported nor defined there)."""
    return v.resolve_in(mod, written) or (
        written if "." in written and written.split(".")[0] == "vllm" else None
    )


def _to_real(
    v: Version, res: Resolution, full: str | None, impl: ImplKind, written: str = "", mod: str = ""
) -> Resolution:
    if not full:
        res.impl, res.reason = (
            ImplKind.UNRESOLVED,
            f"{written} in {mod} is neither imported nor defined there",
        )
        return res
    rmod, rname = split(full, v)
    hops: list[Hop] = []
    found = find_symbol(v, rmod, rname, hops)
    res.hops.extend(hops)
    if not found.is_class:
        res.impl, res.reason = (
            ImplKind.UNRESOLVED,
            found.reason if found.kind is None else f"{rname} is not a class",
        )
        return res
    real = class_at(v, *found.key)
    res.real = Hop(HopKind.REAL, real.name, real.module, real.path, real.line)
    res.hops.append(res.real)
    res.impl = impl
    return res


@dataclass
class Named:
    """One registered name of a version while it is resolved."""

    kind: str
    name: str
    form: str
    registry_file: str
    registry_line: int
    module: str | None
    cls: str | None
    res: Resolution
    reg: Cls | None = None  # the registered class, where it is defined
    composed: Resolution | None = None  # what the parser manager composes for the name, if anything
    logic: Logic = field(default_factory=Logic)


def resolve_version(db, version_id: int, cache: dict | None = None) -> int:
    """Fill parser_map, parser_hops, parser_methods, parser_attrs and parser_code for one version; returns
    how many names it registers. `cache` (unit id -> facts) may be shared by the versions of one build."""
    conn = db.conn
    v = Version(conn, version_id, cache)
    names, n_regs = _registered_names(conn, v, version_id)
    own_keys = {c.key for n in names for c in list(n.logic.roles.values()) + [n.logic.real] if c is not None}
    parsers = own_paths(v, own_keys)
    reach = Reach(v, own_keys, parsers)  # what each definition reaches, shared by the names that run it
    rows = _Rows(version_id)
    for n in names:
        rows.add(v, n, own_keys, parsers, reach)
    _aliases_and_parents(v, rows.map)
    rows.write(conn)
    return n_regs


def _name_checks(conn, version_id: int) -> tuple[dict[tuple[str, str], list], list[tuple]]:
    """The serving code's checks of this version: by (kind, name), and those testing a class."""
    checks: dict[tuple[str, str], list] = {}
    class_checks: list[tuple] = []
    for kind, name, cls, module, path, line, fmod, tested in conn.execute(
        "select n.kind, n.name, n.class, n.module, f.path, n.line, u.module, n.tested from name_checks n"
        " join files f on f.unit_id = n.unit_id join units u on u.id = n.unit_id"
        " where f.version_id = ? and (n.name is not null or n.tested is not null)",
        [version_id],
    ):
        if name is not None:
            checks.setdefault((kind, name), []).append((cls, module, path, line, fmod))
        else:
            class_checks.append((kind, tested, (cls, module, path, line, fmod)))
    return checks, class_checks


def _registered_names(conn, v: Version, version_id: int) -> tuple[list[Named], int]:
    """Every registered name resolved to its classes and its logic decided; -> (names, registrations)."""
    regs = conn.execute(
        "select r.kind, r.name, r.module, r.class, r.form, f.path, r.line from registrations r"
        " join files f on f.unit_id = r.unit_id"
        " where f.version_id = ? order by r.kind, r.name, f.path, r.line",
        [version_id],
    ).fetchall()
    checks, class_checks = _name_checks(conn, version_id)
    names: list[Named] = []
    seen: set[tuple[str, str]] = set()
    for kind, name, module, cls, form, path, line in regs:
        if (kind, name) in seen:
            continue  # first registration wins (a leftover decorator duplicating a dict entry)
        seen.add((kind, name))
        if form == "cli-choices":
            res = (
                _name_check(v, checks[(kind, name)], form)
                if (kind, name) in checks
                else Resolution(
                    impl=ImplKind.UNRESOLVED,
                    reason="no branch of the serving code picks a class for this name",
                )
            )
        elif not module or not cls:
            res = Resolution(impl=ImplKind.UNRESOLVED, reason="the registration names no module or class")
        else:
            res = resolve_class(v, module, cls)
        n = Named(kind, name, form, path, line, module, cls, res)
        n.reg = class_at(v, *res.reg_key) if res.reg_key else None
        names.append(n)
    registered: dict[tuple[str, str], list[str]] = {}  # registered class -> the names registering it
    for n in names:
        if n.reg is not None and n.name not in registered.setdefault(n.reg.key, []):
            registered[n.reg.key].append(n.name)
    registered_keys = set(registered)
    _compositions(v, names, checks, class_checks)
    parser_keys = registered_keys | {
        (r.real.module, r.real.cls)
        for n in names
        for r in (n.res, n.composed)
        if r is not None and r.real is not None
    }
    for n in names:
        _decide(v, n, registered, parser_keys)
    return names, len(regs)


MAP_COLS = [
    "kind",
    "name",
    "registry_file",
    "registry_line",
    "reg_module",
    "reg_class",
    "reg_file",
    "reg_line",
    "form",
    "impl",
    "real_class",
    "real_module",
    "real_file",
    "real_line",
    "adapter",
    "alias_of",
    "stub",
    "reexport",
    "parent_class",
    "parent_file",
    "reason",
    "streaming",
    "streaming_class",
    "streaming_file",
    "streaming_line",
    "streaming_from",
    "wrapper_class",
    "wrapper_file",
    "wrapper_line",
    "notes",
    "code_sig",
]


class _Rows:
    """The rows of one version's resolved tables, a name at a time, then written."""

    def __init__(self, version_id: int):
        self.version_id = version_id
        self.map: list[dict] = []
        self.hops, self.methods, self.attrs, self.code, self.over = [], [], [], [], []

    def add(self, v: Version, n: Named, own_keys: set, parsers: set[str], reach: Reach) -> None:
        res, logic = n.res, n.logic
        reg_mod = v.module(n.module) if n.module else None
        reg_file = reg_mod.path if reg_mod else None
        reg_line = next((h.line for h in res.hops if h.file == reg_file), None) if reg_file else None
        real, wrapper = logic.real, logic.roles.get("wrapper")
        files, sig = code_files(v, logic, own_keys, n.kind, parsers, reach)
        self.map.append(
            {
                "kind": n.kind,
                "name": n.name,
                "registry_file": n.registry_file,
                "registry_line": n.registry_line,
                "reg_module": n.module,
                "reg_class": n.cls,
                "reg_file": reg_file,
                "reg_line": reg_line,
                "form": n.form,
                "impl": res.impl,
                "real_class": real.name if real else None,
                "real_module": real.module if real else None,
                "real_file": real.path if real else None,
                "real_line": real.line if real else None,
                "adapter": res.adapter,
                "stub": int(reg_mod.n_methods == 0) if reg_mod else None,
                "reexport": int(res.reexport),
                "reason": res.reason,
                "streaming": logic.streaming,
                "streaming_class": logic.streaming_cls.name if logic.streaming_cls else None,
                "streaming_file": logic.streaming_cls.path if logic.streaming_cls else None,
                "streaming_line": logic.streaming_line,
                "streaming_from": ", ".join(logic.streaming_from) or None,
                "wrapper_class": wrapper.name if wrapper else None,
                "wrapper_file": wrapper.path if wrapper else None,
                "wrapper_line": wrapper.line if wrapper else None,
                "notes": notes_json(logic.notes),
                "code_sig": sig,
            }
        )
        hops = [Hop(HopKind.REGISTERED, n.cls, n.module, n.registry_file, n.registry_line)] + res.hops
        self.hops.extend(
            (self.version_id, n.kind, n.name, i, h.hop, h.cls, h.module, h.file, h.line, h.end_line, h.detail)
            for i, h in enumerate(hops)
        )
        key = (self.version_id, n.kind, n.name)
        self.methods.extend((*key, *(m[c] for c in METHOD_COLS)) for m in logic.methods)
        self.attrs.extend((*key, *(a[c] for c in ATTR_COLS)) for a in logic.attrs)
        self.over.extend((*key, *(o[c] for c in OVER_COLS)) for o in logic.overridden)
        self.code.extend((*key, f["path"], f["roles"], f["shared"], f["pieces"]) for f in files)

    def write(self, conn) -> None:
        version_id = self.version_id
        for table in RESOLVED_TABLES:
            conn.execute(f"delete from {table} where version_id = ?", [version_id])
        conn.executemany(
            f"insert into parser_map(version_id, {', '.join(MAP_COLS)}) values (?{', ?' * len(MAP_COLS)})",
            [(version_id, *[r.get(c) for c in MAP_COLS]) for r in self.map],
        )
        conn.executemany(
            "insert into parser_hops(version_id, kind, name, step, hop, class, module, file, line, end_line,"
            " detail) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            self.hops,
        )
        conn.executemany(
            f"insert or ignore into parser_methods(version_id, kind, name, {', '.join(METHOD_COLS)})"
            f" values (?, ?, ?{', ?' * len(METHOD_COLS)})",
            self.methods,
        )
        conn.executemany(
            f"insert or ignore into parser_attrs(version_id, kind, name, {', '.join(ATTR_COLS)})"
            f" values (?, ?, ?{', ?' * len(ATTR_COLS)})",
            self.attrs,
        )
        conn.executemany(
            "insert into parser_code(version_id, kind, name, path, roles, shared, pieces)"
            " values (?, ?, ?, ?, ?, ?, ?)",
            self.code,
        )
        conn.executemany(
            f"insert or ignore into parser_overridden(version_id, kind, name, {', '.join(OVER_COLS)})"
            f" values (?, ?, ?{', ?' * len(OVER_COLS)})",
            self.over,
        )


RESOLVED_TABLES = (
    "parser_map",
    "parser_hops",
    "parser_methods",
    "parser_attrs",
    "parser_code",
    "parser_overridden",
)


def copy_resolution(conn, donor_id: int, version_id: int) -> int:
    """Give a version the resolution of another whose Python files are the same units (the only inputs
    resolve_version reads): its rows copied under the version's id. -> how many names it registers."""
    for table in RESOLVED_TABLES:
        cols = [r[1] for r in conn.execute(f"pragma table_info({table})") if r[1] != "version_id"]
        conn.execute(f"delete from {table} where version_id = ?", [version_id])
        conn.execute(
            f"insert into {table}(version_id, {', '.join(cols)}) select ?, {', '.join(cols)}"
            f" from {table} where version_id = ?",
            [version_id, donor_id],
        )
    return conn.execute(
        "select count(*) from registrations r join files f on f.unit_id = r.unit_id where f.version_id = ?",
        [version_id],
    ).fetchone()[0]


METHOD_COLS = (
    "role",
    "method",
    "defining_class",
    "module",
    "file",
    "line",
    "end_line",
    "body",
    "own",
    "calls_super",
    "delegates",
)
ATTR_COLS = ("role", "attribute", "value", "defining_class", "file", "line", "own", "set_by", "condition")
OVER_COLS = ("role", "class", "attribute", "by_class", "by_file", "by_line", "by_method")


def _compositions(v: Version, names: list[Named], checks: dict, class_checks: list) -> None:
    """What the parser manager composes for each name: a class its name check (or class check) picks, or
    the unified registry's parser of the same name (which the manager prefers, v0.16.0 - v0.22.x)."""
    unified = {n.name: n for n in names if n.kind == "engine" and n.reg is not None}
    for n in names:
        if n.form == "cli-choices":
            continue
        if (n.kind, n.name) in checks:
            n.composed = _name_check(v, checks[(n.kind, n.name)], n.form)
            continue
        if n.reg is not None and n.kind in ("tool", "reasoning"):
            order = {_norm(c.name) for c in mro(v, n.reg)}
            pick = next(
                (p for kind, tested, p in class_checks if kind == n.kind and _norm(tested) in order), None
            )
            if pick is not None:
                n.composed = _name_check(v, [pick], n.form, hop=HopKind.CLASS_CHECK)
                continue
            u = unified.get(n.name)
            if u is not None and u.res.impl != ImplKind.UNRESOLVED:
                n.composed = Resolution(
                    impl=ImplKind.NAME_CHECK,
                    hops=[Hop(HopKind.UNIFIED_REGISTRY, u.cls, u.module, u.registry_file, u.registry_line)],
                    real=Hop(HopKind.REAL, u.reg.name, u.reg.module, u.reg.path, u.reg.line),
                    reg_key=u.reg.key,
                )
                n.composed.hops.append(n.composed.real)


def _norm(name: str) -> str:
    return name.replace("_", "").lower()


def _decide(v: Version, n: Named, registered: dict, parser_keys: set) -> None:
    """Apply the rule of indexer/logic.py: the class whose code does the parsing, and the hops to it."""
    logic, res, comp = n.logic, n.res, n.composed
    composed = class_at(v, comp.real.module, comp.real.cls) if comp is not None and comp.real else None
    if n.form == "cli-choices":  # the hard-coded era: the class the serving code picks
        picked = class_at(v, res.real.module, res.real.cls) if res.real else None
        if picked is not None:
            logic.roles["registered"] = picked
            standalone(v, n.kind, picked, registered, logic, n.name)
            if logic.inherited_from is not None:
                logic.rebinds = rebinding_inits(v, picked, logic.inherited_from, parser_keys)
                res.hops[len(res.hops) - 1 : len(res.hops) - 1] = _init_hops(logic)  # before the real hop
    elif composed is not None and comp.impl != ImplKind.UNRESOLVED and not delegates(v, composed, n.kind):
        n.res = res = _registered_then(res, comp)  # the composed class does the work itself
        if n.reg is not None:
            logic.roles["registered"] = n.reg
        logic.roles["composed"] = composed
        logic.real = composed
        logic.streaming = streaming_of(v, composed, "engine", logic)
    elif res.impl == ImplKind.UNIFIED:
        engine = class_at(v, res.real.module, res.real.cls)
        logic.roles.update({"registered": n.reg, "engine": engine})
        logic.real = engine
        logic.streaming = streaming_of(v, engine, n.kind, logic)
        if composed is not None:
            logic.roles["wrapper"] = composed
            logic.notes.append(
                f"the parser manager composes {composed.name} ({where(composed)}) around it; the"
                f" engine class declared on the registered adapter, {engine.name}, does the parsing"
            )
            res.hops = _composition_hops(comp, composed) + res.hops
    elif comp is not None and comp.impl == ImplKind.UNRESOLVED:
        n.res = comp
        if n.reg is not None:
            logic.roles["registered"] = n.reg
    elif res.impl != ImplKind.UNRESOLVED and n.reg is not None:
        logic.roles["registered"] = n.reg
        standalone(v, n.kind, n.reg, registered, logic, n.name)
        if logic.inherited_from is not None:
            d = logic.inherited_from
            logic.rebinds = rebinding_inits(v, n.reg, d, parser_keys)
            res.hops.extend(_init_hops(logic))
            res.hops.append(Hop(HopKind.REAL, d.name, d.module, d.path, d.line))
        if composed is not None:
            logic.roles["wrapper"] = composed
            logic.notes.append(
                f"the parser manager composes {composed.name} ({where(composed)}), a wrapper that"
                f" hands extraction to the registered parser"
            )
            res.hops = _composition_hops(comp, composed) + res.hops
        if n.kind == "engine" and delegates(v, n.reg, "engine") and (note := delegation_note(v, n.reg)):
            logic.notes.append(note)
    for role, c in logic.roles.items():
        if c is not None:
            logic.methods.extend(contract(v, role, c, n.kind))
            logic.attrs.extend(behaviour(v, role, c, parser_keys))
            logic.overridden.extend(overridden(v, role, c))
    logic.roles = {r: c for r, c in logic.roles.items() if c is not None}


def _init_hops(logic: Logic) -> list[Hop]:
    """An `init` hop for each overriding __init__ that is part of where the logic is, with its lines."""
    return [
        Hop(HopKind.INIT, r.cls.name, r.cls.module, r.cls.path, r.line, r.end_line, " ".join(r.attributes))
        for r in logic.rebinds
    ]


def _registered_then(reg: Resolution, comp: Resolution) -> Resolution:
    """The composition, after the registered class's own hops (the re-exports to it and its class hop: the
    registered class keeps its file and line, the chain its class hop) and with its re-export flag."""
    lead: list[Hop] = []
    for h in reg.hops:
        if h.hop not in (HopKind.REEXPORT, HopKind.ALIAS, HopKind.CLASS):
            break
        lead.append(h)
        if h.hop == HopKind.CLASS:
            break
    comp.hops = lead + comp.hops
    comp.reexport, comp.reg_key = reg.reexport, reg.reg_key or comp.reg_key
    return comp


def _composition_hops(comp: Resolution, wrapper: Cls) -> list[Hop]:
    """The composition's hops with its class shown as a wrapper (where the wrapper class is defined)."""
    return [h for h in comp.hops if h.hop != HopKind.REAL] + [
        Hop(HopKind.WRAPPER, wrapper.name, wrapper.module, wrapper.path, wrapper.line)
    ]


def _name_check(v: Version, picks: list, form: str, hop: HopKind = HopKind.NAME_CHECK) -> Resolution:
    cls, module, path, line, fmod = picks[0]
    res = Resolution(impl=ImplKind.NAME_CHECK if form != "cli-choices" else ImplKind.DISPATCH)
    res.hops.append(Hop(hop if form != "cli-choices" else HopKind.DISPATCH, cls, fmod, path, line))
    full = _written_in(v, fmod, cls) if module is None else f"{module}.{cls}"
    return _to_real(v, res, full, res.impl, cls, fmod)


def _aliases_and_parents(v: Version, rows: list[dict]) -> None:
    by_class: dict[tuple, list[str]] = {}
    for r in rows:
        if r["reg_class"] and r["reg_module"]:
            by_class.setdefault((r["kind"], r["reg_module"], r["reg_class"]), []).append(r["name"])
    parsers = {(r["real_module"], r["real_class"]) for r in rows if r["real_class"]}
    parsers |= {(r["reg_module"], r["reg_class"]) for r in rows if r["reg_class"]}
    for r in rows:
        names = by_class.get((r["kind"], r["reg_module"], r["reg_class"]), [])
        others = sorted(n for n in names if n != r["name"])
        r["alias_of"] = ", ".join(others) or None
        if r["real_class"]:
            parent = _parent_parser(v, r["real_module"], r["real_class"], parsers)
            if parent:
                r["parent_class"], r["parent_file"] = parent


def _parent_parser(v: Version, module: str, cls: str, parsers: set) -> tuple[str, str] | None:
    """The first ancestor of a class in its resolution order that is itself some name's parser class in
    this version."""
    c = class_at(v, module, cls)
    found = next((k for k in mro(v, c)[1:] if not k.binding and k.key in parsers), None) if c else None
    return (found.name, found.path) if found else None
