"""What a unit of a document (a sentence, a table row) says about each path, name or version phrase in it: the
predicate, its tense and its negation, read from the clause that holds it (docclaims.py asks, checkdoc.py checks).

A unit is cut into clauses at strong separators (";", ": ", a parenthesis, a dash, a table cell's edge, the end
of a sentence, ", but"); commas cut weak clauses inside them. What a clause says of a path:

    absent   "there is no `p`", "and no `p`", "`p` does not exist"                    p is not there
    gone     "`p` is gone", "`p` was removed", "`p` moved to ...", "...`p`...: it is gone"  p was there, is not now
    avoid    "do not import from `p`", "instead of `p`", "`p` is deprecated"          nothing of p being there
    lives    "the parsers live in `p`", "`p` is where the parsers are defined"        p holds code of its own
    (former) "used to", "formerly", "previously", "moved from `p`"                    true once, not now
    (past)   "was", "were", "lived"                                                  true once
    (none)   the present tense: "is what the server loads", "import from `p`", "see `p`"   true now

Words such as "legacy" or "old" say nothing of the tense ("the legacy parser at `p` is what the server loads"
says p is loaded now). A version phrase ("since vX", "(vX+)", "before vX") is about its subject being there
unless the phrase's own clause says what changed at that version ("own class v0.31.0+", "since v0.31.0, `x` is
unified"): the predicate is looked for there, never anywhere in a long cell or sentence.

Reading stays linear in the unit: the separators and the words looked for are found once per unit, and each
token or phrase looks at most a bounded stretch of text before and after it.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

LOOK = 96  # characters looked at before and after a token for the words that govern it

STRONG = re.compile(  # one space before a word: "\s+but" tried at every space of a long run is quadratic
    r"[;()|]|:(?=\s|$)|[.!?](?=\s|$)|\s[—–-]\s|—|,?\s(?:but|whereas)\s|,\s(?:while|and\s(?:now|today))\s",
    re.I,
)
WEAK = re.compile(STRONG.pattern + r"|,", re.I)
# the tense is a clause's own: a subordinate or participial clause after a comma has its own ("from `f`,
# skipping x as it was installed before": the path is in the present tense)
TENSE = re.compile(
    STRONG.pattern
    + r"|,\s+(?=(?:as|because|which|who|when|where|if|unless|after|so|although|though|\w+ing)\b)",
    re.I,
)

# the noun a sentence may put between a name or path and its verb ("the `x` parser name is not registered")
NOUN = r"^\s*(?:(?:tool|reasoning)\s+)?(?:(?:parser|name|file|module|package|directory|folder)\s+){0,2}"
GONE_VERB = (
    r"(?:(?:is|are|has\s+been|have\s+been|was|were|got)\s+(?:now\s+|since\s+|long\s+|also\s+)?"
    r"(?:gone|removed|deleted|dropped)\b|(?:has|have)\s+gone\b|went\s+away\b|no\s+longer\s+exists?\b|"
    r"(?:is|are)\s+no\s+longer\s+(?:there|present|shipped|in\s+the\s+tree|registered|available)\b|"
    r"(?:has\s+|have\s+|was\s+|were\s+)?(?:moved|renamed|relocated)\s+(?:to|into|under)\b)"
)
GONE_AFTER = re.compile(NOUN + r"(?:,\s*(?:which|that)\s+)?" + GONE_VERB, re.I)
PRONOUN_GONE = re.compile(  # matched from a position: no ^
    r"\s*(?:it|this|that|they|these|those|the\s+(?:old\s+|former\s+|legacy\s+)?"
    r"(?:package|module|file|directory|folder|path)s?)\s+" + GONE_VERB,
    re.I,
)
NO_BEFORE = re.compile(r"\bthere\s+(?:is|are)\s+no(?:\s+longer\s+(?:an?|any))?\s*$|\bno\s+such\s*$", re.I)
# a bare "no `p`" only where nothing follows that it qualifies ("no `p` and no `q`", not "no `p` changes")
NO_ALONE_BEFORE = re.compile(r"(?:^|\band|\bor|,)\s*no\s*$", re.I)
NO_ALONE_AFTER = re.compile(
    r"\s*(?:$|[,.;:)]|(?:and|or|any\s*more|in|under|at|either|too|as\s+well)\b|"
    r"(?:file|module|package|directory|folder)s?\b)",
    re.I,
)
NOT_THERE_AFTER = re.compile(
    NOUN
    + r"(?:(?:does|do)\s+not|doesn't|don't|never)\s+exists?\b|"
    + NOUN
    + r"(?:is|are)\s+not\s+(?:there|present|shipped|registered|available)\b",
    re.I,
)
AVOID_BEFORE = re.compile(
    r"(?:\bnot|\bnever|n't|\bno\s+longer|\bavoid|\binstead\s+of|\brather\s+than|\bstop\s+\w+ing|\bwithout|"
    r"\breplace|\b(?:migrate|switch|move)\s+(?:away\s+|off\s+)?from)"
    r"\s+(?:\w+\s+){0,2}$",
    re.I,
)
AVOID_AFTER = re.compile(r"^\s*(?:(?:is|are)\s+(?:now\s+)?(?:an?\s+)?)?deprecated\b", re.I)
# the past, said as over: the sentence implies it is not so now ("the parsers used to live in `p`"; not the
# passive "`p` can be used to ...")
FORMER = re.compile(
    r"\b(?:(?<!\bbe\s)(?<!\bis\s)(?<!\bare\s)(?<!\bwas\s)(?<!\bget\s)(?<!\bbeen\s)used\s+to|formerly|previously|historically|back\s+then|in\s+older\s+(?:versions|releases)|"
    r"older\s+releases|once\s+(?:lived|was|were|held|had))\b",
    re.I,
)
# the simple past: true once, and perhaps still ("before v0.33.0 `f` was defined in `p`": p may still be there)
PAST = re.compile(r"\b(?:was|were|had\s+been|lived|resided)\b", re.I)
PAST_BEFORE = re.compile(
    r"\b(?:moved|renamed|migrated|relocated|came)\s+(?:away\s+)?from\s+(?:the\s+)?$", re.I
)
LIVES_BEFORE = re.compile(
    r"\b(?:lives?|living|resides?|sits?|(?:is|are)\s+(?:now\s+|still\s+)?(?:defined|implemented|kept))"
    r"\s+(?:in|inside|under|within)\s+(?:the\s+)?$",
    re.I,
)
LIVES_AFTER = re.compile(
    r"^\s*(?:(?:is|are)\s+(?:still\s+|now\s+)?where\s+(?:the\s+|its\s+|their\s+)?\w+(?:\s+\w+)?\s+"
    r"(?:lives?|(?:is|are)\s+(?:defined|implemented))\b|"
    r"(?:holds?|contains?)\s+(?:the\s+|all\s+the\s+|its\s+|their\s+)?(?:\w+\s+)?"
    r"(?:parsers?|classes|code|implementations?)\b)",
    re.I,
)
# right after a name: the file after it is where the name's code is ("`X` is defined in `p`", "`X` lives in `p`")
LIVES_NAME = re.compile(
    r"\s*(?:now\s+|still\s+)?(?:lives?|resides?|(?:is|are)\s+(?:now\s+|still\s+)?(?:defined|implemented|declared))"
    r"\s+(?:in|inside|under|within)\s*",
    re.I,
)
# in a version phrase's clause: the phrase is about where the code is ("before v0.13.0 the parsers lived in `p`")
LIVES_WORD = re.compile(
    r"\b(?:live[sd]?|living|resides?|resided|(?:is|are|was|were)\s+(?:defined|implemented|kept)|"
    r"(?:code|parsers?|classes|modules?|implementations?)\s+(?:is|are|was|were)\s+(?:all\s+)?(?:in|under))\b",
    re.I,
)
# words that refer back to the clause before ("`b` (`c` too, through v0.31.0)"): the predicate is that clause's
ANAPHOR = re.compile(r"\b(?:too|also|as\s+well|likewise|either)\b", re.I)
# a parser name and the file it is registered from: "`x` parser is registered from `f`"
REGISTERED_GAP = re.compile(  # fullmatch over the gap between the two tokens
    r"\s*(?:(?:tool|reasoning)\s+)?(?:parser\s+|name\s+)?(?:is\s+|are\s+|gets\s+|was\s+|were\s+)?"
    r"(?:(?:still|now|also|first)\s+)?registered\s+(?:from|in|by|through)\s+(?:the\s+)?(?:file\s+|module\s+)?",
    re.I,
)


class Reading:
    """The clauses of one unit's masked text (code spans blanked, offsets kept)."""

    def __init__(self, masked: str, predicate: re.Pattern):
        self.masked = masked
        self._strong = [(m.start(), m.end()) for m in STRONG.finditer(masked)]
        self._weak = [(m.start(), m.end()) for m in WEAK.finditer(masked)]
        self._strong_starts = [s for s, _ in self._strong]
        self._tense = [(m.start(), m.end()) for m in TENSE.finditer(masked)]
        self._tense_starts = [s for s, _ in self._tense]
        self._weak_starts = [s for s, _ in self._weak]
        self._past = [m.start() for m in PAST.finditer(masked)]
        self._former = [m.start() for m in FORMER.finditer(masked)]
        self._anaphors = [m.start() for m in ANAPHOR.finditer(masked)]
        self._preds = [
            (m.start(), m.end(), " ".join(m.group(0).lower().split())) for m in predicate.finditer(masked)
        ]
        self._pred_starts = [s for s, _, _ in self._preds]
        self._lives = [(m.start(), m.end()) for m in LIVES_WORD.finditer(masked)]
        self._lives_starts = [s for s, _ in self._lives]
        self._bars = [i for i, c in enumerate(masked) if c == "|"]

    # -- clauses ------------------------------------------------------------------------------------------
    def clause(self, pos: int, weak: bool = False, tense: bool = False) -> tuple[int, int]:
        """The clause holding offset `pos`: from the end of the separator before it to the start of the one after
        (`weak`: commas cut too; `tense`: a comma before a subordinate clause cuts too)."""
        seps, starts = (
            (self._weak, self._weak_starts)
            if weak
            else (self._tense, self._tense_starts)
            if tense
            else (self._strong, self._strong_starts)
        )
        k = bisect_right(starts, pos) - 1
        while k >= 0 and seps[k][1] > pos:  # pos inside a separator: the clause starts before it
            k -= 1
        a = seps[k][1] if k >= 0 else 0
        b = seps[k + 1][0] if k + 1 < len(seps) else len(self.masked)
        return a, b

    def next_clause(self, end: int) -> tuple[int, int] | None:
        """The strong clause right after the one ending at `end` (a separator's start), if any."""
        k = bisect_left(self._strong_starts, end)
        if k >= len(self._strong) or self._strong[k][0] != end:
            return None
        a = self._strong[k][1]
        b = self._strong[k + 1][0] if k + 1 < len(self._strong) else len(self.masked)
        return a, b

    def _any(self, starts: list[int], a: int, b: int) -> bool:
        return bisect_left(starts, a) < bisect_left(starts, b)

    # -- what a clause says of a path --------------------------------------------------------------------
    def of_path(self, start: int, end: int) -> tuple[str | None, str | None]:
        """(predicate, tense) for the path at masked[start:end]: predicate absent | gone | avoid | lives | None,
        tense former | past | None (the present)."""
        a, b = self.clause(start)
        before = self.masked[max(a, start - LOOK) : start]
        after = self.masked[end : min(b, end + LOOK)]
        if (
            NO_BEFORE.search(before)
            or NOT_THERE_AFTER.match(after)
            or (NO_ALONE_BEFORE.search(before) and NO_ALONE_AFTER.match(after))
        ):
            return "absent", None
        if GONE_AFTER.match(after):
            return "gone", None
        nxt = self.next_clause(b)
        if nxt is not None and PRONOUN_GONE.match(self.masked, nxt[0], min(nxt[1], nxt[0] + LOOK)):
            return "gone", None
        if AVOID_BEFORE.search(before) or AVOID_AFTER.match(after):
            return "avoid", None
        tense = self.tense(start)
        if tense:
            return None, tense
        if LIVES_BEFORE.search(before) or LIVES_AFTER.match(after):
            return "lives", None
        return None, None

    def lives(self, end: int, file_start: int) -> bool:
        """Whether the words between a name (ending at `end`) and the file after it say the file is where the
        name's code is."""
        return (
            0 <= file_start - end <= LOOK and LIVES_NAME.fullmatch(self.masked, end, file_start) is not None
        )

    def tense(self, start: int) -> str | None:
        """The tense of the clause of the token at `start`: "former" (it was so, and is not now: "used to",
        "previously", "moved from `p`"), "past" ("was", "lived"), None (the present)."""
        a, b = self.clause(start, tense=True)
        if self._any(self._former, a, b) or PAST_BEFORE.search(self.masked[max(a, start - LOOK) : start]):
            return "former"
        return "past" if self._any(self._past, a, b) else None

    # -- what a version phrase is about -------------------------------------------------------------------
    def of_phrase(self, m_start: int, m_end: int, t_start: int, t_end: int) -> tuple[str | None, bool]:
        """(predicate word, about code) for a version phrase at [m_start, m_end) about the token at
        [t_start, t_end): the words of the phrase's own clause that say what changed at that version.
        `about code`: the clause says the subject is where code lives ("the parsers lived in `p`")."""
        # the clause of the phrase's own words ("(v0.29.0+)" is a parenthesis: its inside)
        inner_start = m_start + 1 if self.masked.startswith("(", m_start) else m_start
        inner_end = m_end - 1 if self.masked.endswith(")", m_start, m_end) else m_end
        a, b = self.clause(inner_start)
        if a <= t_start and t_end <= m_start:  # "`x` is unified since v0.24.0": from the subject on
            window = (t_end, self.clause(inner_end, weak=True)[1])
        elif t_start >= m_end and a <= m_start:  # "Since v0.31.0, `x` is unified."
            window = (m_end, b)
        else:  # a cell or parenthesis of its own: "(own class v0.31.0+)", "(v0.29.0+; ...)"
            window = self.clause(inner_start, weak=True)
        if self._any(self._anaphors, *window):  # "(`c` too, through v0.31.0)": what the clause before says
            window = (0, len(self.masked))
            cell = self._cell(inner_start)
            if cell is not None:
                window = cell
        lo, hi = window
        for s, e in self._lives[bisect_left(self._lives_starts, lo) :]:
            if s >= hi:
                break
            if e <= m_start or s >= m_end:
                return None, True
        for s, e, word in self._preds[bisect_left(self._pred_starts, lo) :]:
            if s >= hi:
                break
            if e <= m_start or s >= m_end:
                return word, False
        return None, False

    def _cell(self, pos: int) -> tuple[int, int] | None:
        """The table cell around `pos` (between two "|"), None in prose."""
        if not self._bars:
            return None
        k = bisect_left(self._bars, pos)
        return (self._bars[k - 1] + 1 if k else 0), (
            self._bars[k] if k < len(self._bars) else len(self.masked)
        )
