"""answers/linediff.Matcher gives the opcodes difflib's SequenceMatcher(None, a, b, autojunk=False) gives (issue 30:
`diff` counts its lines with it, `diff --code` writes its hunks with it), whatever the sequences: few distinct
values repeated (many runs of one length: a wrong tie or a row skipped too far shows there), edits of one
sequence, and unrelated ones."""

from __future__ import annotations

import difflib
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.answers.linediff import Matcher

LINES = st.lists(st.integers(0, 2), max_size=30) | st.lists(st.integers(0, 8), max_size=60)


def _reference(a, b):
    return difflib.SequenceMatcher(None, a, b, autojunk=False)


@st.composite
def edited(draw):
    """A sequence and an edit of it (lines inserted, deleted, replaced), as two versions of a file are."""
    a = draw(LINES)
    b = list(a)
    for op, pos, value in draw(
        st.lists(st.tuples(st.sampled_from("idr"), st.integers(0, 60), st.integers(0, 8)), max_size=6)
    ):
        pos = min(pos, len(b))
        if op == "i":
            b.insert(pos, value)
        elif b:
            pos = min(pos, len(b) - 1)
            if op == "d":
                del b[pos]
            else:
                b[pos] = value
    return a, b


@settings(max_examples=500, deadline=None)
@given(st.tuples(LINES, LINES) | edited())
def test_the_opcodes_are_difflibs(pair):
    a, b = pair
    assert Matcher(a, b).get_opcodes() == _reference(a, b).get_opcodes()
    assert list(Matcher(a, b).get_grouped_opcodes(3)) == list(_reference(a, b).get_grouped_opcodes(3))


@settings(max_examples=500, deadline=None)
@given(LINES, LINES, st.data())
def test_the_longest_match_of_any_window_is_difflibs(a, b, data):
    """The recursion asks for windows; each is answered as difflib answers it (ties: earliest in a, then b)."""
    alo = data.draw(st.integers(0, len(a)))
    ahi = data.draw(st.integers(alo, len(a)))
    blo = data.draw(st.integers(0, len(b)))
    bhi = data.draw(st.integers(blo, len(b)))
    assert Matcher(a, b).find_longest_match(alo, ahi, blo, bhi) == _reference(a, b).find_longest_match(
        alo, ahi, blo, bhi
    )


def test_many_small_sequences_of_few_values():
    """Seeded, 20,000 pairs over 2-4 values (hypothesis's shrinking favours simple lists, where a run found from
    a later row of another run's, tied with it, is rare): every window from each start to the ends."""
    rnd = random.Random(30)
    for _ in range(20_000):
        top = rnd.randint(1, 3)
        a = [rnd.randint(0, top) for _ in range(rnd.randint(0, 25))]
        b = [rnd.randint(0, top) for _ in range(rnd.randint(0, 25))]
        alo, blo = rnd.randint(0, len(a)), rnd.randint(0, len(b))
        assert Matcher(a, b).find_longest_match(alo, len(a), blo, len(b)) == _reference(
            a, b
        ).find_longest_match(alo, len(a), blo, len(b)), (a, b, alo, blo)
        assert Matcher(a, b).get_opcodes() == _reference(a, b).get_opcodes(), (a, b)


def test_long_files_with_repeated_lines():
    """Two versions of a 3,000-line file whose blank and closing lines repeat hundreds of times."""
    base = [i if i % 3 else 0 for i in range(3000)]  # every third line the same (a blank line)
    changed = base[:700] + [0, 0, 5001, 0] + base[700:1500] + base[1600:2900] + [0] * 50 + base[2900:]
    for a, b in ((base, changed), (changed, base), (base, base[::-1])):
        assert Matcher(a, b).get_opcodes() == _reference(a, b).get_opcodes()
