"""What a version's own documentation pairs with a model family: the tool parser, the reasoning parser, the chat
template, and the `chat_template_kwargs` notes, each with the line that says it.

Two pages are read (recorded by the build: core/scope.py TOOL_DOCS and REASONING_DOCS, the `docs/source/features/`
paths before v0.9.0, `docs/features/` after), by extract/docpages.py once per blob at build (table doc_pages, read
here from the store; a page without a stored reading, in a database built before it, is read from its stored text):

- **The reasoning page's model table** (`reasoning_outputs.md`): the first Markdown table whose header has a cell
  naming a parser. Per row: the model family (the first cell, a link's text), the model the link points to when it
  is one model (`huggingface.co/ORG/NAME`, not a collection), the reasoning parser names of the parser column
  (code spans) and the tool-calling column (a check mark or a cross). The lines after the table up to the next
  heading are its **notes** (admonition markers and bullets dropped): a note belongs to every row whose family it
  names; it says whether thinking is on or off by default (`enabled by default`, `disabled by default`), which
  `chat_template_kwargs` to pass (code spans `name=value`), and whether it is about tool calling.
- **The tool-calling page's sections** (`tool_calling.md`), split at headings outside fenced code. A section's
  family is its heading without code spans, parentheses and the words models, model and series; its heading's
  code spans are parser names. Its **entries** are the model ids in backticks (`org/Name-*`, one slash), each with
  the code spans of its line that are one identifier (a parser named for that model) and the chat templates its
  line names (`examples/....jinja`). Its **flags** are the lines (a line continued with a backslash joined) naming
  `--tool-call-parser T`, with `--reasoning-parser R` and `--chat-template C` when they do (`{see_above}`: the
  templates the entries name); a `--chat-template` on a line of its own is the section's. An entry goes to the
  next flags line from it, and an entry no flags line follows to every flags line of its section.

**Resolving a model** (`resolve`): the query (a Hugging Face id `org/Name`, or a family name, any case) is split
into words (letters and digits apart: `Qwen3-8B` is qwen 3 8 b). A documented family *holds* the query when its
words are the first words of the query's (dropping at most two leading words of either side that the other does
not start with: an organisation such as IBM). Then:

1. the **reasoning row**: a row whose linked model is the query's id, else the most specific row holding the query
   (most words); a row is set aside when a tool-calling section holding the query is more specific than it and
   extends it (`Qwen3-Coder` is not the `Qwen3` series);
2. the **tool section**: an entry that is the query (its id, its `*` pattern, or its id followed by more words of
   the query), else a section whose family holds the query (the most specific), else a section listing an entry
   of the query's family (`DeepSeek-R1-0528` for the DeepSeek R1 series), in a section that is not a more specific
   family than the query; the row's own model and family are looked up the same way when the query found none;
3. within a section matched by family, the flags of the entries nearest the query (most leading words in common);
4. the tool parsers those flags name (an entry's own parser name, registered as a tool parser at the version,
   first), the reasoning parser of the row, else of the flags, the chat templates of the flags, and the row's
   notes and tool-calling column.

Only names the version registers are given (the others are said). No model or parser name is typed here: every
name and family comes from the version's pages.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

from ..core.scope import REASONING_DOCS, TOOL_DOCS
from ..extract.docpages import (
    _TOOL_WORDS,
    Entry,
    Flags,
    Row,
    Section,
    _template_path,
    alternatives,
    read_reasoning,
    read_tool,
    words,
)
from .docpairs_model import DocLine, DocPair, Documented

MAX_SKIP = 2  # leading words of one side (an organisation) dropped to align it with the other
_MAX = 64  # parsed pages remembered per process


@dataclass
class Pages:
    tool_path: str | None
    reasoning_path: str | None
    rows: list[Row]
    sections: list[Section]


# -- words --------------------------------------------------------------------------------------------------


def _aligned(a: list[str], b: list[str]) -> tuple[list[str], list[str]]:
    """a and b with at most MAX_SKIP leading words of one dropped so that both start alike (an organisation)."""
    if a and b and a[0] != b[0]:
        for i in range(1, MAX_SKIP + 1):
            if i < len(a) and a[i] == b[0]:
                return a[i:], b
            if i < len(b) and b[i] == a[0]:
                return a, b[i:]
    return a, b


def holds(family: list[str], query: list[str]) -> int:
    """How many words of the query a family holds (its words are the query's first words), 0 when it does not."""
    f, q = _aligned(family, query)
    return len(f) if f and q[: len(f)] == f else 0


def common(a: list[str], b: list[str]) -> int:
    """The leading words two names share (aligned)."""
    a, b = _aligned(a, b)
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


_MODEL_ID = re.compile(r"[\w.-]+/[\w.*-]+")


def is_model_id(text: str) -> bool:
    """A Hugging Face id, `org/Name` (no spaces: `Step-3.5 / Step-3.7 Flash` is a family's name)."""
    return bool(_MODEL_ID.fullmatch(text.strip()))


def model_words(model: str) -> list[str]:
    return words(model.rsplit("/", 1)[-1])


_PAGES: dict[tuple, Pages] = {}


def pages(db, version: str) -> Pages | None:
    """The version's two pages, read; None when neither is stored (a database built before tpindex read
    them, or a version without them)."""
    from ..store import code, docpages

    found: dict[str, tuple[str, str]] = {}
    for kind, paths in (("tool", TOOL_DOCS), ("reasoning", REASONING_DOCS)):
        for path in paths:
            blob = code.blob_at(db, version, path)
            if blob is not None:
                found[kind] = (path, blob)
                break
    if not found:
        return None
    key = tuple(found.get(k, (None, None))[1] for k in ("tool", "reasoning"))
    if key not in _PAGES:
        read = {}
        for kind, (_path, blob) in found.items():
            read[kind] = docpages.read(db, blob, kind)
            if read[kind] is None:
                text = code.read_text(db, blob)
                if text is None:
                    return None  # recorded but not stored here: not remembered
                read[kind] = read_reasoning(text) if kind == "reasoning" else read_tool(text)
        if len(_PAGES) >= _MAX:
            _PAGES.clear()
        _PAGES[key] = Pages(
            found["tool"][0] if "tool" in found else None,
            found["reasoning"][0] if "reasoning" in found else None,
            read.get("reasoning", []),
            read.get("tool", []),
        )
    return _PAGES[key]


# -- resolving a model ----------------------------------------------------------------------------------------


def _entry_is(entry: Entry, query: str, qwords: list[str]) -> int:
    """How well an entry is the query: 3 its id (any case), 2 its `*` pattern, 1 its id then more words of the
    query (a variant: `-bf16`), 0 not."""
    q = query.lower()
    e = entry.model.lower()
    name = e.rsplit("/", 1)[-1]
    qname = q.rsplit("/", 1)[-1]
    if "*" in e:
        return 2 if fnmatch.fnmatchcase(q, e) or fnmatch.fnmatchcase(qname, name) else 0
    if q in (e, name) or qname == name:
        return 3
    ew = model_words(entry.model)
    return 1 if len(ew) >= 2 and qwords[: len(ew)] == ew and is_model_id(query) else 0


def _holding(sections: list[Section], query: str, qwords: list[str]) -> tuple[list, str, int]:
    """The best sections for a query: ([(section, entries or None)], how, words held)."""
    graded = [(_entry_is(e, query, qwords), s, e) for s in sections for e in s.entries]
    best_grade = max((g for g, _, _ in graded), default=0)
    if best_grade:
        exact: list = []
        for g, s, e in graded:
            if g == best_grade:
                got = next((x for x in exact if x[0] is s), None)
                if got:
                    got[1].append(e)
                else:
                    exact.append((s, [e]))
        return exact, "model id", len(qwords)
    best, found = 0, []
    for s in sections:
        n = max((holds(a, qwords) for a in alternatives(s.family)), default=0)
        if n and n > best:
            best, found = n, [(s, None)]
        elif n and n == best:
            found.append((s, None))
    if found:
        return found, "family", best
    members = []
    for s in sections:
        if any(holds(qwords, a) and len(a) > len(qwords) for a in alternatives(s.family)):
            continue  # a more specific family's section (Qwen3-Coder for Qwen3)
        mine = [e for e in s.entries if holds(qwords, model_words(e.model))]
        if mine:
            members.append((s, mine))
    return members, "member", len(qwords) if members else 0


def _nearest(section: Section, qwords: list[str]) -> list[Entry]:
    """The entries of a section nearest a query (most leading words in common); [] when none shares a word."""
    scored = [(common(model_words(e.model), qwords), e) for e in section.entries]
    best = max((n for n, _ in scored), default=0)
    return [e for n, e in scored if n == best] if best else []


def _flags_of(section: Section, entries: list[Entry] | None) -> list[tuple[Flags, Entry | None]]:
    if not entries:
        return [(f, None) for f in section.flags]
    out = []
    for e in entries:
        for f in e.flags or section.flags:
            out.append((f, e))
    return out


def registered(db, version: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {"tool": set(), "reasoning": set()}
    for kind, name in db.execute(
        "select kind, name from parser_map_v where version = ? and kind in ('tool', 'reasoning')", [version]
    ):
        out[kind].add(name)
    return out


def _row_for(rows: list[Row], query: str, qwords: list[str]) -> tuple[list[Row], int]:
    ql = query.lower()
    by_model = [r for r in rows if r.model and (r.model.lower() == ql or model_words(r.model) == qwords)]
    if by_model:
        return by_model, len(qwords), "model id"
    best, found = 0, []
    for r in rows:
        n = max((holds(a, qwords) for a in alternatives(r.family)), default=0)
        if n and n > best:
            best, found = n, [r]
        elif n and n == best:
            found.append(r)
    return (
        found,
        best,
        "family"
        if found and any(words(r.family) == qwords or qwords in alternatives(r.family) for r in found)
        else "member",
    )


def resolve(db, version: str, query: str) -> Documented | None:
    """What the version's documentation pairs with a model or family (the module docstring's rule); None when
    its pages are not stored or name nothing the query belongs to."""
    got = pages(db, version)
    if got is None:
        return None
    query = query.strip()
    qwords = model_words(query) if is_model_id(query) else words(query)
    if not qwords:
        return None
    rows, row_len, row_how = _row_for(got.rows, query, qwords)
    secs, how, sec_len = _holding(got.sections, query, qwords)
    if rows and any(  # a section of a more specific family holds the query, and extends the row's family
        holds(a, qwords) and holds(ra, a) and len(a) > len(ra)
        for sec, _ in secs
        for a in alternatives(sec.family)
        for r in rows
        for ra in alternatives(r.family)
    ):
        rows = []
    if rows and not secs:  # the row's own model, then its family
        for r in rows:
            for q in [r.model] if r.model else []:
                secs, how, sec_len = _holding(got.sections, q, model_words(q))
                if secs:
                    break
            if not secs:
                for alt in alternatives(r.family):
                    secs, how, sec_len = _holding(got.sections, r.family, alt)
                    if secs:
                        break
            if secs:
                break
    if not rows and not secs:
        return None
    names = registered(db, version)
    unregistered: list[str] = []

    def known(kind: str, name: str) -> bool:
        if name in names[kind]:
            return True
        if name not in unregistered:
            unregistered.append(name)
        return False

    evidence: list[DocLine] = []
    tools: list[str] = []
    flag_reasoning: list[str] = []
    templates: list[str] = []
    bare = False  # a flags line read names no template
    tp, rp = got.tool_path or "", got.reasoning_path or ""
    for sec, entries in secs:
        if entries is None:
            entries = _nearest(sec, qwords) or None
        evidence.append(DocLine(tp, sec.line, f"## {sec.heading}"))
        for flags, entry in _flags_of(sec, entries):
            own = [n for n in (entry.names if entry else []) if n in names["tool"] or n in names["reasoning"]]
            if entry is not None:
                evidence.append(DocLine(tp, entry.line, entry.text))
            evidence.append(DocLine(tp, flags.line, flags.text))
            for t in [n for n in own if n in names["tool"]] or flags.tool:
                if known("tool", t) and t not in tools:
                    tools.append(t)
            said = flags.reasoning if sec.own(flags) else []
            for r in [n for n in own if n in names["reasoning"]] if own and said else said:
                if known("reasoning", r) and r not in flag_reasoning:
                    flag_reasoning.append(r)
            chat = flags.chat_template
            wanted = (
                (entry.templates if entry and entry.templates else [])
                if chat and "{" in chat
                else [_template_path(chat)]
                if chat and _template_path(chat)
                else []
            )
            if not wanted and sec.own_template(flags):
                wanted = [sec.template]
                evidence.append(DocLine(tp, sec.template_line, f"--chat-template {sec.template}"))
            if chat and "{" in chat and not wanted and entries is None:
                wanted = [t for e in sec.entries for t in e.templates]
            templates += [t for t in dict.fromkeys(wanted) if t not in templates]
            bare = bare or not wanted
    reasoning: list[str] = []
    notes: list[DocLine] = []
    tool_calling, thinking, kwargs = None, None, []
    for r in rows:
        evidence.insert(0, DocLine(rp, r.line, r.text))
        reasoning += [x for x in r.reasoning if known("reasoning", x) and x not in reasoning]
        tool_calling = r.tool_calling if tool_calling is None else tool_calling
        for n in r.notes:
            notes.append(DocLine(rp, n.line, n.text))
            thinking = thinking or n.thinking
            kwargs += [f"{k}={v}" for k, v in n.kwargs if f"{k}={v}" not in kwargs]
    if not rows:
        reasoning = flag_reasoning
    seen: set[tuple[str, int]] = set()
    evidence = [e for e in evidence if (e.file, e.line) not in seen and not seen.add((e.file, e.line))]
    return Documented(
        query=query,
        family=rows[0].family if rows else (secs[0][0].family or secs[0][0].heading),
        match=row_how if rows else how,
        tool=tools,
        reasoning=reasoning,
        chat_template=templates[0] if len(templates) == 1 and not bare else None,
        templates_named=templates,
        tool_calling=tool_calling,
        thinking=thinking,
        kwargs=kwargs,
        evidence=evidence,
        notes=notes,
        unregistered=unregistered,
        section=secs[0][0].heading if secs else None,
    )


_PAIRS: dict[tuple, list[DocPair]] = {}


def pairs(db, version: str) -> list[DocPair]:
    """Every pairing the version's documentation gives: each row of the reasoning table resolved (its model, else
    its family), then each flags line of the tool-calling page (a family the table does not list)."""
    got = pages(db, version)
    if got is None:
        return []
    key = (id(got), version)
    if key in _PAIRS:
        return _PAIRS[key]
    out: list[DocPair] = []
    for r in got.rows:
        d = resolve(db, version, r.model) if r.model else None
        if d is None or not d.reasoning or d.family != r.family:
            d = resolve(db, version, r.family)
        if d is None:
            continue
        for t in d.tool or [None]:
            for x in d.reasoning or [None]:
                out.append(
                    DocPair(
                        r.family,
                        t,
                        x,
                        d.chat_template,
                        d.tool_calling,
                        d.thinking,
                        d.evidence,
                        d.notes,
                    )
                )
    names = registered(db, version)
    for sec in got.sections:
        for f in sec.flags:
            if not sec.own(f):
                continue
            for t in f.tool:
                if t not in names["tool"]:
                    continue
                for x in [r for r in f.reasoning if r in names["reasoning"]] or [None]:
                    chat = _template_path(f.chat_template) if f.chat_template else sec.own_template(f)
                    out.append(
                        DocPair(
                            sec.family or sec.heading,
                            t,
                            x,
                            chat,
                            None,
                            None,
                            [
                                DocLine(got.tool_path or "", sec.line, f"## {sec.heading}"),
                                DocLine(got.tool_path or "", f.line, f.text),
                            ],
                            [],
                        )
                    )
    seen: set[tuple] = set()
    out = [
        p
        for p in out
        if (p.family, p.tool, p.reasoning, p.chat_template) not in seen
        and not seen.add((p.family, p.tool, p.reasoning, p.chat_template))
    ]
    if len(_PAIRS) >= _MAX:
        _PAIRS.clear()
    _PAIRS[key] = out
    return out


_SUPPORTED = re.compile(r"\bsupported\b|\bworks?\b", re.I)
_NOT = re.compile(r"\bnot\b|n't\b|\bno\b", re.I)


def with_tool_calling(p: DocPair) -> bool:
    """Whether a pairing holds for tool calling: the reasoning table does not mark the row without it, or a note
    on the family says tool calling is supported in some mode (`... tool calling is supported in non-thinking
    mode`)."""
    if p.tool_calling is not False:
        return True
    return any(
        _TOOL_WORDS.search(n.text) and _SUPPORTED.search(n.text) and not _NOT.search(n.text) for n in p.notes
    )


def for_tool(db, version: str, tool: str) -> list[DocPair]:
    return [p for p in pairs(db, version) if p.tool == tool]


def for_reasoning(db, version: str, reasoning: str) -> list[DocPair]:
    return [p for p in pairs(db, version) if p.reasoning == reasoning]


def documented_template(db, version: str, tool: str) -> str | None:
    """The chat template the docs' flags give a tool parser when they all give the same one, else None (the docs
    give none, or several: one per model)."""
    got = pages(db, version)
    if got is None:
        return None
    chats = set()
    for sec in got.sections:
        for f in sec.flags:
            if tool in f.tool:
                if f.chat_template and "{" in f.chat_template:
                    return None  # per model: the serve line of the parser alone cannot say which
                chats.add(_template_path(f.chat_template) if f.chat_template else sec.own_template(f))
    return next(iter(chats)) if len(chats) == 1 else None
