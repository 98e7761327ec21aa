"""What a version's prose says about its parser names: the model-family words of the parser classes' docstrings
and of the tool-calling documentation, for the search box (answers/search.py; the pairings the documentation
gives, for the serve line and fit, are answers/docpairs.py's). Both are read from
the code store (the parsed modules' text, and the documentation's, recorded by the build: core/scope.py DOCS),
once per blob and process: a blob id names its content.

- **Docstrings.** The docstring of a class (the string that starts its body) gives the words that name a model
  family: a word with letters and digits (`GLM-4.7`, `Qwen3-Coder`, `DeepSeek-V3.1`, `K2`), or with a capital
  after a small letter inside (`DeepSeek`, `MiniMax`, `xLAM`); its hyphen- and dot-joined parts stay one word.
- **The documentation** (`docs/features/tool_calling.md`, `docs/source/features/tool_calling.md` before the
  move), split at its headings (outside fenced code). In a section, each model id in backticks
  (`` `org/Model-Name-*` ``: one slash, no file extension; the part after the slash, without a trailing `*`)
  goes to the names of the next line from it that names `--tool-call-parser NAME` (one or more); the ones no
  such line follows, and the heading's text (without its code spans, parentheses and the word models), go to
  every name the section's lines give.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..core.scope import TOOL_DOCS as DOC_PATHS

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-.][A-Za-z0-9]+)*")
_FAMILY = re.compile(r"(?=.*[A-Za-z])(?=.*[0-9])|.*[a-z][A-Z]")
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_MODEL = re.compile(r"`([A-Za-z0-9][\w.-]*)/([A-Za-z0-9][\w.*-]*)`")
_FILE_EXT = re.compile(r"\.(jinja|j2|py|md|json|ya?ml|txt|sh|toml)$")
_TOOL_FLAG = re.compile(r"--tool-call-parser[ =]+`?([A-Za-z0-9][\w.-]*)")
_MAX = 4_000  # blobs remembered per cache


@dataclass(frozen=True)
class Said:
    word: str  # as written: GLM-4.5-Air, Zeta-2.5
    line: int  # 1-based, in the file it was read from


@dataclass
class DocClaims:
    path: str
    names: dict[str, list[Said]] = field(default_factory=dict)  # tool parser name -> the model words given it


def family_words(text: str) -> list[str]:
    """The words of a text that name a model family (the module docstring's rule), in order, each once."""
    return list(dict.fromkeys(w for w in _WORD.findall(text) if _FAMILY.match(w)))


def read_doc(text: str, path: str) -> DocClaims:
    """The claims of the tool-calling documentation's text (the module docstring's rule)."""
    out = DocClaims(path)
    sections: list[tuple[Said | None, list[tuple[int, str]]]] = [(None, [])]
    fenced = False
    for n, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
        m = None if fenced else _HEADING.match(line)
        if m:
            title = re.sub(r"`[^`]*`|\([^)]*\)", " ", m.group(2))
            title = " ".join(w for w in title.split() if w.lower() not in ("model", "models"))
            sections.append((Said(title, n) if title else None, []))
        else:
            sections[-1][1].append((n, line))
    for heading, lines in sections:
        every: list[str] = []
        pending: list[Said] = []
        for n, line in lines:
            for _org, model in _MODEL.findall(line):
                if not _FILE_EXT.search(model):
                    word = model.rstrip("*").rstrip("-._")
                    if word:
                        pending.append(Said(word, n))
            tools = list(dict.fromkeys(_TOOL_FLAG.findall(line)))
            if tools:
                every.extend(t for t in tools if t not in every)
                for t in tools:
                    out.names.setdefault(t, []).extend(pending)
                pending = []
        for t in every:
            out.names.setdefault(t, []).extend(pending + ([heading] if heading else []))
    return out


_DOCS: dict[str, DocClaims] = {}
_DOCSTRINGS: dict[tuple[str, int], str | None] = {}


def doc_claims(db, version: str) -> DocClaims | None:
    """The documentation's claims at a version; None when the version's documentation is not stored."""
    from ..store import code
    from .source import _blob_at

    for path in DOC_PATHS:
        blob = _blob_at(db, version, path)
        if blob is None:
            continue
        if blob not in _DOCS:
            text = code.read_text(db, blob)
            if text is None:
                return None  # recorded but not stored here (another database may hold it): not remembered
            if len(_DOCS) >= _MAX:
                _DOCS.clear()
            _DOCS[blob] = read_doc(text, path)
        claims = _DOCS[blob]
        return claims if claims.path == path else DocClaims(path, claims.names)
    return None


SPAN = 120  # the lines read from a class's header on: its header and its docstring


def docstring(db, version: str, path: str, line: int, lines=None) -> str | None:
    """The docstring of the class defined at path:line at a version (None: none, or its code not stored).
    `lines`: a store.code.Lines shared by the calls of one question (each page of lines read once), else one
    of its own; only the lines from the header on are read."""
    from ..store import code
    from .source import _blob_at

    blob = _blob_at(db, version, path)
    if blob is None:
        return None
    if (blob, line) not in _DOCSTRINGS:
        ids = code.line_ids(db, blob)
        if ids is None:
            return None
        span = (lines or code.Lines(db)).get(ids[line - 1 : line - 1 + SPAN])
        if len(_DOCSTRINGS) >= _MAX:
            _DOCSTRINGS.clear()
        _DOCSTRINGS[(blob, line)] = _class_docstring(span, 1)
    return _DOCSTRINGS[(blob, line)]


_STRING_START = re.compile(r"""\s*[rRuU]?("{3}|'{3}|"|')""")


def _class_docstring(lines: list[str], line: int) -> str | None:
    """The string literal that starts the body of the class whose header starts at `line` (1-based)."""
    i, depth = line - 1, 0
    while True:  # the header's end: the line closing its brackets and ending with a colon (within 30 lines)
        if i >= len(lines) or i >= line + 30:
            return None
        code = lines[i].split("#", 1)[0].rstrip()
        depth += sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")
        i += 1
        if depth <= 0 and code.endswith(":"):
            break
        if depth <= 0:
            return None  # `class X: pass` on one line: no docstring
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines):
        return None
    m = _STRING_START.match(lines[i])
    if not m:
        return None
    quote = m.group(1)
    rest = lines[i][m.end() :]
    if quote in rest:
        return rest[: rest.index(quote)]
    if len(quote) == 1:
        return None
    body = [rest]
    for s in lines[i + 1 : i + 200]:
        if quote in s:
            body.append(s[: s.index(quote)])
            return "\n".join(body)
        body.append(s)
    return None
