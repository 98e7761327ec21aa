"""`check-plugin`: a plugin file checked against the parser contract of every indexed version it is asked
about, read with tree-sitter (extract/plugin.py), never executed.

At each version:

- import: each `from vllm... import X` (and `import vllm...`): whether the module is there and provides X
  (defined, re-exported by a package, or handed out by a module __getattr__, the shim of a moved package),
  else where X is now. Modules outside the scope are `unchecked` unless the version was built with --tree
  (its definitions say what a module defines, its words what it mentions). Imports in a `try:` with an
  `except ImportError:` fallback are alternatives: one working alternative is enough;
- base: each vLLM class a plugin class derives from (through the plugin's own classes);
- override: each public method the plugin defines that the base's resolution order defines too, checked
  against the base's signature (an override must accept every call the base accepts: as many positional
  arguments, the base's keyword-only parameters; and must not require what the base does not provide) and
  against the calls vLLM's code in the scope makes on parser objects; a method the base defines at another
  checked version but not at this one is never called here;
- constructor: the plugin's __init__ the same way, against the constructions recorded in the scope
  (`self.tool_parser(tokenizer)` vs `(tokenizer, request.tools)`), or only the base's __init__ where the
  scope holds no serving code that constructs parsers (the contract's notes say so);
- super-call: each `super().m(...)` the plugin makes, against the base's m at that version;
- registration: each register_module / register_lazy_module call against the manager's signature, and
  `shadow`: a name that is a built-in of the same kind at that version (the plugin replaces it) with the
  versions since the plugin's base version (`since`) where the built-in's code changed.

A version is compatible when no finding is `broken`. `--replay` (the replay issue) plugs in through
`check_plugin(..., replay=...)`: a callable given each compatible version's report, returning findings of
what `replay` ran; nothing calls it yet.
"""

from __future__ import annotations

from collections.abc import Callable

from ..core import ranges as version_ranges
from ..extract.locate import Names, absolute
from ..resolve.classgraph import Cls, Version, class_at, lookup, mro, resolve_method
from ..store.database import lifecycle_of
from ..store.packed import unpack
from .contract import POSITIONAL, _callable, _Facts, contract, public, signature_text
from .contract_model import (
    Contract,
    Finding,
    Param,
    PluginClass,
    PluginFile,
    PluginImport,
    PluginMethod,
    PluginRegistration,
    PluginReport,
    PluginVersion,
    Signature,
)
from .trees import TreeIndex, module_path_candidates
from .versions import AnswerError, indexed, require

PLUGIN_PATH = "plugin.py"  # where the plugin is located for its own relative names (module `plugin`)
VAR = ("var-positional", "var-keyword")


# -- reading the plugin ---------------------------------------------------------------------------------------


class Plugin:
    """The plugin's facts, and what its names mean."""

    def __init__(self, data: bytes, path: str):
        from ..extract.plugin import read

        self.path, self.data = path, data
        raw = read(data)
        self.spans = raw.get("spans") or {}
        self.status, self.error = raw["status"], raw["error"]
        facts = raw.get("facts") or {}
        self.facts = facts
        alts = {int(k): v for k, v in raw.get("alternatives", {}).items()}
        self.manager_calls = {c["line"]: c for c in raw.get("manager_calls", [])}
        rows = []
        for imp in facts.get("imports", []):
            mod = absolute(imp["module"], imp["level"], PLUGIN_PATH) if not imp["level"] else None
            rows.append({**imp, "abs_module": mod if mod is not None else "." * imp["level"] + imp["module"]})
        classes = facts.get("classes", [])
        self.local = {c["qualname"]: c for c in classes}
        self.names = Names(
            [r for r in rows if not r["in_function"]],
            "plugin",
            {c["qualname"] for c in classes if c["nested_in"] == "module"},
        )
        self.bound: dict[
            str, list[str]
        ] = {}  # a name -> what each import binding it means, in order (try first)
        for r in sorted((r for r in rows if not r["in_function"] and not r["star"]), key=lambda r: r["line"]):
            if r["name"] is None:
                target = (r["alias"], r["abs_module"]) if r["alias"] else (r["abs_module"].split(".")[0],) * 2
            else:
                target = (r["alias"] or r["name"], f"{r['abs_module']}.{r['name']}")
            self.bound.setdefault(target[0], []).append(target[1])
        self.imports = [
            PluginImport(
                module=None if r["level"] else r["module"],
                name=r["name"],
                alias=r["alias"],
                line=r["line"],
                group=alts.get(r["line"], [None, None])[0],
                alternative=alts.get(r["line"], [None, None])[1],
            )
            for r in rows
            if not r["star"] and not r["in_function"]
        ]
        sigs = [s for s in facts.get("signatures", []) if s["kind"] == "method"]
        self.methods: dict[str, list[PluginMethod]] = {}
        for s in sigs:
            params = [Param(*p) for p in s["params"]]
            self.methods.setdefault(s["class"], []).append(
                PluginMethod(
                    name=s["name"], line=s["line"], params=params, text=signature_text(params, s["returns"])
                )
            )
        self.classes = []
        for c in classes:
            written = [b["written"] for b in c["bases"]]
            resolved = [self.vllm_name(b["head"]) for b in c["bases"]]
            self.classes.append(
                PluginClass(
                    name=c["qualname"],
                    line=c["line"],
                    bases=written,
                    resolved_bases=resolved,
                    methods=self.methods.get(c["qualname"], []),
                )
            )
        self.registrations = [
            PluginRegistration(
                name=r["name"],
                kind=r["kind"],
                form=r["form"],
                class_=r.get("class"),
                manager=r.get("registry") or "",
                line=r["line"],
            )
            for r in facts.get("registrations", [])
            if r["form"] != "lazy-dict"
        ]
        self.super_calls = [c for c in facts.get("parser_calls", []) if c["kind"] == "super"]

    def vllm_name(self, written: str | None) -> str | None:
        found = self.vllm_names(written)
        return found[0] if found else None

    def vllm_names(self, written: str | None) -> list[str]:
        """Every vLLM name `written` may mean: one per import binding it (alternatives of a try / except
        ImportError), in order."""
        if not written:
            return []
        head, _, rest = written.partition(".")
        out = [b + ("." + rest if rest else "") for b in self.bound.get(head, [])]
        return [d for d in out if d.split(".")[0] == "vllm"]

    def model(self) -> PluginFile:
        return PluginFile(
            path=self.path,
            status=self.status,
            imports=self.imports,
            classes=self.classes,
            registrations=self.registrations,
        )


# -- one version ----------------------------------------------------------------------------------------------


class At:
    """What one indexed version provides, read lazily."""

    def __init__(self, db, version: str, index: TreeIndex):
        self.db, self.version, self.index = db, version, index
        self.vid = index.vid[version]
        self.v = Version(db.conn, self.vid)
        self.facts = _Facts(db, self.v)
        self._contract: Contract | None = None
        self._defs: dict[int, list] = {}

    @property
    def contract(self) -> Contract:
        if self._contract is None:
            self._contract = contract(self.db, self.version)
        return self._contract

    # modules and names
    def module_file(self, module: str) -> tuple[str, str | None]:
        """('file', path) | ('package', directory) | ('absent', None) | ('unknown', None)."""
        paths = self.index.paths(self.version)
        candidates = module_path_candidates(module)
        for c in candidates:
            if c in paths:
                return "file", c
        folder = module.replace(".", "/") + "/"
        if any(p.startswith(folder) for p in paths):
            return "package", folder
        if self.index.has_tree[self.version] or any(self.index.knows(self.version, c) for c in candidates):
            return "absent", None
        return "unknown", None

    def name_in(self, module: str, path: str, name: str) -> tuple[str, int | None, str | None]:
        """How `module` (its file `path`) provides `name`: (defined | re-export | tree-re-export | getattr |
        submodule | star | mentioned | missing | unknown, line, detail). `tree-re-export` (a --tree version): the
        file names it and a module of its package defines it at top level (detail: that file, line: where)."""
        sub = self.module_file(f"{module}.{name}")
        if sub[0] in ("file", "package"):
            return "submodule", None, sub[1]
        unit = self.facts.unit(module)
        if unit is not None and unit[0] == path:
            return self._in_parsed(module, unit[1], name)
        if self.index.has_tree[self.version]:
            for d in self.index.defs_in(self.version, path):
                if d.qualname == name:
                    return "defined", d.line, d.kind
            if self.index.mentioned_in(self.version, name, path):
                home = self.defined_in_package(module, path, name)
                if home is not None:
                    return "tree-re-export", home[1], home[0]
                return "mentioned", None, None
            return "missing", None, None
        return "unknown", None, None

    def defined_in_package(self, module: str, path: str, name: str) -> tuple[str, int] | None:
        """At a --tree version: (file, line) of a top-level definition of `name` in a module of the package
        `path` belongs to (a package __init__.py: its own directory), other than `path` itself, the shortest path
        first; what a file that names it but does not define it most likely re-exports (its imports are not
        recorded for modules outside the scope)."""
        folder = path.rpartition("/")[0] + "/"
        found = sorted(
            (d.path, d.line)
            for d in self.index.defs(name)
            if d.version == self.version
            and d.qualname == name
            and d.path != path
            and d.path.startswith(folder)
            and d.path.endswith(".py")
        )
        return min(found, key=lambda f: (f[0].count("/"), f)) if found else None

    def _in_parsed(self, module: str, unit: int, name: str) -> tuple[str, int | None, str | None]:
        m = self.v.module(module)
        if name in m.classes:
            return "defined", m.classes[name]["line"], "class"
        for kind, qual, line, _ in self._definitions(unit):
            if qual == name:
                return "defined", line, kind
        rows = self.db.execute(
            "select line, module, name, in_function, star from imports where unit_id = ? and type_checking = 0 and"
            " (name = ? or alias = ? or star = 1) order by in_function is not null, line",
            [unit, name, name],
        ).fetchall()
        for line, src, real, fn, star in rows:
            if not star and fn is None:
                return "re-export", line, f"{src}.{real}" if real else src
        for line, src, real, fn, star in rows:
            if not star and fn == "__getattr__":
                return "getattr", line, f"{src}.{real}"
        for line, _, _, fn, star in rows:
            if star and fn is None:
                return "star", line, None
        return "missing", None, None

    def _definitions(self, unit: int) -> list:
        if unit not in self._defs:
            from ..extract.definitions import from_facts

            row = self.db.execute(
                "select b.facts from units u join blobs b on b.id = u.blob_id where u.id = ?", [unit]
            ).fetchone()
            facts = unpack(row[0]) if row else {}
            self._defs[unit] = [r for r in from_facts(facts) if "." not in r[1]]
        return self._defs[unit]

    def whereabouts(self, name: str) -> list[tuple[str, str, int]]:
        """Where `name` is at this version, as (module (how), file, line): the contract's import paths for a
        contract class or helper, else the modules defining it at top level (scope facts, the tree's
        definitions)."""
        out: list[tuple[str, str, int]] = []
        for k in list(self.contract.classes) + list(self.contract.helpers):
            if k.name == name:
                out += [
                    (f"{p.module} ({p.how})", p.file, p.line)
                    for p in sorted(k.import_paths, key=lambda p: (p.how == "defined", len(p.module)))
                ]
        if out:
            return list(dict.fromkeys(out))
        for module, path, line in self.db.execute(
            "select u.module, f.path, c.line from classes c join files f on f.unit_id = c.unit_id join units u"
            " on u.id = c.unit_id where f.version_id = ? and c.qualname = ? and c.nested_in = 'module'"
            " union select u.module, f.path, s.line from signatures s join files f on f.unit_id = s.unit_id join"
            " units u on u.id = s.unit_id where f.version_id = ? and s.kind = 'function' and s.name = ?",
            [self.vid, name, self.vid, name],
        ):
            out.append((f"{module} (defined)", path, line))
        if self.index.has_tree[self.version]:
            from ..core.scope import module_of

            out += [
                (f"{module_of(d.path)} (defined)", d.path, d.line)
                for d in self.index.defs(name)
                if d.version == self.version and d.qualname == name and d.path.endswith(".py")
            ]
        return list(dict.fromkeys(out))

    def type_module(self, name: str) -> str | None:
        return next((t.module for t in self.contract.types if t.name == name), None)

    def cls(self, dotted: str) -> Cls | None:
        """The class a dotted vLLM name means here: through re-exports, or a package's __getattr__ shim."""
        c = lookup(self.v, dotted)
        if c is not None:
            return c
        module, _, name = dotted.rpartition(".")
        state, path = self.module_file(module)
        if state == "file":
            how, _, detail = self.name_in(module, path, name)
            if how == "getattr" and detail:
                return lookup(self.v, detail)
        return None

    def first(self, candidates: list[str], meant: bool = True) -> Cls | None:
        """The first of a name's candidate meanings that is a class here, else (meant) what it stands for."""
        for dotted in candidates:
            c = self.cls(dotted)
            if c is not None:
                return c
        return self.meant(candidates[0]) if meant and candidates else None

    def meant(self, dotted: str) -> Cls | None:
        """For a name not importable as written: the class of that name at this version (the contract's, else
        one defined at module level in the scope), which is what the plugin needs to import instead."""
        name = dotted.rpartition(".")[2]
        for k in self.contract.classes:
            if k.name == name:
                return class_at(self.v, k.module, k.name)
        row = self.db.execute(
            "select u.module from classes c join files f on f.unit_id = c.unit_id join units u on"
            " u.id = c.unit_id where f.version_id = ? and c.qualname = ? and c.nested_in = 'module'"
            " order by f.path limit 1",
            [self.vid, name],
        ).fetchone()
        return class_at(self.v, row[0], name) if row else None

    def signature(self, c: Cls, method: str) -> Signature | None:
        for r in self.facts.rows(c.module):
            if r["class"] == c.name and r["name"] == method and r["kind"] == "method":
                from .contract import _signature

                return _signature(r, c.module, c.path)
        return None


# -- binding calls to signatures ------------------------------------------------------------------------------


def bind(params: list[Param], positional: int, keywords: list[str], star: bool, dstar: bool) -> str | None:
    """Why a call of this shape cannot bind to these parameters (self left out), as Python would say it; None
    when it binds (or cannot be told: *x and **x arguments of unknown length)."""
    pos = [p for p in params if p.kind in POSITIONAL]
    var_pos = any(p.kind == "var-positional" for p in params)
    var_kw = any(p.kind == "var-keyword" for p in params)
    if positional > len(pos) and not var_pos:
        return f"takes {len(pos)} positional argument(s) but {positional} are passed"
    filled = {p.name for p in pos[:positional]}
    for k in keywords:
        target = next(
            (p for p in params if p.name == k and p.kind in ("positional-or-keyword", "keyword-only")), None
        )
        if target is None:
            if not var_kw:
                return f"got an unexpected keyword argument '{k}'"
        elif k in filled:
            return f"got multiple values for argument '{k}'"
        else:
            filled.add(k)
    if not star and not dstar:
        missing = [p.name for p in params if p.default is None and p.kind not in VAR and p.name not in filled]
        if missing:
            return f"missing required argument(s): {', '.join(missing)}"
    return None


def narrower(plugin: list[Param], base: list[Param]) -> list[tuple[str, str]]:
    """How an override falls short of the base's signature: [(broken | warning, why)], both without self."""
    out = []
    pos_b = [p for p in base if p.kind in POSITIONAL]
    pos_p = [p for p in plugin if p.kind in POSITIONAL]
    var_pos_p = any(p.kind == "var-positional" for p in plugin)
    var_kw_p = any(p.kind == "var-keyword" for p in plugin)
    if len(pos_b) > len(pos_p) and not var_pos_p:
        extra = ", ".join(
            p.name + (f"={p.default}" if p.default is not None else "") for p in pos_b[len(pos_p) :]
        )
        out.append(
            (
                "broken",
                f"the base accepts {len(pos_b)} positional argument(s), this accepts {len(pos_p)}: "
                f"vLLM may pass {extra}, and this fails with TypeError",
            )
        )
    by_kw = {p.name for p in plugin if p.kind in ("positional-or-keyword", "keyword-only")}
    said = {p.name for p in pos_b[len(pos_p) :]} if not var_pos_p else set()
    for i, p in enumerate(base):
        if (
            p.kind not in ("positional-or-keyword", "keyword-only")
            or p.name in by_kw
            or var_kw_p
            or p.name in said
        ):
            continue
        if p.kind == "keyword-only":
            out.append(("broken", f"the base takes {p.name}= by keyword; this does not accept it"))
        else:
            here = pos_p[i].name if i < len(pos_p) else None
            out.append(
                (
                    "warning",
                    f"the base's parameter {p.name} is "
                    + (f"named {here} here" if here else "absent here")
                    + f": a call passing {p.name}= by keyword would fail",
                )
            )
    for kind, sym in (("var-positional", "*"), ("var-keyword", "**")):
        if any(p.kind == kind for p in base) and not any(p.kind == kind for p in plugin):
            name = next(p.name for p in base if p.kind == kind)
            out.append(
                (
                    "warning",
                    f"the base takes {sym}{name}, this does not: extra arguments vLLM passes would fail",
                )
            )
    base_names = {p.name for p in base if p.kind != "positional-only"}
    base_var_pos = any(p.kind == "var-positional" for p in base)
    for i, p in enumerate(pos_p):
        if p.default is None and i >= len(pos_b) and not base_var_pos and p.name not in base_names:
            out.append(
                ("broken", f"requires {p.name}, which the base does not take: vLLM calls it without {p.name}")
            )
    for p in plugin:
        if p.kind == "keyword-only" and p.default is None and p.name not in base_names:
            out.append(("broken", f"requires {p.name}= by keyword, which the base does not take"))
    return out


# -- the check ------------------------------------------------------------------------------------------------


def check_plugin(
    db,
    data: bytes,
    path: str,
    tags: str | None = None,
    since: str | None = None,
    replay: Callable[[PluginVersion, At], list[Finding]] | None = None,
    summarize: bool = True,
) -> PluginReport:
    """The plugin checked at each version; with `summarize`, led by what to change for it to work at the newest
    checked version (plugin_fix.py: the changed file is checked again to say where it then works)."""
    plugin = Plugin(data, path)
    versions = _versions(db, tags)
    if since is not None:
        since = require(db, since)
    index = TreeIndex(db)
    ats = {v: At(db, v, index) for v in versions}
    defined_somewhere = _base_methods(plugin, ats)
    reports = [
        PluginVersion(version=v, compatible=True, findings=_check_at(plugin, ats[v], defined_somewhere))
        for v in versions
    ]
    for r in reports:
        r.compatible = not any(f.status == "broken" for f in r.findings)
    compatible = [r.version for r in reports if r.compatible]
    base = since or (compatible[0] if compatible else versions[0])
    for r in reports:
        _shadow_changes(db, r, base, plugin)
    if replay is not None:
        for r in reports:
            if r.compatible:
                r.findings.extend(replay(r, ats[r.version]))
    notes = []
    if plugin.status != "ok":
        notes.append(
            f"the plugin file has {plugin.status.replace('-', ' ')} ({plugin.error}): what could be read is"
            " checked"
        )
    if not plugin.classes and not plugin.registrations:
        notes.append("the plugin defines no class and registers no name")
    kinds = {r.kind for r in plugin.registrations} | {
        k for v in versions for pc in plugin.classes if (k := _class_kind(plugin, ats[v], pc))
    }
    missing = [
        v for v in versions for n in ats[v].contract.notes if any(f"of a {k} parser" in n for k in kinds)
    ]
    if missing:
        notes.append(
            f"no construction of a {'/'.join(sorted(kinds))} parser is in the indexed scope at "
            f"{', '.join(dict.fromkeys(missing))}: the constructor is checked against the base's __init__ only "
            "there (build with --include 'vllm/entrypoints/*serving*.py' to record serving's calls)"
        )
    report = PluginReport(
        plugin=plugin.model(),
        since=base,
        versions=reports,
        compatible=compatible,
        broken=[r.version for r in reports if not r.compatible],
        first_compatible=compatible[0] if compatible else None,
        last_compatible=compatible[-1] if compatible else None,
        notes=notes,
    )
    if summarize:
        from .plugin_fix import summary

        def base_of(at: At, cls: str) -> Cls | None:
            found = _vllm_base(plugin, cls)
            return at.first(found[0]) if found else None

        report.summary = summary(
            plugin,
            report,
            ats,
            lambda changed: check_plugin(db, changed, path, tags=tags, since=since, summarize=False),
            base_of,
        )
    return report


def _versions(db, tags: str | None) -> list[str]:
    from ..core.specs import SpecError, select

    labels = indexed(db)
    if not labels:
        raise AnswerError("the database holds no indexed version", "build one first: tpindex build ...")
    if not tags:
        return labels
    try:
        chosen = select(tags, labels).names
    except SpecError as e:
        raise AnswerError(str(e), "tpindex versions lists what is indexed") from None
    order = {v: i for i, v in enumerate(labels)}
    return sorted(chosen, key=order.get)


def _vllm_base(plugin: Plugin, cls: str) -> tuple[list[str], list[str]] | None:
    """The first vLLM base of a plugin class (through the plugin's own classes, depth first, first base
    first): (the dotted names it may be, one per import alternative; the plugin classes on the way, the
    class itself first). Walked with a stack of its own, each class once (a chain of 1000 plugin classes
    is no RecursionError; a cycle, which raises NameError at import, ends the walk: _definition_order
    says so); remembered per plugin."""
    cache = plugin.__dict__.setdefault("_vllm_bases", {})
    if cls not in cache:
        cache[cls] = _walk_bases(plugin, cls)
    return cache[cls]


def _walk_bases(plugin: Plugin, cls: str) -> tuple[list[str], list[str]] | None:
    if cls not in plugin.local:
        return None
    stack = [(cls, iter(plugin.local[cls]["bases"]))]
    visited = {cls}
    while stack:
        _, bases = stack[-1]
        b = next(bases, None)
        if b is None:
            stack.pop()
            continue
        dotted = plugin.vllm_names(b["head"])
        if dotted:
            return dotted, [c for c, _ in stack]
        head = b["head"]
        if head in plugin.local and head not in visited:
            visited.add(head)
            stack.append((head, iter(plugin.local[head]["bases"])))
    return None


def _definition_order(plugin: Plugin) -> list[Finding]:
    """A module-level class whose base is one of the plugin's classes defined after it, or itself (a cycle
    among them is one of these): the class statement runs at import and raises NameError there."""
    out = []
    for c in plugin.local.values():
        if c["nested_in"] != "module":
            continue
        for b in c["bases"]:
            base = plugin.local.get(b["head"])
            if base is None or base["nested_in"] != "module" or base["line"] < c["line"]:
                continue
            where = "itself" if base is c else f"{b['head']}, defined after it (line {base['line']})"
            out.append(
                Finding(
                    "base",
                    f"{c['qualname']}({b['written']})",
                    "broken",
                    f"{c['qualname']} derives from {where}: importing the plugin raises NameError",
                    c["line"],
                )
            )
    return out


def _plugin_methods(plugin: Plugin, chain: list[str]) -> dict[str, tuple[str, PluginMethod]]:
    """Methods of a plugin class as it resolves them through its own classes: name -> (class, method)."""
    out: dict[str, tuple[str, PluginMethod]] = {}
    for cls in chain:
        for m in plugin.methods.get(cls, []):
            out.setdefault(m.name, (cls, m))
    return out


def _base_methods(plugin: Plugin, ats: dict[str, At]) -> dict[tuple[str, str], list[tuple[str, str, int]]]:
    """(plugin class, method) -> [(version, file, line)] where the vLLM base's resolution order defines it."""
    out: dict[tuple[str, str], list] = {}
    for version, at in ats.items():
        for pc in plugin.classes:
            found = _vllm_base(plugin, pc.name)
            base = at.first(found[0]) if found else None
            if base is None:
                continue
            order = mro(at.v, base)
            for name in _plugin_methods(plugin, found[1]):
                hit = resolve_method(at.v, order, name)
                if hit is not None:
                    out.setdefault((pc.name, name), []).append((version, hit[0].path, hit[1]["line"]))
    return out


def _check_at(plugin: Plugin, at: At, defined_somewhere: dict) -> list[Finding]:
    findings = _definition_order(plugin) + _imports(plugin, at)
    broken_imports = {f.subject.rpartition(" import ")[2] for f in findings if f.status == "broken"}
    for pc in plugin.classes:
        findings += _class(plugin, at, pc, broken_imports, defined_somewhere)
    findings += _registrations(plugin, at)
    return findings


def _imports(plugin: Plugin, at: At) -> list[Finding]:
    out: list[tuple[PluginImport, Finding]] = []
    for imp in plugin.imports:
        if imp.module is None or imp.module.split(".")[0] != "vllm":
            continue  # the plugin's own package, or another library
        out.append((imp, _import(at, imp)))
    groups: dict[int, dict[int, list]] = {}
    for imp, f in out:
        if imp.group is not None:
            groups.setdefault(imp.group, {}).setdefault(imp.alternative, []).append((imp, f))
    for alts in groups.values():
        working = next(
            (a for a, items in sorted(alts.items()) if all(f.status != "broken" for _, f in items)), None
        )
        if working is None:
            continue
        used = alts[working][0][0].line
        for a, items in alts.items():
            for _, f in items:
                if a != working and f.status == "broken":
                    f.status = "ok"
                    f.message += f"; the alternative at line {used} is used instead"
                elif a == working and f.status == "ok" and len(alts) > 1:
                    f.message += " (the alternative Python uses here)"
    return [f for _, f in out]


def _import(at: At, imp: PluginImport) -> Finding:
    subject = f"from {imp.module} import {imp.name}" if imp.name else f"import {imp.module}"
    state, path = at.module_file(imp.module)
    where = at.version

    def moved(name: str) -> tuple[str, str | None, int | None]:
        found = [w for w in at.whereabouts(name) if not w[0].startswith(imp.module + " ")]
        if not found:
            return f"; {name} is not defined in the indexed scope at {where}", None, None
        return f"; {name} is in {', '.join(w[0] for w in found[:4])} at {where}", found[0][1], found[0][2]

    if state == "absent":
        gone = _path_history(at, imp.module)
        msg, file, line = moved(imp.name) if imp.name else ("", None, None)
        return Finding(
            "import",
            subject,
            "broken",
            f"module {imp.module} is not in {where}{gone}{msg}",
            imp.line,
            file,
            line,
        )
    if state == "unknown":
        hint = at.type_module(imp.name) if imp.name else None
        extra = (
            f"; the contract's {imp.name} is imported from {hint} here" if hint and hint != imp.module else ""
        )
        return Finding(
            "import",
            subject,
            "unchecked",
            f"{imp.module} is outside the indexed scope at {where} (a "
            f"database built with --tree can check it){extra}",
            imp.line,
        )
    if imp.name is None:
        return Finding("import", subject, "ok", f"{imp.module} is {path}", imp.line, path, None)
    if state == "package":
        how, line, detail = (
            ("submodule", None, f"{path}{imp.name}")
            if at.module_file(f"{imp.module}.{imp.name}")[0] in ("file", "package")
            else ("unknown", None, None)
        )
        if how == "unknown":
            return Finding(
                "import",
                subject,
                "unchecked",
                f"{imp.module} is a package whose __init__.py is outside the indexed scope at {where}",
                imp.line,
            )
    else:
        how, line, detail = at.name_in(imp.module, path, imp.name)
    messages = {
        "defined": f"{imp.name} is defined in {path}:{line}",
        "re-export": f"{imp.module} re-exports {imp.name} from {detail} ({path}:{line})",
        "getattr": f"{imp.module} hands {imp.name} out through its module __getattr__, a compatibility shim that "
        f"imports it from {(detail or '').rpartition('.')[0]} ({path}:{line}); import it from there",
        "submodule": f"{imp.name} is the module {detail}",
        "tree-re-export": f"{path} names {imp.name} and {detail}:{line} defines it at top level: a re-export, as"
        f" the whole tree of {where} shows",
    }
    if how in messages:
        file = path if how not in ("submodule", "tree-re-export") else detail
        return Finding("import", subject, "ok", messages[how], imp.line, file, line)
    if how in ("star", "mentioned", "unknown"):
        why = {
            "star": f"{path} imports * at line {line}",
            "mentioned": f"{path} mentions {imp.name} but does not define"
            " it (re-exports of modules outside the scope are not recorded)",
            "unknown": f"{path} is outside the indexed scope",
        }[how]
        return Finding("import", subject, "unchecked", f"{why} at {where}", imp.line, path, line)
    msg, file, line = moved(imp.name)
    return Finding(
        "import",
        subject,
        "broken",
        f"{imp.module} ({path}) has no {imp.name} at {where}{msg}",
        imp.line,
        file,
        line,
    )


def _path_history(at: At, module: str) -> str:
    """`(it was in A - B; ...)` for a module file gone from this version, with where it went if known."""
    for candidate in module_path_candidates(module):
        spans = [s for s in at.index.path_history(candidate) if s["present"]]
        if spans:
            absent = next(
                (
                    s
                    for s in at.index.path_history(candidate)
                    if not s["present"]
                    and at.index.index_of(s["first"])
                    <= at.index.index_of(at.version)
                    <= at.index.index_of(s["last"])
                ),
                None,
            )
            moves = (
                f", moved to {', '.join(m.describe() for m in absent['moves'])}"
                if absent and absent["moves"]
                else ""
            )
            span = version_ranges.span(list(dict.fromkeys([spans[0]["first"], spans[-1]["last"]])))
            return f" ({candidate} is in {span}{moves})"
    return ""


def _class_kind(plugin: Plugin, at: At, pc: PluginClass) -> str | None:
    found = _vllm_base(plugin, pc.name)
    base = at.first(found[0]) if found else None
    return _kind_of(plugin, at, pc, base) if base is not None else None


def _kind_of(plugin: Plugin, at: At, pc: PluginClass, base: Cls) -> str | None:
    for r in plugin.registrations:
        if r.class_ == pc.name and r.kind in ("tool", "reasoning"):
            return r.kind
    order = {c.key for c in mro(at.v, base)}
    for k in at.contract.classes:
        if k.role == "base" and (k.module, k.name) in order and len(k.kinds) == 1 and k.kinds[0] != "engine":
            return k.kinds[0]
    return None


def _class(
    plugin: Plugin, at: At, pc: PluginClass, broken_imports: set, defined_somewhere: dict
) -> list[Finding]:
    found = _vllm_base(plugin, pc.name)
    if found is None:
        return []
    candidates, chain = found
    dotted = candidates[0]
    written = dotted.rpartition(".")[2]
    base = at.first(candidates, meant=False)
    if base is None:
        state = at.module_file(dotted.rpartition(".")[0])[0]
        if state == "unknown":
            return [
                Finding(
                    "base",
                    f"{pc.name}({written})",
                    "unchecked",
                    f"{dotted} is outside the indexed scope at {at.version}",
                    pc.line,
                )
            ]
        why = (
            "it is not importable as written (see the import)"
            if written in broken_imports
            else f"{dotted} is not a class of {at.version} in the scope"
        )
        base = at.meant(dotted)
        if base is None:
            return [
                Finding(
                    "base",
                    f"{pc.name}({written})",
                    "broken",
                    f"{pc.name} derives from {written}: {why}",
                    pc.line,
                )
            ]
        out = [
            Finding(
                "base",
                f"{pc.name}({written})",
                "broken",
                f"{pc.name} derives from {written}: {why}; the checks"
                f" below are against {base.name} as it is at {at.version} ({base.path}:{base.line})",
                pc.line,
                base.path,
                base.line,
            )
        ]
    else:
        out = [
            Finding(
                "base",
                f"{pc.name}({written})",
                "ok",
                f"{written} is {base.name}, {base.path}:{base.line}",
                pc.line,
                base.path,
                base.line,
            )
        ]
    kind = _kind_of(plugin, at, pc, base)
    order = mro(at.v, base)
    calls = [c for c in at.contract.calls if kind is None or c.kind == kind]
    for name, (owner, m) in _plugin_methods(plugin, chain).items():
        if not public(name):
            continue
        what = "constructor" if name == "__init__" else "override"
        subject = f"{owner}.{name}"
        hit = resolve_method(at.v, order, name)
        if hit is None:
            elsewhere = [w for w in defined_somewhere.get((pc.name, name), []) if w[0] != at.version]
            if elsewhere:
                v, f, ln = elsewhere[-1]
                out.append(
                    Finding(
                        what,
                        subject,
                        "broken",
                        f"{base.name} does not define {name} at {at.version} (it "
                        f"does at {v}, {f}:{ln}): vLLM no longer calls this override here"
                        if at.index.index_of(v) < at.index.index_of(at.version)
                        else f"{base.name} does not define {name} at {at.version} (it does from {v}, {f}:{ln}): "
                        "vLLM does not call this override here",
                        m.line,
                    )
                )
            continue
        d = hit[0]
        sig = at.signature(d, name)
        if sig is None:
            continue
        out += _compare(at, what, subject, m, d, sig, [c for c in calls if c.method == name])
    out += _super_calls(plugin, at, chain, order)
    return out


def _compare(
    at: At, what: str, subject: str, m: PluginMethod, d: Cls, sig: Signature, calls: list
) -> list[Finding]:
    mine = _callable(
        Signature(
            name=m.name,
            class_="plugin",
            module="plugin",
            file="",
            line=m.line,
            params=m.params,
            returns=None,
            decorators=[],
            body=None,
            text=m.text,
        )
    )
    theirs = _callable(sig)
    base_text = f"{d.name}.{m.name}{sig.text}"
    out, special = [], []
    for c in calls:
        if bind(theirs, c.positional, c.keywords, c.star, c.dstar) is not None:
            special.append(
                c
            )  # the base cannot take it either: a call for particular parsers, under a condition
            continue
        why = bind(mine, c.positional, c.keywords, c.star, c.dstar)
        if why is not None:
            out.append(
                Finding(
                    what,
                    subject,
                    "broken",
                    f"vLLM calls it as {c.text} ({c.file}:{c.line}): {m.name}{m.text} {why}",
                    m.line,
                    c.file,
                    c.line,
                )
            )
        elif (c.dstar or c.star) and not any(p.kind in VAR for p in mine):
            out.append(
                Finding(
                    what,
                    subject,
                    "warning",
                    f"vLLM calls it as {c.text} ({c.file}:{c.line}), passing "
                    f"extra arguments through * / **; {m.name}{m.text} takes none",
                    m.line,
                    c.file,
                    c.line,
                )
            )
    for status, why in narrower(mine, theirs):
        out.append(
            Finding(
                what,
                subject,
                status,
                f"{why} ({base_text}, {sig.file}:{sig.line})",
                m.line,
                sig.file,
                sig.line,
            )
        )
    if not out:
        n = len(calls) - len(special)
        seen = f"; the {n} call(s) vLLM makes in the scope bind" if n else ""
        if special:
            seen += (
                f" ({len(special)} call(s) the base itself does not accept are left out, made for particular"
                f" parsers: {', '.join(f'{c.file}:{c.line}' for c in special[:3])})"
            )
        out.append(
            Finding(
                what,
                subject,
                "ok",
                f"{m.name}{m.text} accepts what {base_text} accepts{seen}",
                m.line,
                sig.file,
                sig.line,
            )
        )
    return out


def _super_calls(plugin: Plugin, at: At, chain: list[str], order: list[Cls]) -> list[Finding]:
    out = []
    own = {name for cls in chain[1:] for name in (m.name for m in plugin.methods.get(cls, []))}
    for c in plugin.super_calls:
        if c["class"] not in chain or c["method"] in own:
            continue  # a plugin class's super() reaching another plugin class
        text = f"super().{c['method']}({', '.join(c['args'])})"
        hit = resolve_method(at.v, order, c["method"])
        if hit is None:
            out.append(
                Finding(
                    "super-call",
                    f"{c['class']}: {text}",
                    "broken",
                    f"{text}: no base of {c['class']} defines {c['method']} at {at.version}",
                    c["line"],
                )
            )
            continue
        sig = at.signature(hit[0], c["method"])
        if sig is None:
            continue
        why = bind(_callable(sig), c["positional"], c["keywords"], c["star"], c["dstar"])
        if why is None:
            out.append(
                Finding(
                    "super-call",
                    f"{c['class']}: {text}",
                    "ok",
                    f"{text} binds to {hit[0].name}.{c['method']}{sig.text}",
                    c["line"],
                    sig.file,
                    sig.line,
                )
            )
        else:
            out.append(
                Finding(
                    "super-call",
                    f"{c['class']}: {text}",
                    "broken",
                    f"{text}: {hit[0].name}.{c['method']}{sig.text} {why} at {at.version}",
                    c["line"],
                    sig.file,
                    sig.line,
                )
            )
    return out


def _registrations(plugin: Plugin, at: At) -> list[Finding]:
    out = []
    for r in plugin.registrations:
        subject = f"{r.kind} {r.name!r} ({r.manager})"
        method = "register_lazy_module" if r.form == "lazy-call" else "register_module"
        candidates = plugin.vllm_names(r.manager)
        dotted = candidates[0] if candidates else None
        manager = at.first(candidates, meant=False)
        if manager is None and dotted is not None and (manager := at.meant(dotted)) is not None:
            out.append(
                Finding(
                    "registration",
                    subject,
                    "broken",
                    f"{r.manager} ({dotted}) is not importable at "
                    f"{at.version} (see the import); checked against {manager.name} as it is there "
                    f"({manager.path}:{manager.line})",
                    r.line,
                    manager.path,
                    manager.line,
                )
            )
        if manager is None:
            status = "unchecked" if dotted is None else "broken"
            why = (
                f"{r.manager} is not a vLLM name the plugin imports"
                if dotted is None
                else f"{r.manager} ({dotted}) is not importable at {at.version} (see the import)"
            )
            out.append(Finding("registration", subject, status, why, r.line))
        else:
            hit = resolve_method(at.v, mro(at.v, manager), method)
            call = plugin.manager_calls.get(r.line)
            sig = at.signature(hit[0], method) if hit else None
            if hit is None:
                out.append(
                    Finding(
                        "registration",
                        subject,
                        "broken",
                        f"{manager.name} has no {method} at {at.version}",
                        r.line,
                        manager.path,
                        manager.line,
                    )
                )
            elif sig is not None and call is not None:
                why = bind(_callable(sig), call["positional"], call["keywords"], call["star"], call["dstar"])
                text = f"{r.manager}.{method}({', '.join(call['args'])})"
                out.append(
                    Finding(
                        "registration",
                        subject,
                        "broken" if why else "ok",
                        f"{text}: {manager.name}.{method}{sig.text} {why}"
                        if why
                        else f"{text} binds to {manager.name}.{method}{sig.text}",
                        r.line,
                        sig.file,
                        sig.line,
                    )
                )
        builtin = at.db.execute(
            "select real_file, real_line, impl from parser_map where version_id = ? and kind = ?"
            " and name = ?",
            [at.vid, r.kind, r.name],
        ).fetchone()
        if builtin:
            file, line, impl = builtin
            out.append(
                Finding(
                    "shadow",
                    f"{r.kind} {r.name!r}",
                    "warning",
                    f"{r.name} is also a built-in {r.kind} parser "
                    f"at {at.version} ({impl}, {file}:{line}): the plugin's class replaces it",
                    r.line,
                    file,
                    line,
                )
            )
    return out


def _shadow_changes(db, report: PluginVersion, since: str, plugin: Plugin) -> None:
    """Add to each shadow finding the versions after `since` (up to this one) where the built-in's code changed."""
    from ..core.specs import sort_key

    for f in report.findings:
        if f.what != "shadow":
            continue
        kind, name = f.subject.split(" ", 1)
        name = name.strip("'")
        row = db.execute(*lifecycle_of(name, kind, "real_file_changed_in, code_changed_in")).fetchone()
        changed = sorted({v.strip() for part in (row or ()) if part for v in part.split(",")}, key=sort_key)
        lo, hi = sort_key(since), sort_key(report.version)
        changed = [v for v in changed if lo < sort_key(v) <= hi]
        if changed:
            f.message += (
                f"; since {since} the built-in's code changed at {', '.join(changed)}, which the plugin does "
                f"not have (tpindex diff {since} {report.version} --code {name} shows it)"
            )
        elif sort_key(report.version) > lo:
            f.message += f"; the built-in's code is as at {since}"
