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
    Field("kind", arg="kind", choices=("tool", "reasoning"), default="tool"),
    Field("api", arg="api", choices=("chat", "responses"), default="chat"),
    Field("reasoning_parser", arg="reasoning_parser", limit=MAX_FIELD),
    Field("tools", limit=None, strip=False),  # JSON, read by _json_fields
    Field("request", limit=None, strip=False),
)


async def replay_page(datasette, request):
    from ..core.problems import Problem
    from ..render.replay import format_text
    from .code_pages import diff_href
    from .state import ask, served_database
    from .work import Gone
    from .work import ask as queued

    wanted, names = await served_database(datasette, request)
    form = await read(request, FIELDS)
    text, name, kind = form["text"], form["name"], form["kind"]
    versions = await ask(datasette, wanted, lambda ix: ix.labels())
    report, error, note, status, changes = None, None, None, 200, []
    parsed, error = _json_fields({"tools": form["tools"], "request": form["request"]})
    size = sum(len(form[k].encode("utf-8", "replace")) for k in ("text", "tools", "request"))
    if error:
        pass
    elif size > MAX_TEXT or request.scope.get("tpindex_body_too_large"):
        error = f"the text is larger than {MAX_TEXT // 1000} kB; replay it with tpindex replay instead"
    elif text.strip() and name and not runs(request):
        note = "press Replay to run it: this page runs a version's code only for its form"
    elif text.strip() and name:
        args = {**arguments(FIELDS, form), **parsed}

        def run(ix):
            answer = ix.replay(**args)
            return format_text(answer), answer

        try:
            report, answer = await queued(datasette, wanted, run, request)
        except Gone:
            return Response.text("", status=499)  # nobody reads it
        except Problem as e:
            from .errors import inline

            error, status = inline(e), 503 if e.transient else 200
        else:
            db_arg = wanted if len(names) > 1 else None
            changes = [
                {
                    "mode": c.mode,
                    "previous": c.previous,
                    "version": c.version,
                    "commits": c.commits or [],
                    "href": diff_href(
                        datasette, c.previous, c.version, None, None, db_arg, name=name, kind=kind
                    )
                    if c.previous
                    else None,
                }
                for c in answer.changes
            ]
    elif text.strip() or name:
        error = "give both the raw output and a parser name"
    return Response.html(
        await datasette.render_template(
            "tpindex_replay.html",
            {
                "database": wanted,
                "databases": names,
                **{k: v for k, v in form.items() if k != "request"},  # `request` is Datasette's
                "text": text if len(text) <= MAX_TEXT else "",
                "tools": form["tools"] if len(form["tools"]) <= MAX_TEXT else "",
                "request_fields": form["request"] if len(form["request"]) <= MAX_TEXT else "",
                "changes": changes,
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


def _json_fields(fields: dict[str, str]) -> tuple[dict, str | None]:
    """The form's JSON fields (tools: a list, request: an object), parsed; -> (values, an error to show)."""
    import json

    out = {}
    for key, text in fields.items():
        if not text.strip():
            continue
        try:
            value = json.loads(text)
        except ValueError as e:
            return out, f"the {key} field is not JSON ({e})"
        want = list if key == "tools" else dict
        if not isinstance(value, want):
            return out, (
                "the tools field is not a JSON list (an OpenAI tools list: [{type, function}])"
                if key == "tools"
                else "the request field is not a JSON object (the chat request's fields)"
            )
        out[key] = value
    return out, None
