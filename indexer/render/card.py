"""The text and Markdown of `card` (answers/card.py's `Card`): one section per part of the card, every name's
cards of a version as one Markdown document with a table of contents."""

from __future__ import annotations

import json
import re

from ..answers.card import Card
from ..answers.plain import given
from ..answers.successors import Successor
from ..answers.which import CHOICE_FLAGS


def _at(file: str | None, line: int | None) -> str:
    return f"{file}:{line}" if file and line else (file or "?")


def _show(value: str) -> str:
    """A sentinel as one line: escapes for newlines and tabs, quotes when it has surrounding spaces."""
    s = json.dumps(value, ensure_ascii=False)[1:-1]
    return s if s == s.strip() and s else f'"{s}"'


def _life(life: dict | None) -> str:
    if not life:
        return "?"
    facts = [f"first {life['first_version']}", f"last {life['last_version']}"]
    if life.get("became_unified"):
        facts.append(f"unified from {life['became_unified']}")
    if life.get("real_file_changed_in"):
        facts.append(f"real file changed in {life['real_file_changed_in']}")
    if life.get("code_changed_in"):
        facts.append(f"code changed in {life['code_changed_in']}")
    if life.get("removed_in"):
        gone = (
            Successor(life["successors_by"], life["successors"], life["renamed_to"])
            if life.get("successors_by")
            else None
        )
        facts.append(f"removed in {life['removed_in']}" + (f", {gone.phrase()}" if gone else ""))
    if life.get("renamed_from"):
        facts.append(f"renamed from {', '.join(life['renamed_from'])} in {life['first_version']}")
    return "; ".join(facts)


def _pair(p: dict) -> str:
    shared = "shares the real class" if p["shares_real_class"] else "another real class"
    return f"{p['name']} ({p['kind']} parser): {p['impl']}, {p['real_class']} ({_at(p['real_file'], p['real_line'])}); {shared}"


def _matched(m: dict) -> str:
    return f"{m['file']} ({m['level']}, by {m['via']})"


def _template(m: dict, md: bool) -> list[str]:
    """A chat template and the call markup it renders (one line: newlines as \\n)."""
    out = [_matched(m)]
    if m.get("markup"):
        from ..answers.markup import one_line

        out.append(f"  renders  {_code(one_line(m['markup']), md)}  ({m['shape']})")
    elif m.get("render_error"):
        out.append(f"  renders no call: {m['render_error']}")
    return out


def _code(s: str, md: bool) -> str:
    return f"`{s}`" if md else s


def _attribute(a: dict) -> str:
    """`X = value  (class, file:line)`; set at class creation: `(X.__init_subclass__ on class, file:line)`;
    with the condition that changes it in vLLM's default configuration."""
    who = f"{a['set_by']} on {a['class']}" if a.get("set_by") else a["class"]
    out = f"{a['attribute']} = {a['value']}  ({who}, {_at(a['file'], a['line'])})"
    if a["role"] != "registered":
        out += f"  [{a['role']}]"
    return out + (f"  condition: {a['condition']}" if a.get("condition") else "")


def _adjust(a: dict) -> list[str]:
    head = f"{a['class']}.adjust_request  {_at(a['file'], a['line'])}"
    if a["calls_super"]:
        head += "  (also calls super().adjust_request)"
    if a["delegates"]:
        head += f"  (hands the call to self.{a['delegates']})"
    lines = [head]
    for s in a["sets"]:
        when = f"  when {s['guard']}" if s["guard"] else ""
        lines.append(f"  sets request.{s['field']} = {s['value']}{when}  (line {s['line']})")
    if not a["sets"] and not a["delegates"]:
        lines.append("  sets no request field directly")
    return lines


def sections(c: Card, md: bool = False) -> list[tuple[str, list[str]]]:
    """The card as (label, lines) pairs, shared by the text and Markdown renderings (md: no column
    padding, code spans around sentinels)."""
    w = (lambda n: 0) if md else (lambda n: n)
    out: list[tuple[str, list[str]]] = []
    how = f"{c.impl}" + (f" (unresolved: {c.reason})" if c.impl == "unresolved" else "")
    out.append(("impl", [how]))
    out.append(("registered as", [f"{c.form} at {_at(c.registry.file, c.registry.line)}"]))
    if c.aliases:
        out.append(("same class as", [", ".join(c.aliases)]))
    reg = f"{c.registered.class_}  {_at(c.registered.file, c.registered.line)}"
    if c.registered.class_ is None:  # the hard-coded era: a choice of the flag, no class registered
        reg = (
            f"none: a {CHOICE_FLAGS.get(c.kind, 'parser')} choice; the serving code picks {c.dispatch.class_} by"
            f" name at {_at(c.dispatch.file, c.dispatch.line)}"
            if c.dispatch
            else "none"
        )
    flags = [
        w for w, on in (("stub: no methods of its own", c.stub), ("re-exports the class", c.reexport)) if on
    ]
    out.append(("registered class", [reg + (f"  ({'; '.join(flags)})" if flags else "")]))
    if c.adapter:
        out.append(("adapter", [c.adapter]))
    if c.wrapper:
        out.append(
            (
                "wrapper",
                [
                    f"{c.wrapper.class_}  {_at(c.wrapper.file, c.wrapper.line)} (composed by the parser"
                    " manager; hands extraction on)"
                ],
            )
        )
    out.append(
        ("real class", [f"{c.real.class_}  {_at(c.real.file, c.real.line)}" if c.real.class_ else "-"])
    )
    if c.rebinds:  # an overriding __init__ whose bindings the real class's methods read
        out.append(
            (
                "rebinds",
                [
                    f"{r['class']}.__init__  {r['file']}:{r['line']}-{r['end_line']}  {', '.join(r['attributes'])}"
                    f" (read by {c.real.class_}'s methods)"
                    for r in c.rebinds
                ],
            )
        )
    if c.parent_class:
        out.append(("subclasses parser", [c.parent_class]))
    out.append(
        (
            "code files",
            [
                f"{f['file']}  ({', '.join(f['roles'])}{'; shared framework' if f['shared'] else ''})"
                for f in c.code_files
            ]
            or ["-"],
        )
    )
    sm = c.streaming_method
    stream = c.streaming or "?"
    if sm:
        stream += f": {sm['class']}.{sm['method']}  {_at(sm['file'], sm['line'])}"
        if c.streaming_from:  # another name's registered class
            whose = " / ".join(f"{n}'s" for n in c.streaming_from)
            stream += f"  ({whose} parser)"
    out.append(("streaming", [stream]))
    out.append(
        (
            "methods",
            [
                f"{m['method']:<{w(36)}} {m['class'] or '-':<{w(32)}} {_at(m['file'], m['line'])}  {m['body']}"
                + (f"  [{m['role']}]" if m["role"] != "registered" else "")
                for m in c.methods
                if m["body"] != "absent"
            ]
            or ["-"],
        )
    )
    out.append(("attributes", [_attribute(a) for a in c.attributes] or ["-"]))
    out.append(("adjust_request", [x for a in c.adjust_request for x in _adjust(a)] or ["not defined"]))
    sent = []
    for s in c.sentinels:
        p = s["places"][0]
        names = ", ".join(s["attributes"]) or ("in a regex" if p["how"] == "regex" else "literal")
        if p["how"] == "reference":
            names += " (a reference: the token is defined outside vLLM's tree)"
        elif p["how"] == "pattern":
            names += f" (a pattern: {', '.join(dict.fromkeys(re.findall(r'{[^{}]*}', s['value'])))} filled in at run time)"
        more = f" (+{len(s['places']) - 1} more)" if len(s["places"]) > 1 else ""
        sent.append(f"{_code(_show(s['value']), md):<{w(28)}} {names}  {_at(p['file'], p['line'])}{more}")
        if s["non_ascii"]:
            sent.append(f"{'':<{w(28)}}   non-ASCII: {s['non_ascii']}")
    out.append(("sentinels", sent or ["none found as literals in its own code"]))
    out.append(("other registries", [_pair(p) for p in c.pairs] or ["no parser of the same name"]))
    out.append(
        ("chat templates", [x for m in c.chat_templates for x in _template(m, md)] or ["none matched"])
    )
    out.append(("tests", [_matched(m) for m in c.tests] or ["none matched"]))
    out.append(
        ("plants", [f"{p['plant']}  {_at(p['file'], p['line'])}  {p['text']}" for p in c.plants] or ["-"])
    )
    out.append(
        (
            "markers",
            [f"{m['kind']}  {_at(m['file'], m['line'])}  {m['text'][:100]}" for m in c.markers] or ["-"],
        )
    )
    if given(c.behaviour):
        from ..answers.atlas_model import BehaviourRange
        from .atlas import behaviour_line

        out.append(
            (
                "behaviour (atlas)",
                [
                    behaviour_line(BehaviourRange(**b))
                    + (
                        f"  [code: tpindex diff {b['before']} {b['first']} --code {c.name}]"
                        if b["before"]
                        else ""
                    )
                    for b in c.behaviour
                ],
            )
        )
    out.append(("lifecycle", [_life(c.lifecycle)]))
    if c.notes:
        out.append(("notes", c.notes))
    out.append(
        (
            "upstream",
            [u for u in (c.registered.url, c.real.url if c.real.file != c.registered.file else None) if u]
            or ["-"],
        )
    )
    return out


def title(c: Card) -> str:
    return f"{c.name} ({c.kind} parser) at {c.version}"


def format_text(c: Card) -> str:
    lines = [title(c)]
    for label, body in sections(c):
        for i, b in enumerate(body):
            lines.append(f"  {label if i == 0 else '':<18} {b}".rstrip())
    return "\n".join(lines)


def _md(s: str) -> str:
    return s.replace("|", "\\|")


def format_markdown(c: Card, level: int = 2) -> str:
    lines = [f"{'#' * level} {c.name} ({c.kind} parser) at {c.version}", ""]
    lines += ["| | |", "|---|---|"]
    for label, body in sections(c, md=True):
        lines.append(f"| {label} | {'<br>'.join(_md(b.strip()) for b in body)} |")
    return "\n".join(lines) + "\n"


def format_all_markdown(version: str, cs: list[Card]) -> str:
    """One document: a table with a row per name, then a section per name."""
    lines = [
        f"# vLLM {version}: tool-calling parser reference",
        "",
        f"Generated by tpindex from the index of vLLM {version}: {len(cs)} registered name(s). Real file: where"
        " the parsing code is. Sentinels: token strings found as literals in the name's own code.",
        "",
        "| kind | name | impl | real class | real file | streaming | sentinels | chat templates | tests |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in cs:
        sent = " ".join(f"`{_md(_show(s['value']))}`" for s in c.sentinels[:6]) + (
            " …" if len(c.sentinels) > 6 else ""
        )
        tmpl = ", ".join(m["file"].rsplit("/", 1)[-1] for m in c.chat_templates)
        lines.append(
            f"| {c.kind} | [{c.name}](#{_anchor(c)}) | {c.impl} | {c.real.class_ or ''} | {c.real.file or ''} |"
            f" {c.streaming or ''} | {sent} | {_md(tmpl)} | {len(c.tests)} |"
        )
    lines.append("")
    for c in cs:
        lines.append(f'<a id="{_anchor(c)}"></a>')
        lines.append(format_markdown(c, level=2))
    return "\n".join(lines)


def _anchor(c: Card) -> str:
    return f"{c.kind}-{c.name}".replace("_", "-").replace(".", "-").lower()
