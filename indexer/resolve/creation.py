"""Class attributes as Python computes them when the classes are created, from facts extracted per blob
(extract/class_sets.py, extract/env_defaults.py), without running any code.

For a class C and an attribute X, the value C uses is the first of C's resolution order (classgraph.mro)
that has X of its own once it has been created. A class K gets X of its own, the last of these winning
(the order Python runs them in):

1. its class body (`X = value`);
2. `__init_subclass__` of its bases, run on K as it is created: the first base in K's resolution order
   that defines the hook runs it, and the next one runs too when that hook calls super(); a nearer hook's
   assignment wins. A guard reads K's attributes as they resolve for K (`cls.structural_tag_model is not
   None`) and environment flags;
3. its class decorators (bottom-up, so the topmost wins), functions that assign to the class they get
   (`def f(cls): cls.X = ...; return cls`, or the function a factory `@f(arg)` returns, its parameters
   standing for the arguments);
4. assignments after the class body in its module (`K.X = value`).

An environment flag read as `envs.NAME` (a module imported from the tree) has the default its module gives
(the lambda of `vllm/envs.py`'s table with every variable unset, else its TYPE_CHECKING declaration). The
value reported is the default configuration's; `condition` says what decides it (the guard, the flags'
defaults) and the value the other setting of each boolean flag gives. A guard that cannot be decided
(it reads something that is not a literal or a flag) leaves the value as it was, with a "may be" condition.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field

from ..extract.expr import UNKNOWN, compare
from .classgraph import Cls, Version, attrs, methods, mro, split

HOOK = "__init_subclass__"
MAX_DEPTH = 8


@dataclass
class Value:
    """An attribute's value as one class has it of its own after creation."""

    value: str | None  # as written
    py: object  # the value, or UNKNOWN
    cls: Cls  # the class that has it of its own
    file: str
    line: int
    set_by: str | None = None  # None: the class body
    guard: str | None = None  # the condition of the assignment that set it, as written
    flags: list[tuple[str, object]] = field(default_factory=list)  # (flag key, its value) the guard read
    maybe: list[str] = field(default_factory=list)  # rules whose guard could not be decided


@dataclass(frozen=True)
class Flag:
    key: str  # "vllm.envs.VLLM_X", or "$VLLM_X" for a variable read directly
    name: str  # VLLM_X
    default: object
    file: str | None
    line: int | None


def _py(value: str | None, kind: str | None):
    if value is None or kind != "literal":
        return UNKNOWN
    try:
        return ast.literal_eval(value)
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return UNKNOWN


class Creation:
    """What runs at class creation in one version, evaluated with some flags set (`env`: flag key -> value;
    the others have their defaults)."""

    def __init__(self, v: Version, env: dict[str, object] | None = None):
        self.v, self.env = v, env or {}
        self.memo: dict[tuple, Value | None] = {}
        self.flags_read: dict[str, Flag] = {}  # every flag a guard read while evaluating, by key
        self.deps: dict[tuple, set[str]] = {}  # (class key, attribute) -> the flags its value read
        self._reading: list[set[str]] = []  # the flags read by the values being computed, innermost last

    @classmethod
    def of(cls, v: Version, env: dict[str, object] | None = None) -> Creation:
        """The version's evaluation with these flags set, made once (Version.creations)."""
        key = frozenset((env or {}).items())
        if key not in v.creations:
            v.creations[key] = cls(v, env)
        return v.creations[key]

    def _read(self, keys) -> None:
        for reading in self._reading:
            reading.update(keys)

    # -- values ---------------------------------------------------------------------------------------

    def value(self, c: Cls, name: str, active: frozenset = frozenset()) -> Value | None:
        key = (c.key, name)
        if key in self.memo:
            self._read(self.deps[key])
            return self.memo[key]
        if key in active or len(active) > MAX_DEPTH:
            return None
        active = active | {key}
        maybe: list[str] = []
        found = None
        self._reading.append(set())
        try:
            for k in mro(self.v, c):
                found = self.own(k, name, active, maybe)
                if found is not None:
                    break
        finally:
            read = self._reading.pop()
        if found is not None and maybe and found.maybe != maybe:
            found = Value(**{**found.__dict__, "maybe": list(dict.fromkeys(maybe))})
        self.memo[key], self.deps[key] = found, read
        self._read(read)
        return found

    def own(self, k: Cls, name: str, active: frozenset, maybe: list[str]) -> Value | None:
        """X as K has it of its own once created (None: K leaves it to its bases); a rule whose guard cannot
        be decided is added to `maybe`."""
        for rule in self._after_body(k, name) + self._decorated(k, name) + self._hooks(k, name):
            holds, flags = self.holds(rule, k, active)
            if holds is True:
                return Value(
                    rule["value"],
                    _py(rule["value"], rule["value_kind"]),
                    k,
                    rule["file"],
                    rule["line"],
                    rule["set_by"],
                    rule["guard_text"],
                    flags,
                )
            if holds is UNKNOWN:
                maybe.append(
                    f"may be {rule['value']}: {rule['set_by']} ({rule['file']}:{rule['line']}) sets it"
                    f" when {rule['guard_text']}, which is not decided here"
                )
        body = attrs(self.v, k).get(name)
        if body is not None:
            return Value(body["value"], _py(body["value"], body["value_kind"]), k, k.path, body["line"])
        return None

    # -- the rules that may set X on K, in the order they win -------------------------------------------

    def _after_body(self, k: Cls, name: str | None = None) -> list[dict]:
        if k.binding:
            return []
        rows = self.v.module(k.module).sets.get(("after_body", f"{k.module}.{k.name}"), [])
        return [
            {**r, "file": k.path, "set_by": "assignment after the class body"}
            for r in reversed(rows)
            if name in (None, r["attribute"])
        ]

    def _decorated(self, k: Cls, name: str | None = None) -> list[dict]:
        if k.binding:
            return []
        record = self.v.module(k.module).classes.get(k.name) or {}
        out = []
        for written in json.loads(record.get("decorators") or "[]"):  # topmost first: it is applied last
            head = written.split("(")[0].strip()
            full = self.v.resolve_in(k.module, head)
            if not full:
                continue
            mod, fn = split(full, self.v)
            m = self.v.module(mod)
            if m is None:
                continue
            for r in reversed(m.sets.get(("decorator", fn), [])):
                if name in (None, r["attribute"]):
                    out.append(
                        {**r, "value": _argument(r, written), "file": m.path, "set_by": f"decorator {fn}"}
                    )
        return out

    def _hooks(self, k: Cls, name: str | None = None) -> list[dict]:
        out = []
        for h in mro(self.v, k)[1:]:
            hook = methods(self.v, h).get(HOOK)
            if hook is None:
                continue
            rows = self.v.module(h.module).sets.get(("init_subclass", h.name), []) if not h.binding else []
            out.extend(
                {**r, "file": h.path, "set_by": f"{h.name}.{HOOK}"}
                for r in reversed(rows)
                if name in (None, r["attribute"])
            )
            if not hook["calls_super"]:
                break
        return out

    # -- guards -------------------------------------------------------------------------------------------

    def holds(self, rule: dict, k: Cls, active: frozenset) -> tuple[object, list[tuple[str, object]]]:
        """Whether a rule's guard holds for K: True, False or UNKNOWN, with the flags it read."""
        if not rule.get("guard"):
            return True, []
        flags: list[tuple[str, object]] = []
        got = self._eval(json.loads(rule["guard"]), k, active, flags)
        return (UNKNOWN if got is UNKNOWN else bool(got)), flags

    def _eval(self, t: dict, k: Cls, active: frozenset, flags: list):
        op = t.get("op")
        if op in ("and", "or"):  # as truth values: a decided operand that ends it wins over an undecided one
            undecided = False
            for a in t["args"]:
                got = self._eval(a, k, active, flags)
                if got is UNKNOWN:
                    undecided = True
                elif bool(got) is (op == "or"):
                    return op == "or"
            return UNKNOWN if undecided else op == "and"
        if op == "not":
            got = self._eval(t["arg"], k, active, flags)
            return UNKNOWN if got is UNKNOWN else not got
        if op == "cmp":
            return compare(
                t["cmp"], self._eval(t["left"], k, active, flags), self._eval(t["right"], k, active, flags)
            )
        if "lit" in t:
            return _py(t["lit"], "literal")
        if "attr" in t:
            found = self.value(k, t["attr"], active)
            return UNKNOWN if found is None else found.py
        if "env" in t:
            key = f"${t['env']}"
            self.flags_read.setdefault(key, Flag(key, t["env"], _py(t["value"], "literal"), None, None))
            got = self.env.get(key, _py(t["value"], "literal"))
            flags.append((key, got))
            self._read((key,))
            return got
        if t.get("resolved"):
            flag = self.flag(t["resolved"])
            if flag is not None:
                got = self.env.get(flag.key, flag.default)
                flags.append((flag.key, got))
                self._read((flag.key,))
                return got
        return UNKNOWN

    def flag(self, dotted: str) -> Flag | None:
        """An environment flag a module of the tree gives (`vllm.envs.VLLM_X`), with its default."""
        if dotted in self.flags_read:
            return self.flags_read[dotted]
        mod, name = split(dotted, self.v)
        m = self.v.module(mod)
        row = m.envs.get(name) if m is not None else None
        if row is None:
            return None
        flag = Flag(dotted, name, _py(row["value"], "literal"), m.path, row["line"])
        self.flags_read[dotted] = flag
        return flag


def _argument(rule: dict, decorator: str) -> str:
    """A factory's rule value with the decorator call's argument for a parameter (`@with_choice(False)`)."""
    if not rule.get("params") or rule["value_kind"] != "name":
        return rule["value"]
    params = json.loads(rule["params"])
    try:
        call = ast.parse(decorator.strip(), mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return rule["value"]
    if not isinstance(call, ast.Call) or rule["value"] not in params:
        return rule["value"]
    given = {
        params[i]: a for i, a in enumerate(call.args) if i < len(params) and not isinstance(a, ast.Starred)
    }
    given.update({kw.arg: kw.value for kw in call.keywords if kw.arg})
    arg = given.get(rule["value"])
    return ast.unparse(arg) if arg is not None else rule["value"]


def attribute(v: Version, c: Cls, name: str) -> dict | None:
    """X as C uses it in vLLM's default configuration: a parser_attrs row (value, defining_class, file, line,
    own, set_by, condition), or None when no class of C's resolution order has it."""
    base = Creation.of(v)
    found = base.value(c, name)
    if found is None:
        return None
    flags = [base.flags_read[key] for key in sorted(base.deps.get((c.key, name), ()))]
    parts: list[str] = []
    if found.set_by and found.guard:
        read = [base.flags_read[key] for key, _ in dict.fromkeys(found.flags) if key in base.flags_read]
        parts.append(found.guard + "".join(f" ({_default(f)})" for f in read))
    for flag in flags:
        if not isinstance(flag.default, bool):
            if any(key == flag.key for key, _ in found.flags):
                parts.append(f"may differ when {flag.name} is set ({_default(flag)})")
            continue
        other = Creation.of(v, {flag.key: not flag.default}).value(c, name)
        if other is None or other.value == found.value:
            continue
        alt = f"{other.value} when {flag.name} is {not flag.default}"
        if not found.set_by or not any(key == flag.key for key, _ in found.flags):
            by = (
                f"{other.set_by}, {other.file}:{other.line}"
                if other.set_by
                else f"{other.cls.name}, {other.file}:{other.line}"
            )
            alt += f" ({by}; {_default(flag)})"
        parts.append(alt)
    parts.extend(found.maybe)
    return {
        "value": found.value,
        "defining_class": found.cls.name,
        "file": found.file,
        "line": found.line,
        "own": int(found.cls == c),
        "set_by": found.set_by,
        "condition": "; ".join(parts) or None,
    }


def _default(flag: Flag) -> str:
    where = f", {flag.file}:{flag.line}" if flag.file else " (read where it is used)"
    return f"{flag.name} defaults to {flag.default!r}{where}"


def names(v: Version, c: Cls) -> set[str]:
    """The attributes what runs at class creation may set on C: by the hooks, decorators and assignments
    after the body of the classes in C's resolution order."""
    cr = Creation.of(v)
    return {
        r["attribute"]
        for k in mro(v, c)
        for get in (cr._after_body, cr._decorated, cr._hooks)
        for r in get(k)
    }
