"""The one close-name suggester behind every "did you mean": a mistyped parser name, path, version,
command, schema or claim. Each caller keeps its own wording, count and closeness (they were tuned per
question); the way names are found is this one."""

from __future__ import annotations

from collections.abc import Callable, Iterable


def close_names(
    word: str,
    names: Iterable[str],
    n: int,
    cutoff: float,
    also: Callable[[str], bool] | None = None,
    limit: int | None = None,
) -> list[str]:
    """The names closest to `word` (at most `n`, each at least `cutoff` alike, best first, as difflib
    rates them), then, when `also` is given, the other names it accepts (a name containing the word, a
    path with the same file name), in their order, up to `limit` names in all (default `n`)."""
    import difflib  # here: most processes suggest nothing

    names = list(names)
    close = difflib.get_close_matches(word, names, n=n, cutoff=cutoff)
    if also is not None:
        close += [x for x in names if also(x) and x not in close][: (limit or n) - len(close)]
    return close
