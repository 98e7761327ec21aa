"""Route handlers of the browser's own pages (answers/pages.py holds what they show, asked through Index):
/-/parser/<kind>/<name>, /-/version/<label> and /-/find. Each serves the tpindex database named by `?db=`
(default: the first); what cannot be shown is a Problem, rendered by the plugin's handle_exception hook
(errors.py)."""

from __future__ import annotations

from urllib.parse import unquote

from datasette.utils.asgi import Response

from .cells import Urls
from .state import ask, served_database


async def _urls(datasette, database: str) -> Urls:
    from .state import tpindex_databases

    return Urls(datasette, database, several=len(await tpindex_databases(datasette)) > 1)


async def parser_route(datasette, request):
    database, _ = await served_database(datasette, request)
    kind, name = unquote(request.url_vars["kind"]), unquote(request.url_vars["name"])  # raw in the route
    page = await ask(datasette, database, lambda ix: ix.parser_page(kind, name, request.args.get("v")))
    urls = await _urls(datasette, database)
    urls.stored = page.stored
    return Response.html(
        await datasette.render_template(
            "tpindex_parser.html",
            {
                "page": page,
                "c": page.card,
                "u": urls,
                "database": database,
                "title": f"{name} ({kind} parser) at {page.version}",
            },
            request=request,
        )
    )


async def version_route(datasette, request):
    database, _ = await served_database(datasette, request)
    label = unquote(request.url_vars["label"])  # the route matches the raw path: v0.33.0%2Blocal
    page = await ask(datasette, database, lambda ix: ix.version_page(label))
    urls = await _urls(datasette, database)
    urls.stored = page.stored
    return Response.html(
        await datasette.render_template(
            "tpindex_version.html",
            {"page": page, "u": urls, "database": database, "title": f"vLLM {page.version}: parser names"},
            request=request,
        )
    )


async def find_route(datasette, request):
    database, _ = await served_database(datasette, request)
    q = request.args.get("q", "")[:200]
    found = await ask(datasette, database, lambda ix: ix.find(q))
    urls = await _urls(datasette, database)
    if isinstance(found, tuple):
        target = urls.version(found[1]) if found[0] == "version" else urls.parser(found[1], found[2])
        return Response.redirect(target)
    return Response.html(
        await datasette.render_template(
            "tpindex_find.html",
            {
                "found": found,
                "u": urls,
                "database": database,
                "title": f"Find {q!r}" if q else "Find a parser",
            },
            request=request,
        ),
        status=200 if found.matches or found.model or not q else 404,
    )
