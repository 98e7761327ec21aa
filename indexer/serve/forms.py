"""The forms of the pages that run code (/-/fit, /-/replay): each is a list of fields, and a field is one line
(its name in the form, the argument of the Index method it goes to, how long it may be, the values it may
take, how it is read), so that a page gains a field by one line (and its input in the template).

A page runs its code only for a POST (its form, from its own origin: serve/guard.py; Datasette checks the
CSRF token): a GET, a link or a crawler's visit, shows the form filled with the query's values and runs
nothing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Field:
    name: str  # in the form (and the query string)
    arg: str | None = None  # the keyword of the Index method it is passed to (None: the page reads it)
    limit: int | None = 300  # characters kept (None: the page checks the size itself)
    choices: tuple[str, ...] = ()  # the values it may take ("" for any other)
    strip: bool = True
    default: str = ""
    read: Callable[[str], object] | None = None  # what the method is given, from the text ("" gives None)


async def read(request, fields: tuple[Field, ...]) -> dict[str, str]:
    """Each field's text (a POST's body, else the query string's values), as the form shows it again."""
    raw = dict(await request.post_vars()) if request.method == "POST" else dict(request.args)
    out = {}
    for f in fields:
        value = raw.get(f.name) or ""
        if not isinstance(value, str):
            value = ""
        if f.strip:
            value = value.strip()
        if f.limit is not None:
            value = value[: f.limit]
        if f.choices and value not in f.choices:
            value = ""
        out[f.name] = value or f.default
    return out


def arguments(fields: tuple[Field, ...], form: dict[str, str]) -> dict[str, object]:
    """The keyword arguments of the Index method the fields go to ("" as None)."""
    out = {}
    for f in fields:
        if f.arg is None:
            continue
        value = form[f.name]
        out[f.arg] = (f.read(value) if f.read else value) if value else None
    return out


def runs(request) -> bool:
    """Whether the page runs its code for this request: a POST only."""
    return request.method == "POST"
