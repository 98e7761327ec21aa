"""`which`: the file that really implements a parser name, with every hop, at one version or all."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import ranges
from ..core.suggest import close_names
from ..store.database import lifecycle_of
from .versions import AnswerError, indexed, newest, require

if TYPE_CHECKING:  # the data classes are imported where they are made: card checks names without them
    from .lifecycle_model import History, Lifecycle
    from .which_model import Hop, Parser, Which

KIND_WORDS = {
    "tool": "a tool parser",
    "reasoning": "a reasoning parser",
    "engine": "an engine-registry parser",
}
# what makes two consecutive versions one range of `which --all`
SIGNATURE = (
    "impl",
    "registered_file",
    "registered_class",
    "real_class",
    "real_file",
    "adapter",
    "wrapper_class",
    "reason",
    "streaming_from",
    "_code_sig",
)


def known_names(db) -> list[str]:
    return [r[0] for r in db.execute("select distinct name from parser_map order by name")]


def kinds_of(db, name: str) -> list[str]:
    if not name.isascii() and not _encodable(name):
        return []  # not UTF-8 (a command-line argument of other bytes): no name is that
    return [
        r[0] for r in db.execute("select distinct kind from parser_map where name = ? order by kind", [name])
    ]


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def registered_name(db, name: str) -> str:
    """The name as registered, for a name given in any case (`Qwen3` is qwen3); the name itself when it is
    registered as given or nothing matches it (check_name then says so). Names that differ only in case are
    refused with both listed."""
    if kinds_of(db, name) or not _encodable(name):
        return name
    found = [
        r[0] for r in db.execute("select distinct name from parser_map where lower(name) = lower(?)", [name])
    ]
    if len(found) > 1:
        raise AnswerError(
            f"{name!r} is several names that differ only in case: {', '.join(found)}", "give one as written"
        )
    return found[0] if found else name


def check_name(db, name: str, kind: str | None = None) -> list[str]:
    """The kinds the name is registered as in some indexed version (only `kind`, when given). Every name is
    listed only for a name not found (pages check a name per version range: 26 listings for one page)."""
    kinds = kinds_of(db, name)
    if not kinds:
        names = known_names(db)  # read only to suggest close names: a scan of every row
        close = close_names(name, names, n=5, cutoff=0.5, also=lambda n: name in n)
        hint = (
            f"did you mean: {', '.join(close)}?" if close else "tpindex export lists the names of a version"
        )
        model = _documented_model(db, name)
        if model:
            hint = f"{name} is {model} in the documentation: tpindex fit --model {name}"
        raise AnswerError(f"no parser named {name!r} in any indexed version", hint).offering(names=close)
    if kind and kind not in kinds:
        are = " and ".join(KIND_WORDS.get(k, k) for k in kinds)
        raise AnswerError(
            f"{name!r} is {are}, not {KIND_WORDS.get(kind, kind)}", f"drop --kind, or use --kind {kinds[0]}"
        )
    return [kind] if kind else kinds


def _documented_model(db, name: str) -> str | None:
    """The family the newest version's documentation gives a model name (for a hint), None when none."""
    from .docpairs import resolve

    try:
        got = resolve(db, newest(db), name)
    except AnswerError:
        return None
    return got.family if got else None


def spans(versions: list[str], present: set[str]) -> list[tuple[str, str]]:
    """Runs of consecutive indexed versions in `present`, as (first, last)."""
    return [(r[0], r[-1]) for r in ranges.runs([v for v in versions if v in present], versions)]


def span_text(runs: list[tuple[str, str]]) -> str:
    return ranges.runs_text(
        [[a] if a == b else [a, b] for a, b in runs], sep=" – ", empty="no indexed version"
    )


def parsers_at(db, name: str, version: str, kind: str | None = None) -> list[Parser]:
    from .which_model import Attribute, Hop, Parser

    sql = "select * from parser_map_v where name = ? and version = ?" + (" and kind = ?" if kind else "")
    out = []
    for r in db.query(sql + " order by kind", [name, version] + ([kind] if kind else [])):
        hops = [
            Hop(h["step"], h["hop"], h["class"], h["module"], h["file"], h["line"])
            if h["hop"] != "init"
            else Hop(
                h["step"],
                h["hop"],
                h["class"],
                h["module"],
                h["file"],
                h["line"],
                h["end_line"],
                (h["detail"] or "").split(),
            )
            for h in db.query(
                "select step, hop, class, module, file, line, end_line, detail from parser_hops_v"
                " where version = ? and kind = ? and name = ? order by step",
                [version, r["kind"], name],
            )
        ]
        p = Parser.from_row(dict(r), hops)
        p.attributes = [
            Attribute(
                a["role"],
                a["attribute"],
                a["value"],
                a["defining_class"],
                a["file"],
                a["line"],
                a["set_by"],
                a["condition"],
            )
            for a in db.query(
                "select role, attribute, value, defining_class, file, line, set_by, condition from parser_attrs_v"
                " where version = ? and kind = ? and name = ? order by role, attribute",
                [version, r["kind"], name],
            )
        ]
        out.append(p)
    return out


def which(db, name: str, at: str | None = None, kind: str | None = None) -> Which:
    from .which_model import Which

    name = registered_name(db, name)
    check_name(db, name, kind)
    version = require(db, at) if at else newest(db)
    found = parsers_at(db, name, version, kind)
    if not found:
        present = {
            r[0]
            for r in db.execute(
                "select version from parser_map_v where name = ?" + (" and kind = ?" if kind else ""),
                [name] + ([kind] if kind else []),
            )
        }
        what = f"{name!r}" + (f" ({kind})" if kind else "")
        runs = spans(indexed(db), present)
        after = gone_after(db, name, kind, version)
        hint = (
            f"ask one of those with --at (e.g. --at {runs[-1][1]}), or every version with --all"
            if runs
            else "tpindex versions lists what is indexed"
        )
        if after and "renamed to " in after:
            hint = f"ask tpindex which {after.split('renamed to ', 1)[1].split()[0]}, or " + hint
        raise AnswerError(f"{what} is not registered at {version}; it is in {span_text(runs)}{after}", hint)
    return Which(name=name, version=version, parsers=found, models=documented_with(db, name, version, kind))


def documented_with(db, name: str, version: str, kind: str | None = None) -> list:
    """The pairings the version's documentation gives that name this parser (as a tool or a reasoning parser),
    and, when the name is also a model family's, that family's (`which qwen3`: the Qwen3 series, and the tool
    parser its models use)."""
    from .docpairs import for_reasoning, for_tool, resolve
    from .docpairs_model import DocPair

    out = []
    kinds = [kind] if kind else ["tool", "reasoning"]
    if "tool" in kinds:
        out += for_tool(db, version, name)
    if "reasoning" in kinds:
        out += [p for p in for_reasoning(db, version, name) if p not in out]
    fam = resolve(db, version, name)
    if fam and fam.match == "family" and (fam.tool or fam.reasoning):
        t, r = (fam.tool or [None])[0], (fam.reasoning or [None])[0]
        if not any(p.family == fam.family and p.tool == t and p.reasoning == r for p in out):
            out.insert(
                0,
                DocPair(
                    fam.family,
                    t,
                    r,
                    fam.chat_template,
                    fam.tool_calling,
                    fam.thinking,
                    fam.evidence,
                    fam.notes,
                ),
            )
    return out


def gone_after(db, name: str, kind: str | None, version: str) -> str:
    """At a version after the name's last one: what took over (`; renamed to X at vY`, ...), else ''."""
    from .successors import gone_text  # here, as below: a name asked where it is registered needs none

    versions = indexed(db)
    for k, last, removed in db.execute(*lifecycle_of(name, kind or None, "kind, last_version, removed_in")):
        if removed and versions.index(version) >= versions.index(removed):
            text = gone_text(k, name, db, last, removed)
            if text:
                return text
    return ""


def history(db, name: str, kind: str | None = None) -> History:
    """Every indexed version of a name, equal consecutive versions collapsed into ranges."""
    from .lifecycle_model import History, KindHistory, Range
    from .which_model import Parser

    name = registered_name(db, name)
    kinds = check_name(db, name, kind)
    versions = indexed(db)
    out = []
    for k in kinds:
        by_version = {
            r["version"]: Parser.from_row(dict(r))
            for r in db.query("select * from parser_map_v where name = ? and kind = ?", [name, k])
        }
        ranges: list[Range] = []
        sigs: list[tuple | None] = []
        for v in versions:
            p = by_version.get(v)
            sig = tuple(getattr(p, c) for c in SIGNATURE) if p else None
            if ranges and sigs[-1] == sig:
                ranges[-1].last, ranges[-1].versions, ranges[-1].parser = v, ranges[-1].versions + 1, p
                continue
            prev = next((r.parser for r in reversed(ranges) if r.parser), None)
            changed = bool(
                p
                and prev
                and all(getattr(prev, c) == getattr(p, c) for c in ("impl", "real_file", "real_class"))
                and prev._code_sig != p._code_sig
            )
            ranges.append(Range(first=v, last=v, versions=1, parser=p, code_changed=changed))
            sigs.append(sig)
        while ranges and ranges[0].parser is None:
            ranges.pop(0)
        while ranges and ranges[-1].parser is None:
            ranges.pop()
        out.append(KindHistory(kind=k, ranges=ranges, lifecycle=lifecycle(db, name, k, versions)))
    return History(name=name, kinds=out)


def lifecycle(db, name: str, kind: str, versions: list[str]) -> Lifecycle | None:
    from .lifecycle_model import Lifecycle
    from .successors import links

    row = db.execute(
        *lifecycle_of(
            name,
            kind,
            "first_version, last_version, became_unified, real_file_changed_in, code_changed_in, removed_in",
        )
    ).fetchone()
    if row is None or not versions:
        return None
    first, last, unified, moved, changed, removed = row
    return Lifecycle(
        indexed_first=versions[0],
        indexed_last=versions[-1],
        first_version=first,
        last_version=last,
        in_first_indexed=first == versions[0],
        in_newest_indexed=last == versions[-1],
        became_unified=unified,
        unified_in_first_indexed=unified is not None and unified == versions[0],
        real_file_changed_in=_listed(moved),
        code_changed_in=_listed(changed),
        removed_in=removed,
        **links(db, kind, name, first, last, removed),
    )


def _listed(text: str | None) -> list[str]:
    return [x for x in (text or "").split(", ") if x]


# -- text -------------------------------------------------------------------------------------------------


CHOICE_FLAGS = {"tool": "--tool-call-parser", "reasoning": "--reasoning-parser"}


def registered_text(p: Parser, h: Hop) -> str:
    """What the registration names; a name that is only a choice of the command-line flag (cli-choices, the
    hard-coded era) names no class: the class the serving code picks by name, and where, is what is known."""
    if h.module and h.class_:
        return f"{p.name!r} -> {h.module}.{h.class_} ({p.form})"
    if h.class_:
        return f"{p.name!r} -> {h.class_} ({p.form})"
    picked = next((x for x in p.hops if x.hop == "dispatch"), None)
    if picked is not None and picked.class_:
        return f"{p.name!r} -> {picked.class_}, picked by name at {picked.file}:{picked.line} ({p.form})"
    if p.form == "cli-choices":
        return (
            f"{p.name!r}: a {CHOICE_FLAGS.get(p.kind, 'parser')} choice that no serving code picks a class for"
            f" ({p.form})"
        )
    return f"{p.name!r}: the registration names no class ({p.form})"


def init_text(h: Hop) -> str:
    """An init hop: `Cls.__init__ rebinds a, b`."""
    return f"{h.class_}.__init__ rebinds {', '.join(h.rebinds)}"


def rebinding_elsewhere(p: Parser) -> str:
    """`, with the attributes Cls.__init__ rebinds (FILE:A-B)` when an overriding __init__ is part of where the
    logic is: the real class's methods read what it binds."""
    inits = [h for h in p.hops if h.hop == "init"]
    return "".join(
        f", reading what {h.class_}.__init__ rebinds ({', '.join(h.rebinds)}; {h.file}:{h.line}-{h.end_line})"
        for h in inits
    )


def _streaming_elsewhere(p: Parser) -> str:
    """`; streaming in FILE:LINE (Class, r1's parser)` when the streaming method is another name's class's
    and not the real class's: the one line names both (README, "Where the parsing code is")."""
    if not p.streaming_from or p.streaming_class == p.real_class:
        return ""
    whose = " / ".join(f"{n}'s" for n in p.streaming_from)
    return f"; streaming in {p.streaming_file}:{p.streaming_line} ({p.streaming_class}, {whose} parser)"


def describe(p: Parser | None) -> str:
    if p is None:
        return "absent"
    if p.impl == "unresolved":
        return f"unresolved ({p.reason})"
    via = f" via {p.adapter}" if p.adapter else ""
    if p.wrapper_class:
        via += f", wrapped by {p.wrapper_class}"
    where = p.registered_file or f"{p.registry_file} ({p.form})"
    return f"{p.impl}: {p.real_file} ({p.real_class}){via}{_streaming_elsewhere(p)}; registered in {where}"


def lifecycle_facts(life: Lifecycle) -> list[str]:
    """The lifecycle said over the indexed versions only: nothing claimed about versions not indexed."""
    from .successors import Successor

    first, last = life.indexed_first, life.indexed_last
    facts = [
        f"among the indexed versions {first} – {last}"
        if first != last
        else f"in the one indexed version {first}"
    ]
    facts.append(
        f"since {first} or before"
        if life.in_first_indexed
        else f"first in {life.first_version}"
        + (f" (renamed from {', '.join(life.renamed_from)})" if life.renamed_from else "")
    )
    if life.in_newest_indexed:
        facts.append(f"still in {last}")
    else:
        gone = Successor(life.successors_by, life.successors, life.renamed_to) if life.successors_by else None
        facts.append(
            f"last in {life.last_version}"
            + (f", removed in {life.removed_in}" if life.removed_in else "")
            + (f", {gone.phrase()}" if gone else "")
        )
    if life.became_unified:
        facts.append(
            f"unified since {life.became_unified} or before"
            if life.unified_in_first_indexed
            else f"unified from {life.became_unified}"
        )
    if life.real_file_changed_in:
        facts.append(f"real file changed in {', '.join(life.real_file_changed_in)}")
    if life.code_changed_in:
        facts.append(f"code changed in {', '.join(life.code_changed_in)}")
    return facts
