"""The browser's `fit`: /-/fit takes a pasted (or uploaded: the page reads the file into the form) chat template,
tokenizer_config.json, tokenizer.json or model output and shows the answer of `tpindex fit`, computed by
`Index.fit` on a connection of the served database; every value is escaped by the template."""

from __future__ import annotations

from datasette.utils.asgi import Response

from .docpages import MAX_QUERY, _form
from .state import served_database


async def fit_page(datasette, request):
    from ..answers.fit import MAX_INPUT
    from ..answers.markup import one_line
    from ..core.problems import Problem

    wanted, names = await served_database(datasette, request)
    form = await _form(request)
    text = form.get("text", "") or ""
    at = (form.get("at", "") or "").strip()[:MAX_QUERY]
    kind = form.get("kind", "") if form.get("kind", "") in ("tool", "reasoning") else ""
    db = datasette.get_database(wanted)
    versions = [r[0] for r in (await db.execute(
        "select label from versions where status = 'complete' order by ord")).rows]
    answer, error = None, None
    if len(text) > MAX_INPUT:
        error = f"the file is larger than {MAX_INPUT >> 20} MB; run tpindex fit on it instead"
    elif text.strip():
        def run(conn):
            from ..api import Index

            return Index(conn).fit(text, at or None, kind or None, name="the pasted file")

        try:
            answer = await db.execute_fn(run)
        except Problem as e:
            error = e.message + (f" ({e.hint})" if e.hint else "")
    return Response.html(await datasette.render_template("tpindex_fit.html", {
        "database": wanted, "databases": names, "text": text if len(text) <= MAX_INPUT else "", "at": at,
        "kind": kind, "versions": versions, "answer": answer, "error": error, "one_line": one_line,
        "max_mb": MAX_INPUT >> 20,
    }, request=request))
