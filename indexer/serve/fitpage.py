"""The browser's `fit`: /-/fit takes a pasted (or uploaded: the page reads the file into the form) chat template,
tokenizer_config.json, tokenizer.json or model output and shows the answer of `tpindex fit`, computed by
`Index.fit` as a job of the server's queue for code (serve/work.py: fit runs the parsers' own regular
expressions and the given template, in a child process with limits), only when the form is posted (a GET
shows the form). Every value is escaped by the template."""

from __future__ import annotations

from datasette.utils.asgi import Response

from .docpages import MAX_QUERY
from .forms import Field, arguments, read, runs
from .state import served_database

FIELDS = (
    Field("text", arg="text", limit=None, strip=False),
    Field("at", arg="at", limit=MAX_QUERY),
    Field("kind", arg="kind", choices=("tool", "reasoning")),
)


async def fit_page(datasette, request):
    from ..api import FIT_MAX_INPUT as MAX_INPUT
    from ..core.problems import Problem
    from ..render.fit import one_line
    from .state import ask
    from .work import Gone
    from .work import ask as queued

    wanted, names = await served_database(datasette, request)
    form = await read(request, FIELDS)
    text = form["text"]
    versions = await ask(datasette, wanted, lambda ix: ix.labels())
    answer, error, note, status = None, None, None, 200
    if len(text) > MAX_INPUT or request.scope.get("tpindex_body_too_large"):
        error = f"the file is larger than {MAX_INPUT >> 20} MB; run tpindex fit on it instead"
    elif text.strip() and not runs(request):
        note = "press Fit to run it: this page runs the parsers' code only for its form"
    elif text.strip():
        args = arguments(FIELDS, form)
        try:
            answer = await queued(
                datasette, wanted, lambda ix: ix.fit(**args, name="the pasted file"), request
            )
        except Gone:
            return Response.text("", status=499)  # nobody reads it
        except Problem as e:
            from .errors import inline

            error, status = inline(e), 503 if e.transient else 200
    return Response.html(
        await datasette.render_template(
            "tpindex_fit.html",
            {
                "database": wanted,
                "databases": names,
                **form,
                "text": text if len(text) <= MAX_INPUT else "",
                "versions": versions,
                "answer": answer,
                "error": error,
                "note": note,
                "one_line": one_line,
                "max_mb": MAX_INPUT >> 20,
            },
            request=request,
        ),
        status=status,
    )
