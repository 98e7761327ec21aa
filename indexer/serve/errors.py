"""Errors on the web, the one translation of the error model for the browser: every page raises a Problem
(indexer/core/problems.py) where it finds what is wrong, and the plugin's handle_exception hook renders it
with one template (templates/tpindex_error.html) and its status (404 unless a PageError says otherwise).

What a web error offers to click: for a question the database cannot answer as asked (AnswerError), the
same page at the indexed versions close to the one asked for, at the versions that hold the path asked for,
with the close paths or names instead, and the search for a name. Links only: the message stays the
answer's, the command-line hint is left to the command line when there are links to offer."""

from __future__ import annotations

from urllib.parse import parse_qsl, quote, urlencode

from ..core.problems import Problem


class PageError(Problem):
    """A page that cannot be shown as asked (no such tpindex database served, a page too slow): its status
    and the error page's heading."""

    def __init__(self, message: str, hint: str | None = None, status: int = 404, title: str = "Not found"):
        super().__init__(message, hint)
        self.status, self.title = status, title


async def error_page(datasette, request, e: Problem):
    """The error page of a Problem: its message, what to click instead (else its hint), its status."""
    from datasette.utils.asgi import Response

    clicks = choices(request, e, lambda q: datasette.urls.path("-/find") + "?" + urlencode({"q": q}))
    status, title = getattr(e, "status", 404), getattr(e, "title", "Not found")
    return Response.html(
        await datasette.render_template(
            "tpindex_error.html",
            {"title": title, "message": e.message, "hint": None if clicks else e.hint, "clicks": clicks},
            request=request,
        ),
        status=status,
    )


def _swap(request, old: str, new: str, segment: bool) -> str:
    """The request's URL with `old` replaced by `new`: in the path (one segment, or a path of several) and in
    the query's values."""
    path = request.path
    if segment:
        parts = path.split("/")
        path = "/".join(quote(new, safe="") if p and _unquote(p) == old else p for p in parts)
    else:
        path = path.replace(quote(old), quote(new)) if quote(old) in path else path
    args = [(k, new if v == old else v) for k, v in parse_qsl(request.query_string, keep_blank_values=True)]
    return path + ("?" + urlencode(args) if args else "")


def _unquote(s: str) -> str:
    from urllib.parse import unquote

    return unquote(s)


def choices(request, e, find=None) -> list[tuple[str, str]]:
    """(text, href) to offer for the error `e` on the page of `request`; `find(q)` the search page's URL."""
    out: list[tuple[str, str]] = []
    if getattr(e, "asked", None):
        out += [(f"at {v}", _swap(request, e.asked, v, segment=True)) for v in e.versions]
    if getattr(e, "asked_path", None):
        out += [(p, _swap(request, e.asked_path, p, segment=False)) for p in e.paths]
    if find is not None:
        out += [(n, find(n)) for n in getattr(e, "names", ())]
    return out


def inline(e) -> str:
    """A Problem as the form pages (check-doc, fit, replay) show it above their form: the message, the hint
    in brackets."""
    return e.message + (f" ({e.hint})" if e.hint else "")
