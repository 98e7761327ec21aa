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

ADAPTER_SUFFIXES = ("ParserToolAdapter", "ParserReasoningAdapter")
ENGINE_ATTR = "_parser_engine_cls"  # an adapter declared by hand names its parser engine class here
MAX_HOPS = 12


@dataclass
class Hop:
    hop: str
    cls: str | None
    module: str | None
    file: str | None
    line: int | None


@dataclass
class Resolution:
    impl: str = "standalone"
    hops: list[Hop] = field(default_factory=list)
    real: Hop | None = None
    adapter: str | None = None
    reexport: bool = False
    reason: str | None = None


class Version:
    """Lazy, cached views of one version's facts, by module."""

    def __init__(self, conn, version_id: int, cache: dict | None = None):
        self.conn, self.vid = conn, version_id
        self.cache = {} if cache is None else cache  # unit id -> facts; units never change, so shareable
        self.files = {m: (p, u) for m, p, u in conn.execute(
            "select u.module, f.path, u.id from files f join units u on u.id = f.unit_id"
            " where f.version_id = ? and f.path like '%.py'", [version_id])}
        self._mods: dict[str, dict] = {}

    def module(self, module: str) -> dict | None:
        if module not in self.files:
            return None
        if module not in self._mods:
            path, unit = self.files[module]
            if unit not in self.cache:
                self.cache[unit] = self._load(path, unit)
            self._mods[module] = self.cache[unit]
        return self._mods[module]

    def _load(self, path: str, unit: int) -> dict:
        """The facts of one unit that resolution reads, by name."""
        c = self.conn
        classes = {q: {"line": ln, "no_methods": nm} for q, ln, nm in c.execute(
            "select qualname, line, no_methods from classes where unit_id = ?", [unit])}
        bases: dict[str, list] = {}
        for cls, written, resolved in c.execute(
                "select class, written, resolved from bases where unit_id = ? and keyword is null order by pos",
                [unit]):
            bases.setdefault(cls, []).append((written, resolved))
        imports = {}
        for mod, name, alias, ln in c.execute(
                "select module, name, alias, line from imports where unit_id = ? and name is not null"
                " and star = 0 and in_function is null", [unit]):
            imports[alias or name] = (mod, name, ln)
        aliases = {n: (r, w, ln) for n, r, w, ln in c.execute(
            "select name, resolved, written, line from aliases where unit_id = ?", [unit])}
        bindings = {a: (p, ln) for a, p, ln in c.execute(
            "select adapter, parser, line from adapter_bindings where unit_id = ?", [unit])}
        dispatch = {}
        for cls, owner, ln in c.execute(
                "select class, owner, line from name_checks where unit_id = ? and name is null", [unit]):
            dispatch[owner] = (cls, ln)
        engines = {cls: (res or val, ln) for cls, val, res, ln in c.execute(
            "select class, value, resolved, line from class_attrs where unit_id = ? and name = ?"
            " and value_kind = 'name'", [unit, ENGINE_ATTR])}
        n_methods = c.execute("select count(*) from methods where unit_id = ?", [unit]).fetchone()[0]
        return {"path": path, "unit": unit, "classes": classes, "bases": bases, "imports": imports,
                "aliases": aliases, "bindings": bindings, "dispatch": dispatch, "engines": engines,
                "n_methods": n_methods}

    def resolve_in(self, module: str, dotted: str) -> str | None:
        """What a name written in a module means (through its imports, else a class of its own)."""
        m = self.module(module)
        if m is None:
            return None
        head, _, rest = dotted.partition(".")
        if head in m["imports"]:
            mod, name, _ = m["imports"][head]
            return f"{mod}.{name}" + ("." + rest if rest else "")
        if head in m["classes"]:
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


def find_symbol(v: Version, module: str, name: str, hops: list[Hop], depth: int = 0):
    """Follow re-exports to where `name` is defined: ("class"|"binding", module, name) or (None, reason)."""
    m = v.module(module)
    if m is None:
        return None, f"module {module} is not a file of this version in scope"
    if name in m["classes"]:
        return "class", module, name
    if name in m["bindings"]:
        return "binding", module, name
    if name in m["aliases"] and depth < MAX_HOPS:
        resolved, written, line = m["aliases"][name]
        if not resolved:
            return None, f"{name} in {module} is an alias of {written}, which is neither imported nor defined there"
        hops.append(Hop("alias", name, module, m["path"], line))
        return find_symbol(v, *split(resolved, v), hops, depth + 1)
    if name in m["imports"] and depth < MAX_HOPS:
        src_mod, src_name, line = m["imports"][name]
        target = src_mod if src_mod in v.files else None
        if target is None:
            sub = f"{src_mod}.{src_name}"
            if sub in v.files:  # `from pkg import submodule`
                return None, f"{module} imports module {sub}, not a class"
            return None, f"{name} is imported in {module} from {src_mod}, which is not a file of this version in scope"
        hops.append(Hop("reexport", name, module, m["path"], line))
        return find_symbol(v, target, src_name, hops, depth + 1)
    return None, f"{name} is not defined in {module}"


def resolve_class(v: Version, module: str, cls: str) -> Resolution:
    res = Resolution()
    found = find_symbol(v, module, cls, res.hops)
    if found[0] == "binding" and found[2].endswith(ADAPTER_SUFFIXES):
        res.reexport = bool(res.hops)
        return _adapter(v, res, found[1], found[2])
    if found[0] != "class":
        res.impl, res.reason = "unresolved", found[1] if found[0] is None else f"{cls} in {module} is not a class"
        return res
    _, mod, name = found
    res.reexport = bool(res.hops)
    m = v.module(mod)
    here = Hop("class", name, mod, m["path"], m["classes"][name]["line"])
    res.hops.append(here)
    # walk the bases breadth-first for an adapter or a class-based dispatch; keep only the path to it
    queue, seen = [(mod, name, [])], set()
    while queue and len(seen) < MAX_HOPS * 4:
        cmod, cname, path = queue.pop(0)
        if (cmod, cname) in seen:
            continue
        seen.add((cmod, cname))
        cm = v.module(cmod)
        if cname in cm["engines"]:
            engine, line = cm["engines"][cname]
            res.hops.extend(path)
            res.adapter = cname
            res.hops.append(Hop("engine attribute", cname, cmod, cm["path"], line))
            full = engine if engine.startswith("vllm.") else _written_in(v, cmod, engine)
            return _to_real(v, res, full, "unified", engine, cmod)
        if cname in cm["dispatch"]:
            real_written, line = cm["dispatch"][cname]
            res.hops.extend(path)
            res.hops.append(Hop("unified_parser_cls", cname, cmod, cm["path"], line))
            return _to_real(v, res, _written_in(v, cmod, real_written), "unified", real_written, cmod)
        for written, resolved in cm["bases"].get(cname, []):
            resolved = resolved or v.resolve_in(cmod, written.split("[")[0])
            if not resolved:
                continue
            bmod, bname = split(resolved, v)
            sub_hops: list[Hop] = []
            found = None if bname.endswith(ADAPTER_SUFFIXES) else find_symbol(v, bmod, bname, sub_hops)
            if found is None or (found[0] == "binding" and found[2].endswith(ADAPTER_SUFFIXES)):
                res.hops.extend(path)  # a base named like an adapter, or bound to one: follow its make_adapters()
                return _adapter(v, res, bmod, bname)
            if found[0] == "class":
                bm = v.module(found[1])
                hop = Hop("base", found[2], found[1], bm["path"], bm["classes"][found[2]]["line"])
                queue.append((found[1], found[2], path + sub_hops + [hop]))
    res.real = here
    return res


def _adapter(v: Version, res: Resolution, bmod: str, bname: str) -> Resolution:
    res.adapter = bname
    hops: list[Hop] = []
    found = find_symbol(v, bmod, bname, hops)
    res.hops.extend(hops)
    if found[0] != "binding":
        res.impl = "unresolved"
        res.reason = (found[1] if found[0] is None else
                      f"adapter {bname} in {found[1]} is a class, not made by make_adapters()")
        return res
    _, amod, aname = found
    am = v.module(amod)
    parser, line = am["bindings"][aname]
    res.hops.append(Hop("adapter", aname, amod, am["path"], line))
    if not parser:
        res.impl, res.reason = "unresolved", f"make_adapters() argument in {amod} is not an imported or local class"
        return res
    return _to_real(v, res, parser, "unified")


def _written_in(v: Version, mod: str, written: str) -> str | None:
    """The full dotted name of a name written in a module (None: neither imported nor defined there)."""
    return v.resolve_in(mod, written) or (written if "." in written and written.split(".")[0] == "vllm" else None)


def _to_real(v: Version, res: Resolution, full: str | None, impl: str, written: str = "", mod: str = "") -> Resolution:
    if not full:
        res.impl, res.reason = "unresolved", f"{written} in {mod} is neither imported nor defined there"
        return res
    rmod, rname = split(full, v)
    hops: list[Hop] = []
    found = find_symbol(v, rmod, rname, hops)
    res.hops.extend(hops)
    if found[0] != "class":
        res.impl, res.reason = "unresolved", found[1] if found[0] is None else f"{rname} is not a class"
        return res
    rm = v.module(found[1])
    res.real = Hop("real", found[2], found[1], rm["path"], rm["classes"][found[2]]["line"])
    res.hops.append(res.real)
    res.impl = impl
    return res


def resolve_version(db, version_id: int, cache: dict | None = None) -> int:
    """Fill parser_map and parser_hops for one version; returns how many names it registers.

    `cache` (unit id -> facts) may be shared by the versions of one build."""
    conn = db.conn
    v = Version(conn, version_id, cache)
    regs = conn.execute(
        "select r.kind, r.name, r.module, r.class, r.form, f.path, r.line, u.module from registrations r"
        " join files f on f.unit_id = r.unit_id join units u on u.id = r.unit_id"
        " where f.version_id = ? order by r.kind, r.name, f.path, r.line", [version_id]).fetchall()
    checks: dict[tuple[str, str], list] = {}
    for kind, name, cls, module, path, line, fmod in conn.execute(
            "select n.kind, n.name, n.class, n.module, f.path, n.line, u.module from name_checks n"
            " join files f on f.unit_id = n.unit_id join units u on u.id = n.unit_id"
            " where f.version_id = ? and n.name is not null", [version_id]):
        checks.setdefault((kind, name), []).append((cls, module, path, line, fmod))
    rows, hop_rows, chosen = [], [], {}
    for kind, name, module, cls, form, path, line, _fmod in regs:
        key = (kind, name)
        if key in chosen:  # first registration wins (a leftover decorator duplicating a dict entry)
            continue
        chosen[key] = True
        reg = Hop("registered", cls, module, path, line)
        if (kind, name) in checks:
            res = _name_check(v, checks[(kind, name)], form)
        elif form == "cli-choices":
            res = Resolution(impl="unresolved", reason="no branch of the serving code picks a class for this name")
        elif not module or not cls:
            res = Resolution(impl="unresolved", reason="the registration names no module or class")
        else:
            res = resolve_class(v, module, cls)
        hops = [reg] + res.hops
        reg_mod = v.module(module) if module else None
        reg_file = reg_mod["path"] if reg_mod else None
        reg_line = next((h.line for h in res.hops if h.file == reg_file), None) if reg_file else None
        rows.append({
            "kind": kind, "name": name, "registry_file": path, "registry_line": line, "reg_module": module,
            "reg_class": cls, "reg_file": reg_file, "reg_line": reg_line, "form": form, "impl": res.impl,
            "real_class": res.real.cls if res.real else None, "real_module": res.real.module if res.real else None,
            "real_file": res.real.file if res.real else None, "real_line": res.real.line if res.real else None,
            "adapter": res.adapter, "stub": int(reg_mod["n_methods"] == 0) if reg_mod else None,
            "reexport": int(res.reexport), "reason": res.reason,
        })
        hop_rows.extend((version_id, kind, name, i, h.hop, h.cls, h.module, h.file, h.line)
                        for i, h in enumerate(hops))
    _aliases_and_parents(v, rows)
    cols = ["kind", "name", "registry_file", "registry_line", "reg_module", "reg_class", "reg_file", "reg_line",
            "form", "impl", "real_class",
            "real_module", "real_file", "real_line", "adapter", "alias_of", "stub", "reexport", "parent_class",
            "parent_file", "reason"]
    conn.execute("delete from parser_map where version_id = ?", [version_id])
    conn.execute("delete from parser_hops where version_id = ?", [version_id])
    conn.executemany(f"insert into parser_map(version_id, {', '.join(cols)}) values (?{', ?' * len(cols)})",
                     [(version_id, *[r.get(c) for c in cols]) for r in rows])
    conn.executemany("insert into parser_hops(version_id, kind, name, step, hop, class, module, file, line)"
                     " values (?, ?, ?, ?, ?, ?, ?, ?, ?)", hop_rows)
    return len(regs)


def _name_check(v: Version, picks: list, form: str) -> Resolution:
    cls, module, path, line, fmod = picks[0]
    res = Resolution(impl="name-check" if form != "cli-choices" else "dispatch")
    res.hops.append(Hop("name-check" if form != "cli-choices" else "dispatch", cls, fmod, path, line))
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
    """The nearest ancestor of a class that is itself some name's parser class in this version."""
    queue, seen = [(module, cls)], set()
    while queue:
        mod, name = queue.pop(0)
        if (mod, name) in seen or len(seen) > MAX_HOPS:
            continue
        seen.add((mod, name))
        m = v.module(mod)
        if m is None:
            continue
        for written, resolved in m["bases"].get(name, []):
            resolved = resolved or v.resolve_in(mod, written.split("[")[0])
            if not resolved:
                continue
            found = find_symbol(v, *split(resolved, v), [])
            if found[0] != "class":
                continue
            if (found[1], found[2]) in parsers:
                return found[2], v.module(found[1])["path"]
            queue.append((found[1], found[2]))
    return None
