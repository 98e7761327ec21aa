"""`tpindex serve`: browse a database in Datasette, read-only, with the project's metadata and plugin."""

from __future__ import annotations

import errno
import socket
from pathlib import Path

import click

from ..cli import Fail, db_option

DB_NAME = "tpindex"  # the database's name in URLs: /tpindex/which?name=...
SQL_TIME_LIMIT_MS = 5000


def make_datasette(db_path: str | Path, upstream: str | None = None, time_limit_ms: int = SQL_TIME_LIMIT_MS):
    """A Datasette instance serving one tpindex database read-only (the connections open it with
    mode=ro and are query-only; Datasette 0.65 has no write API and no writable canned query is defined)."""
    from datasette.app import Datasette
    from datasette.database import Database

    from . import plugin
    from .metadata import metadata

    _register_plugin(plugin)
    ds = Datasette(
        metadata=metadata(DB_NAME, upstream),
        settings={
            "sql_time_limit_ms": time_limit_ms,
            "facet_time_limit_ms": 500,
            "allow_download": False,
            "default_page_size": 100,
            "max_returned_rows": 2000,
        },
    )
    # Mutable (mode=ro) rather than immutable: a build finishing while serving shows up, and a database
    # in WAL mode is read through its WAL. Where SQLite cannot read it so (a read-only directory without
    # the WAL index), an immutable view that still holds what is in the WAL (store.read_view).
    from ..store import read_view

    path, immutable = read_view(Path(db_path).resolve())
    ds.add_database(Database(ds, path=str(path), is_mutable=not immutable), name=DB_NAME)
    if "_memory" in ds.databases:  # added by Datasette when started without files
        ds.remove_database("_memory")
    return ds


def _register_plugin(plugin) -> None:
    """The entry point registers the plugin when tpindex is installed; from a source tree it may not be."""
    from datasette.plugins import pm

    if not any(p is plugin for p in pm.get_plugins()):
        pm.register(plugin, name="tpindex")


def _check_port(host: str, port: int) -> None:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise Fail(f"cannot serve on host {host!r} ({e.strerror})", "use --host 127.0.0.1") from None
    family, _, _, _, addr = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(addr)
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                raise Fail(f"port {port} on {host} is already in use", "pass another --port") from None
            raise Fail(f"cannot listen on {host}:{port} ({e.strerror})", "pass another --host or --port") from None


@click.command(short_help="Browse the database in Datasette, read-only.")
@db_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8001, show_default=True, type=click.IntRange(1, 65535), help="Port to listen on.")
@click.option("--open", "open_browser", is_flag=True, help="Open the home page in a web browser.")
@click.option("--upstream", default=None, metavar="URL",
              help="Repository URL that file links point to, overriding the one stored by tpindex build "
                   "--upstream (default https://github.com/vllm-project/vllm). A URL with {ref}, {path} and "
                   "{line} is used as a template (for hosts other than GitHub); http(s) only, no other "
                   "placeholders.")
@click.option("--time-limit", "time_limit_ms", default=SQL_TIME_LIMIT_MS, show_default=True,
              type=click.IntRange(100, 600_000), metavar="MS", help="Time limit of any SQL query, in milliseconds.")
def serve(db_path, host, port, open_browser, upstream, time_limit_ms):
    """Browse the database in Datasette, read-only: the questions as canned queries, the parser matrix at
    /-/parser-matrix, and every file linked to its line upstream at the row's version."""
    from ..store import connect
    from .links import UPSTREAM_HINT, upstream_problem

    if upstream is not None and upstream_problem(upstream):
        raise Fail(upstream_problem(upstream), UPSTREAM_HINT)
    connect(db_path, create=False, readonly=True).conn.close()  # a StoreError says what is wrong
    _check_port(host, port)

    import uvicorn

    ds = make_datasette(db_path, upstream, time_limit_ms)
    url = f"http://{host if ':' not in host else f'[{host}]'}:{port}/"
    click.echo(f"Serving {db_path} read-only at {url}  (parser matrix: {url}-/parser-matrix; Ctrl-C stops)")
    if open_browser:
        import threading
        import webbrowser

        threading.Timer(1.0, webbrowser.open, [url]).start()
    from ..answers import bounded

    bounded.warm()  # a server has threads: its searches fork through the fork server, started now
    server = _Server(uvicorn.Config(ds.app(), host=host, port=port, log_level="warning", lifespan="on",
                                    timeout_graceful_shutdown=5))
    server.run()
    bounded.stop_all()
    import signal

    if signal.SIGINT in server.signals:
        click.echo("interrupted", err=True)
        raise SystemExit(130)  # Ctrl-C, as every command; SIGTERM (a service manager's stop) is a clean exit


def _server_class():
    import contextlib
    import signal

    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn's server, but a signal only stops it gracefully: uvicorn raises the signal again once
        stopped (SIGTERM then ended the process with status 143 and a CancelledError traceback of the
        lifespan, Ctrl-C with status 0); serve exits itself, 0 on SIGTERM and 130 on Ctrl-C. Searches at
        work are stopped at once, so that their requests do not hold the shutdown up to their time limit."""

        signals: list[int] = []

        @contextlib.contextmanager
        def capture_signals(self):
            self.signals = []
            originals = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for sig, handler in originals.items():
                    signal.signal(sig, handler)

        def handle_exit(self, sig, frame):
            from ..answers import bounded

            self.signals.append(sig)
            super().handle_exit(sig, frame)
            bounded.stop_all()

    return Server


def _Server(config):  # noqa: N802 - a class made on first use (uvicorn is imported only by serve)
    return _server_class()(config)
