"""difflib's SequenceMatcher without junk (`autojunk=False`, no `isjunk`), as `diff` and `diff --code` compare two
files' lines (their stored line ids or keys), with the same opcodes and a faster search for the longest match.

difflib finds the longest matching block of a window by walking every row i of `a` and, for each, every j
where b[j] == a[i], keeping the length of the diagonal run ending there: a cost of every pair of equal lines
(blank lines, `)`, `else:`: thousands of pairs in two versions of a file), again in each window of the recursion.
Without junk, the block it returns is the longest run of equal lines on one diagonal inside the window, the
earliest in `a`, then in `b`, on a tie (its docstring). `Matcher` finds the same block from fewer rows: a run
longer than the best found so far (`size`) holds one of any size + 1 consecutive rows, and one only as long
starts after the best (which starts at or before the row that found it), so after row i the next row to look
at is i + size + 1; each pair met there is extended both ways, inside the window, into its whole run, the
earliest kept on a tie. Two versions of a file share long runs, so most rows are skipped (`diff`'s 26 files
from v0.33.0 to v0.34.0 compared 4-5x faster; identical opcodes, tests/test_linediff.py).
"""

from __future__ import annotations

import difflib
from bisect import bisect_left


class Matcher(difflib.SequenceMatcher):
    """SequenceMatcher(None, a, b, autojunk=False), its find_longest_match faster (get_opcodes and
    get_grouped_opcodes are difflib's, on the same matching blocks)."""

    def __init__(self, a=(), b=()):
        super().__init__(None, a, b, autojunk=False)

    def find_longest_match(self, alo=0, ahi=None, blo=0, bhi=None):
        a, b, b2j = self.a, self.b, self.b2j
        ahi = len(a) if ahi is None else ahi
        bhi = len(b) if bhi is None else bhi
        besti, bestj, size = alo, blo, 0
        i = alo
        while i < ahi:
            js = b2j.get(a[i])
            if js:
                for j in js[bisect_left(js, blo) :]:
                    if j >= bhi:
                        break
                    back = 0  # the run through (i, j), clipped to the window
                    while i - back > alo and j - back > blo and a[i - back - 1] == b[j - back - 1]:
                        back += 1
                    ahead = 1
                    while i + ahead < ahi and j + ahead < bhi and a[i + ahead] == b[j + ahead]:
                        ahead += 1
                    n, si, sj = back + ahead, i - back, j - back
                    if n > size or (n == size and (si, sj) < (besti, bestj)):
                        besti, bestj, size = si, sj, n
            i += size + 1
        return difflib.Match(besti, bestj, size)
