"""The browser's `fit`: /-/fit takes a pasted (or uploaded: the page reads the file into the form) chat template,
tokenizer_config.json, tokenizer.json or model output, or a model's name, and shows the answer of `tpindex fit`,
computed by `Index.fit` on a connection of the served database: the answer first (the serve line, the pair and the
evidence that decided it, the proof), the ranked candidates folded under it. The proof runs vLLM's code (replay, in
its child process): only on a POST, never on a GET. Every value is escaped by the template."""

from __future__ import annotations

from datasette.utils.asgi import Response

from .docpages import MAX_QUERY, _form
from .state import served_database


async def fit_page(datasette, request):
    from ..api import FIT_MAX_INPUT as MAX_INPUT
    from ..core.problems import Problem
    from ..render.fit import one_line
    from .routes import _urls
    from .state import ask

    wanted, names = await served_database(datasette, request)
    form = await _form(request)
    text = form.get("text", "") or ""
    model = (form.get("model", "") or "").strip()[:MAX_QUERY]
    at = (form.get("at", "") or "").strip()[:MAX_QUERY]
    kind = form.get("kind", "") if form.get("kind", "") in ("tool", "reasoning") else ""
    posted = request.method == "POST"
    prove = posted and form.get("proof", "") == "on"
    versions = await ask(datasette, wanted, lambda ix: ix.labels())
    answer, error = None, None
    if len(text) > MAX_INPUT:
        error = f"the file is larger than {MAX_INPUT >> 20} MB; run tpindex fit on it instead"
    elif text.strip() and model:
        error = "give a file's text or a model's name, not both"
    elif text.strip() or model:
        try:
            answer = await ask(
                datasette,
                wanted,
                lambda ix: ix.fit(
                    text if text.strip() else None,
                    at or None,
                    kind or None,
                    name="the pasted file",
                    model=model or None,
                    proof=prove,
                    template_path=None,
                ),
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
                "model": model,
                "at": at,
                "kind": kind,
                "proof": prove or not posted,
                "versions": versions,
                "answer": answer,
                "error": error,
                "one_line": one_line,
                "max_mb": MAX_INPUT >> 20,
                "u": await _urls(datasette, wanted),
                "open_candidates": form.get("candidates", "") == "open",
            },
            request=request,
        )
    )
