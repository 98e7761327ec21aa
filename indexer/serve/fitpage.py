"""The browser's `fit`: /-/fit takes a pasted (or uploaded: the page reads the file into the form) chat template,
tokenizer_config.json, tokenizer.json or model output, or a model's name, and shows the answer of `tpindex fit`,
computed by `Index.fit` as a job of the server's queue for code (serve/work.py: fit runs the parsers' own regular
expressions and the given template in a child process with limits; the proof replays the pair with vLLM's own
code, in replay's child): the answer first (the serve line, the pair and the evidence that decided it, the
proof), the ranked candidates folded under it. Only when the form is posted (a GET shows the form filled in).
Every value is escaped by the template."""

from __future__ import annotations

from datasette.utils.asgi import Response

from .docpages import MAX_QUERY
from .forms import Field, arguments, read, runs
from .state import served_database

FIELDS = (
    Field("text", arg="text", limit=None, strip=False),
    Field("model", arg="model", limit=MAX_QUERY),
    Field("at", arg="at", limit=MAX_QUERY),
    Field("kind", arg="kind", choices=("tool", "reasoning")),
    Field("proof", arg="proof", choices=("on",), read=lambda v: v == "on"),
    Field("candidates", choices=("open",)),
)


async def fit_page(datasette, request):
    from ..api import FIT_MAX_INPUT as MAX_INPUT
    from ..core.problems import Problem
    from ..render.fit import one_line
    from .routes import _urls
    from .state import ask
    from .work import Gone
    from .work import ask as queued

    wanted, names = await served_database(datasette, request)
    form = await read(request, FIELDS)
    text, model = form["text"], form["model"]
    posted = runs(request)
    versions = await ask(datasette, wanted, lambda ix: ix.labels())
    answer, error, note, status = None, None, None, 200
    if len(text) > MAX_INPUT or request.scope.get("tpindex_body_too_large"):
        error = f"the file is larger than {MAX_INPUT >> 20} MB; run tpindex fit on it instead"
    elif text.strip() and model:
        error = "give a file's text or a model's name, not both"
    elif (text.strip() or model) and not posted:
        note = "press Fit to run it: this page runs the parsers' code only for its form"
    elif text.strip() or model:
        args = arguments(FIELDS, form)
        args["text"] = text if text.strip() else None
        args["proof"] = form["proof"] == "on"
        try:
            answer = await queued(
                datasette,
                wanted,
                lambda ix: ix.fit(**args, name="the pasted file", template_path=None),
                request,
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
                "proof": form["proof"] == "on" or not posted,
                "versions": versions,
                "answer": answer,
                "error": error,
                "note": note,
                "one_line": one_line,
                "max_mb": MAX_INPUT >> 20,
                "u": await _urls(datasette, wanted),
                "open_candidates": form["candidates"] == "open",
            },
            request=request,
        ),
        status=status,
    )
