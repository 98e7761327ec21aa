"""Datasette plugin for tpindex databases (registered through the `datasette` entry point).

- canned_queries: the questions in queries/canned/*.sql, for every tpindex database;
- render_cell: a file (with its line) links to that line in the stored code at the row's version (and
  upstream, "↗"); the second file of a comparison (real_file_a / real_file_b) also links to their diff; a
  parser name to its page, a class to the class tree, a version to its page (cells.py);
- register_routes: /-/parser-matrix, names x versions coloured by implementation; /-/parser/<kind>/<name>,
  /-/version/<label> and /-/find (routes.py; their data answers/pages.py, through Index); /-/check-doc and
  /-/where (docpages.py); /-/fit (fitpage.py); /-/replay (replaypage.py); /-/atlas (atlaspage.py); the code pages /-/source/<version>/<path>, /-/diff and /-/grep
  (code_pages.py);
- extra_template_vars: the home page lists the questions first; every page has the search box; the
  `which` question says why it has no rows;
- prepare_connection: connections to a tpindex database are query-only, and know `tpindex_version(label)`
  (the indexed version a label names, as every command resolves it) for the canned questions;
- prepare_jinja2_environment: the templates in templates/;
- handle_exception: a Problem raised by any page is one error page (errors.py, templates/tpindex_error.html).

A database is a tpindex database when it has a parser_map table; others are left alone.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from datasette import hookimpl
from datasette.utils.asgi import Response
from markupsafe import Markup

from ..core.links import (
    diff_columns,
    link_columns,
    source_url,
)
from ..core.paths import is_linkable_file
from ..core.scope import parsed
from . import canned, cells, code_pages, matrix
from .state import served_database, state, tpindex_databases, upstream_for

TEMPLATES = Path(__file__).resolve().parent / "templates"


@hookimpl
def prepare_jinja2_environment(env, datasette):
    """Our templates, where Datasette puts a plugin package's templates: after --template-dir, before its
    own (this plugin is a module, so Datasette does not find them itself)."""
    from urllib.parse import quote

    from jinja2 import ChoiceLoader, FileSystemLoader

    env.filters["tp_quote"] = lambda s: quote(str(s), safe="")  # a label as one path segment (v0.33.0+local)
    env.filters["tp_path"] = cells.breakable_path  # a path that may wrap after a slash
    env.filters["tp_class"] = cells.breakable_class  # a long class name that may wrap where a word starts
    loader = env.loader
    first = loader.loaders[0] if isinstance(loader, ChoiceLoader) and loader.loaders else None
    if isinstance(first, FileSystemLoader) and first.searchpath:
        if str(TEMPLATES) not in first.searchpath:
            first.searchpath.insert(len(first.searchpath) - 1, str(TEMPLATES))
    else:
        env.loader = ChoiceLoader([loader, FileSystemLoader(str(TEMPLATES))])


@hookimpl
def prepare_connection(conn, database, datasette):
    try:
        if conn.execute(
            "select 1 from sqlite_master where type = 'table' and name = 'parser_map'"
        ).fetchone():
            conn.execute("pragma query_only = 1")
            from ..api import prepare_connection as tpindex_functions

            tpindex_functions(
                conn
            )  # tpindex_version(label): the canned questions' versions, as the commands read them
    except Exception:  # a database that cannot be read here is Datasette's to report
        pass


@hookimpl
def canned_queries(datasette, database, actor):
    async def inner():
        if not await state(datasette, database):
            return {}
        return {c.name: c.datasette() for c in canned.load()}

    return inner()


@hookimpl
def render_cell(row, value, column, table, database, datasette):
    if (
        value is None
    ):  # an empty cell, not Datasette's &nbsp;: a column of blanks takes no room (td:empty, the CSS)
        return Markup("")
    if not isinstance(value, str) or not hasattr(row, "keys"):
        return None
    cols = link_columns(column, row.keys()) if is_linkable_file(value) else None
    if cols is None:
        if column not in cells.COLUMNS:
            return None
        return _linked_cell(row, value, column, database, datasette)
    version = row[cols[0]]
    line = row[cols[1]] if cols[1] else None
    if not isinstance(version, str) or not version:
        return None

    async def inner():
        st = await state(datasette, database)
        if st is None:
            return None
        upstream = upstream_for(datasette, database, st)
        if upstream is None:
            return None
        ref = await st.ref(datasette.get_database(database), version)
        at_line = line if isinstance(line, int) else None
        try:
            up = source_url(upstream, ref, value, at_line)
        except (ValueError, KeyError, IndexError, AttributeError):  # a page never fails on a stored value
            return None
        where = f"{value}:{line}" if isinstance(line, int) else value
        if not parsed(value):  # templates and tests: recorded as present, their code is not stored
            return Markup('<a class="tpindex-src" href="{}" title="{} at {} (upstream)">{}</a>').format(
                up, where, version, value
            )
        db_arg = database if len(await tpindex_databases(datasette)) > 1 else None
        out = Markup(
            '<a class="tpindex-src" href="{}" title="{} at {}">{}</a>'
            '&nbsp;<a class="tpindex-up" href="{}" title="{} at {} upstream">&#x2197;</a>'
        ).format(
            code_pages.source_href(datasette, version, value, at_line, db_arg),
            where,
            version,
            cells.breakable_path(value),
            up,
            where,
            version,
        )  # a long path wraps after a slash (cells.py)
        sides = diff_columns(column, row.keys())
        if sides and (column == sides[3] or not row[sides[3]]):
            a, b, path_a, path_b = (row[c] for c in sides)
            if isinstance(a, str) and isinstance(b, str) and (path_a or path_b):
                context = {k: row[k] for k in ("name", "kind") if k in row.keys() and isinstance(row[k], str)}
                out += Markup(
                    ' <a class="tpindex-diff" href="{}" title="the code from {} to {}">diff</a>'
                ).format(code_pages.diff_href(datasette, a, b, path_a, path_b, db_arg, **context), a, b)
        return out

    return inner()


async def _linked_cell(row, value, column, database, datasette):
    st = await state(datasette, database)
    if st is None:
        return None
    labels = await st.versions(datasette.get_database(database))
    several = len(await tpindex_databases(datasette)) > 1
    return cells.render(row, value, column, labels, cells.Urls(datasette, database, several))


@hookimpl
def extra_template_vars(template, database, table, columns, view_name, request, datasette):
    if template != "index.html":
        return _page_vars(template, database, request, datasette)

    async def inner():
        out = []
        for name in await tpindex_databases(datasette):
            actor = request.actor if request else None
            if not await datasette.permission_allowed(actor, "view-database", name, default=True):
                continue
            from .state import ask

            versions, kinds = await ask(datasette, name, lambda ix: (ix.labels(), ix.kind_counts()))
            queries = await datasette.get_canned_queries(name, actor)
            out.append(
                {
                    "name": name,
                    "versions": versions,
                    "kinds": kinds,
                    "queries": [q for q in queries.values() if not q.get("write")],
                }
            )
        return {"tpindex_databases": out, **await _page_vars(template, database, request, datasette)}

    return inner()


async def _page_vars(template, database, request, datasette):
    """Every page: where the search box goes. The `which` question: why it has no rows, if it has none."""
    names = await tpindex_databases(datasette)
    if not names:
        return {}
    db_name = database if database in names else names[0]
    # the form's action; the database goes in a hidden field (a query string in a GET form's action is dropped)
    out = {
        "tpindex_find": datasette.urls.path("-/find"),
        "tpindex_find_db": db_name if len(names) > 1 else None,
    }
    if (
        template == "query.html"
        and request is not None
        and database in names
        and cells.page_name(request) == "which"
        and request.args.get("name")
    ):
        from .state import ask

        out["tpindex_which_why"] = await ask(
            datasette,
            database,
            lambda ix: ix.which_empty(request.args.get("name", ""), request.args.get("version", "")),
        )
        out["tpindex_urls"] = cells.Urls(datasette, database, len(names) > 1)
    return out


@hookimpl
def asgi_wrapper(datasette):
    """In front of Datasette: the Host, Origin and body rules every request passes (guard.py), then the
    response cache (cache.py, when serve installed one)."""
    from . import cache, guard

    def wrap(app):
        return guard.wrap(cache.wrap(app, datasette), datasette)

    return wrap


@hookimpl
def register_routes():
    from . import routes
    from .atlaspage import atlas_page
    from .docpages import check_doc_page, where_page
    from .fitpage import fit_page
    from .replaypage import replay_page

    return [
        (r"^/-/parser-matrix$", matrix_page),
        (r"^/-/parser/(?P<kind>[^/]+)/(?P<name>[^/]+)$", routes.parser_route),
        (r"^/-/version/(?P<label>[^/]+)$", routes.version_route),
        (r"^/-/find$", routes.find_route),
        (r"^/-/check-doc$", check_doc_page),
        (r"^/-/where$", where_page),
        (r"^/-/fit$", fit_page),
        (r"^/-/replay$", replay_page),
        (r"^/-/atlas$", atlas_page),
        (r"^/-/source/(?P<version>[^/]+)/(?P<path>.+)$", code_pages.source_page),
        (r"^/-/diff$", code_pages.diff_page),
        (r"^/-/grep$", code_pages.grep_page),
    ]


async def matrix_page(datasette, request):
    wanted, names = await served_database(datasette, request)
    kind = request.args.get("kind", "").strip()
    kind = kind if kind in matrix.KINDS else ""
    prefix = request.args.get("prefix", "").strip()[:100]
    first, last = request.args.get("from", "").strip()[:100], request.args.get("to", "").strip()[:100]
    which = datasette.urls.query(wanted, "which")
    from datasette.database import QueryInterrupted

    db_arg = wanted if len(names) > 1 else None

    def diff_link(name, kind_, a, b, path_a, path_b):
        return code_pages.diff_href(datasette, a, b, path_a, path_b, db_arg, name=name, kind=kind_)

    try:
        m, every = await matrix.load(
            datasette, wanted, kind, prefix, matrix.which_link(which), diff_link, first, last
        )
    except QueryInterrupted:
        from .errors import PageError

        limit = datasette.setting("sql_time_limit_ms")
        raise PageError(
            f"the parser matrix took longer than the SQL time limit ({limit} ms); narrow it with ?kind="
            " or ?prefix=, or serve with a larger --time-limit",
            status=400,
            title="Too slow",
        ) from None
    return Response.html(
        await datasette.render_template(
            "tpindex_matrix.html",
            {
                "matrix": m,
                "kind": kind,
                "prefix": prefix,
                "every": every,
                "first": m.versions[0] if m.versions and first else "",
                "last": m.versions[-1] if m.versions and last else "",
                "database": wanted,
                "databases": names,
                "impls": matrix.IMPLS,
                "letters": matrix.LETTERS,
                "impl_help": matrix.IMPL_HELP,
                "kinds": matrix.KINDS,
                "short": matrix.short,
                "urls_parser": cells.Urls(datasette, wanted, len(names) > 1).parser,
            },
            request=request,
        )
    )


@hookimpl(wrapper=True)
def handle_exception(datasette, request, exception):
    """The web's one translation of the error model: a Problem raised by any page (an AnswerError from the
    answers, a PageError from serve/) is one error page, with what to click instead (errors.py), and nothing
    else: a wrapper, so that Datasette's own handler (which logs a traceback for what is not its own error)
    never runs for it. Any other exception is Datasette's."""
    from ..core.problems import Problem

    responses = yield
    if not isinstance(exception, Problem):
        return responses

    async def page():
        from .errors import error_page

        return await error_page(datasette, request, exception)

    return [page]


@hookimpl
def register_mcp_tools(datasette, mcp):
    """tpindex's tools on the /-/mcp endpoint of datasette-mcp (beside its read-only SQL tools): each runs on
    a read connection of the served tpindex database, for an actor allowed to view it."""
    from datasette_mcp import _actor_from_context  # the actor of the MCP request, as datasette-mcp finds it

    from ..api import Index
    from ..core.problems import Problem
    from ..mcp.tools import register

    async def run(
        ctx, question
    ):  # a Problem raised here or by the question is the tool's error (mcp/tools.py)
        names = await tpindex_databases(datasette)
        if not names:
            raise Problem("no tpindex database is served here")
        actor = _actor_from_context(ctx) if ctx is not None else None
        if not await datasette.permission_allowed(actor, "view-database", names[0], default=True):
            raise Problem(f"database {names[0]!r} is not available")

        if getattr(question, "runs_code", False):  # fit, replay: a job of the server's queue for code
            from .work import ask as queued

            return await queued(datasette, names[0], question)
        path = datasette.get_database(names[0]).path
        limit = datasette.setting("sql_time_limit_ms") / 1000

        def ask():
            # a connection of its own, in a thread of its own: a search waiting for its child process (up to
            # the time limit) holds none of Datasette's SQL threads, which the pages need
            ix = Index.of_file(path, time_limit=limit)
            try:
                return question(ix)
            finally:
                ix.close()

        return await asyncio.to_thread(ask)

    register(mcp, run)
    from ..mcp.tools import SERVED_INSTRUCTIONS

    mcp._lowlevel_server.instructions = SERVED_INSTRUCTIONS  # the curated tools first, SQL for the rest
