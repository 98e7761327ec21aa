"""Markdown -> the checkable claims it makes (no database here; checkdoc.py checks them).

The document is cut into units: a table row (with its table's header), a sentence of prose (a list item
or heading is its own unit), a line of a fenced code block. In each unit we find tokens: code spans,
link targets, version phrases ("(v0.29.0+)", "since v0.30.0", "v0.30.0 and later", "removed at v0.25.1",
"moved at v0.33.0", "before v0.13.0") and counts ("54 tool parser names at v0.32.0"). Claims come from tokens:

    path     a path in a code span or link, placeholders (<name>, {x}, *) matched as patterns
    symbol   a name paired with a file: in the same table row, "`X` in `path`", `path.py:X`,
             `grep X path`, or the one file of the sentence
    parser   a --tool-call-parser / --reasoning-parser value, or a name in a parser-names column; a name
             beside the file it is "registered from" (a registration claim)
    alias    "`a` is the same class as `b`", "`a` is an alias of `b`"
    version  a version phrase about the name or path before it (or right after it at the start)
    count    a number of names, adapter-importing files, unified names, or files under a path

Each claim carries what its clause says of it (docpredicates.py): the tense (historical, former), and for a
path whether it is said to be absent, gone, advised against or where code lives; a version phrase whether
its clause says what changed (a predicate: unchecked) or where code is (about: code).

What cannot be read confidently is kept as `unchecked` with the reason, never guessed.

Reading is linear in the document (a pasted document is untrusted input): no pattern backtracks over
more than a bounded stretch, and positions are looked up by bisection, never by scanning every token or
line again; `read` stops as soon as the document makes more claims than it is asked to check.
"""

from __future__ import annotations

import re
import shlex
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

from ..core.paths import has_file_suffix, names_a_path
from .docpredicates import REGISTERED_GAP, Reading
from .trees import PLACEHOLDER

VERSION = r"(?:v\d+\.\d+(?:\.\d+)*|0\.\d+\.\d+)(?:\.post\d+)?"  # v0.29.0, v0.21, 0.29.0 (not "ROCm 7.0")
VERSION_PHRASES = [  # (kind, pattern); the version is group "v"
    ("since", rf"\((?P<v>{VERSION})\s*\+\)"),
    ("since", rf"(?<![\w.])(?P<v>{VERSION})\+"),
    ("since", rf"\b(?:since|added (?:in|at)|new in|introduced (?:in|at))\s+(?P<v>{VERSION})"),
    ("since", rf"\bfrom\s+(?P<v>{VERSION})\s+on\b"),
    # "v0.13.0 and later" (with its v: "uv 0.3.12 or later" is another program's version)
    ("since", r"(?<![\w.])(?P<v>v\d+\.\d+(?:\.\d+)*)\s+(?:and|or)\s+(?:later|newer|above)\b"),
    ("removed", rf"\b(?:removed|dropped|deleted|gone)\s+(?:in|at|from|since)\s+(?P<v>{VERSION})"),
    ("moved", rf"\b(?:moved|relocated|renamed)(?:\s+to)?\s+(?:in|at)\s+(?P<v>{VERSION})"),
    ("before", rf"\b(?:before|prior to)\s+(?P<v>{VERSION})"),
    ("until", rf"\b(?:until|up to|through)\s+(?P<v>{VERSION})\b(?!\s*\+)"),
]
VERSION_RE = re.compile(
    "|".join(f"(?P<k{i}>{p.replace('(?P<v>', f'(?P<v{i}>')})" for i, (_, p) in enumerate(VERSION_PHRASES)),
    re.I,
)
AT_VERSION = re.compile(rf"\b(?:at|in|as of|for)\s+(?P<v>{VERSION})\b|\((?P<p>{VERSION})\)", re.I)
BARE_VERSION = re.compile(r"(?<![\w.])v\d+\.\d+(?:\.\d+)*\b")

COUNT_NOUNS = re.compile(
    r"(?<![\w.])(?P<n>\d+)\s+(?P<what>(?:[\w-]+\s+){0,4}?"
    r"(?:names?|parsers?|files?|modules?|classes|stubs?|adapters?|aliases))\b",
    re.I,
)
COUNT_KINDS = [  # (what, pattern over the counted phrase and what follows it)
    (
        "names",
        re.compile(
            r"^(?:registered\s+)?(?P<kind>tool|reasoning|unified)?[\s-]*(?:call\s+)?(?:parsers?\s+)?names?\b",
            re.I,
        ),
    ),
    (
        "names",
        re.compile(r"^(?:registered\s+)?(?P<kind>tool|reasoning|unified)[\s-]+(?:call\s+)?parsers\b", re.I),
    ),
    (
        "impl",
        re.compile(
            r"^(?P<impl>unified|standalone|name-check)\s+(?:(?:tool|reasoning)[\s-]+)?(?:parser\s+)?"
            r"(?:names|parsers)\b",
            re.I,
        ),
    ),
    (
        "adapter-files",
        re.compile(
            r"^(?P<tool>tool[\s-]+parser\s+)?files\s+(?:that\s+)?import(?:ing|s)?\s+"
            r"(?:an?\s+|the(?:ir)?\s+)?adapters?\b",
            re.I,
        ),
    ),
    ("files-under", re.compile(r"^files\s+(?:in|under|below)\s+(?P<path>`[^`]+`|\S+/)", re.I)),
]
# the same patterns anchored by match(text, pos) instead of ^ (a slice of the rest of the text per count,
# per version phrase or per token made reading quadratic)
COUNT_KINDS_AT = [(what, re.compile(pat.pattern[1:], pat.flags)) for what, pat in COUNT_KINDS]
FILES_UNDER_AT = re.compile(r"files\s+(?:in|under|below)\s+`([^`]+)`", re.I)
NAME_AFTER_AT = re.compile(
    r"\s*(?:tool\s+|reasoning\s+)?(?:parser\s+)?name\b|\s*(?:tool\s+|reasoning\s+)?parser\b", re.I
)

FLAG = re.compile(r"--(?P<flag>tool-call-parser|reasoning-parser)(?:=|\s+)(?P<name>[A-Za-z0-9_.\-]+|<[^>]+>)")
DOC_REGISTERS = re.compile(r"""(?:\bname\s*=\s*|register(?:_lazy)?_module\(\s*\[?\s*)["']([\w.\-]+)["']""")
PLUGIN = re.compile(r"--(?:tool|reasoning)-parser-plugin\b")
ALIAS = [
    re.compile(
        r"^\s*(?:is|are)\s+(?:registered\s+(?:to|as)\s+|implemented\s+by\s+)?(?:the\s+)?same\s+class\s+as\s*$",
        re.I,
    ),
    re.compile(r"^\s*is\s+an?\s+alias\s+(?:of|for)\s*$", re.I),
    re.compile(r"^\s*(?:and|,)\s*$", re.I),  # "`a` and `b` are the same class": checked with what follows b
]
ROW_ALIAS = re.compile(
    r"^\s*(?:(?:is\s+)?(?:the\s+)?same\s+class\s+as|(?:is\s+)?(?:an?\s+)?alias\s+(?:of|for))\s*$", re.I
)
ALIAS_TAIL = re.compile(r"^\s*(?:are|share)\s+(?:registered\s+to\s+)?(?:the\s+)?same\s+class\b", re.I)
ALIAS_TAIL_AT = re.compile(ALIAS_TAIL.pattern[1:], re.I)
ROW_ALIAS_CORE = re.compile(ROW_ALIAS.pattern.removeprefix("^\\s*(?:").removesuffix(")\\s*$"), re.I)
CONNECTOR = re.compile(
    r"^[\s(]*(?:(?:is\s+)?(?:now\s+|still\s+)?(?:defined\s+|declared\s+|implemented\s+|lives\s+|sits\s+)?(?:in|inside|from|of|at|under|within)"
    r"|:|,|->|→|—|–|-)?[\s(]*$",
    re.I,
)
# CONNECTOR is ^[\s(]*X?[\s(]*$ with an X that neither starts nor ends with [\s(]: the same as the gap
# stripped of those runs fully matching X or empty, which never backtracks over a long gap of spaces
CONNECTOR_CORE = re.compile(CONNECTOR.pattern.removeprefix("^[\\s(]*").removesuffix("[\\s(]*$"), re.I)


def _row_alias(masked: str, i: int, j: int, solid: list[int]) -> bool:
    """ROW_ALIAS.match(masked[i:j]): the phrase neither starts nor ends with a space, so the text without
    the spaces at its ends must be it (the pattern backtracked over every space of a long cell, for every
    token in it). `solid`: the offsets of masked's characters that are not spaces, to find those ends."""
    a, b = bisect_left(solid, i), bisect_left(solid, j)  # the solid characters in [i, j): solid[a:b]
    if a == b:
        return ROW_ALIAS_CORE.fullmatch("") is not None
    return ROW_ALIAS_CORE.fullmatch(masked, solid[a], solid[b - 1] + 1) is not None


def _connects(gap: str) -> bool:
    """CONNECTOR.match(gap), in linear time."""
    i, j = 0, len(gap)
    while i < j and (gap[i].isspace() or gap[i] == "("):
        i += 1
    while j > i and (gap[j - 1].isspace() or gap[j - 1] == "("):
        j -= 1
    return CONNECTOR_CORE.fullmatch(gap, i, j) is not None


# what a version phrase can qualify besides the existence of a name or path (issue 26): "since v0.24.0, `x` is
# unified" is about becoming unified, "(own class v0.32.0+)" about the class; tpindex checks none of them by version
PREDICATE = re.compile(
    r"\b(?:unified|own\s+class|same\s+class|class(?:es)?\s+of\s+(?:its|their)\s+own|alias(?:es|ed)?|"
    r"shar(?:e|es|ed|ing)|moved|renamed|removed|default(?:s|ed)?|fail(?:s|ed|ing)?|startup|stubs?|"
    r"re-?export\w*|deprecated|adapters?|engine|supports?|supported|required|enabled|disabled|"
    r"switch(?:ed|es)?|became|becomes|turned|replaced|dispatch\w*|picked|composed|wrap\w*|"
    r"delegat\w*|inherit\w*|subclass\w*)\b",
    re.I,
)
# words after a counted noun that narrow the set ("19 names on the unified-parser path", "the 2 names that share
# a class"): the count is of that set, not of every name
QUALIFIER_AT = re.compile(
    r"[ \t]*(?:on|that|which|with|without|using|whose|except|excluding|besides|via|behind|"
    r"backed|like|such|other|where|beyond|outside|among)\b(?P<rest>[^.;:]{0,80})",
    re.I,
)
# "same file", "the same module", "there": the file of the row or sentence before
SAME_FILE = re.compile(
    r"\b(?:same\s+(?:file|module|path)|(?<=\S\s)there\b(?!\s+(?:is|are|was|were|will|would|have|"
    r"has|had|exists?|remains?)\b))",
    re.I,
)
MAX_PROSE_GREP = 8  # patterns, and paths, of one grep written in prose
PROSE_GREP = re.compile(r"\b(?:git\s+grep|grep|rg)(?:\s+(?:for|-\w+))*\s*$", re.I)
IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?:\(\))?$")
GITHUB_BLOB = re.compile(
    r"^https?://github\.com/[^/]+/[^/]+/(?:blob|tree)/(?P<ref>[^/]+)/(?P<path>[^#?]+)(?:#L(?P<line>\d+))?"
)
ABBREV = re.compile(r"\b(?:e\.g|i\.e|etc|vs|cf|approx|no)\.$", re.I)
NAME_HEADER = re.compile(
    r"(?:^|\b)(?:(?:tool|reasoning)[\s-]*(?:call[\s-]*)?parser(?:\s+name)?s?|name|--tool-call-parser|"
    r"--reasoning-parser|parser(?:\s+name)?)$",
    re.I,
)
PYTHON_WORDS = frozenset(
    """True False None self cls def class return import from as if else elif for while try except
finally with lambda yield async await pass break continue and or not in is str int float bool dict list set tuple
bytes object type print len range json re os sys""".split()
)


@dataclass
class Token:
    start: int
    end: int
    kind: str  # path | symbol | grep | flag | qualified | other
    value: str
    line: int
    extra: dict = field(default_factory=dict)


@dataclass
class Claim:
    line: int
    kind: str  # path | symbol | parser | alias | version | count | unreadable
    text: str
    data: dict = field(default_factory=dict)


@dataclass
class Unit:
    text: str
    lines: list[int]  # the document line of each character offset's line: (offset, line) starts
    starts: list[int]
    where: str  # prose | row | code | heading
    cells: list[tuple[int, int]] = field(default_factory=list)  # (start, end) of each cell (rows)
    header: list[str] = field(default_factory=list)
    heading: str = ""
    title: str = ""  # the document's first level-1 heading ("Reasoning Outputs")

    def line_at(self, offset: int) -> int:
        return _line_for(offset, self.starts, self.lines)

    def cell_of(self, offset: int) -> int | None:
        if not self.cells:
            return None
        if not hasattr(self, "_cell_starts"):
            self._cell_starts = [s for s, _ in self.cells]
        i = bisect_right(self._cell_starts, offset) - 1
        return i if i >= 0 and offset < self.cells[i][1] else None


class Knowledge:
    """What the reader may ask the index: the top-level directories of the trees and the parser names."""

    def __init__(self, roots: set[str], parser_names: set[str]):
        self.roots = roots
        self.parser_names = parser_names


# -- units -----------------------------------------------------------------------------------------------


def units(text: str) -> list[Unit]:
    lines = text.splitlines()
    out: list[Unit] = []
    para: list[tuple[int, str]] = []
    heading = title = ""
    fence = None
    i = 0

    def flush():
        if para:
            out.extend(_sentences(para, heading))
            para.clear()

    while i < len(lines):
        raw, n = lines[i], i + 1
        stripped = raw.strip()
        if fence:
            if stripped.startswith(fence):
                fence = None
            else:
                out.append(Unit(raw, [n], [0], "code", heading=heading))
            i += 1
            continue
        m = re.match(r"^\s*(```+|~~~+)", raw)
        if m:
            flush()
            fence = m.group(1)
            i += 1
            continue
        if stripped.startswith("|") and i + 1 < len(lines) and re.match(r"^\s*\|?\s*:?-{2,}", lines[i + 1]):
            flush()
            header = [_strip_cell(c) for c in _split_row(raw)]
            i += 2
            while i < len(lines) and lines[i].strip().startswith("|"):
                out.append(_row(lines[i], i + 1, header, heading))
                i += 1
            continue
        if not stripped:
            flush()
        elif stripped.startswith("#"):
            flush()
            heading = stripped.lstrip("#").strip()
            if not title and re.match(r"#\s", stripped):
                title = heading
            out.append(Unit(heading, [n], [0], "heading", heading=heading))
        elif re.match(r"^\s*(?:[-*+]|\d+[.)])\s+", raw) or stripped.startswith(">"):
            flush()
            para.append((n, re.sub(r"^\s*(?:[-*+]|\d+[.)]|>+)\s*", "", raw)))
        else:
            para.append((n, stripped))
        i += 1
    flush()
    for u in out:
        u.title = title
    return out


def _split_row(raw: str) -> list[str]:
    """Cells of a table row; a | inside a code span or escaped does not split."""
    body = raw.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    cells, cur, in_code = [], [], False
    for i, ch in enumerate(body):
        if ch == "`":
            in_code = not in_code
        if ch == "|" and not in_code and (i == 0 or body[i - 1] != "\\"):
            cells.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    cells.append("".join(cur))
    return cells


def _strip_cell(cell: str) -> str:
    return cell.strip().strip("*_").strip("`").strip()


def _row(raw: str, n: int, header: list[str], heading: str) -> Unit:
    cells = _split_row(raw)
    text, spans = "", []
    for c in cells:
        start = len(text)
        text += c
        spans.append((start, len(text)))
        text += " | "
    return Unit(text, [n], [0], "row", spans, header, heading)


def _sentences(para: list[tuple[int, str]], heading: str) -> list[Unit]:
    text, starts, lines = "", [], []
    for n, s in para:
        starts.append(len(text))
        lines.append(n)
        text += s + " "
    out, begin = [], 0
    masked = re.sub(r"`[^`]*`", lambda m: "`" + " " * (len(m.group(0)) - 2) + "`", text)  # keep the ticks
    # a sentence ends at . ! ? and the emphasis, parenthesis or quote closing on it ("**... v0.32.0+.** Next")
    for m in re.finditer(r"[.!?][*_)\"']{0,4}(?=\s+(?:[A-Z`(\[*_\"]|v\d))", masked):
        if ABBREV.search(masked[max(0, m.start() - 8) : m.start() + 1]):
            continue
        out.append((begin, m.end()))
        begin = m.end()
    out.append((begin, len(text)))
    units_ = []
    for s, e in out:
        if not text[s:e].strip():
            continue
        s += len(text[s:e]) - len(text[s:e].lstrip())
        lo, hi = bisect_right(starts, s), bisect_left(starts, e)  # the lines starting inside the sentence
        sub_starts = [0] + [st - s for st in starts[lo:hi]]
        sub_lines = [_line_for(s, starts, lines)] + lines[lo:hi]
        units_.append(Unit(text[s:e], sub_lines, sub_starts, "prose", heading=heading))
    return units_


def _line_for(offset: int, starts: list[int], lines: list[int]) -> int:
    """The line of the last start at or before offset (the first line for an offset before every start)."""
    return lines[max(0, bisect_right(starts, offset) - 1)]


def _mask_code(text: str) -> str:
    """The text with code spans blanked (same offsets), so prose patterns never read inside code."""
    return re.sub(r"`[^`]*`", lambda m: " " * len(m.group(0)), text)


# -- tokens ----------------------------------------------------------------------------------------------


def tokens(unit: Unit, known: Knowledge) -> list[Token]:
    out: list[Token] = []
    if unit.where == "code":
        out.extend(_code_line_tokens(unit, known))
        return out
    for m in re.finditer(r"`([^`]+)`", unit.text):
        out.extend(_span_tokens(m.group(1).strip(), m.start(), m.end(), unit, known))
    span_paths = [t.start for t in out if t.kind == "path"]  # in order: the spans come in order
    for start, end, target in _links(unit.text):
        g = GITHUB_BLOB.match(target)
        path = g.group("path") if g else (target if not re.match(r"^[a-z]+:|^#|^/", target) else None)
        if path and not g:
            path = re.sub(r"^(?:\.\.?/)+", "", path)
        if path and _repo_path(path.split("#")[0], known):
            if bisect_left(span_paths, start) == bisect_left(span_paths, end):  # [`p`](p): once
                out.append(Token(start, end, "path", path.split("#")[0], unit.line_at(start), {"link": True}))
    masked = _mask_code(unit.text)
    for m in FLAG.finditer(masked):
        out.append(
            Token(
                m.start(),
                m.end(),
                "flag",
                m.group("name"),
                unit.line_at(m.start()),
                {"flag": m.group("flag")},
            )
        )
    out.sort(key=lambda t: t.start)
    _prose_greps(out, masked)
    return out


def _prose_greps(toks: list[Token], masked: str) -> None:
    """ "grep `x`", "grep for `x`, `y` in `p` and `q`": the names are grep patterns (fixed strings) over the
    paths that follow them. A grep written in prose has only code spans for its words."""
    prev_end, group, paths = 0, [], 0  # the greps of the current phrase (a few: a document is untrusted)
    for t in toks:
        gap = masked[prev_end : t.start]
        if (
            t.kind == "symbol"
            and not paths
            and (
                PROSE_GREP.search(gap[-40:])
                or (group and re.fullmatch(r"\s*(?:,|and|or|,\s*and|,\s*or)\s*", gap))
            )
        ):
            t.kind, t.extra = "grep", {"paths": [], "fixed": True, "prose": True}
            group = (group + [t])[-MAX_PROSE_GREP:]
        elif (
            t.kind in ("path", "bare-file")
            and group
            and not t.extra.get("link")
            and paths < MAX_PROSE_GREP
            and re.fullmatch(
                r"\s*(?:in|within|inside|under|across|of|,|and|or|,\s*and)?\s*"
                r"(?:(?:the\s+)?(?:file|module|directory|folder)s?\s*)?",
                gap,
            )
        ):
            paths += 1
            for o in group:
                o.extra["paths"].append(t.value)
        else:
            group, paths = [], 0
        prev_end = t.end


def _links(text: str):
    """(start, end, target) of each Markdown link, as re.finditer(r"\\[([^\\]]*)\\]\\(([^)\\s]+)[^)]*\\)")
    finds them, in linear time (that pattern backtracks cubically on "[[[...](](](..."): a match from a "["
    ends at the first "]" after it, which must be followed by "(", a target (no ")" or space) and, past
    anything but ")", a ")"."""
    pos, paren, n = 0, -1, len(text)
    while True:
        s = text.find("[", pos)
        if s < 0:
            return
        close = text.find("]", s + 1)
        if close < 0:
            return
        t = close + 2
        if text.startswith("(", close + 1) and t < n and text[t] != ")" and not text[t].isspace():
            if paren < t:
                paren = text.find(")", t)
                if paren < 0:
                    return  # no ")" from here on: no link either
            e = t
            while e < paren and not text[e].isspace():
                e += 1
            yield s, paren + 1, text[t:e]
            pos = paren + 1
            continue
        pos = close + 1  # every "[" before this "]" ends at it too: none of them starts a link


def _span_tokens(code: str, start: int, end: int, unit: Unit, known: Knowledge) -> list[Token]:
    line = unit.line_at(start)
    flags = list(FLAG.finditer(code))
    if flags:
        return [
            Token(start, end, "flag", f.group("name"), line, {"flag": f.group("flag")}) for f in flags
        ] + _command_paths(code, start, line, known)
    if re.match(r"^(?:git\s+grep|grep|rg)\s", code):
        return [_grep_token(code, start, end, line, known)]
    if re.fullmatch(r"(?:\.\.\.|…)/[\w./-]+", code) and has_file_suffix(code):  # `.../serve/api_utils.py`
        return [Token(start, end, "bare-file", ".../" + code.split("/", 1)[1], line)]
    if names_a_path(code) and " " not in code:
        path, _, suffix = code.partition(":")
        path = path.split("#L")[0]
        if suffix and IDENT.match(suffix) and not suffix.isdigit():
            if _repo_path(path, known) and has_file_suffix(path):  # not an image: vllm/vllm-openai:latest
                return [Token(start, end, "qualified", suffix.rstrip("()"), line, {"file": path})]
            return [Token(start, end, "other", code, line)]
        if _repo_path(path, known):
            return [
                Token(start, end, "path", path, line, {"line": int(suffix) if suffix.isdigit() else None})
            ]
        if "/" not in path and "<" not in path:
            return [Token(start, end, "bare-file", path, line)]
        return [Token(start, end, "other", code, line)]
    if IDENT.match(code):
        return [Token(start, end, "symbol", code.removesuffix("()"), line)]
    return [Token(start, end, "other", code, line)] + (
        _command_paths(code, start, line, known) if " " in code else []
    )


def _command_paths(code: str, start: int, line: int, known: Knowledge) -> list[Token]:
    """The repository paths among the words of a command in a code span (a path a command names)."""
    out = []
    for m in re.finditer(r"[^\s=\"']+", code):
        p = m.group(0).rstrip(".,;:")
        if _repo_path(p, known) and has_file_suffix(p) and not p.startswith("-"):
            s = start + 1 + m.start()  # the span starts with its tick
            out.append(Token(s, s + len(p), "path", p, line, {"code": True}))
    return out


def _grep_token(code: str, start: int, end: int, line: int, known: Knowledge) -> Token:
    try:
        words = shlex.split(code)
    except ValueError:
        return Token(start, end, "other", code, line)
    words = words[2:] if words[:2] == ["git", "grep"] else words[1:]
    pattern, paths, fixed = None, [], False
    skip_next = False
    for w in words:
        if skip_next:
            pattern, skip_next = w, False
            continue
        if w in ("-e", "--regexp"):
            skip_next = True
            continue
        if w.startswith("-"):
            fixed = fixed or "F" in w.lstrip("-") and not w.startswith("--") or w == "--fixed-strings"
            continue
        if pattern is None:
            pattern = w
        else:
            paths.append(w)
    return Token(
        start,
        end,
        "grep",
        pattern or "",
        line,
        {"paths": [p for p in paths if _repo_path(p, known) or _bare_file(p)], "fixed": fixed},
    )


def _bare_file(p: str) -> bool:
    """`cli_args.py`: a file name without its directory, resolved against the tree by checkdoc."""
    return "/" not in p and has_file_suffix(p) and not PLACEHOLDER.search(p) and "*" not in p


def _code_line_tokens(unit: Unit, known: Knowledge) -> list[Token]:
    text, line = unit.text, unit.lines[0]
    out = [
        Token(m.start(), m.end(), "flag", m.group("name"), line, {"flag": m.group("flag")})
        for m in FLAG.finditer(text)
    ]
    g = re.search(r"(?:^|[\s;|&$(])((?:git\s+grep|grep|rg)\s.*?)(?:$|[;|&)])", text)
    if g:
        out.append(_grep_token(g.group(1).strip(), g.start(1), g.end(1), line, known))
    for m in re.finditer(r"(?<![\w/.~-])([A-Za-z0-9_.\-]+/[A-Za-z0-9_./<>*{}\-]*)", text):
        if g and g.start(1) <= m.start() < g.end(1):
            continue
        p = m.group(1).rstrip(".,:;")
        if _repo_path(p, known) and (names_a_path(p) or p.endswith("/")):
            out.append(Token(m.start(), m.end(), "path", p, line, {"code": True}))
    return out


def _repo_path(path: str, known: Knowledge) -> bool:
    """A path of the repository (it starts with a top-level entry of an indexed tree), not a user's file."""
    if not path or path.startswith(("/", "~", "http")) or "://" in path or " " in path:
        return False
    head = path.split("/", 1)[0]
    if "/" not in path:
        return False
    return head in known.roots and all(part not in ("", "..") for part in path.rstrip("/").split("/"))


# -- claims ----------------------------------------------------------------------------------------------


class TooManyClaims(Exception):
    """The document makes more claims than `read` was asked to stop at; `line`: where reading stopped."""

    def __init__(self, line: int):
        super().__init__(line)
        self.line = line


def read(text: str, known: Knowledge, limit: int | None = None) -> list[Claim]:
    """The claims of a document; TooManyClaims as soon as there are more than `limit`."""
    claims: list[Claim] = []
    tables: dict[int, list[str]] = {}
    before: str | None = None  # the one file of the row or sentence before ("same file", "there")
    for u in units(text):
        toks = tokens(u, known)
        ref = None
        if (
            before
            and u.where in ("row", "prose")
            and not any(t.kind in ("path", "bare-file") for t in toks)
            and SAME_FILE.search(_mask_code(u.text))
        ):
            ref = before
            end = len(u.text.rstrip())
            toks.append(Token(end, end, "path", ref, u.line_at(end), {"reference": True}))
        claims.extend(_unit_claims(u, toks, known, tables))
        own = {
            t.value
            for t in toks
            if t.kind == "path" and not PLACEHOLDER.search(t.value) and "*" not in t.value
        }
        before = own.pop() if len(own) == 1 else (ref if ref else None) if u.where != "heading" else None
        if limit is not None and len(claims) > limit:
            raise TooManyClaims(claims[limit].line)
    plugin = bool(PLUGIN.search(text))  # names a plugin registers are in no registry tpindex reads
    own = set(DOC_REGISTERS.findall(text))  # names the document's own code samples register
    for c in claims:
        if c.kind == "parser":
            c.data["plugin"] = plugin
            c.data["sample"] = c.data["name"] in own
    return claims


def _parser_column(header: list[str], index: int) -> str | None:
    """'tool', 'reasoning' or 'any' when the column lists parser names, else None."""
    if index >= len(header):
        return None
    h = header[index].strip().strip("`*_").strip()
    if not NAME_HEADER.search(h):
        return None
    return "reasoning" if "reasoning" in h.lower() else "tool" if "tool" in h.lower() else "any"


def _unit_claims(u: Unit, toks: list[Token], known: Knowledge, tables: dict) -> list[Claim]:
    """The claims of one unit, stage by stage (each stage a method of _UnitScan, in this order)."""
    scan = _UnitScan(u, toks)
    scan.parser_names(known)
    scan.alias_claims()
    scan.row_alias_claims()
    scan.registration_claims(known)
    row_from = scan.version_claims()
    scan.unversioned_parsers()
    first = len(scan.out)
    scan.path_and_symbol_claims()
    if row_from:  # in a row about "vX+", the paths and symbols speak of vX and later
        for c in scan.out[first:]:
            c.data["from_version"] = row_from
    scan.count_claims()
    return scan.out


class _UnitScan:
    """One unit's tokens on their way to claims: what the stages share (the claims so far, the parser
    names found, the tokens a version phrase or an alias claim is about)."""

    def __init__(self, u: Unit, toks: list[Token]):
        self.u, self.toks = u, toks
        self.out: list[Claim] = []
        self.masked = _mask_code(u.text)
        self.reading = Reading(self.masked, PREDICATE)
        self.used: set[int] = set()  # tokens a version phrase or an alias claim is about
        self.names: dict[int, tuple[str, str]] = {}  # token index -> (name, kind)
        self.files = [i for i, t in enumerate(toks) if t.kind in ("path", "bare-file")]
        self.plain = _plain(toks, self.files)

    def parser_names(self, known: Knowledge) -> None:
        """Parser names: flags, and a parser-names column of a table."""
        u, toks, names = self.u, self.toks, self.names
        first_of_cell: dict[int, int] = {}  # cell -> the start of its first token
        if u.where == "row":
            for o in toks:
                c = u.cell_of(o.start)
                if c is not None and c not in first_of_cell:
                    first_of_cell[c] = o.start
        for i, t in enumerate(toks):
            if t.kind == "flag":
                if PLACEHOLDER.fullmatch(t.value) or t.value.startswith("<"):
                    continue
                names[i] = (t.value, "tool" if t.extra["flag"] == "tool-call-parser" else "reasoning")
            elif u.where == "row" and t.kind == "symbol":
                col = u.cell_of(t.start)
                kind = _parser_column(u.header, col) if col is not None else None
                first_in_cell = col is not None and first_of_cell.get(col) == t.start
                if kind and first_in_cell and (kind != "any" or t.value in known.parser_names):
                    if kind == "any" and "reasoning" in f"{u.heading} {u.title}".lower():
                        kind = "reasoning"
                    names[i] = (t.value, kind)

    def alias_claims(self) -> None:
        """`a` same class as `b`, said between two names."""
        toks, names, masked = self.toks, self.names, self.masked
        for i, t in enumerate(toks[:-1]):
            nxt = toks[i + 1]
            if t.kind not in ("symbol", "flag") or nxt.kind not in ("symbol", "flag"):
                continue
            between = masked[t.end : nxt.start]
            a = names.get(i, (t.value, "any"))[0]
            b = names.get(i + 1, (nxt.value, "any"))[0]
            if (
                ALIAS[0].match(between)
                or ALIAS[1].match(between)
                or (ALIAS[2].match(between) and ALIAS_TAIL_AT.match(masked, nxt.end))
            ):
                kind = names.get(i, names.get(i + 1, (None, "any")))[1]
                self.out.append(
                    Claim(t.line, "alias", f"`{a}` same class as `{b}`", {"a": a, "b": b, "kind": kind})
                )
                self.used.update((i, i + 1))
                names.pop(i, None)
                names.pop(i + 1, None)

    def row_alias_claims(self) -> None:
        """A row's notes cell: "same class as `b`", "alias of `b`" (about the row's parser name)."""
        u, names, masked = self.u, self.names, self.masked
        if u.where != "row" or not names:
            return
        solid = [k for k, c in enumerate(masked) if not c.isspace()]
        row_name = names[min(names)]
        for i, t in enumerate(self.toks):
            col = u.cell_of(t.start)
            if i in names or col is None or t.kind not in ("symbol", "flag"):
                continue
            if _row_alias(masked, u.cells[col][0], t.start, solid) and t.value != row_name[0]:
                self.out.append(
                    Claim(
                        t.line,
                        "alias",
                        f"`{row_name[0]}` same class as `{t.value}`",
                        {"a": row_name[0], "b": t.value, "kind": row_name[1]},
                    )
                )
                self.used.add(i)

    def registration_claims(self, known: Knowledge) -> None:
        """A parser name and the file it is registered from ("the `x` parser is registered from `f.py`"): a claim
        about the registry, not about `x` being a symbol defined in f.py."""
        toks, masked, names = self.toks, self.masked, self.names
        for i, t in enumerate(toks[:-1]):
            nxt = toks[i + 1]
            if i in self.used or t.kind not in ("symbol", "flag") or nxt.kind not in ("path", "bare-file"):
                continue
            if nxt.start - t.end > 80 or not REGISTERED_GAP.fullmatch(masked, t.end, nxt.start):
                continue
            gap = masked[t.end : nxt.start].lower()
            named = i in names or t.kind == "flag" or t.value in known.parser_names
            if not (named or "parser" in gap or "name" in gap or _parser_before(masked, t.start)):
                continue
            kind = names[i][1] if i in names else next((k for k in ("reasoning", "tool") if k in gap), "any")
            name = names[i][0] if i in names else t.value
            self.out.append(
                Claim(
                    t.line,
                    "parser",
                    f"`{name}` registered from `{nxt.value}`",
                    {
                        "name": name,
                        "kind": kind,
                        "file": nxt.value,
                        "bare": nxt.kind == "bare-file",
                        **_tense(self.reading.tense(t.start)),
                    },
                )
            )
            self.used.add(i)
            names.pop(i, None)

    def version_claims(self) -> str | None:
        """Version phrases, each about the name or path it qualifies; -> the version a row is "since"."""
        u, toks, names, masked, used, out = self.u, self.toks, self.names, self.masked, self.used, self.out
        row_from = None
        cand = _Candidates(u, toks)
        files, plain = self.files, self.plain
        aliased = set(used)  # the names of a "same class" claim
        for m in VERSION_RE.finditer(masked):
            idx = next(int(k[1:]) for k, v in m.groupdict().items() if v is not None and k.startswith("k"))
            kind, version = VERSION_PHRASES[idx][0], m.group(f"v{idx}")
            version = version if version.startswith("v") else "v" + version
            subject = cand.subject(m.start(), m.end())
            line = u.line_at(m.start())
            if subject is None:
                out.append(
                    Claim(
                        line,
                        "unreadable",
                        m.group(0).strip(),
                        {"reason": "a version phrase with no name or path it is about"},
                    )
                )
                continue
            j, t = subject
            predicate, about_code = (
                ("same class", False)
                if j in aliased
                else self.reading.of_phrase(m.start(), m.end(), t.start, t.end)
            )
            if (
                predicate
            ):  # about the predicate, not about the name's or path's existence: its other claims stand
                out.append(
                    Claim(
                        line,
                        "version",
                        f"`{t.value}` {' '.join(u.text[m.start() : m.end()].split())}",
                        {
                            "phrase": kind,
                            "version": version,
                            "predicate": predicate,
                            "subject": _subject_of(t, names.get(j)),
                        },
                    )
                )
                continue
            used.add(j)
            used.update(cand.within(m.start(), m.end()))  # "moved to `x` at"
            moved_to = re.search(r"\bto\s+`([^`]+)`", u.text[m.start() : m.end()])
            subj = _subject_of(t, names.get(j))
            if (
                subj is not None
                and subj["type"] == "name"
                and (  # "the `x` name", "parser `x`"
                    NAME_AFTER_AT.match(masked, t.end) or _parser_before(masked, t.start)
                )
            ):
                subj = {"type": "parser", "name": t.value, "kind": "any", "said": True}
            if subj is not None and t.kind == "symbol" and j not in names:
                paired = _pair(u, toks, j, files, masked, plain)
                if paired:
                    subj["file"] = paired[0]
            if u.where == "row" and kind == "since":
                row_from = version
            if subj is None:
                out.append(
                    Claim(
                        line,
                        "unreadable",
                        f"{t.value} {m.group(0).strip()}",
                        {
                            "reason": "the phrase is about something that is neither a parser name, a path nor a symbol"
                        },
                    )
                )
                continue
            out.append(
                Claim(
                    line,
                    "version",
                    f"`{t.value}` {' '.join(u.text[m.start() : m.end()].split())}",
                    {
                        "phrase": kind,
                        "version": version,
                        "subject": subj,
                        "to": moved_to.group(1) if moved_to else None,
                        **({"about": "code"} if about_code and subj["type"] == "path" else {}),
                    },
                )
            )
        return row_from

    def unversioned_parsers(self) -> None:
        """Parser names not covered by a version phrase or alias."""
        for i, (name, kind) in self.names.items():
            if i not in self.used:
                self.out.append(
                    Claim(
                        self.toks[i].line,
                        "parser",
                        f"`{name}`" + (f" ({kind} parser)" if kind != "any" else ""),
                        {"name": name, "kind": kind, **self._name_said(self.toks[i])},
                    )
                )

    def _name_said(self, t: Token) -> dict:
        """A parser name's tense, and whether its clause says it is not (or no longer) registered."""
        predicate, tense = self._said(t)
        return {**_tense(tense), **({"predicate": predicate} if predicate in ("absent", "gone") else {})}

    def _said(self, t: Token) -> tuple[str | None, str | None]:
        """(predicate, tense) of the clause holding a token (docpredicates.Reading.of_path); a line of code
        says neither."""
        if self.u.where == "code":
            return None, None
        return self.reading.of_path(t.start, t.end)

    def path_and_symbol_claims(self) -> None:
        """Paths, and symbols paired with a file, each read in its own clause (tense, negation, predicate)."""
        u, toks, out = self.u, self.toks, self.out
        files, plain = self.files, self.plain
        for i, t in enumerate(toks):
            if i in self.used or i in self.names:
                continue
            if t.kind == "path" and t.extra.get("reference"):
                continue  # the file of the unit before: claimed there
            predicate, tense = self._said(t)
            said = {**_tense(tense), **({"predicate": predicate} if predicate else {})}
            historical = said["historical"]
            if t.kind == "path":
                out.append(
                    Claim(
                        t.line,
                        "path",
                        f"`{t.value}`",
                        {"path": t.value, **said, "in_code": u.where == "code" or bool(t.extra.get("code"))},
                    )
                )
            elif t.kind == "bare-file":
                out.append(Claim(t.line, "path", f"`{t.value}`", {"path": t.value, "bare": True, **said}))
            elif t.kind == "qualified":
                out.append(
                    Claim(
                        t.line,
                        "symbol",
                        f"`{t.extra['file']}:{t.value}`",
                        {
                            "symbol": t.value,
                            "file": t.extra["file"],
                            "pairing": "qualified",
                            "historical": historical,
                        },
                    )
                )
            elif t.kind == "grep":
                out.extend(_grep_claims(u, toks, i, files, historical))
            elif t.kind == "symbol" and t.value not in PYTHON_WORDS:
                f = _pair(u, toks, i, files, self.masked, plain)
                if f is not None:
                    path, pairing = f
                    lives = i + 1 < len(toks) and self.reading.lives(t.end, toks[i + 1].start)
                    out.append(
                        Claim(
                            t.line,
                            "symbol",
                            f"`{t.value}` in `{path}`",
                            {
                                "symbol": t.value,
                                "file": path,
                                "pairing": pairing,
                                "historical": historical,
                                **({"lives": True} if lives else {}),
                            },
                        )
                    )

    def count_claims(self) -> None:
        versions = _UnitVersions(self.masked)
        for m in COUNT_NOUNS.finditer(self.masked):
            self.out.append(_count_claim(self.u, self.masked, m, versions))


def _tense(tense: str | None) -> dict:
    """A claim's tense as its data says it: historical (the past), former (and not so now)."""
    return {"historical": tense is not None, **({"former": True} if tense == "former" else {})}


def _parser_before(masked: str, end: int) -> bool:
    """Whether re.search(r"\\bparser\\s*$", masked[:end], re.I) would match, without the slice."""
    k = end
    while k > 0 and masked[k - 1].isspace():
        k -= 1
    if k < 6 or masked[k - 6 : k].lower() != "parser":
        return False
    return k == 6 or not (masked[k - 7].isalnum() or masked[k - 7] == "_")


class _Candidates:
    """The tokens a version phrase can be about, with what _subject asks of them found by bisection."""

    def __init__(self, u: Unit, toks: list[Token]):
        self.u, self.toks = u, toks
        self.cand = [(i, t) for i, t in enumerate(toks) if t.kind in ("path", "symbol", "flag", "bare-file")]
        self.starts = [t.start for _, t in self.cand]
        self.tok_starts = [t.start for t in toks]
        # a line of code lists its tokens by kind, not in order: it is one line, looked through as it is
        self.ordered = all(a <= b for a, b in zip(self.tok_starts, self.tok_starts[1:], strict=False))

    def within(self, start: int, end: int):
        """The indexes of the tokens starting in [start, end)."""
        if not self.ordered:
            return [k for k, o in enumerate(self.toks) if start <= o.start < end]
        return range(bisect_left(self.tok_starts, start), bisect_left(self.tok_starts, end))

    def subject(self, start: int, end: int) -> tuple[int, Token] | None:
        """The token a version phrase is about: the nearest one before it in the same cell or sentence;
        failing that, the first one after it (a phrase leading its sentence: "Before v0.13.0, `x` ...")."""
        u, cand = self.u, self.cand
        if not self.ordered:
            cell = u.cell_of(start) if u.where == "row" else None
            before = [
                (i, t) for i, t in cand if t.end <= start and (cell is None or u.cell_of(t.start) == cell)
            ]
            if before:
                return before[-1]
            if u.where == "row":
                return cand[0] if cand else None
            after = [(i, t) for i, t in cand if t.start >= end]
            return after[0] if after else None
        cell = u.cell_of(start) if u.where == "row" else None
        for j in range(
            bisect_left(self.starts, start) - 1, -1, -1
        ):  # starting before the phrase, nearest first
            i, t = cand[j]
            if cell is not None:
                c = u.cell_of(t.start)
                if c is None or c < cell:
                    if c is not None:
                        break  # an earlier cell: so are all before it
                    continue
                if c != cell:
                    continue
            if t.end <= start:
                return i, t
        if u.where == "row":  # a version cell: about the row's first name or path
            return cand[0] if cand else None
        j = bisect_left(self.starts, end)
        return cand[j] if j < len(cand) else None


class _UnitVersions:
    """The version phrases _count_claim looks for around each count of a unit, each found once."""

    def __init__(self, masked: str):
        self.masked = masked
        self.at = list(AT_VERSION.finditer(masked))
        self.at_ends = [m.end() for m in self.at]
        self._next: tuple[int, re.Match | None] | None = None  # (searched from, found)
        self._bare = None

    def next_at(self, pos: int):
        """AT_VERSION.search(masked, pos), remembered: the counts of a unit come in order."""
        if self._next is not None:
            since, found = self._next
            if since <= pos and (found is None or found.start() >= pos):
                return found
        found = AT_VERSION.search(self.masked, pos)
        self._next = (pos, found)
        return found

    def last_before(self, pos: int):
        """The last match of AT_VERSION.finditer(masked[:pos]) (a version ends where a count may start only
        after a character no version holds, so the matches ending by pos are the same in the whole text)."""
        k = bisect_right(self.at_ends, pos)
        return self.at[k - 1] if k else None

    def bare(self) -> tuple[list[str], bool]:
        if self._bare is None:
            self._bare = (BARE_VERSION.findall(self.masked), bool(VERSION_RE.search(self.masked)))
        return self._bare


def _subject_of(t: Token, parser: tuple[str, str] | None) -> dict | None:
    if parser is not None:
        return {"type": "parser", "name": parser[0], "kind": parser[1]}
    if t.kind == "bare-file":
        return {"type": "path", "path": t.value, "bare": True}
    if t.kind == "path":
        return {"type": "path", "path": t.value}
    if t.kind == "symbol":
        return {"type": "name", "name": t.value}  # a parser name or a symbol: checkdoc decides
    return None


def _plain(toks: list[Token], files: list[int]) -> list[Token]:
    """The path tokens that name one file (no placeholder, no *)."""
    return [toks[j] for j in files if not PLACEHOLDER.search(toks[j].value) and "*" not in toks[j].value]


def _pair(
    u: Unit, toks: list[Token], i: int, files: list[int], masked: str, plain: list[Token] | None = None
) -> tuple[str, str] | None:
    """The file a symbol is named with: its table row's one path; the path right next to it ("`X` in
    `p`", "`p`: `X`"); or the sentence's one path. `plain`: _plain(toks, files), when the caller has it."""
    t = toks[i]
    plain = _plain(toks, files) if plain is None else plain

    def how(o: Token, pairing: str) -> tuple[str, str]:
        return o.value, "reference" if o.extra.get("reference") else pairing

    if u.where == "row":
        return how(plain[0], "row") if len(plain) == 1 else None
    for j in (i + 1, i - 1):
        if (
            0 <= j < len(toks)
            and toks[j].kind in ("path", "bare-file")
            and not toks[j].extra.get("reference")
        ):
            a, b = (t, toks[j]) if j > i else (toks[j], t)
            if _connects(masked[a.end : b.start]) and not PLACEHOLDER.search(toks[j].value):
                return toks[j].value, "next to"
    if len(plain) == 1 and len(files) == 1 and u.where == "prose":
        return how(plain[0], "sentence")
    return None


def _grep_claims(u: Unit, toks: list[Token], i: int, files: list[int], historical: bool) -> list[Claim]:
    t = toks[i]
    paths = t.extra["paths"]
    if (
        not paths and len(files) == 1 and files[0] != i
    ):  # the one path of the unit (a scan per grep was quadratic)
        paths = [toks[files[0]].value]
    if not paths:
        return [
            Claim(t.line, "unreadable", f"`grep {t.value}`", {"reason": "a grep with no repository path"})
        ]
    out = []
    for p in paths:
        out.append(
            Claim(
                t.line,
                "symbol",
                f"grep `{t.value}` in `{p}`",
                {
                    "symbol": t.value,
                    "file": p,
                    "pairing": "grep",
                    "grep": True,
                    "fixed": t.extra.get("fixed"),
                    "historical": historical,
                },
            )
        )
    return out


def _count_claim(u: Unit, masked: str, m: re.Match, versions: _UnitVersions) -> Claim:
    n, what = int(m.group("n")), m.group("what")
    line = u.line_at(m.start())
    real_at = m.start("what")
    at = versions.next_at(m.end())
    before = versions.last_before(m.start())
    version = None
    if at and at.start() - m.end() < 40:
        version = at.group("v") or at.group("p")
    elif before:
        version = before.group("v") or before.group("p")
    elif len(set(versions.bare()[0])) == 1 and not versions.bare()[1]:  # "v0.33.0 registers 58 names"
        version = versions.bare()[0][0]
    if version and not version.startswith("v"):
        version = "v" + version
    text = f"{n} {what}" + (f" at {version}" if version else "")
    for kind, pat in COUNT_KINDS_AT:
        c = pat.match(u.text, real_at)
        if c is None:
            continue
        text = f"{n} {' '.join(u.text[real_at : c.end()].split())}" + (f" at {version}" if version else "")
        q = QUALIFIER_AT.match(masked, c.end())
        if (
            q
            and kind == "names"
            and re.search(r"\b(?:unified|standalone|name-check)\b", q.group("rest"), re.I)
        ):
            impl = re.search(r"\b(?:unified|standalone|name-check)\b", q.group("rest"), re.I).group(0).lower()
            return Claim(
                line,
                "count",
                f"{n} {impl} names" + (f" at {version}" if version else ""),
                {"n": n, "what": "impl", "impl": impl, "version": version},
            )
        if q:
            return Claim(
                line,
                "unreadable",
                f"{n} {what}" + (f" at {version}" if version else ""),
                {
                    "reason": f'the count is of a qualified set ("{" ".join(q.group(0).split())}"), '
                    "which tpindex does not count"
                },
            )
        data = {"n": n, "what": kind, "version": version}
        if kind == "names":
            data["kind"] = (c.group("kind") or "tool").lower()
        elif kind == "impl":
            data["impl"] = c.group("impl").lower()
        elif kind == "adapter-files":
            data["tool_only"] = bool(c.group("tool"))
        elif kind == "files-under":
            p = FILES_UNDER_AT.match(u.text, real_at)
            if not p:
                break
            data["path"] = p.group(1)
        return Claim(line, "count", text, data)
    return Claim(line, "unreadable", text, {"reason": f'tpindex does not count "{what}"'})
