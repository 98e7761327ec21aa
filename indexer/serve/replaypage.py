"""The browser's /-/replay: paste a raw model output, pick a parser name and versions, and see what those
versions' own code makes of it (`tpindex replay`, through Index.replay: the code runs in a child process,
never in the server's). Every value is escaped by the template."""

from __future__ import annotations

from datasette.utils.asgi import Response

MAX_TEXT = 100_000
MAX_FIELD = 200


async def replay_page(datasette, request):
    from ..core.problems import Problem
    from ..render.replay import format_text
    from .docpages import _form
    from .state import ask, served_database

    wanted, names = await served_database(datasette, request)
    form = await _form(request)
    text = form.get("text", "") or ""
    name = (form.get("name", "") or "").strip()[:MAX_FIELD]
    tags = (form.get("tags", "") or "").strip()[:MAX_FIELD]
    splits = (form.get("splits", "") or "token").strip()[:MAX_FIELD]
    versions = await ask(datasette, wanted, lambda ix: ix.labels())
    report, error = None, None
    if len(text.encode("utf-8", "replace")) > MAX_TEXT:
        error = f"the text is larger than {MAX_TEXT // 1000} kB; replay it with tpindex replay instead"
    elif text.strip() and name:

        def run(ix):
            return format_text(
                ix.replay(
                    name,
                    tags=tags or None,
                    text=text,
                    splits=[s.strip() for s in splits.split(",") if s.strip()],
                )
            )

        try:
            report = await ask(datasette, wanted, run)
        except Problem as e:
            from .errors import inline

            error = inline(e)
    elif text.strip() or name:
        error = "give both the raw output and a parser name"
    return Response.html(
        await datasette.render_template(
            "tpindex_replay.html",
            {
                "database": wanted,
                "databases": names,
                "text": text if len(text) <= MAX_TEXT else "",
                "name": name,
                "tags": tags,
                "splits": splits,
                "versions": versions,
                "report": report,
                "error": error,
                "max_kb": MAX_TEXT // 1000,
            },
            request=request,
        )
    )
