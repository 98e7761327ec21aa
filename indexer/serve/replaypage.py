"""The browser's /-/replay: paste a raw model output, pick a parser name and versions, and see what those
versions' own code makes of it (`tpindex replay`, through Index.replay as a job of the server's queue for code,
serve/work.py: the code runs in child processes, never in the server's), only when the form is posted (a GET
shows the form). Every value is escaped by the template."""

from __future__ import annotations

from datasette.utils.asgi import Response

from .forms import Field, arguments, read, runs

MAX_TEXT = 100_000
MAX_FIELD = 200


def _splits(value: str) -> list[str]:
    return [s.strip() for s in value.split(",") if s.strip()]


FIELDS = (
    Field("text", arg="text", limit=None, strip=False),
    Field("name", arg="name", limit=MAX_FIELD),
    Field("tags", arg="tags", limit=MAX_FIELD),
    Field("splits", arg="splits", limit=MAX_FIELD, default="token", read=_splits),
)


async def replay_page(datasette, request):
    from ..core.problems import Problem
    from ..render.replay import format_text
    from .state import ask, served_database
    from .work import Gone
    from .work import ask as queued

    wanted, names = await served_database(datasette, request)
    form = await read(request, FIELDS)
    text, name = form["text"], form["name"]
    versions = await ask(datasette, wanted, lambda ix: ix.labels())
    report, error, note, status = None, None, None, 200
    if len(text.encode("utf-8", "replace")) > MAX_TEXT or request.scope.get("tpindex_body_too_large"):
        error = f"the text is larger than {MAX_TEXT // 1000} kB; replay it with tpindex replay instead"
    elif text.strip() and name and not runs(request):
        note = "press Replay to run it: this page runs a version's code only for its form"
    elif text.strip() and name:
        args = arguments(FIELDS, form)
        try:
            report = await queued(datasette, wanted, lambda ix: format_text(ix.replay(**args)), request)
        except Gone:
            return Response.text("", status=499)  # nobody reads it
        except Problem as e:
            from .errors import inline

            error, status = inline(e), 503 if e.transient else 200
    elif text.strip() or name:
        error = "give both the raw output and a parser name"
    return Response.html(
        await datasette.render_template(
            "tpindex_replay.html",
            {
                "database": wanted,
                "databases": names,
                **form,
                "text": text if len(text) <= MAX_TEXT else "",
                "versions": versions,
                "report": report,
                "error": error,
                "note": note,
                "max_kb": MAX_TEXT // 1000,
            },
            request=request,
        ),
        status=status,
    )
