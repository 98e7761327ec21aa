"""The two documentation pages vLLM pairs model families with parsers in, read (bytes -> facts, once per blob: the
build stores them, table doc_pages, answers/docpairs.py resolves models against them):

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

`facts(kind, text)` is what the build stores per blob (JSON), `from_facts` what a reader makes of it again.
Bump READER when what is read changes: a stored row of another reader is read again by the next build.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field

READER = 1  # the version of this reading, stored with each row

_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s{0,8}(```|~~~)")
_CODE = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]*)\)")
_HF_MODEL = re.compile(r"huggingface\.co/(?!collections/|datasets/|spaces/|docs/)([\w.\-]+)/([\w.\-]+)")
_MODEL = re.compile(r"`([A-Za-z0-9][\w.-]*)/([A-Za-z0-9][\w.*-]*)`")
_FILE_EXT = re.compile(r"\.(jinja|j2|py|md|json|ya?ml|txt|sh|toml)$")
_IDENT = re.compile(r"^[A-Za-z][\w.-]*$")
_TOOL_FLAG = re.compile(r"--tool-call-parser[ =]+`?([A-Za-z0-9][\w.-]*)")
_REASONING_FLAG = re.compile(r"--reasoning-parser[ =]+`?([A-Za-z0-9][\w.-]*)")
_CHAT_FLAG = re.compile(r"--chat-template[ =]+`?([^`\s]+)")
_TEMPLATE = re.compile(r"(?:^|[\s(\[/`])(examples/[\w.\-/]+\.jinja)")
_KWARG = re.compile(r"^(\w+)\s*=\s*(\w+)$")
_ON = re.compile(r"\b(enabled|on)\s+by\s+default", re.I)
_OFF = re.compile(r"\b(disabled|off)\s+by\s+default", re.I)
_TOOL_WORDS = re.compile(r"\btool[ -]call", re.I)
_ADMONITION = re.compile(r"^\s*(!!!|\?\?\?|:::)\s*\{?\w*\}?.*$|^\s*:::\s*$")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+|^\s*>\s?")
_ALTERNATIVES = re.compile(r"\s+/\s+|\s+and\s+|,\s*|\s+or\s+", re.I)
_WORDS = re.compile(r"[a-z]+|[0-9]+")
GENERIC = {
    "models",
    "model",
    "series",
    "language",
    "family",
}  # words of a family that are no part of its name


@dataclass
class Note:
    line: int
    text: str
    thinking: str | None  # on | off: thinking by default
    kwargs: list[tuple[str, str]]  # chat_template_kwargs it names: (name, value)
    tool: bool  # about tool calling


@dataclass
class Row:
    family: str  # the first cell's text
    model: str | None  # the model its link points to (org/name)
    reasoning: list[str]
    tool_calling: bool | None
    line: int
    text: str
    notes: list[Note] = field(default_factory=list)


@dataclass
class Flags:
    tool: list[str]
    reasoning: list[str]
    chat_template: str | None  # as written (a path, or {see_above})
    line: int
    text: str


@dataclass
class Entry:
    model: str  # org/name as written
    names: list[str]  # the one-identifier code spans of its line
    templates: list[str]  # the chat templates its line names
    line: int
    text: str
    flags: list[Flags] = field(
        default_factory=list
    )  # the flags line it goes to (none: every one of the section)


@dataclass
class Section:
    heading: str
    family: str
    names: list[str]
    line: int
    entries: list[Entry] = field(default_factory=list)
    flags: list[Flags] = field(default_factory=list)
    template: str | None = None  # a --chat-template on a line of its own
    template_line: int | None = None

    def own_template(self, flags: Flags) -> str | None:
        """The section's lone --chat-template for a flags line that names none: when the section names one tool
        parser, and the template's line comes before the flags line (set-up it reads, not an aside after it)."""
        one = len({t for f in self.flags for t in f.tool}) == 1
        before = self.template_line is not None and self.template_line < flags.line
        return self.template if one and before and not flags.chat_template else None

    def own(self, flags: Flags) -> bool:
        """Whether a flags line is the section's own (its tool parser is one its heading names, else the first
        its flags name): an aside naming another model's parsers pairs nothing."""
        mine = self.names or (self.flags[0].tool[:1] if self.flags else [])
        return bool(flags.tool) and flags.tool[0] in mine


def words(text: str) -> list[str]:
    """A family's or a model's words: letters and digits apart, lower case, without the generic words."""
    return [w for w in _WORDS.findall(text.lower()) if w not in GENERIC]


def alternatives(text: str) -> list[list[str]]:
    """The families a name gives (`Step-3.5 / Step-3.7 Flash`, `A and B`): each one's words."""
    out = [words(a) for a in _ALTERNATIVES.split(text)]
    return [w for w in out if w] or ([words(text)] if words(text) else [])


# -- reading the pages ----------------------------------------------------------------------------------------


def _short(text: str, limit: int = 240) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _lines(text: str):
    """(line number, line, inside a fence) of a page."""
    fenced = False
    for n, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
            yield n, line, True
            continue
        yield n, line, fenced


def _cells(line: str) -> list[str]:
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|"):
        s = s[:-1]
    return [c.strip() for c in s.split("|")]


def read_reasoning(text: str) -> list[Row]:
    """The model table of the reasoning page and its notes (the module docstring's rule)."""
    rows: list[Row] = []
    lines = list(_lines(text))
    i = 0
    while i < len(lines):
        n, line, fenced = lines[i]
        if fenced or not line.lstrip().startswith("|") or i + 1 >= len(lines):
            i += 1
            continue
        header = [c.lower() for c in _cells(line)]
        sep = lines[i + 1][1]
        parser_col = next((k for k, c in enumerate(header) if "parser" in c), None)
        if parser_col is None or not set(sep.replace("|", "").strip()) <= set("-: "):
            i += 1
            continue
        tool_col = next((k for k, c in enumerate(header) if "tool" in c), None)
        i += 2
        while i < len(lines) and lines[i][1].lstrip().startswith("|"):
            n, line, _ = lines[i]
            cells = _cells(line)
            if len(cells) > parser_col:
                first = cells[0]
                link = _LINK.search(first)
                family = _LINK.sub(lambda m: m.group(1), first).replace("`", "").strip()
                model = None
                if link:
                    m = _HF_MODEL.search(link.group(2))
                    model = f"{m.group(1)}/{m.group(2)}" if m else None
                names = _CODE.findall(cells[parser_col]) or cells[parser_col].split()
                mark = cells[tool_col] if tool_col is not None and tool_col < len(cells) else ""
                rows.append(
                    Row(
                        family,
                        model,
                        [x.strip() for x in names if _IDENT.match(x.strip())],
                        True if "✅" in mark else False if "❌" in mark else None,
                        n,
                        _short(line),
                    )
                )
            i += 1
        # the notes: to the next heading
        while i < len(lines):
            n, line, fenced = lines[i]
            if not fenced and _HEADING.match(line):
                break
            i += 1
            if fenced or _ADMONITION.match(line) or not line.strip():
                continue
            said = _BULLET.sub("", line).strip()
            note = _note(n, said)
            for row in rows:
                if any(_names(alt, words(said)) for alt in alternatives(row.family)):
                    row.notes.append(note)
        return rows
    return rows


def _names(family: list[str], text: list[str]) -> bool:
    """Whether a text's words hold a family's words in a row (a note naming it)."""
    k = len(family)
    return k > 0 and any(text[j : j + k] == family for j in range(len(text) - k + 1))


def _note(n: int, text: str) -> Note:
    kwargs = []
    for span in _CODE.findall(text):
        m = _KWARG.match(span.strip())
        if m:
            kwargs.append((m.group(1), m.group(2)))
    thinking = "on" if _ON.search(text) else "off" if _OFF.search(text) else None
    return Note(n, _short(text), thinking, kwargs, bool(_TOOL_WORDS.search(text)))


def _logical(text: str):
    """(first line number, line with its backslash continuations joined, heading match or None, fenced)."""
    pending: tuple[int, str] | None = None
    for n, line, fenced in _lines(text):
        if pending is not None:
            first, acc = pending
            acc += " " + line.strip()
            if line.rstrip().endswith("\\"):
                pending = (first, acc.rstrip("\\ "))
                continue
            pending = None
            yield first, acc, None, fenced
            continue
        if line.rstrip().endswith("\\") and "--" in line or (fenced and line.rstrip().endswith("\\")):
            pending = (n, line.rstrip().rstrip("\\").rstrip())
            continue
        yield n, line, None if fenced else _HEADING.match(line), fenced
    if pending is not None:
        yield pending[0], pending[1], None, False


def _template_path(written: str) -> str | None:
    """examples/....jinja from a path as written (/vllm-workspace/examples/x.jinja), None for another value."""
    m = re.search(r"(examples/[\w.\-/]+\.jinja)$", written.strip("`'\")(.,"))
    return m.group(1) if m else None


def read_tool(text: str) -> list[Section]:
    """The sections of the tool-calling page with their entries and flags (the module docstring's rule)."""
    sections = [Section("", "", [], 0)]
    pending: list[Entry] = []
    last: list[Entry] = []  # the entries of the flags line just before (flags lines in a row share them)
    adjacent = False  # only blank lines since the last flags line

    def close():
        for e in pending:  # entries no flags line follows: every flags line of the section
            e.flags = []
        pending.clear()

    for n, line, heading, _fenced in _logical(text):
        if heading:
            close()
            last, adjacent = [], False
            title = heading.group(2)
            names = [c for c in _CODE.findall(title) if _IDENT.match(c)]
            family = re.sub(r"`[^`]*`|\([^)]*\)", " ", title)
            family = " ".join(w for w in family.split() if w.lower() not in GENERIC)
            sections.append(Section(_short(title), family, names, n))
            continue
        sec = sections[-1]
        for org, model in _MODEL.findall(line):
            if _FILE_EXT.search(model):
                continue
            entry = Entry(
                f"{org}/{model}",
                [c for c in _CODE.findall(line) if _IDENT.match(c) and "/" not in c],
                [t for t in _TEMPLATE.findall(line)],
                n,
                _short(line),
            )
            sec.entries.append(entry)
            pending.append(entry)
        tools = list(dict.fromkeys(_TOOL_FLAG.findall(line)))
        chat = _CHAT_FLAG.findall(line)
        if tools:
            flags = Flags(
                tools,
                list(dict.fromkeys(_REASONING_FLAG.findall(line))),
                chat[0] if chat else None,
                n,
                _short(line),
            )
            sec.flags.append(flags)
            if not pending and adjacent and sec.own(flags):
                for e in last:
                    e.flags.append(flags)
            elif pending:
                for e in pending:
                    e.flags = [flags]
                last = list(pending)
            elif not adjacent:
                last = []
            pending.clear()
            adjacent = True
            continue
        if chat and _template_path(chat[0]) and sec.template is None:
            sec.template, sec.template_line = _template_path(chat[0]), n
        if line.strip() and not re.fullmatch(r"\W*\w+( \w+)?:\W*", line.strip()):
            adjacent = False
    close()
    return [s for s in sections if s.flags or s.entries]


def facts(kind: str, text: str) -> str:
    """What the build stores for a page of `kind` (tool or reasoning): its reading as JSON (an entry's flags as
    the places of its section's flags lines, so that they are the same objects once read again)."""
    if kind == "reasoning":
        return json.dumps([asdict(r) for r in read_reasoning(text)])
    out = []
    for sec in read_tool(text):
        d = asdict(sec)
        for e, de in zip(sec.entries, d["entries"], strict=True):
            de["flags"] = [next(k for k, f in enumerate(sec.flags) if f is g) for g in e.flags]
        out.append(d)
    return json.dumps(out)


def from_facts(kind: str, data: str) -> list:
    """The reading facts() stored, as read_reasoning (rows) or read_tool (sections) gives it."""
    if kind == "reasoning":
        return [
            Row(
                **{
                    **r,
                    "notes": [Note(**{**n, "kwargs": [tuple(k) for k in n["kwargs"]]}) for n in r["notes"]],
                }
            )
            for r in json.loads(data)
        ]
    out = []
    for d in json.loads(data):
        flags = [Flags(**f) for f in d["flags"]]
        entries = [Entry(**{**e, "flags": [flags[k] for k in e["flags"]]}) for e in d["entries"]]
        out.append(Section(**{**d, "flags": flags, "entries": entries}))
    return out
