"""The code in the browser: a source page per (version, path), a diff page for two versions of a file,
and a search page with the semantics of `tpindex grep` (the same functions answer both).

    /-/source/<version>/<path>[?db=NAME]#L88
    /-/diff?a=<version>&b=<version>&path=<path>        (or path_a= and path_b= for a file that moved)
    /-/grep?q=<pattern>&tags=<spec>&path=<glob>&i=1&F=1

Pages are read-only, escape everything they show (Jinja autoescape; highlighted code comes from
Pygments, which escapes), check Datasette's view-instance and view-database permissions, and cap what
they render, saying how much more there is.
"""

from __future__ import annotations

from urllib.parse import quote, unquote, urlencode

from datasette.utils.asgi import Response
from markupsafe import Markup

MAX_SOURCE_LINES = 20_000  # a source page renders at most this many lines
MAX_DIFF_LINES = 5_000  # a diff page renders at most this many lines of hunks
MAX_GREP_ROWS = 1_000  # a search page renders at most this many matching lines
MAX_GREP_LINES = 20_000  # a search stops mapping distinct lines past this many (the page says so)


# -- links (also used by render_cell and the matrix) --------------------------------------------------------


def source_href(datasette, version: str, path: str, line: int | None = None, db: str | None = None) -> str:
    url = datasette.urls.path(f"-/source/{quote(version, safe='')}/{quote(path)}")
    if db:
        url += "?" + urlencode({"db": db})
    return url + (f"#L{line}" if isinstance(line, int) and line > 0 else "")


def diff_href(
    datasette, a: str, b: str, path_a: str | None, path_b: str | None, db: str | None = None, **context
) -> str:
    args = {"a": a, "b": b}
    if path_a is None and path_b is None:
        pass  # with name=: the name's own code, file by file
    elif path_a == path_b:
        args["path"] = path_a
    else:
        args.update({k: v for k, v in (("path_a", path_a), ("path_b", path_b)) if v})
    args.update({k: v for k, v in context.items() if v})
    if db:
        args["db"] = db
    return datasette.urls.path("-/diff") + "?" + urlencode(args)


def grep_href(datasette, db: str | None = None, **args) -> str:
    args = {k: v for k, v in args.items() if v}
    if db:
        args["db"] = db
    return datasette.urls.path("-/grep") + ("?" + urlencode(args) if args else "")


# -- shared plumbing ------------------------------------------------------------------------------------------


async def _database(datasette, request):
    """(database name, the db= to put in links or None) after the permission checks (a PageError else)."""
    from .state import served_database

    wanted, names = await served_database(datasette, request)
    return wanted, (wanted if len(names) > 1 else None)


async def _upstream(datasette, database: str, version: str, path: str, line: int | None = None) -> str:
    from ..core.links import source_url
    from .state import state, upstream_for

    st = await state(datasette, database)
    ref = await st.ref(datasette.get_database(database), version)
    return source_url(upstream_for(datasette, database, st), ref, path, line)


def _css() -> str:
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(style="default").get_style_defs(".tp-code")


# -- the source page -----------------------------------------------------------------------------------------


async def source_page(datasette, request):
    database, db_arg = await _database(datasette, request)
    version, path = (
        unquote(request.url_vars["version"]),
        unquote(request.url_vars["path"]),
    )  # raw in the route

    from .state import ask

    page = await ask(datasette, database, lambda ix: ix.source_page(version, path))
    v, c, holding, blobs, outline = page.version, page.code, page.files, page.blobs, page.outline
    if c is None:  # a directory
        return Response.html(
            await datasette.render_template(
                "tpindex_directory.html",
                {
                    "database": database,
                    "version": v,
                    "path": path.rstrip("/"),
                    "files": holding,
                    "href": lambda p: source_href(datasette, v, p, db=db_arg),
                },
                request=request,
            )
        )
    from ..render.source import highlight
    from .cells import Urls

    shown = c.lines[:MAX_SOURCE_LINES]
    rows = (
        list(zip(range(1, len(shown) + 1), highlight(shown, path, "html"), strict=True))
        if c.kind != "binary"
        else []
    )
    i = holding.index(v)
    prev_v = holding[i - 1] if i > 0 else None
    next_v = holding[i + 1] if i + 1 < len(holding) else None
    ctx = {
        "database": database,
        "version": v,
        "path": path,
        "code": c,
        "rows": rows,
        "more": max(0, len(c.lines) - len(shown)),
        "css": Markup(_css()),
        "upstream": await _upstream(datasette, database, v, path),
        "versions": [
            (h, source_href(datasette, h, path, db=db_arg), blobs.get(h) != blobs.get(v)) for h in holding
        ],
        "prev": prev_v
        and {
            "version": prev_v,
            "changed": blobs.get(prev_v) != c.blob_id,
            "diff": diff_href(datasette, prev_v, v, path, path, db_arg),
        },
        "next": next_v
        and {
            "version": next_v,
            "changed": blobs.get(next_v) != c.blob_id,
            "diff": diff_href(datasette, v, next_v, path, path, db_arg),
        },
        "grep": grep_href(datasette, db_arg, at=v, path=path),
        "outline": outline,
        "parent": source_href(datasette, v, path.rsplit("/", 1)[0], db=db_arg) if "/" in path else None,
        "parser": lambda kind, name: Urls(datasette, database, bool(db_arg)).parser(kind, name, v),
    }
    return Response.html(await datasette.render_template("tpindex_source.html", ctx, request=request))


# -- the diff page -------------------------------------------------------------------------------------------


def _diff_rows(d: dict, old_hl: list[str], new_hl: list[str]) -> tuple[list[dict], int]:
    """Rows for the page: a hunk header, then each line with its old and new numbers and highlighted code."""
    rows, budget = [], MAX_DIFF_LINES
    left = 0
    for h in d["hunks"]:
        rows.append(
            {
                "kind": "hunk",
                "text": f"@@ -{h['old_start']},{h['old_lines']} +{h['new_start']},{h['new_lines']} @@",
            }
        )
        old_n, new_n = (
            h["old_start"] if h["old_lines"] else h["old_start"] + 1,
            h["new_start"] if h["new_lines"] else h["new_start"] + 1,
        )
        for line in h["lines"]:
            if budget <= 0:
                left += 1
                continue
            budget -= 1
            sign = line[:1]
            if sign == "\\":
                rows.append({"kind": "note", "text": line})
            elif sign == "-":
                rows.append({"kind": "del", "old": old_n, "new": "", "html": old_hl[old_n - 1]})
                old_n += 1
            elif sign == "+":
                rows.append({"kind": "add", "old": "", "new": new_n, "html": new_hl[new_n - 1]})
                new_n += 1
            else:
                rows.append({"kind": "ctx", "old": old_n, "new": new_n, "html": new_hl[new_n - 1]})
                old_n += 1
                new_n += 1
    return rows, left


async def diff_page(datasette, request):
    """A unified diff of one file (path=, or path_a= / path_b= for a move), or, with name= and no path, of a
    parser name's own code file by file (its real file followed when it moved), as `tpindex diff --code`."""
    database, db_arg = await _database(datasette, request)
    args = request.args
    a, b = (args.get("a") or "").strip(), (args.get("b") or "").strip()
    path_a = (args.get("path_a") or args.get("path") or "").strip()
    path_b = (args.get("path_b") or args.get("path") or "").strip()
    name, kind = (args.get("name") or "").strip()[:200], (args.get("kind") or "").strip()[:20]
    if not (a and b and (path_a or path_b or name)):  # a form to ask one, filled with what was given
        from .state import ask

        versions = await ask(datasette, database, lambda ix: ix.labels())
        form = {
            "a": a or (versions[-2] if len(versions) > 1 else ""),
            "b": b or (versions[-1] if versions else ""),
            "name": name,
            "kind": kind,
            "path": path_a or path_b,
        }
        return Response.html(
            await datasette.render_template(
                "tpindex_diff_form.html",
                {
                    "database": database,
                    "db_arg": db_arg,
                    "versions": versions,
                    "form": form,
                    "partial": bool(a or b or path_a or path_b or name),
                },
                request=request,
            ),
            status=400 if (a or b) else 200,
        )

    from .state import ask

    diffs = await ask(
        datasette,
        database,
        lambda ix: ix.diff_files(
            a, b, path_a, path_b, name, kind if kind in ("tool", "reasoning", "engine") else None
        ),
    )
    from ..render.source import highlight

    files = []
    for d, old, new in diffs:
        rows, left = _diff_rows(
            d, highlight(old, d["path_a"] or "", "html"), highlight(new, d["path_b"] or "", "html")
        )
        files.append(
            {
                "d": d,
                "rows": rows,
                "left": left,
                "added": sum(1 for r in rows if r["kind"] == "add"),
                "deleted": sum(1 for r in rows if r["kind"] == "del"),
                "src_a": d["path_a"] and source_href(datasette, d["a"], d["path_a"], db=db_arg),
                "src_b": d["path_b"] and source_href(datasette, d["b"], d["path_b"], db=db_arg),
            }
        )
    versions = (files[0]["d"]["a"], files[0]["d"]["b"]) if files else (a, b)
    which = None
    if name:
        which = {
            v: datasette.urls.query(database, "which") + "?" + urlencode({"name": name, "version": v})
            for v in versions
        }
    ctx = {
        "database": database,
        "files": files,
        "a": versions[0],
        "b": versions[1],
        "css": Markup(_css()),
        "name": name,
        "kind": kind,
        "which": which,
        "whole_name": not (path_a or path_b),
    }
    return Response.html(await datasette.render_template("tpindex_diff.html", ctx, request=request))


# -- the search page -----------------------------------------------------------------------------------------


def _marked(marks) -> Markup:
    from markupsafe import escape

    return Markup("").join(
        Markup("<mark>%s</mark>") % piece if hit else escape(piece) for piece, hit in marks
    )


def _unindented(marks):
    """The marked pieces of a line without its leading whitespace (the page shows code flush left)."""
    out, leading = [], True
    for piece, hit in marks:
        if leading and not hit:
            piece = piece.lstrip()
            if not piece:
                continue
        leading = False
        out.append((piece, hit))
    return out


def _grep_rows(datasette, res, shown, db_arg) -> list[dict]:
    """One row per (path, text): a line that only moved is one row, with its line number per range of
    versions, each linked to the line at the range's last version; in a path, rows by their first version."""
    order = {v: i for i, v in enumerate(res.versions)}
    groups: dict[tuple, list] = {}
    for m in shown:
        groups.setdefault((m.path, m.text, m.binary), []).append(m)
    rows = []
    for (path, _, binary), ms in groups.items():
        ms.sort(key=lambda m: order.get(m.versions[0], 0))
        rows.append(
            {
                "path": path,
                "binary": binary,
                "first": order.get(ms[0].versions[0], 0),
                "line": ms[0].line or 0,
                "at": [
                    {
                        "line": m.line,
                        "versions": res.ranges(m),
                        "href": source_href(datasette, m.versions[-1], m.path, m.line, db_arg),
                    }
                    for m in ms
                ],
                "html": _marked(_unindented(ms[0].marks or [(ms[0].text, False)])) if not binary else None,
            }
        )
    rows.sort(key=lambda r: (r["path"], r["first"], r["line"]))
    return rows


async def grep_page(datasette, request):
    """The search runs as `tpindex grep` does, in a child process stopped at serve's --time-limit (a pattern
    with nested repetition can take exponential time): the server only waits for it, in a thread of its
    own, and every other page answers meanwhile."""
    import asyncio

    database, db_arg = await _database(datasette, request)
    args = request.args
    q = args.get("q") or ""
    form = {
        "q": q,
        "tags": (args.get("tags") or "").strip(),
        "path": (args.get("path") or "").strip(),
        "i": args.get("i") == "1",
        "F": args.get("F") == "1",
    }
    ctx = {
        "database": database,
        "form": form,
        "db_arg": db_arg,
        "result": None,
        "error": None,
        "rows": [],
        "more": 0,
        "truncated": False,
        "max_rows": MAX_GREP_ROWS,
    }
    status = 200
    if q:
        from ..core.problems import Problem
        from .state import ask

        paths = [p for p in form["path"].replace(",", " ").split() if p]
        limit = datasette.setting("sql_time_limit_ms") / 1000
        try:
            planned = await ask(
                datasette,
                database,
                lambda ix: ix.grep_plan(
                    q, tags=form["tags"] or None, paths=paths, icase=form["i"], fixed=form["F"]
                ),
            )
            res = await asyncio.to_thread(planned.run, limit, MAX_GREP_LINES, MAX_GREP_ROWS)
        except Problem as e:
            ctx["error"] = (e.message, e.hint)
            status = _status_of(e)
        else:
            shown = res.matches[:MAX_GREP_ROWS]
            ctx.update(
                result=res,
                more=len(res.matches) - len(shown),
                truncated=res.truncated,
                rows=_grep_rows(datasette, res, shown, db_arg),
            )
    return Response.html(
        await datasette.render_template("tpindex_grep.html", ctx, request=request), status=status
    )


def _status_of(e) -> int:
    """A search stopped at its time or memory limit is no answer to keep: 503, which serve's response cache
    never keeps (it is asked again once the load is gone); any other problem is the page's answer."""
    return 503 if e.transient else 200
