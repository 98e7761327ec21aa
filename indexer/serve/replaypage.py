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
    from .code_pages import diff_href
    from .docpages import _form
    from .state import ask, served_database

    wanted, names = await served_database(datasette, request)
    form = await _form(request)
    text = form.get("text", "") or ""
    name = (form.get("name", "") or "").strip()[:MAX_FIELD]
    tags = (form.get("tags", "") or "").strip()[:MAX_FIELD]
    splits = (form.get("splits", "") or "token").strip()[:MAX_FIELD]
    kind = "reasoning" if form.get("kind") == "reasoning" else "tool"
    api = "responses" if form.get("api") == "responses" else "chat"
    reasoning_parser = (form.get("reasoning_parser", "") or "").strip()[:MAX_FIELD]
    tools_text = form.get("tools", "") or ""
    request_text = form.get("request", "") or ""
    versions = await ask(datasette, wanted, lambda ix: ix.labels())
    report, error, changes = None, None, []
    fields = {"tools": tools_text, "request": request_text}
    parsed, error = _json_fields(fields)
    if error:
        pass
    elif sum(len(t.encode("utf-8", "replace")) for t in (text, tools_text, request_text)) > MAX_TEXT:
        error = f"the text is larger than {MAX_TEXT // 1000} kB; replay it with tpindex replay instead"
    elif text.strip() and name:

        def run(ix):
            answer = ix.replay(
                name,
                tags=tags or None,
                text=text,
                splits=[s.strip() for s in splits.split(",") if s.strip()],
                kind=kind,
                reasoning_parser=reasoning_parser or None,
                tools=parsed.get("tools"),
                request=parsed.get("request"),
                api=api,
            )
            return format_text(answer), answer

        try:
            report, answer = await ask(datasette, wanted, run)
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
                "kind": kind,
                "api": api,
                "reasoning_parser": reasoning_parser,
                "tools": tools_text if len(tools_text) <= MAX_TEXT else "",
                "request_fields": request_text if len(request_text) <= MAX_TEXT else "",
                "changes": changes,
                "versions": versions,
                "report": report,
                "error": error,
                "max_kb": MAX_TEXT // 1000,
            },
            request=request,
        )
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
