"""check-plugin's summary: the lines of a plugin to change for it to work at the newest checked version, what
to write in their place, and the versions the file so changed works at. The changed file is checked again at
every version (never guessed), so the range said is the check's own answer.

What a broken finding at the target version asks for:

- an import from a module that no longer provides the name: the module that does there (as the check's
  `whereabouts` lists it: re-exports and shorter paths first); a statement importing several names becomes one
  statement per module. A name defined nowhere at the target, used as the annotation of a parameter of a
  method the plugin overrides, is imported as the type the base's method annotates that parameter with there
  (`from vllm.tokenizers import TokenizerLike as AnyTokenizer`), else it has no replacement;
- a constructor or override whose parameters fall short of the base's: its header, with the base's positional
  parameters it lacks added (with the base's default, else None), its own required parameters the base does
  not take given a default, `**kwargs` where the base takes keyword-only parameters it does not accept, and a
  positional parameter renamed when vLLM passes the base's name for it by keyword (its uses in the body must
  be renamed too: the change says so);
- an override of a method the base does not define at the target (vLLM does not call it there): deleted;
- a super() call missing arguments the base requires: the call with the plugin method's parameters of those
  names added (on one line only);
- a base or registration broken because its name is not importable: the import's change covers it.

Anything else broken has no replacement (`instead` null) and stays as written in the re-check.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..resolve.classgraph import mro, resolve_method
from .contract import POSITIONAL, signature_text
from .contract_model import Change, Finding, Param, PluginSummary

if TYPE_CHECKING:
    from .contract_model import PluginReport


def summary(plugin, report: PluginReport, ats: dict, recheck, base_of) -> PluginSummary:
    """The summary of `report`, a check of `plugin` (answers/plugin.py's Plugin) at the versions of `ats` (each
    version's At); `recheck(bytes)`: the report of a changed file over the same versions (its own summary not
    made); `base_of(at, plugin class name)`: the vLLM class it derives from at that version, or None. (plugin.py
    hands these in: this module imports nothing of it.)"""
    target = report.versions[-1] if report.versions else None
    if target is None or target.compatible:
        return PluginSummary(
            target=target.version if target else "",
            works_as_written=True,
            changes=[],
            works_after=report.compatible,
        )
    fixer = _Fixer(plugin, ats[target.version], target.findings, base_of)
    changes = fixer.changes()
    patched = fixer.apply(changes)
    works = recheck(patched).compatible if any(c.instead is not None for c in changes) else report.compatible
    return PluginSummary(target=target.version, works_as_written=False, changes=changes, works_after=works)


class _Fixer:
    def __init__(self, plugin, at, findings: list[Finding], base_of):
        self.plugin, self.at, self.base_of = plugin, at, base_of
        self.lines = plugin.data.decode("utf-8", "replace").splitlines()
        self.broken = [f for f in findings if f.status == "broken"]
        self.by_subject = {f.subject: f for f in findings if f.what == "import"}
        spans = plugin.spans
        self.import_end = {int(k): v for k, v in spans.get("imports", {}).items()}
        self.defs = spans.get("defs", {})

    # -- the changes ----------------------------------------------------------------------------------------
    def changes(self) -> list[Change]:
        out: dict[int, Change] = {}
        for ln in sorted({f.plugin_line for f in self.broken if f.what == "import" and f.plugin_line}):
            out[ln] = self._import(ln)
        imported = {c.line for c in out.values()}
        for f in self.broken:
            if f.what == "import" or not f.plugin_line or f.plugin_line in out:
                continue
            if f.what in ("base", "registration") and "(see the import)" in f.message and imported:
                continue  # the import's change covers it
            change = None
            if f.what in ("constructor", "override"):
                change = self._method(f)
            elif f.what == "super-call":
                change = self._super(f)
            if change is None:
                change = Change(
                    f.plugin_line, f.plugin_line, self._written(f.plugin_line, f.plugin_line), None, f.message
                )
            if change.line not in out:
                out[change.line] = change
        return [out[k] for k in sorted(out)]

    def _written(self, first: int, last: int) -> str:
        return "\n".join(self.lines[first - 1 : last])

    def _indent(self, line: int) -> str:
        text = self.lines[line - 1] if line - 1 < len(self.lines) else ""
        return text[: len(text) - len(text.lstrip())]

    def _import(self, line: int) -> Change:
        end = self.import_end.get(line, line)
        imports = [i for i in self.plugin.imports if i.line == line]
        placed: dict[str, list[str]] = {}  # module -> names as written in the statement
        why, missing = [], []
        for imp in imports:
            if imp.name is None:
                missing.append(imp.module)
                continue
            subject = f"from {imp.module} import {imp.name}"
            f = self.by_subject.get(subject)
            written = imp.name + (f" as {imp.alias}" if imp.alias else "")
            if f is None or f.status != "broken":
                placed.setdefault(imp.module, []).append(written)
                continue
            module = self._home(imp.name, imp.module)
            if module is not None:
                placed.setdefault(module, []).append(written)
                continue
            swap = self._annotated(imp.alias or imp.name)
            if swap is not None:
                module, name, where = swap
                placed.setdefault(module, []).append(f"{name} as {imp.alias or imp.name}")
                why.append(
                    f"{imp.name} is defined nowhere at {self.at.version}; {where} annotates it as {name}"
                )
                continue
            missing.append(imp.name)
        written = self._written(line, end)
        if missing:
            return Change(
                line,
                end,
                written,
                None,
                f"{', '.join(missing)}: defined nowhere in the indexed scope at {self.at.version}, and no parameter"
                " the plugin annotates with it tells what stands for it there",
            )
        indent = self._indent(line)
        instead = "\n".join(f"{indent}from {m} import {', '.join(names)}" for m, names in placed.items())
        return Change(line, end, written, instead, "; ".join(why))

    def _home(self, name: str, old: str) -> str | None:
        """The module to import `name` from at the target: the first of the check's whereabouts, a defining
        module replaced by the outermost package of it whose __init__.py names it (a --tree version: a
        re-export, as `vllm.tokenizers` is TokenizerLike's, defined in vllm/tokenizers/protocol.py)."""
        for module, file, _ in self.at.whereabouts(name):
            module = module.split(" ", 1)[0]
            if module.split(".")[0] != "vllm":
                continue
            if self.at.index.has_tree[self.at.version] and file.endswith(".py"):
                parts = module.split(".")
                for i in range(2, len(parts)):
                    package = "/".join(parts[:i]) + "/__init__.py"
                    if self.at.index.mentioned_in(self.at.version, name, package):
                        module = ".".join(parts[:i])
                        break
            if module != old:
                return module
        return None

    def _annotated(self, name: str) -> tuple[str, str, str] | None:
        """(module, type, where) for a name the plugin annotates a parameter of an overriding method with,
        when the base's method annotates that parameter with a type importable at the target."""
        for pc in self.plugin.classes:
            base = self._base(pc.name)
            if base is None:
                continue
            order = mro(self.at.v, base)
            for m in pc.methods:
                for p in m.params:
                    if p.annotation != name:
                        continue
                    hit = resolve_method(self.at.v, order, m.name)
                    sig = self.at.signature(hit[0], m.name) if hit else None
                    theirs = next((q for q in (sig.params if sig else []) if q.name == p.name), None)
                    if theirs is None or not theirs.annotation or not theirs.annotation.isidentifier():
                        continue
                    module = self._home(theirs.annotation, "")
                    if module is not None:
                        return module, theirs.annotation, f"{hit[0].name}.{m.name}"
        return None

    def _base(self, cls: str):
        return self.base_of(self.at, cls)

    def _method(self, f: Finding) -> Change | None:
        owner, _, name = f.subject.rpartition(".")
        span = self.defs.get(f"{owner}.{name}")
        pc = next((c for c in self.plugin.classes if c.name == owner), None)
        m = next((x for x in (pc.methods if pc else []) if x.name == name), None)
        base = self._base(owner) if pc else None
        if span is None or m is None or base is None:
            return None
        hit = resolve_method(self.at.v, mro(self.at.v, base), name)
        if hit is None:  # the base does not define it here: vLLM does not call it
            return Change(
                span["start"],
                span["end_line"],
                self._written(span["start"], span["end_line"]),
                "",
                f"{base.name} does not define {name} at {self.at.version}: vLLM does not call it there (what it"
                " does must be done elsewhere)",
            )
        sig = self.at.signature(hit[0], name)
        if sig is None:
            return None
        params, note = self._params(m.params, sig.params, name)
        if params == m.params:
            return None
        header = f"{' ' * span['indent']}def {name}{signature_text(params, None)}{span['tail']}:"
        why = f"{hit[0].name}.{name}{sig.text} at {self.at.version} ({sig.file}:{sig.line})" + note
        return Change(
            span["line"], span["header_end"], self._written(span["line"], span["header_end"]), header, why
        )

    def _params(self, mine: list[Param], theirs: list[Param], method: str) -> tuple[list[Param], str]:
        """The plugin method's parameters made to accept what the base's accept, and a note on what else the
        change asks of the file."""
        out = [Param(p.name, p.kind, p.annotation, p.default) for p in mine]
        base = _callable_params(theirs)
        own = _callable_params(out)
        note = ""
        pos_b = [p for p in base if p.kind in POSITIONAL]
        pos_p = [p for p in own if p.kind in POSITIONAL]
        keywords = {k for c in self.at.contract.calls if c.method == method for k in c.keywords}
        for i, p in enumerate(pos_p[: len(pos_b)]):
            b = pos_b[i]
            if p.name != b.name and b.name in keywords and b.name not in {q.name for q in own}:
                note += f"; rename {p.name} to {b.name} in its body too (vLLM passes {b.name}= by keyword)"
                p.name = b.name
        if not any(p.kind == "var-positional" for p in own):
            at = max(
                (out.index(p) + 1 for p in pos_p), default=1 if out and out[0].name in ("self", "cls") else 0
            )
            for b in pos_b[len(pos_p) :]:
                if b.name not in {q.name for q in out}:
                    out.insert(at, Param(b.name, "positional-or-keyword", None, b.default or "None"))
                    at += 1
        base_names = {p.name for p in base}
        for p in _callable_params(out):
            if p.default is None and p.kind in POSITIONAL + ("keyword-only",) and p.name not in base_names:
                p.default = "None"
        accepted = {p.name for p in out if p.kind in ("positional-or-keyword", "keyword-only")}
        if any(p.kind == "keyword-only" and p.name not in accepted for p in base) and not any(
            p.kind == "var-keyword" for p in out
        ):
            out.append(Param("kwargs", "var-keyword", None, None))
        return out, note

    def _super(self, f: Finding) -> Change | None:
        call = next((c for c in self.plugin.super_calls if c["line"] == f.plugin_line), None)
        if call is None or call["keywords"] or call["star"] or call["dstar"]:
            return None
        missing = re.search(r"missing required argument\(s\): (.+?) at ", f.message)
        if missing is None:
            return None
        text = self.lines[f.plugin_line - 1]
        head = f"super().{call['method']}("
        start = text.find(head)
        close = _closing(text, start + len(head) - 1) if start >= 0 else -1
        if close < 0:
            return None
        args = [*call["args"], *(n.strip() for n in missing.group(1).split(","))]
        instead = f"{text[:start]}{head}{', '.join(args)}{text[close:]}"
        return Change(f.plugin_line, f.plugin_line, text, instead, f.message)

    # -- the changed file -----------------------------------------------------------------------------------
    def apply(self, changes: list[Change]) -> bytes:
        lines = list(self.lines)
        for c in sorted(changes, key=lambda c: -c.line):
            if c.instead is not None:
                lines[c.line - 1 : c.end_line] = c.instead.splitlines()
        return ("\n".join(lines) + "\n").encode()


def _callable_params(params: list[Param]) -> list[Param]:
    """Without self / cls (the same objects, so a change to one is a change to the list's)."""
    return (
        params[1:]
        if params and params[0].name in ("self", "cls") and params[0].kind in POSITIONAL
        else params
    )


def _closing(text: str, at: int) -> int:
    """The index of the `)` closing the `(` at `at`, on the same line; -1 when it is not there."""
    depth = 0
    for i in range(at, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1
