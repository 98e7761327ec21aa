"""The tag-spec grammar of `--tags`, over the version names a source lists.

    A..B     every version from A to B inclusive, in PEP 440 order (not commit or date order)
    A.. ..B  open ends
    a,b,c    lists (any mix of the forms here)
    v0.3*    shell globs
    NAME     one tag or version by name (pre-releases included), or a short label equal to exactly one of them
             under PEP 440 (v0.31, 0.31.0 for v0.31.0), or any other ref the source knows

Pre-releases (rc, dev, a, b) are left out of ranges and globs unless `pre`; names that do not parse
as versions are ignored by ranges.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .problems import Problem
from .suggest import close_names

if TYPE_CHECKING:
    from packaging.version import Version


class SpecError(Problem, ValueError):
    """A spec that is malformed or selects nothing; the message says what exists instead, the hint (given
    by the caller of select(), who knows where the spec came from) what to read. `nearest`: the names nearest
    to a spec of one unknown name (a caller may offer them as a spec that works)."""

    nearest: tuple[str, ...] = ()


def parse_version(name: str) -> Version | None:
    text = name[1:] if name[:1] in ("v", "V") else name
    if not text or not text[0].isdigit():
        return None
    from packaging.version import InvalidVersion, Version  # here: a label asked as written needs no parsing

    try:
        return Version(text)
    except (InvalidVersion, ValueError):  # ValueError: a number too long to convert
        return None


def named(label: str, names: Iterable[str]) -> list[str]:
    """The names `label` names: itself when it is one of them; else every name equal to it as a version under
    PEP 440 (packaging's Version equality: v0.31 == 0.31.0 == v0.31.0; a local label +x is another version).
    One name: the label resolves to it; several: it is ambiguous; none: it names nothing."""
    names = list(names)
    label = label.strip()
    if label in names:
        return [label]
    v = parse_version(label)
    if v is None:
        return []
    return [n for n in names if parse_version(n) == v]


def ambiguous(label: str, candidates: list[str]) -> str:
    return (
        f"version {_shown(label)} is ambiguous: it equals {', '.join(candidates)} under PEP 440; name one of"
        " them as written"
    )


def _shown(text: str) -> str:
    """A name for a message, cut when it is very long."""
    return repr(text) if len(text) <= 60 else repr(text[:60]) + f"... ({len(text)} characters)"


def sort_key(name: str) -> tuple:
    v = parse_version(name)
    if v is not None:
        return (0, v, name)
    from packaging.version import Version

    return (1, Version("0"), name)


@dataclass
class Selection:
    names: list[str]  # in version order
    refs: list[str] = field(default_factory=list)  # explicit non-tag refs, in the order given
    ignored: list[str] = field(default_factory=list)  # names that do not parse as versions


def nearest_versions(label: str, names: Iterable[str], n: int = 3) -> list[str]:
    """The names nearest to a version label in version order, alternately below and above it (the one below,
    the one above, ...), in version order; [] when the label is no version or no name is one."""
    v = parse_version(label)
    ordered = sorted((x for x in names if parse_version(x) is not None), key=sort_key)
    if v is None:
        return []
    below = [x for x in ordered if parse_version(x) < v]
    above = [x for x in ordered if parse_version(x) > v]
    out: list[str] = []
    while len(out) < n and (below or above):
        if below:
            out.append(below.pop())
        if above and len(out) < n:
            out.append(above.pop(0))
    return sorted(out, key=sort_key)


def closest(word: str, names: Iterable[str], n: int = 3) -> list[str]:
    """The names to offer for one that is not there: a version's nearest in version order on both sides (one
    below, one above: `v0.15.0` -> v0.14.1, v0.16.0, not the string-close v0.5.0), else the names spelled
    closest, else the newest."""
    names = list(names)
    v = parse_version(word)
    if v is not None:
        ordered = sorted((x for x in names if parse_version(x) is not None), key=sort_key)
        found = [x for x in ordered if parse_version(x) < v][-1:] + [
            x for x in ordered if parse_version(x) > v
        ][:1]
        if found:
            return found
    close = close_names(word, names, n=n, cutoff=0.5)
    return close or sorted((x for x in names if parse_version(x)), key=sort_key)[-n:]


def _bound(text: str, spec: str, fail) -> Version | None:
    if not text:
        return None
    v = parse_version(text)
    if v is None:
        raise fail(
            f"range end {_shown(text)} in {_shown(spec)} is not a version (write e.g. v0.30.0..v0.32.0)"
        )
    return v


def select(
    spec: str,
    names: Iterable[str],
    pre: bool = False,
    is_ref: Callable[[str], bool] = lambda name: False,
    hint: str | None = None,
    note: str = "",
    missing: Callable[[str], str | None] | None = None,
) -> Selection:
    """The names `spec` selects; a SpecError (its message followed by `note`, with `hint`) when it is
    malformed or selects nothing. `missing(name)`: why the source has no such name, when it knows (the package
    index lists wheels of a release but no source archive), said in place of `unknown tag or ref`."""

    def fail(message: str, nearest: list[str] | None = None) -> SpecError:
        e = SpecError(message + note, hint)
        e.nearest = tuple(nearest or ())
        return e

    names = list(dict.fromkeys(names))
    known = set(names)
    versions = {n: parse_version(n) for n in names}
    items = [s.strip() for s in spec.split(",")]
    if not spec.strip() or any(not s for s in items):
        raise fail(
            f"malformed tag spec {_shown(spec)}: empty item (write e.g. v0.30.0..v0.32.0 or v0.30.0,v0.32.0)"
        )
    chosen: dict[str, None] = {}
    refs: list[str] = []
    left_out: list[str] = []  # pre-releases a range or glob would have taken with pre=True
    for item in items:
        if ".." in item:
            lo_text, _, hi_text = item.partition("..")
            lo_text, hi_text = lo_text.strip(), hi_text.strip()
            if ".." in hi_text or (not lo_text and not hi_text):
                raise fail(f"malformed range {_shown(item)}: use A..B, A.. or ..B")
            lo, hi = _bound(lo_text, item, fail), _bound(hi_text, item, fail)
            if lo is not None and hi is not None and lo > hi:
                raise fail(f"empty range {_shown(item)}: {_shown(lo_text)} comes after {_shown(hi_text)}")
            for n, v in versions.items():
                if v is None or not ((lo is None or v >= lo) and (hi is None or v <= hi)):
                    continue
                if v.is_prerelease and not pre:
                    left_out.append(n)
                else:
                    chosen[n] = None
        elif any(c in item for c in "*?["):
            for n in names:
                v = versions[n]
                if not fnmatch.fnmatchcase(n, item):
                    continue
                if v is not None and v.is_prerelease and not pre:
                    left_out.append(n)
                else:
                    chosen[n] = None
        elif item in known:
            chosen[item] = None
        elif len(same := named(item, names)) > 1:
            raise fail(ambiguous(item, same))
        elif same:
            chosen[same[0]] = None
        elif is_ref(item):
            if item not in refs:
                refs.append(item)
        else:
            close = closest(item, names)
            what = (missing(item) if missing else None) or f"unknown tag or ref {_shown(item)}"
            near = "nearest in version order" if parse_version(item) is not None else "closest existing tags"
            raise fail(f"{what}; {near}: {', '.join(close) or 'none'}", close if len(items) == 1 else None)
    if not chosen and not refs:
        if left_out:
            raise fail(
                f"tag spec {_shown(spec)} selects only pre-releases ({', '.join(left_out[:3])}), which ranges"
                " and globs leave out; pass --pre (pre=True) or name them"
            )
        words = [w.strip() for w in items[0].split("..") if w.strip()]
        close = ", ".join(closest(words[0] if words else spec, names)) or "none"
        raise fail(f"tag spec {_shown(spec)} selects nothing; closest existing tags: {close}")
    ignored = sorted(n for n, v in versions.items() if v is None)
    return Selection(sorted(chosen, key=sort_key), refs, ignored)
