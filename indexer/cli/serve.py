"""`tpindex serve`: browse a database in Datasette, read-only, with the project's metadata and plugin."""

from __future__ import annotations

import errno
import socket

import click

from ..core.problems import Problem
from ..serve.app import CACHE_MB, SQL_TIME_LIMIT_MS, _Server, make_datasette, quiet_lifespan
from .main import db_option


def _check_port(host: str, port: int) -> None:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise Problem(f"cannot serve on host {host!r} ({e.strerror})", "use --host 127.0.0.1") from None
    family, _, _, _, addr = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(addr)
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                raise Problem(f"port {port} on {host} is already in use", "pass another --port") from None
            raise Problem(
                f"cannot listen on {host}:{port} ({e.strerror})", "pass another --host or --port"
            ) from None


@click.command(short_help="Browse the database in Datasette, read-only.")
@db_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", default=8001, show_default=True, type=click.IntRange(1, 65535), help="Port to listen on."
)
@click.option("--open", "open_browser", is_flag=True, help="Open the home page in a web browser.")
@click.option(
    "--upstream",
    default=None,
    metavar="URL",
    help="Repository URL that file links point to, overriding the one stored by tpindex build "
    "--upstream (default https://github.com/vllm-project/vllm). A URL with {ref}, {path} and "
    "{line} is used as a template (for hosts other than GitHub); http(s) only, no other "
    "placeholders.",
)
@click.option(
    "--time-limit",
    "time_limit_ms",
    default=SQL_TIME_LIMIT_MS,
    show_default=True,
    type=click.IntRange(100, 600_000),
    metavar="MS",
    help="Time limit of any SQL query, of any code search (the search page, MCP's grep) and of fit's work (the"
    " fit page, MCP's fit), in milliseconds.",
)
@click.option(
    "--cache-mb",
    default=CACHE_MB,
    show_default=True,
    type=click.IntRange(0, 65536),
    metavar="MB",
    help="Memory for the response cache: a page is rendered once per state of the database and then"
    " answered from memory, until a build writes into the database; 0 turns it off.",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    help="A name requests may be addressed to (their Host header), beside loopback names, IP addresses and"
    " --host; repeatable. Any other is refused: a page of another site reaching the server through a name"
    " that resolves to it.",
)
def serve(db_path, host, port, open_browser, upstream, time_limit_ms, cache_mb, allow_hosts):
    """Browse the database in Datasette, read-only: the questions as canned queries, the parser matrix at
    /-/parser-matrix, and every file linked to its line upstream at the row's version."""
    from ..api import Index
    from ..core.links import UPSTREAM_HINT, upstream_problem

    if upstream is not None and upstream_problem(upstream):
        raise Problem(upstream_problem(upstream), UPSTREAM_HINT)
    Index(db_path).close()  # a StoreError says what is wrong
    _check_port(host, port)

    import uvicorn

    ds = make_datasette(
        db_path, upstream, time_limit_ms, host, cache_bytes=cache_mb << 20, allow_hosts=allow_hosts
    )
    url = f"http://{host if ':' not in host else f'[{host}]'}:{port}/"
    click.echo(f"Serving {db_path} read-only at {url}  (parser matrix: {url}-/parser-matrix; Ctrl-C stops)")
    if open_browser:
        import threading
        import webbrowser

        threading.Timer(1.0, webbrowser.open, [url]).start()
    from ..api import stop_searches, warm_searches

    warm_searches()  # a server has threads: its searches fork through the fork server, started now
    server = _Server(
        uvicorn.Config(
            quiet_lifespan(ds.app()),
            host=host,
            port=port,
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=5,
        )
    )
    server.run()
    stop_searches()
    import signal

    if signal.SIGINT in server.signals:
        click.echo("interrupted", err=True)
        raise SystemExit(130)  # Ctrl-C, as every command; SIGTERM (a service manager's stop) is a clean exit
