"""The browser's `check-doc` and `where`: /-/check-doc takes a pasted Markdown document (a form, POST or
GET) and shows the report of `tpindex check-doc`, each claim linked to its evidence; /-/where shows
`tpindex where --all` for a symbol or path. Both run the very functions the commands run, read-only,
on a connection of the served database; every value is escaped by the template."""

from __future__ import annotations

from urllib.parse import urlencode

from datasette.utils.asgi import Response

MAX_DOC = 200_000  # bytes of a pasted document
MAX_QUERY = 300


async def _database(datasette, request):
    from .state import served_database

    wanted, names, why = await served_database(datasette, request)
    if why:
        page = await datasette.render_template("error.html", {"error": why, "title": "Not found", "status": 404},
                                               request=request)
        return None, names, Response.html(page, status=404)
    return wanted, names, None


async def _form(request) -> dict:
    if request.method == "POST":
        return dict(await request.post_vars())
    return dict(request.args)


async def check_doc_page(datasette, request):
    from ..core.links import source_url
    from ..core.problems import Problem
    from .state import state, upstream_for

    wanted, names, error_page = await _database(datasette, request)
    if error_page:
        return error_page
    form = await _form(request)
    text = form.get("doc", "") or ""
    too_large = request.scope.get("tpindex_form_too_large")  # cut at the plugin's MAX_FORM_BYTES as it was read
    at = (form.get("at", "") or "").strip()[:MAX_QUERY]
    db = datasette.get_database(wanted)
    versions = [r[0] for r in (await db.execute(
        "select label from versions where status = 'complete' order by ord")).rows]
    report, error = None, None
    if too_large or len(text.encode("utf-8", "replace")) > MAX_DOC:
        error = f"the document is larger than {MAX_DOC // 1000} kB; check it with tpindex check-doc instead"
    elif text.strip():
        def run(conn):
            from ..answers import checkdoc
            from ..store.database import Reader

            reader = Reader(conn)
            chosen = checkdoc.resolve_versions(reader, [at] if at else [])
            return checkdoc.check_document(reader, text, chosen, name="the document")

        try:
            report = await db.execute_fn(run)
        except Problem as e:
            error = e.message + (f" ({e.hint})" if e.hint else "")
    if report:
        st = await state(datasette, wanted)
        upstream = upstream_for(datasette, wanted, st)
        which = datasette.urls.query(wanted, "which")
        where = datasette.urls.path("-/where")
        for v in report["versions"]:
            for r in v["results"]:
                r["links"] = []
                for e in r["evidence"]:
                    if e["type"] == "source":
                        ref = await st.ref(db, e["version"])
                        label = f"{e['file']}:{e['line']}" if e.get("line") else e["file"]
                        r["links"].append((f"{label} at {e['version']}",
                                           source_url(upstream, ref, e["file"], e.get("line"))))
                    elif e["type"] == "parser":
                        r["links"].append((f"which {e['name']} at {e['version']}",
                                           which + "?" + urlencode({"name": e["name"], "version": e["version"]})))
                    elif e["type"] == "path":
                        r["links"].append((f"history of {e['path']}",
                                           where + "?" + urlencode({"db": wanted, "q": e["path"]})))
    return Response.html(await datasette.render_template("tpindex_checkdoc.html", {
        "database": wanted, "databases": names, "doc": text if len(text) <= MAX_DOC and not too_large else "", "at": at,
        "versions": versions, "report": report, "error": error, "max_kb": MAX_DOC // 1000,
    }, request=request))


async def where_page(datasette, request):
    from ..core.problems import Problem

    wanted, names, error_page = await _database(datasette, request)
    if error_page:
        return error_page
    q = (request.args.get("q") or "").strip()[:MAX_QUERY]
    at = (request.args.get("at") or "").strip()[:MAX_QUERY]
    lines, error = None, None
    if q:
        def run(conn):
            from ..answers import where
            from ..store.database import Reader

            ans = where.where(Reader(conn), q, at or None, all_=not at)
            return where.format_text(ans)

        try:
            lines = await datasette.get_database(wanted).execute_fn(run)
        except Problem as e:
            error = e.message + (f" ({e.hint})" if e.hint else "")
    return Response.html(await datasette.render_template("tpindex_where.html", {
        "database": wanted, "databases": names, "q": q, "at": at, "lines": lines, "error": error,
    }, request=request))
