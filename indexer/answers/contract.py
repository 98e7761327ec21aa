"""The parser contract of a version, and `diff A B --contract`: what a plugin depends on, and how it changed.

The contract of a version, read from the facts the build recorded (signatures, parser calls, classes,
imports) and the class graph:

- bases: the classes plugins derive from. A class in the resolution order of a registered name's class that
  no name registers, in a file holding no name's class, that two names derive from or that is the root of
  one's hierarchy (`ToolParser`, `ReasoningParser`, a generic thinking-tags base, the engine's `Parser`,
  `ParserEngine` and its generic adapters), with their public methods (and `__init__`) as written and
  their class attributes;
- managers: the classes defining `register_module` / `register_lazy_module` (the registration API);
- helpers: the public functions of the `utils` modules of the parser packages (the directories holding a
  registry or a registered class);
- types: every name the bases' and helpers' annotations use that their file imports from vLLM (or defines),
  with the module it is imported from;
- calls: how vLLM's code in the scope constructs parsers and calls their methods (parser_calls facts).

The diff compares two contracts by name (classes, methods, parameters, attributes, helpers, types, call
shapes) and types each change as griffe's API breakage check does (parameter added as required, removed,
moved, kind changed, default changed, now required; return type changed; object removed; attribute value
changed; base removed), with the kinds a plugin author also needs: a parameter added with a default (it
breaks overrides: vLLM may pass it), a parameter renamed, a class or helper moved to another module, a type
imported from another module, serving's constructions and calls changed. `breaking` is said from a
plugin's side: it derives from the bases and overrides their methods, and calls the managers and helpers.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict

from ..resolve.classgraph import Cls, Version, bases, class_at, find_symbol, lookup, methods, mro, split
from .contract_model import (
    Attribute,
    CallSite,
    Contract,
    ContractChange,
    ContractClass,
    ContractDiff,
    ImportPath,
    Param,
    Signature,
    TypeRef,
)
from .versions import require

REGISTER = ("register_module", "register_lazy_module")
DUNDERS = (
    "__init__",
    "__init_subclass__",
    "__call__",
)  # the dunder methods that are part of a class's contract
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
POSITIONAL = ("positional-only", "positional-or-keyword")
SIDES = ("a", "b")


def public(name: str) -> bool:
    return not name.startswith("_") or name in DUNDERS


# -- one version ----------------------------------------------------------------------------------------------


class _Facts:
    """The signature rows of one version's files, read once a unit."""

    def __init__(self, db, v: Version):
        self.db, self.v = db, v
        self._rows: dict[int, list[dict]] = {}
        self._imports: dict[int, dict[str, tuple[str, int]]] = {}

    def unit(self, module: str) -> tuple[str, int] | None:
        return self.v.files.get(module)

    def rows(self, module: str) -> list[dict]:
        found = self.unit(module)
        if found is None:
            return []
        unit = found[1]
        if unit not in self._rows:
            self._rows[unit] = [
                dict(r)
                for r in self.db.query(
                    "select kind, class, name, line, params, returns, decorators, annotation, value from signatures"
                    " where unit_id = ? order by line",
                    [unit],
                )
            ]
        return self._rows[unit]

    def imports(self, module: str) -> dict[str, tuple[str, int]]:
        """Name bound at module level (or under `if TYPE_CHECKING:`) -> (the dotted name it binds, line)."""
        found = self.unit(module)
        if found is None:
            return {}
        unit = found[1]
        if unit not in self._imports:
            out: dict[str, tuple[str, int]] = {}
            for mod, name, alias, line in self.db.execute(
                "select module, name, alias, line from imports where unit_id = ? and in_function is null"
                " and star = 0 order by line",
                [unit],
            ):
                if name is None:
                    out.setdefault(alias or mod.split(".")[0], (mod if alias else mod.split(".")[0], line))
                else:
                    out.setdefault(alias or name, (f"{mod}.{name}", line))
            self._imports[unit] = out
        return self._imports[unit]


def params_of(raw: str | None) -> list[Param]:
    return [Param(*p) for p in json.loads(raw)] if raw else []


def signature_text(params: list[Param], returns: str | None) -> str:
    parts: list[str] = []
    keyword_marker = any(p.kind == "keyword-only" for p in params) and not any(
        p.kind == "var-positional" for p in params
    )
    for i, p in enumerate(params):
        if p.kind == "keyword-only" and keyword_marker and (i == 0 or params[i - 1].kind != "keyword-only"):
            parts.append("*")
        star = "*" if p.kind == "var-positional" else "**" if p.kind == "var-keyword" else ""
        text = star + p.name + (f": {p.annotation}" if p.annotation else "")
        if p.default is not None:
            text += f" = {p.default}" if p.annotation else f"={p.default}"
        parts.append(text)
        if p.kind == "positional-only" and (i + 1 == len(params) or params[i + 1].kind != "positional-only"):
            parts.append("/")
    return f"({', '.join(parts)})" + (f" -> {returns}" if returns else "")


def _signature(row: dict, module: str, path: str, body: str | None = None) -> Signature:
    params = params_of(row["params"])
    return Signature(
        name=row["name"],
        class_=row["class"],
        module=module,
        file=path,
        line=row["line"],
        params=params,
        returns=row["returns"],
        decorators=json.loads(row["decorators"] or "[]"),
        body=body,
        text=signature_text(params, row["returns"]),
    )


def _registered(db, vid: int, v: Version) -> tuple[list[tuple[str, Cls]], set, set]:
    """(kind, class) of every registered name's registered and real class; their keys; their files."""
    found, keys = [], set()
    for kind, rmod, rcls, qmod, qcls in db.execute(
        "select kind, reg_module, reg_class, real_module, real_class from parser_map where version_id = ?",
        [vid],
    ):
        for mod, name in ((rmod, rcls), (qmod, qcls)):
            if mod and name:
                c = class_at(v, mod, name) or lookup(v, f"{mod}.{name}")
                if c is not None:
                    found.append((kind, c))
                    keys.add(c.key)
    files = {c.path for _, c in found}
    return found, keys, files


def contract(db, version: str) -> Contract:
    version = require(db, version)
    vid = db.execute("select id from versions where label = ?", [version]).fetchone()[0]
    v = Version(db.conn, vid)
    facts = _Facts(db, v)
    registered, own, own_files = _registered(db, vid, v)
    derived: dict[Cls, set] = defaultdict(set)
    for kind, c in registered:
        for b in mro(v, c)[1:]:
            if not b.binding and b.key not in own and b.path not in own_files:
                derived[b].add((kind, c.key))
    classes = [
        _contract_class(facts, b, "base", sorted({k for k, _ in ns}), len({n for _, n in ns}))
        for b, ns in derived.items()
        if len({n for _, n in ns}) >= 2 or not bases(v, b)
    ]
    for module, qual in _managers(db, vid):
        c = class_at(v, module, qual)
        if c is not None:
            classes.append(_contract_class(facts, c, "manager", [], 0))
    classes.sort(key=lambda k: (k.role != "base", k.file, k.line))
    helpers = _helpers(db, vid, facts)
    providers = _Providers(db, vid, v)
    for k in classes:
        k.import_paths = providers.of(k.name, k.module, k.file, k.line, is_class=True)
    for h in helpers:
        h.import_paths = providers.of(h.name, h.module, h.file, h.line, is_class=False)
    calls, notes = _calls(db, version)
    return Contract(
        version=version,
        classes=classes,
        helpers=helpers,
        types=_types(facts, classes, helpers),
        calls=calls,
        notes=notes,
    )


def _contract_class(facts: _Facts, c: Cls, role: str, kinds: list[str], derived: int) -> ContractClass:
    own = methods(facts.v, c)
    sigs, attrs = [], []
    for r in facts.rows(c.module):
        if r["class"] != c.name or not public(r["name"]):
            continue
        if r["kind"] == "method":
            if any(s.name == r["name"] for s in sigs):
                continue  # a second definition (a property's setter, an overload): the first is the contract's
            sigs.append(_signature(r, c.module, c.path, own.get(r["name"], {}).get("body")))
        elif r["kind"] == "attribute" and not r["name"].startswith("_"):
            attrs.append(
                Attribute(
                    name=r["name"], annotation=r["annotation"], value=r["value"], file=c.path, line=r["line"]
                )
            )
    written = [w for w, _ in facts.v.module(c.module).bases.get(c.name, [])]
    return ContractClass(
        name=c.name,
        module=c.module,
        file=c.path,
        line=c.line,
        role=role,
        kinds=kinds,
        derived=derived,
        bases=written,
        methods=sigs,
        attributes=attrs,
    )


class _Providers:
    """The packages (`__init__.py` files in the scope) that provide a name: by a module-level import that
    leads to it, or by a module-level __getattr__ importing it on demand (the deprecation shim of a moved
    package)."""

    def __init__(self, db, vid: int, v: Version):
        self.v = v
        self.rows: dict[str, list[tuple]] = defaultdict(list)
        for module, path, line, src, name, alias, fn in db.execute(
            "select u.module, f.path, i.line, i.module, i.name, i.alias, i.in_function from imports i"
            " join files f on f.unit_id = i.unit_id join units u on u.id = i.unit_id where f.version_id = ?"
            " and f.path like '%/__init__.py' and i.name is not null and i.star = 0 and i.type_checking = 0"
            " and (i.in_function is null or i.in_function = '__getattr__') order by f.path, i.line",
            [vid],
        ):
            self.rows[alias or name].append((module, path, line, src, name, fn))

    def of(self, name: str, module: str, path: str, line: int, is_class: bool) -> list[ImportPath]:
        out = [ImportPath(module=module, how="defined", file=path, line=line)]
        for pkg, file, at, src, real, fn in self.rows.get(name, []):
            if pkg == module or any(p.module == pkg for p in out):
                continue
            if is_class:
                found = find_symbol(self.v, *split(f"{src}.{real}", self.v), [])
                ok = found.is_class and found.key == (module, name)
            else:
                ok = src == module and real == name
            if ok:
                out.append(ImportPath(module=pkg, how="getattr" if fn else "re-export", file=file, line=at))
        return out


def _managers(db, vid: int) -> list[tuple[str, str]]:
    return [
        tuple(r)
        for r in db.execute(
            "select distinct u.module, m.class from methods m join files f on f.unit_id = m.unit_id"
            " join units u on u.id = m.unit_id where f.version_id = ? and m.name in (?, ?) order by f.path, m.class",
            [vid, *REGISTER],
        )
    ]


def _helpers(db, vid: int, facts: _Facts) -> list[Signature]:
    dirs = set()
    for row in db.execute(
        "select registry_file, reg_file, real_file from parser_map where version_id = ?", [vid]
    ):
        dirs.update(p.rpartition("/")[0] for p in row if p)
    out = []
    for d in sorted(dirs):
        for candidate in (f"{d}/utils.py", f"{d}/utils/__init__.py"):
            module = candidate[:-3].replace("/", ".").removesuffix(".__init__")
            found = facts.unit(module)
            if found is None or found[0] != candidate:
                continue
            path = found[0]
            out.extend(
                _signature(r, module, path)
                for r in facts.rows(module)
                if r["kind"] == "function" and not r["name"].startswith("_")
            )
    return out


def _types(facts: _Facts, classes: list[ContractClass], helpers: list[Signature]) -> list[TypeRef]:
    contract_names = {k.name for k in classes}
    found: dict[str, TypeRef] = {}
    for owner, sig in [(k.name, s) for k in classes if k.role == "base" for s in k.methods] + [
        (None, h) for h in helpers
    ]:
        texts = [p.annotation for p in sig.params] + [sig.returns]
        used = f"{owner}.{sig.name}" if owner else sig.name
        for text in filter(None, texts):
            for name in NAME.findall(text.strip("'\"")):
                head = name.split(".")[0]
                target = _type_target(facts, sig.module, head, name)
                if target is None or target[0].rpartition(".")[2] in contract_names:
                    continue
                dotted, line = target
                mod, _, tname = dotted.rpartition(".")
                ref = found.setdefault(
                    tname, TypeRef(name=tname, module=mod, file=sig.file, line=line, used_by=[])
                )
                if used not in ref.used_by:
                    ref.used_by.append(used)
    return sorted(found.values(), key=lambda t: t.name)


def _type_target(facts: _Facts, module: str, head: str, name: str) -> tuple[str, int] | None:
    """The dotted vLLM name an annotation's name means in a module (through its imports, or defined there)."""
    imported = facts.imports(module).get(head)
    if imported is not None:
        dotted = imported[0] + name[len(head) :]
        return (dotted, imported[1]) if dotted.startswith("vllm.") else None
    mod = facts.v.module(module)
    if mod is not None and head in mod.classes:
        return f"{module}.{head}", mod.classes[head]["line"]
    return None


def _calls(db, version: str) -> tuple[list[CallSite], list[str]]:
    out = []
    for r in db.query(
        "select kind, method, callee, positional, keywords, star, dstar, args, file, line, function"
        " from parser_calls_v where version = ? and kind != 'super' order by file, line",
        [version],
    ):
        keywords, args = json.loads(r["keywords"]), json.loads(r["args"])
        out.append(
            CallSite(
                kind=r["kind"],
                method=r["method"],
                callee=r["callee"],
                positional=r["positional"],
                keywords=keywords,
                star=bool(r["star"]),
                dstar=bool(r["dstar"]),
                args=args,
                file=r["file"],
                line=r["line"],
                function=r["function"],
                text=f"{r['callee']}({', '.join(args)})",
            )
        )
    notes = []
    for kind in ("tool", "reasoning"):
        if not any(c.kind == kind and c.method == "__init__" for c in out):
            notes.append(
                f"no construction of a {kind} parser is in the indexed scope at {version}: the serving code "
                "that constructs them is outside it (build with --include 'vllm/entrypoints/*serving*.py' or "
                "--scope all to record it); constructors are checked against the base's __init__ only"
            )
    return out, notes


# -- two versions ---------------------------------------------------------------------------------------------


def contract_diff(db, a: str, b: str) -> ContractDiff:
    a, b = require(db, a), require(db, b)
    ca, cb = contract(db, a), contract(db, b)
    out: list[ContractChange] = []
    _classes(db, ca, cb, out)
    _helper_changes(ca, cb, out)
    _type_changes(ca, cb, out)
    _call_changes(ca, cb, out)
    notes = [f"{a}: {n}" for n in ca.notes if n.replace(a, "") not in {m.replace(b, "") for m in cb.notes}]
    notes += [f"{b}: {n}" for n in cb.notes if n.replace(b, "") not in {m.replace(a, "") for m in ca.notes}]
    return ContractDiff(a=a, b=b, breaking=sum(c.breaking for c in out), changes=out, notes=notes)


def _find_class(db, version: str, name: str, role: str) -> ContractClass | None:
    """A class of the version named like a contract class of the other side, though not in this side's
    contract (it lost its last registered subclass, say): its definition in the scope, if any."""
    vid = db.execute("select id from versions where label = ?", [version]).fetchone()[0]
    v = Version(db.conn, vid)
    for (module,) in db.execute(
        "select u.module from classes c join files f on f.unit_id = c.unit_id"
        " join units u on u.id = c.unit_id where f.version_id = ? and c.qualname = ?"
        " order by f.path",
        [vid, name],
    ):
        c = class_at(v, module, name)
        if c is not None:
            return _contract_class(_Facts(db, v), c, role, [], 0)
    return None


def _classes(db, ca: Contract, cb: Contract, out: list) -> None:
    by_a, by_b = {k.name: k for k in ca.classes}, {k.name: k for k in cb.classes}
    for name in sorted(set(by_a) | set(by_b), key=lambda n: (by_a.get(n) or by_b[n]).line):
        ka = by_a.get(name) or _find_class(db, ca.version, name, by_b[name].role)
        kb = by_b.get(name) or _find_class(db, cb.version, name, by_a[name].role)
        if ka is None:
            out.append(
                ContractChange(
                    "class-added",
                    name,
                    f"{name} is new in the contract ({kb.role}).",
                    False,
                    after=kb.module,
                    file_b=kb.file,
                    line_b=kb.line,
                )
            )
            continue
        if kb is None:
            out.append(
                ContractChange(
                    "class-removed",
                    name,
                    f"{name} is gone: a plugin that derives from it or imports it fails.",
                    True,
                    before=ka.module,
                    file_a=ka.file,
                    line_a=ka.line,
                )
            )
            continue
        if ka.module != kb.module:
            now = ", ".join(p.module for p in kb.import_paths) or kb.module
            out.append(
                ContractChange(
                    "class-moved",
                    name,
                    f"{name} is now defined in {kb.module} (import it from {now}): a plugin importing "
                    f"it from {ka.module} or a package that no longer re-exports it fails with ImportError.",
                    True,
                    ka.module,
                    kb.module,
                    ka.file,
                    ka.line,
                    kb.file,
                    kb.line,
                )
            )
        _paths(name, ka.import_paths, kb.import_paths, out, moved=ka.module != kb.module)
        for base in ka.bases:
            if base.split("[")[0].rpartition(".")[2] not in {
                x.split("[")[0].rpartition(".")[2] for x in kb.bases
            }:
                out.append(
                    ContractChange(
                        "class-removed-base",
                        f"{name}({base})",
                        f"{name} no longer derives from {base}: what a plugin inherited from it is gone.",
                        True,
                        base,
                        None,
                        ka.file,
                        ka.line,
                        kb.file,
                        kb.line,
                    )
                )
        _members(ka, kb, out)


def _members(ka: ContractClass, kb: ContractClass, out: list) -> None:
    overridable = ka.role == "base"
    ma, mb = {m.name: m for m in ka.methods}, {m.name: m for m in kb.methods}
    for name in [n for n in ma if n not in mb]:
        m = ma[name]
        why = (
            f"{ka.name} no longer defines {name}: vLLM no longer calls it, so an override is never called, and "
            f"super().{name}(...) fails."
            if overridable
            else f"{ka.name}.{name} is gone: a call to it fails with AttributeError."
        )
        out.append(
            ContractChange("method-removed", f"{ka.name}.{name}", why, True, m.text, None, m.file, m.line)
        )
    for name in [n for n in mb if n not in ma]:
        m = mb[name]
        must = overridable and m.body in ("abstract", "raises-not-implemented")
        why = (
            f"a method every {ka.name} subclass must now implement (the base's {m.body.replace('-', ' ')})."
            if must
            else f"new in {kb.name}; a plugin may use or override it."
        )
        out.append(
            ContractChange(
                "method-added", f"{kb.name}.{name}", why, must, None, m.text, None, None, m.file, m.line
            )
        )
    for name in [n for n in ma if n in mb]:
        compare_signatures(f"{ka.name}.{name}", ma[name], mb[name], overridable, out)
    aa, ab = {x.name: x for x in ka.attributes}, {x.name: x for x in kb.attributes}
    for name in [n for n in aa if n not in ab]:
        x = aa[name]
        out.append(
            ContractChange(
                "attribute-removed",
                f"{ka.name}.{name}",
                f"{ka.name}.{name} is gone: a plugin "
                "reading it fails, and setting it no longer changes what vLLM does.",
                True,
                x.value,
                None,
                x.file,
                x.line,
            )
        )
    for name in [n for n in ab if n not in aa]:
        x = ab[name]
        out.append(
            ContractChange(
                "attribute-added",
                f"{kb.name}.{name}",
                f"new class attribute (default {x.value}); a plugin may set it.",
                False,
                None,
                x.value,
                None,
                None,
                x.file,
                x.line,
            )
        )
    for name in [n for n in aa if n in ab]:
        x, y = aa[name], ab[name]
        if x.value != y.value:
            out.append(
                ContractChange(
                    "attribute-changed-value",
                    f"{ka.name}.{name}",
                    f"defaults to {y.value} instead "
                    f"of {x.value}: a plugin that does not set it behaves differently.",
                    True,
                    x.value,
                    y.value,
                    x.file,
                    x.line,
                    y.file,
                    y.line,
                )
            )
        elif norm_type(x.annotation) != norm_type(y.annotation):
            out.append(
                ContractChange(
                    "attribute-changed-type",
                    f"{ka.name}.{name}",
                    f"{_annotated(x.annotation, y.annotation)} (annotations are not enforced at run time).",
                    False,
                    x.annotation,
                    y.annotation,
                    x.file,
                    x.line,
                    y.file,
                    y.line,
                )
            )


_TYPING = {
    "List": "list",
    "Dict": "dict",
    "Tuple": "tuple",
    "Set": "set",
    "FrozenSet": "frozenset",
    "Type": "type",
}


def norm_type(text: str | None) -> str | None:
    """An annotation in one spelling: no spaces or quotes, typing aliases as builtins, Optional[X] and
    Union[A, B] as X | None and A | B (so modernised annotations compare equal)."""
    if text is None:
        return None
    t = re.sub(r"\s+", "", text).replace('"', "").replace("'", "")
    t = re.sub(r"\btyping\.", "", t)
    t = re.sub(r"\b(List|Dict|Tuple|Set|FrozenSet|Type)\[", lambda m: _TYPING[m.group(1)] + "[", t)
    for _ in range(8):
        new = re.sub(r"\bOptional\[([^\[\]]*(?:\[[^\[\]]*\])?[^\[\]]*)\]", r"\1|None", t)
        new = re.sub(
            r"\bUnion\[([^\[\]]*(?:\[[^\[\]]*\])?[^\[\]]*)\]", lambda m: m.group(1).replace(",", "|"), new
        )
        if new == t:
            break
        t = new
    return "|".join(sorted(t.split("|"))) if "[" not in t else t


def _callable(sig: Signature) -> list[Param]:
    """The parameters a caller passes: without self / cls (a method not decorated @staticmethod)."""
    params = list(sig.params)
    if sig.class_ and "staticmethod" not in sig.decorators and params and params[0].kind in POSITIONAL:
        params = params[1:]
    return params


def compare_signatures(subject: str, sa: Signature, sb: Signature, overridable: bool, out: list) -> None:
    """Typed changes between two signatures of one function (griffe's parameter and return breakages, and a
    parameter added with a default or renamed). `overridable`: plugins override it (vLLM calls theirs)."""
    d = _SignatureDiff(subject, sa, sb, overridable, out)
    d.names()
    d.common()
    d.returns()


class _SignatureDiff:
    """The two parameter lists of compare_signatures, and the change list it appends to."""

    def __init__(self, subject: str, sa: Signature, sb: Signature, overridable: bool, out: list):
        self.subject, self.sa, self.sb, self.overridable, self.out = subject, sa, sb, overridable, out
        self.pa, self.pb = _callable(sa), _callable(sb)
        self.na, self.nb = [p.name for p in self.pa], [p.name for p in self.pb]
        self.ia, self.ib = (
            {p.name: i for i, p in enumerate(self.pa)},
            {p.name: i for i, p in enumerate(self.pb)},
        )
        self.method = subject.rpartition(".")[2]

    def add(self, type_, param, why, breaking, before=None, after=None):
        sa, sb = self.sa, self.sb
        self.out.append(
            ContractChange(
                type_,
                f"{self.subject}({param})",
                why,
                breaking,
                sa.text if before is None else before,
                sb.text if after is None else after,
                file_a=sa.file,
                line_a=sa.line,
                file_b=sb.file,
                line_b=sb.line,
            )
        )

    def names(self) -> None:
        """Parameters renamed, removed and added."""
        pa, pb, na, nb, ia, ib = self.pa, self.pb, self.na, self.nb, self.ia, self.ib
        add, method, overridable = self.add, self.method, self.overridable
        removed, added = [n for n in na if n not in ib], [n for n in nb if n not in ia]
        renamed = {}
        for old in removed:
            j = ia[old]
            if (
                j < len(pb)
                and pb[j].name in added
                and pb[j].kind == pa[j].kind
                and pb[j].name not in renamed.values()
            ):
                renamed[old] = pb[j].name
        for old, new in renamed.items():
            add(
                "parameter-renamed",
                old,
                f"{method}'s parameter {old} is now {new}: a call passing {old}= by keyword "
                f"fails, and an override keeping {old} fails when vLLM passes {new}= by keyword.",
                True,
                old,
                new,
            )
        for name in [n for n in removed if n not in renamed]:
            add(
                "parameter-removed",
                name,
                f"{method} no longer takes {name}: a call passing it fails with TypeError, and "
                f"vLLM no longer passes it (an override that requires it fails).",
                True,
            )
        for name in [n for n in added if n not in renamed.values()]:
            p = pb[ib[name]]
            if p.kind in ("var-positional", "var-keyword"):
                star = "*" if p.kind == "var-positional" else "**"
                add(
                    "parameter-added",
                    name,
                    f"{method} now takes {star}{name}: vLLM may pass extra arguments to it, and an "
                    f"override without {star}{name} fails with TypeError when it does.",
                    overridable,
                )
            elif p.default is None:
                add(
                    "parameter-added-required",
                    name,
                    f"{method} now requires {name}: a call that does not pass it fails, "
                    f"and vLLM passes it to overrides (one without it fails with TypeError).",
                    True,
                )
            else:
                add(
                    "parameter-added",
                    name,
                    (
                        f"{method} gained {name} (default {p.default}): vLLM may now pass it, and an override of {method} "
                        f"that does not accept it fails with TypeError; accept it (or **kwargs)."
                        if overridable
                        else f"{method} gained {name} (default {p.default}): existing calls still work."
                    ),
                    overridable,
                )

    def common(self) -> None:
        """Parameters on both sides: kind, position, default and annotation."""
        pa, pb, na, nb, ia, ib = self.pa, self.pb, self.na, self.nb, self.ia, self.ib
        add, overridable = self.add, self.overridable
        common = [n for n in na if n in ib]
        pos_a = [n for n in na if n in ib and pa[ia[n]].kind in POSITIONAL and pb[ib[n]].kind in POSITIONAL]
        pos_b = [n for n in nb if n in pos_a]
        kinds: dict[tuple[str, str], list[str]] = {}
        for name in common:
            x, y = pa[ia[name]], pb[ib[name]]
            if x.kind != y.kind:
                kinds.setdefault((x.kind, y.kind), []).append(name)
        for (was, now), names in kinds.items():  # one change for the parameters a `*` or `/` moved together
            how = (
                "by position"
                if now == "keyword-only"
                else "by keyword"
                if now == "positional-only"
                else "as before"
            )
            add(
                "parameter-changed-kind",
                ", ".join(names),
                f"{', '.join(names)} {'was' if len(names) == 1 else 'were'} "
                f"{was}, now {now}: calls that pass {'it' if len(names) == 1 else 'them'} {how} fail.",
                True,
                was,
                now,
            )
        for name in common:
            x, y = pa[ia[name]], pb[ib[name]]
            if x.kind != y.kind:
                pass
            elif name in pos_a and pos_a.index(name) != pos_b.index(name):
                add(
                    "parameter-moved",
                    name,
                    f"{name} moved from position {ia[name] + 1} to {ib[name] + 1}: positional calls "
                    "now pass their arguments to other parameters.",
                    True,
                )
            if (
                x.default is not None
                and y.default is None
                and y.kind not in ("var-positional", "var-keyword")
            ):
                add(
                    "parameter-changed-required",
                    name,
                    f"{name} lost its default ({x.default}): calls that leave it out fail.",
                    True,
                    x.default,
                    None,
                )
            elif x.default is None and y.default is not None:
                add(
                    "parameter-now-optional",
                    name,
                    f"{name} now defaults to {y.default}: existing calls still work.",
                    False,
                    None,
                    y.default,
                )
            elif x.default != y.default:
                add(
                    "parameter-changed-default",
                    name,
                    f"{name} defaults to {y.default} instead of {x.default}: calls that "
                    "rely on the default behave differently.",
                    True,
                    x.default,
                    y.default,
                )
            if norm_type(x.annotation) != norm_type(y.annotation):
                add(
                    "parameter-changed-type",
                    name,
                    f"{name} is {_annotated(x.annotation, y.annotation)}: "
                    f"{'vLLM may pass other values to an override; check it handles them' if overridable else 'calls may need other values'}"
                    " (annotations are not enforced at run time).",
                    False,
                    x.annotation,
                    y.annotation,
                )

    def returns(self) -> None:
        sa, sb, method = self.sa, self.sb, self.method
        if norm_type(sa.returns) != norm_type(sb.returns):
            self.out.append(
                ContractChange(
                    "return-changed-type",
                    self.subject,
                    (
                        f"{method}'s return is {_annotated(sa.returns, sb.returns)}: "
                        + (
                            "an override should return the new type, vLLM reads it as one"
                            if self.overridable
                            else "callers get the new type"
                        )
                        + " (annotations are not enforced at run time)."
                    ),
                    False,
                    sa.returns,
                    sb.returns,
                    file_a=sa.file,
                    line_a=sa.line,
                    file_b=sb.file,
                    line_b=sb.line,
                )
            )


def _annotated(before: str | None, after: str | None) -> str:
    if before is None:
        return f"now annotated {after} (was not annotated)"
    if after is None:
        return f"no longer annotated (was {before})"
    return f"annotated {after} instead of {before}"


def _helper_changes(ca: Contract, cb: Contract, out: list) -> None:
    ha, hb = {h.name: h for h in ca.helpers}, {h.name: h for h in cb.helpers}
    for name in sorted(set(ha) | set(hb)):
        x, y = ha.get(name), hb.get(name)
        if y is None:
            out.append(
                ContractChange(
                    "helper-removed",
                    name,
                    f"{x.module}.{name} is gone: a plugin importing it fails.",
                    True,
                    x.text,
                    None,
                    x.file,
                    x.line,
                )
            )
        elif x is None:
            out.append(
                ContractChange(
                    "helper-added",
                    name,
                    f"new helper in {y.module}.",
                    False,
                    None,
                    y.text,
                    None,
                    None,
                    y.file,
                    y.line,
                )
            )
        else:
            if x.module != y.module:
                out.append(
                    ContractChange(
                        "helper-moved",
                        name,
                        f"{name} is now in {y.module}: a plugin importing it from "
                        f"{x.module} fails where that module no longer provides it.",
                        True,
                        x.module,
                        y.module,
                        x.file,
                        x.line,
                        y.file,
                        y.line,
                    )
                )
            _paths(name, x.import_paths, y.import_paths, out, moved=x.module != y.module)
            compare_signatures(name, x, y, False, out)


def _paths(name: str, pa: list[ImportPath], pb: list[ImportPath], out: list, moved: bool) -> None:
    """Modules a name can no longer be imported from, or newly can (for a name that moved, the move says where
    it is defined now and where to import it from)."""
    at_b = {p.module: p for p in pb}
    at_a = {p.module: p for p in pa}
    for p in pa:
        if p.module not in at_b and not (moved and p.how == "defined"):
            now = ", ".join(q.module for q in pb)
            out.append(
                ContractChange(
                    "import-path-removed",
                    f"from {p.module} import {name}",
                    (
                        f"{name} can no longer be imported from {p.module} (it was {_how(p)}): a plugin importing it from "
                        f"there fails with ImportError; import it from {now}."
                    ),
                    True,
                    p.module,
                    now or None,
                    p.file,
                    p.line,
                )
            )
    for p in pb:
        if p.module not in at_a and at_a and not moved:
            out.append(
                ContractChange(
                    "import-path-added",
                    f"from {p.module} import {name}",
                    (f"{name} can now also be imported from {p.module} ({_how(p)})."),
                    False,
                    None,
                    p.module,
                    None,
                    None,
                    p.file,
                    p.line,
                )
            )


def _how(p: ImportPath) -> str:
    return {
        "defined": "defined there",
        "re-export": "re-exported there",
        "getattr": "provided there by a module __getattr__, a compatibility shim",
    }[p.how]


def _type_changes(ca: Contract, cb: Contract, out: list) -> None:
    ta, tb = {t.name: t for t in ca.types}, {t.name: t for t in cb.types}
    for name in sorted(set(ta) & set(tb)):
        x, y = ta[name], tb[name]
        if x.module != y.module:
            out.append(
                ContractChange(
                    "type-moved",
                    name,
                    (
                        f"the contract's {name} ({', '.join(y.used_by[:3])}) is imported from {y.module} instead of {x.module}: "
                        f"a plugin importing it from {x.module} fails where that module no longer provides it."
                    ),
                    True,
                    x.module,
                    y.module,
                    x.file,
                    x.line,
                    y.file,
                    y.line,
                )
            )


def shape(c: CallSite) -> tuple:
    return c.positional, tuple(sorted(c.keywords)), c.star, c.dstar


def _call_changes(ca: Contract, cb: Contract, out: list) -> None:
    groups: dict[tuple[str, str], tuple[list, list]] = defaultdict(lambda: ([], []))
    for side, c in ((0, c) for c in ca.calls):
        groups[(c.kind, c.method)][side].append(c)
    for c in cb.calls:
        groups[(c.kind, c.method)][1].append(c)
    for (kind, method), (xs, ys) in sorted(groups.items()):
        if not xs or not ys:
            continue  # a side without such calls in the scope: nothing to compare (the notes say why)
        sa, sb = {shape(c) for c in xs}, {shape(c) for c in ys}
        if sa == sb:
            continue
        new = [c for c in ys if shape(c) not in sa]
        old = [c for c in xs if shape(c) not in sb] or xs
        before = "; ".join(dict.fromkeys(c.text for c in old))
        after = "; ".join(dict.fromkeys(c.text for c in new)) or "; ".join(dict.fromkeys(c.text for c in ys))
        f = (new or ys)[0]
        what = f"constructs {kind} parsers" if method == "__init__" else f"calls {method}"
        if new:
            why = f"vLLM now {what} as {after} ({f.file}:{f.line}), was {before}: " + (
                "a plugin's __init__ must accept the new arguments."
                if method == "__init__"
                else f"an override of {method} must accept those arguments."
            )
        else:
            why = f"vLLM no longer {what} as {before}; the other ways it does ({after}) were there already."
        type_ = "construction-changed" if method == "__init__" else "call-changed"
        subject = f"{kind} parser construction" if method == "__init__" else f"{kind} parser {method}()"
        out.append(
            ContractChange(
                type_, subject, why, bool(new), before, after, old[0].file, old[0].line, f.file, f.line
            )
        )


# -- text and Markdown ----------------------------------------------------------------------------------------
