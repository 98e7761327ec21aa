"""The browser's `check-doc` and `where`: /-/check-doc takes a pasted Markdown document (a form, POST or
GET) and shows the report of `tpindex check-doc`, each claim linked to its evidence; /-/where shows
`tpindex where --all` for a symbol or path. Both run the very functions the commands run, read-only,
asked through the served database's Index; every value is escaped by the template."""

from __future__ import annotations

from urllib.parse import urlencode

from datasette.utils.asgi import Response

from .state import served_database

MAX_DOC = 200_000  # bytes of a pasted document
MAX_QUERY = 300


async def _form(request) -> dict:
    if request.method == "POST":
        return dict(await request.post_vars())
    return dict(request.args)


async def check_doc_page(datasette, request):
    from ..core.links import source_url
    from ..core.problems import Problem
    from .state import ask, state, upstream_for

    wanted, names = await served_database(datasette, request)
    form = await _form(request)
    text = form.get("doc", "") or ""
    too_large = request.scope.get("tpindex_body_too_large")  # cut at guard.BODY_LIMITS as it was read
    at = (form.get("at", "") or "").strip()[:MAX_QUERY]
    db = datasette.get_database(wanted)
    versions = await ask(datasette, wanted, lambda ix: ix.labels())
    report, error = None, None
    if too_large or len(text.encode("utf-8", "replace")) > MAX_DOC:
        error = f"the document is larger than {MAX_DOC // 1000} kB; check it with tpindex check-doc instead"
    elif text.strip():
        try:  # the page reads the JSON
            report = await ask(
                datasette,
                wanted,
                lambda ix: ix.check_doc(text, [at] if at else [], name="the document").to_json(),
            )
        except Problem as e:
            from .errors import inline

            error = inline(e)
    if report:
        st = await state(datasette, wanted)
        upstream = upstream_for(datasette, wanted, st)
        which = datasette.urls.query(wanted, "which")
        where = datasette.urls.path("-/where")
        from .cells import Urls

        evidence = [e for v in report["versions"] for r in v["results"] for e in r["evidence"]]
        wanted_versions = sorted({e["version"] for e in evidence if e["type"] == "source"})
        stored = await ask(datasette, wanted, lambda ix: {v: ix.stored_paths(v) for v in wanted_versions})
        u = Urls(datasette, wanted, len(names) > 1, stored)
        for v in report["versions"]:
            for r in v["results"]:
                r["links"] = []  # (label, local link or None, upstream link or None)
                for e in r["evidence"]:
                    if e["type"] == "source":
                        ref = await st.ref(db, e["version"])
                        label = f"{e['file']}:{e['line']}" if e.get("line") else e["file"]
                        r["links"].append(
                            (
                                f"{label} at {e['version']}",
                                u.code(e["version"], e["file"], e.get("line")),
                                source_url(upstream, ref, e["file"], e.get("line")),
                            )
                        )
                    elif e["type"] == "parser":
                        r["links"].append(
                            (
                                f"which {e['name']} at {e['version']}",
                                which + "?" + urlencode({"name": e["name"], "version": e["version"]}),
                                None,
                            )
                        )
                    elif e["type"] == "path":
                        r["links"].append(
                            (
                                f"history of {e['path']}",
                                where + "?" + urlencode({"db": wanted, "q": e["path"]}),
                                None,
                            )
                        )
    return Response.html(
        await datasette.render_template(
            "tpindex_checkdoc.html",
            {
                "database": wanted,
                "databases": names,
                "doc": text if len(text) <= MAX_DOC and not too_large else "",
                "at": at,
                "versions": versions,
                "report": report,
                "error": error,
                "max_kb": MAX_DOC // 1000,
            },
            request=request,
        )
    )


async def where_page(datasette, request):
    """`tpindex where` as a page: a symbol's definitions per range of versions (or at one version), a path's
    history with its moves, each definition linked to its line in the stored code (upstream beside it)."""
    from ..core.links import source_url
    from ..core.problems import Problem
    from .cells import Urls
    from .state import ask, state, upstream_for

    wanted, names = await served_database(datasette, request)
    q = (request.args.get("q") or "").strip()[:MAX_QUERY]
    at = (request.args.get("at") or "").strip()[:MAX_QUERY]
    ans, error, u = None, None, Urls(datasette, wanted, len(names) > 1)
    db = datasette.get_database(wanted)
    if q:

        def run(ix):
            ans = ix.where(q, at or None, all_versions=not at).to_json()  # the page reads the JSON
            return ans, {v: ix.stored_paths(v) for v in _linked_versions(ans)}

        try:
            ans, u.stored = await ask(datasette, wanted, run)
        except Problem as e:
            from .errors import choices

            clicks = choices(request, e)
            error = (e.message, None if clicks else e.hint, clicks)
    if ans:
        st = await state(datasette, wanted)
        upstream = upstream_for(datasette, wanted, st)
        for version, d in _definitions(ans):
            d["local"] = u.code(version, d["file"], d["line"])
            d["up"] = source_url(upstream, await st.ref(db, version), d["file"], d["line"])
            d["version"] = version
    return Response.html(
        await datasette.render_template(
            "tpindex_where.html",
            {
                "database": wanted,
                "databases": names,
                "q": q,
                "at": at,
                "ans": ans,
                "error": error,
                "u": u,
                "where": lambda query, version=None: (
                    datasette.urls.path("-/where")
                    + "?"
                    + urlencode(
                        {
                            **({"db": wanted} if len(names) > 1 else {}),
                            "q": query,
                            **({"at": version} if version else {}),
                        }
                    )
                ),
            },
            request=request,
        )
    )


def _definitions(ans: dict):
    """(version it is linked at, definition) of a where answer: at its version, or each range's last."""
    if "version" in ans:
        for d in ans.get("definitions") or []:
            yield ans["version"], d
    for s in ans.get("history") or []:
        if isinstance(s, dict) and "definitions" in s:
            for d in s["definitions"]:
                yield s["last"], d


def _linked_versions(ans: dict) -> list[str]:
    out = [v for v, _ in _definitions(ans)]
    out += [v for v in (ans.get("version"), ans.get("mentions_version")) if v]
    if ans.get("kind") == "path":  # a path present in a range links to its code at the range's end
        histories = [ans.get("history") or []] + list((ans.get("histories") or {}).values())
        out += [s["last"] for h in histories for s in h if s.get("present")]
    return list(dict.fromkeys(out))
