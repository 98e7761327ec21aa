"""The browser's `fit`: /-/fit takes a pasted (or uploaded: the page reads the file into the form) chat template,
tokenizer_config.json, tokenizer.json or model output and shows the answer of `tpindex fit`, computed by
`Index.fit` on a connection of the served database; every value is escaped by the template."""

from __future__ import annotations

from datasette.utils.asgi import Response

from .docpages import MAX_QUERY, _form
from .state import served_database


async def fit_page(datasette, request):
    from ..api import FIT_MAX_INPUT as MAX_INPUT
    from ..core.problems import Problem
    from ..render.fit import one_line
    from .state import ask

    wanted, names = await served_database(datasette, request)
    form = await _form(request)
    text = form.get("text", "") or ""
    at = (form.get("at", "") or "").strip()[:MAX_QUERY]
    kind = form.get("kind", "") if form.get("kind", "") in ("tool", "reasoning") else ""
    versions = await ask(datasette, wanted, lambda ix: ix.labels())
    answer, error = None, None
    if len(text) > MAX_INPUT:
        error = f"the file is larger than {MAX_INPUT >> 20} MB; run tpindex fit on it instead"
    elif text.strip():
        try:
            answer = await ask(
                datasette, wanted, lambda ix: ix.fit(text, at or None, kind or None, name="the pasted file")
            )
        except Problem as e:
            from .errors import inline

            error = inline(e)
    return Response.html(
        await datasette.render_template(
            "tpindex_fit.html",
            {
                "database": wanted,
                "databases": names,
                "text": text if len(text) <= MAX_INPUT else "",
                "at": at,
                "kind": kind,
                "versions": versions,
                "answer": answer,
                "error": error,
                "one_line": one_line,
                "max_mb": MAX_INPUT >> 20,
            },
            request=request,
        )
    )
