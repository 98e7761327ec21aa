"""POSIX extended regular expressions, as `git grep -E` reads them, translated to Python's `re`.

git grep -E compiles patterns with the C library's regcomp (REG_EXTENDED, REG_ICASE for -i) and matches
them line by line. The translation keeps what a line matches (not where: POSIX picks the longest match,
Python the first, which only matters for colouring):

- ERE syntax: `. [ ] ( ) * + ? { } | ^ $`, intervals {n} {n,} {n,m} {,m}, back-references \\1-\\9,
  stacked repetitions (a** and a+? repeat the repetition, they are not lazy), a ")" with no "(" is a
  literal; bracket expressions with ranges, "]" first, a backslash as a plain character, and the classes
  [:alpha:] [:digit:] [:alnum:] [:upper:] [:lower:] [:space:] [:blank:] [:punct:] [:print:] [:graph:]
  [:cntrl:] [:xdigit:];
- GNU escapes \\w \\W \\s \\S \\b \\B \\< \\>, and \\ before any punctuation for that character.

Refused with an error rather than matched differently: other backslash escapes (\\d, \\n, \\t ... git
reads them as the letter), the buffer anchors \\` and \\', equivalence classes [[=a=]] and collating
symbols [[.a.]], ranges with a non-ASCII end (the C library refuses them too), a pattern spanning lines.

Assumptions (the tests run git grep with LC_ALL=C.UTF-8): text is UTF-8; a byte that is not is stored as
a private-use character (indexer.store.code.INVALID), which no pattern element matches (the C library matches
no character there either); character classes of non-ASCII characters follow the C library's C.UTF-8
tables as far as Unicode categories tell them (see _class_body); -i folds case
as Python does (simple case folding; ß does not match ss), except that a literal i or I never matches the
Turkish dotted and dotless i (İ ı), as in the C library (inside a bracket expression it may). Lines are searched in pages joined by "\\n", so no
translated element matches a newline.
"""

from __future__ import annotations

import functools
import os
import re
import unicodedata
from dataclasses import dataclass, field

from ..core.cachedir import cache_home
from ..core.problems import Problem

DUP_MAX = 32767  # RE_DUP_MAX of the C library
MAX_PATTERN = 4096  # characters of a pattern: longer ones are refused before any work
MAX_TRANSLATION = 200_000  # characters of its translation (\\b alone is 8,500; compiling costs ~10 µs each)
MAX_NESTING = 100  # groups inside groups (the parser and Python's own recurse once per level)
CLASSES_VERSION = 3  # bump when the class definitions or their form below change (their cache is keyed by it)
NOT_CHAR = "\U0010ff80-\U0010ffff"  # bytes that are not UTF-8 (indexer.store.code.INVALID): never matched
_CLASSES = (
    "alpha",
    "digit",
    "alnum",
    "upper",
    "lower",
    "space",
    "blank",
    "punct",
    "print",
    "graph",
    "cntrl",
    "xdigit",
)


def _gnu(c: str) -> str:
    """\\w \\W \\s \\S, with the C library's classes (Python's \\w and \\s differ on some characters)."""
    word = "_" + _class_body("alnum")
    return {
        "w": f"[{word}]",
        "W": f"[^{word}\n{NOT_CHAR}]",
        "s": f"[{_class_body('space')}]",
        "S": f"[^{_class_body('space')}\n{NOT_CHAR}]",
    }[c]


def _anchor(c: str) -> str:
    """\\b \\B \\< \\>, at the edges of the C library's words (what \\w matches)."""
    w = _gnu("w")
    return {
        "b": f"(?:(?<={w})(?!{w})|(?<!{w})(?={w}))",
        "B": f"(?:(?<={w})(?={w})|(?<!{w})(?!{w}))",
        "<": f"(?<!{w})(?={w})",
        ">": f"(?<={w})(?!{w})",
    }[c]


class PatternError(Problem):
    """A pattern that is not valid ERE, or uses syntax this translation refuses."""


@dataclass
class Node:
    py: str
    exact: str | None = None  # the node matches exactly this text
    required: list[str] = field(default_factory=list)  # texts every match contains
    repeats: bool = False  # holds a repetition
    anchor: bool = False  # zero-width
    unit: bool = True  # a quantifier can follow py directly
    alternation: bool = False
    any_of: list[list[str]] | None = None  # per alternative, texts every match of it contains: each match
    # contains one of the alternatives' (for a prefilter when no one text is required)


@dataclass
class Compiled:
    """A translated pattern: `regex` for text whose lines are joined by "\\n" (MULTILINE), `literal` a
    string every matching line contains (casefolded under -i; None when there is none worth using),
    `risky` when it has nested repetition or back-references (time that can grow exponentially)."""

    pattern: str
    regex: re.Pattern
    literal: str | None
    icase: bool
    risky: bool
    any_of: list[str] | None = (
        None  # when there is no literal: texts one of which every matching line contains
    )


@dataclass
class Translated:
    """A pattern read and translated, not compiled yet (reading is linear in the pattern and capped; the
    compiling can take long, and happens where the search runs: see grep.search)."""

    pattern: str
    py: str
    literal: str | None
    icase: bool
    risky: bool
    any_of: list[str] | None = None

    def compile(self) -> Compiled:
        try:
            regex = re.compile(self.py, re.MULTILINE | (re.IGNORECASE if self.icase else 0))
        except re.error as e:  # not expected: the translation emits valid Python
            raise PatternError(f"cannot compile {self.pattern!r} ({e})", "simplify the pattern") from None
        except RecursionError:  # pragma: no cover - MAX_NESTING keeps Python's parser well inside its limit
            raise PatternError(f"{self.pattern!r} is nested too deeply", "simplify the pattern") from None
        return Compiled(self.pattern, regex, self.literal, self.icase, self.risky, self.any_of)


def translate(pattern: str, icase: bool = False, fixed: bool = False) -> Translated:
    """Read a pattern as git grep -E (or -F) would, refusing what it would match differently, what is not
    text, and what is too large to compile quickly (MAX_PATTERN characters, MAX_TRANSLATION translated,
    MAX_NESTING levels of groups)."""
    if "\n" in pattern:
        raise PatternError(
            "the pattern holds a newline; git grep would read it as several patterns",
            "search one line at a time, or join them as A|B",
        )
    from ..store.code import stored_form

    pattern = stored_form(
        pattern
    )  # bytes of the argument that are not UTF-8 match those bytes, as in git grep
    if any("\ud800" <= c <= "\udfff" for c in pattern):  # a lone surrogate (JSON can carry one): no text
        raise PatternError(
            "the pattern is not valid Unicode text (it holds a lone surrogate)", "search for text"
        )
    if len(pattern) > MAX_PATTERN:
        raise PatternError(
            f"the pattern is too large ({len(pattern)} characters; at most {MAX_PATTERN})",
            "search for a shorter pattern, or several in turn",
        )
    if fixed:
        node = Node("".join(_literal(c, icase) for c in pattern), exact=pattern, required=[pattern])
        risky = False
    else:
        p = _Parser(pattern, icase)
        node = p.parse()
        risky = p.risky
    if len(node.py) > MAX_TRANSLATION:
        raise PatternError(
            f"the pattern is too large: it translates to {len(node.py):,} characters (at most"
            f" {MAX_TRANSLATION:,}; \\b, \\w and character classes stand for long lists of characters)",
            "use fewer \\b, \\w, \\s and [[:class:]] elements",
        )
    candidates = node.required + ([node.exact] if node.exact else [])
    literal = _best_literal(candidates, icase)
    any_of = None
    if literal is None and node.any_of:
        best = [_best_literal(alternative, icase) for alternative in node.any_of]
        any_of = None if None in best else sorted(set(best))
    return Translated(pattern, node.py, literal, icase, risky, any_of)


def compile_pattern(pattern: str, icase: bool = False, fixed: bool = False) -> Compiled:
    return translate(pattern, icase, fixed).compile()


def _best_literal(candidates: list[str], icase: bool) -> str | None:
    """The longest required text, as the prefilter searches for it (under -i: ASCII pieces casefolded,
    which matches a superset of what Python's IGNORECASE does for ASCII letters)."""
    pieces = []
    for c in candidates:
        pieces += re.split(r"[^\x00-\x7f]+", c) if icase else [c]
    best = max(pieces, key=len, default="")
    if len(best) < 2:
        return None
    return best.casefold() if icase else best


def _literal(c: str, icase: bool) -> str:
    if icase and c in "iI":
        return "(?-i:[iI])"  # Python would also match İ and ı; the C library does not
    return re.escape(c)


class _Parser:
    def __init__(self, pattern: str, icase: bool):
        self.p, self.i, self.icase = pattern, 0, icase
        self.groups = 0
        self.closed: set[int] = set()
        self.risky = False

    def error(self, what: str, hint: str = "see tpindex grep --help for the syntax") -> PatternError:
        return PatternError(f"{what} in {self.p!r} (at position {self.i})", hint)

    def peek(self) -> str:
        return self.p[self.i] if self.i < len(self.p) else ""

    def parse(self) -> Node:
        node = self.regex(0)
        if self.i != len(self.p):  # pragma: no cover - every character is consumed by regex()
            raise self.error("unexpected character")
        return node

    def regex(self, depth: int) -> Node:
        branches = [self.branch(depth)]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.branch(depth))
        if len(branches) == 1:
            return branches[0]
        any_of: list[list[str]] | None = []
        for b in branches:
            own = b.required + ([b.exact] if b.exact else [])
            if own:
                any_of.append(own)
            elif b.any_of:
                any_of.extend(b.any_of)
            else:
                any_of = None  # a branch that requires no text: no prefilter
                break
        return Node(
            "|".join(b.py for b in branches),
            repeats=any(b.repeats for b in branches),
            unit=False,
            alternation=True,
            any_of=any_of,
        )

    def branch(self, depth: int) -> Node:
        pieces: list[Node] = []
        while self.i < len(self.p) and self.peek() != "|" and not (self.peek() == ")" and depth > 0):
            pieces.append(self.piece(depth))
        required, run = [], ""
        for n in pieces:
            if n.exact is not None:
                run += n.exact
                continue
            if run:
                required.append(run)
                run = ""
            required += n.required
        if run:
            required.append(run)
        exact = "".join(n.exact for n in pieces) if all(n.exact is not None for n in pieces) else None
        py = "".join(n.py for n in pieces)
        any_of = next((n.any_of for n in pieces if n.any_of), None)  # every piece's match is in the branch's
        return Node(
            py,
            exact,
            required,
            any(n.repeats for n in pieces),
            unit=len(pieces) == 1 and pieces[0].unit,
            any_of=any_of,
        )

    def piece(self, depth: int) -> Node:
        atom = self.atom(depth)
        while self.peek() in ("*", "+", "?", "{") and self.peek():
            if atom.anchor:
                raise self.error("a repetition of an anchor")
            lo, hi, q = self.quantifier()
            if atom.repeats and (hi is None or hi > 1):
                self.risky = True
            inner = atom.py if atom.unit and not atom.repeats else f"(?:{atom.py})"
            keeps = atom.required + ([atom.exact] if atom.exact else [])
            atom = Node(
                inner + q,
                atom.exact if lo == hi == 1 else None,
                keeps if lo >= 1 else [],
                True,
                any_of=atom.any_of if lo >= 1 else None,
            )
        return atom

    def quantifier(self) -> tuple[int, int | None, str]:
        c = self.peek()
        self.i += 1
        if c == "*":
            return 0, None, "*"
        if c == "+":
            return 1, None, "+"
        if c == "?":
            return 0, 1, "?"
        m = re.compile(r"(\d*)(,?)(\d*)\}").match(self.p, self.i)
        if not m or (not m.group(1) and not m.group(2)) or (not m.group(2) and m.group(3)):
            raise self.error(
                "an unmatched or malformed { interval }", "write {n}, {n,}, {n,m} or {,m}, or \\{ for a brace"
            )
        lo = int(m.group(1) or 0)
        hi = int(m.group(3)) if m.group(3) else (None if m.group(2) else lo)
        if lo > DUP_MAX or (hi is not None and (hi > DUP_MAX or hi < lo)):
            raise self.error("an invalid interval", f"bounds must satisfy 0 <= n <= m <= {DUP_MAX}")
        self.i = m.end()
        return lo, hi, f"{{{lo}}}" if hi == lo else f"{{{lo},{'' if hi is None else hi}}}"

    def atom(self, depth: int) -> Node:
        c = self.peek()
        if c in ("*", "+", "?", "{"):
            raise self.error(f"{c!r} with nothing to repeat", f"write \\{c} for the character")
        self.i += 1
        if c == "(":
            if depth >= MAX_NESTING:
                raise self.error(f"groups nested more than {MAX_NESTING} deep", "simplify the pattern")
            self.groups += 1
            number = self.groups
            inner = self.regex(depth + 1)
            if self.peek() != ")":
                raise self.error("an unmatched (", "close it, or write \\( for the character")
            self.i += 1
            self.closed.add(number)
            return Node(f"({inner.py})", inner.exact, inner.required, inner.repeats, any_of=inner.any_of)
        if c == ".":
            return Node("[^\n" + NOT_CHAR + "]")
        if c in ("^", "$"):
            return Node(c, anchor=True, unit=False)
        if c == "[":
            return Node(self.bracket())
        if c == "\\":
            return self.escape()
        return Node(_literal(c, self.icase), exact=c)

    def escape(self) -> Node:
        c = self.peek()
        if not c:
            raise self.error("a trailing backslash", "write \\\\ for a backslash")
        self.i += 1
        if c in "wWsS":
            return Node(_gnu(c))
        if c in "bB<>":
            return Node(_anchor(c), anchor=True, unit=False)
        if c in "123456789":
            if int(c) not in self.closed:
                raise self.error(f"a back-reference \\{c} to a group that is not closed before it")
            self.risky = True
            return Node(f"(?:\\{c})")
        if c in "`'":
            raise self.error(
                f"the GNU buffer anchor \\{c} (unsupported)", "use ^ and $ (lines are matched one by one)"
            )
        if c.isalnum():
            raise self.error(
                f"\\{c}, which ERE does not define (git grep reads it as {c!r})",
                f"write {c} for the letter, or a bracket expression such as [0-9] or [[:space:]]",
            )
        return Node(_literal(c, self.icase), exact=c)

    def bracket(self) -> str:
        negate = self.peek() == "^"
        if negate:
            self.i += 1
        parts: list[str] = []
        first = True
        ended = False  # the last element was a class or a range: a "-" after it starts no range
        while True:
            if self.i >= len(self.p):
                raise self.error("an unmatched [", "close it with ], or write \\[ for the character")
            c = self.p[self.i]
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            if c == "[" and self.p[self.i + 1 : self.i + 2] in (":", "=", "."):
                kind = self.p[self.i + 1]
                end = self.p.find(kind + "]", self.i + 2)
                if end < 0:
                    raise self.error(f"an unterminated [{kind}")
                name = self.p[self.i + 2 : end]
                if kind != ":":
                    raise self.error(
                        f"[{kind}{name}{kind}] (equivalence classes and collating symbols are not supported)",
                        "write the characters themselves",
                    )
                if name not in _CLASSES:
                    raise self.error(
                        f"an unknown character class [:{name}:]", "classes: " + ", ".join(_CLASSES)
                    )
                self.i = end + 2
                parts.append(_class_body(name))
                ended = True
                continue
            if c == "-" and ended and self.p[self.i + 1 : self.i + 2] != "]":
                raise self.error(
                    "an invalid range end (a range cannot start at a class or at the end of a range)",
                    "put the - last in the brackets for the character",
                )
            ended = False
            self.i += 1
            if self.peek() == "-" and self.p[self.i + 1 : self.i + 2] not in ("]", ""):
                end_c = self.p[self.i + 1]
                if end_c == "[":
                    raise self.error("a range ending in a class or symbol")
                if not (c.isascii() and end_c.isascii()):
                    raise self.error(
                        f"the range {c}-{end_c} (ranges of non-ASCII characters depend on the locale)",
                        "list the characters instead",
                    )
                if ord(end_c) < ord(c):
                    raise self.error(f"the range {c}-{end_c}, whose end comes before its start")
                self.i += 2
                parts.append(f"{_in_class(c)}-{_in_class(end_c)}")
                ended = True
                continue
            parts.append(_in_class(c))
        body = "".join(parts)
        if negate:
            return f"[^{body}\n{NOT_CHAR}]"
        return f"[{body}]" if body else "[^\\s\\S]"


def _in_class(c: str) -> str:
    return "\\" + c if c in "\\]^-[" else c


_NO_BREAK = {"\u00a0", "\u2007", "\u202f"}


def _space(ch: str) -> bool:
    if ch.isascii():
        return ch in " \t\r\f\v"
    cat = unicodedata.category(ch)
    return (cat == "Zs" and ch not in _NO_BREAK) or cat in ("Zl", "Zp")


def _alpha(ch: str) -> bool:
    if ch.isascii():
        return ch.isalpha()
    return unicodedata.category(ch) in ("Lu", "Ll", "Lt", "Lm", "Lo", "Nl", "Nd", "Mc")


def _print(ch: str) -> bool:
    return unicodedata.category(ch) not in ("Cc", "Cn", "Cs", "Zl", "Zp")


_TESTS = {
    "alpha": _alpha,
    "alnum": lambda ch: _alpha(ch) or "0" <= ch <= "9",
    "upper": str.isupper,
    "lower": str.islower,
    "space": _space,
    "blank": lambda ch: ch == "\t" or (_space(ch) and unicodedata.category(ch) == "Zs"),
    "punct": lambda ch: _print(ch) and not _space(ch) and not _alpha(ch) and not "0" <= ch <= "9",
    "print": _print,
    "graph": lambda ch: _print(ch) and not _space(ch),
    "cntrl": lambda ch: unicodedata.category(ch) in ("Cc", "Zl", "Zp") and ch != "\n",
}
# The code points walked one by one; past them only private-use planes, taken whole.
_WALKED = ((0, 0x40000), (0xE0000, 0xE0200))
_PRIVATE = ((0xF0000, 0xFFFFD), (0x100000, 0x10FF7F))  # (not the bytes that are not UTF-8)


def _class_body(name: str) -> str:
    """A POSIX class as the inside of a Python character class, as the C library's C.UTF-8 locale has it:
    ASCII exactly; other characters by Unicode category (letters, letter numbers, digits and spacing
    marks are alpha; no-break spaces are graph, not space; format and private-use characters are
    punct); never the newline or a byte that is not UTF-8."""
    fixed = {"digit": "0-9", "xdigit": "0-9A-Fa-f"}
    return fixed[name] if name in fixed else _bodies()[name]


@functools.cache
def _bodies() -> dict[str, str]:
    """Every class body, computed once per Unicode version (about 0.5 s) and kept in the user cache dir."""
    import json

    cache = None
    try:
        cache = cache_home() / f"ere-classes-{CLASSES_VERSION}-unicode-{unicodedata.unidata_version}.json"
        return json.loads(cache.read_text())
    except (OSError, ValueError, ImportError, RuntimeError):
        pass
    bodies = {name: _compute(test) for name, test in _TESTS.items()}
    if cache is not None:
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(bodies))
            tmp.replace(cache)
        except OSError:  # a read-only home: compute again next time
            pass
    return bodies


def _compute(test) -> str:
    out: list[tuple[int, int]] = []
    for lo, hi in _WALKED:
        start = None
        for cp in range(lo, hi):
            ch = chr(cp)
            ok = ch != "\n" and test(ch)
            if ok and start is None:
                start = cp
            elif not ok and start is not None:
                out.append((start, cp - 1))
                start = None
        if start is not None:
            out.append((start, hi - 1))
    out += [r for r in _PRIVATE if test(chr(r[0]))]

    def esc(cp: int) -> str:
        # the characters themselves: re parses a \U escape ten times slower, and a pattern may hold many
        # copies of a class (\b holds four of \w)
        return f"\\U{cp:08x}" if 0xD800 <= cp <= 0xDFFF else _in_class(chr(cp))

    return "".join(esc(a) if a == b else f"{esc(a)}-{esc(b)}" for a, b in out)
