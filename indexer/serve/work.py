"""The server's queue for work that runs code (the fit and replay pages, MCP's fit and replay): outside
Datasette's SQL threads, bounded, stopped when nobody waits for it any more.

Three replays asked at once took Datasette's three SQL threads for two minutes, and every page that was not
cached waited. Here:

- at most WORKERS jobs run at once, each in a thread of its own (a daemon: a stopping server never waits
  for one), on an Index of its own opened on the served file; at most WAITING more wait for a turn, and the
  next is answered 503 at once (Busy);
- a job's Index carries a cancel event (Index.cancel) that its children check: fit's child is killed, a
  replay's workers are ended. It is set when the client goes away (the request's connection closes: a page
  closed, a curl interrupted, an MCP call cancelled), and for every job when the server stops (cancel_all,
  from serve's signal handler): SIGTERM during a replay ends the server at once;
- the slot of a job is given back when its thread ends, not when its client leaves, so the bound holds.
"""

from __future__ import annotations

import asyncio
import threading
import weakref

from ..core.problems import Problem

WORKERS = 2  # jobs at once (the machine's cores run them; a replay runs one version per core)
WAITING = 8  # jobs waiting for a turn, beyond which the server is busy


class Busy(Problem):
    """The server runs as much code for requests as it may, and as many wait: ask again later."""

    transient = True
    status, title = 503, "Busy"


class Gone(Exception):
    """The client went away before its job's answer: nothing to answer."""


_queues: weakref.WeakSet = weakref.WeakSet()


class Queue:
    def __init__(self, workers: int = WORKERS, waiting: int = WAITING):
        self.workers, self.max_waiting = workers, waiting
        self.waiting = 0
        self.slots: asyncio.Semaphore | None = None
        self.running: set[threading.Event] = set()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.stopped: asyncio.Future | None = None  # done once the server stops: nothing waits for a turn
        _queues.add(self)

    def cancel_all(self) -> None:
        """Every job told to stop, and every request waiting for a turn answered (the server stops)."""
        for event in list(self.running):
            event.set()
        if self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self._stop)

    def _stop(self) -> None:
        if self.stopped is not None and not self.stopped.done():
            self.stopped.set_result(None)

    async def run(self, fn, receive=None):
        """fn(cancel) in a thread of its own once a slot is free -> its result; `receive` (the request's
        ASGI receive) tells when the client goes away (then Gone, and `cancel` is set)."""
        if self.slots is None:
            self.slots = asyncio.Semaphore(self.workers)
            self.loop = asyncio.get_running_loop()
            self.stopped = self.loop.create_future()
        if self.stopped.done():
            raise Busy("the server is stopping", "ask again once it runs again")
        if self.waiting >= self.max_waiting:
            raise Busy(
                f"the server runs {self.workers} replays or fits at once and {self.max_waiting} wait already",
                "ask again in a minute, or run it with the command line",
            )
        cancel = threading.Event()
        gone = asyncio.ensure_future(_disconnected(receive)) if receive is not None else None
        self.waiting += 1
        try:
            turn = asyncio.ensure_future(self.slots.acquire())
            await asyncio.wait(
                {turn, self.stopped, *([gone] if gone else [])}, return_when=asyncio.FIRST_COMPLETED
            )
            if not turn.done() or self.stopped.done():
                if not turn.cancel() and turn.done() and not turn.cancelled():
                    self.slots.release()  # a turn got just as the server stops: given back
                if self.stopped.done():
                    raise Busy("the server is stopping", "ask again once it runs again")
                raise Gone()
        except BaseException:
            if gone is not None:
                gone.cancel()
            raise
        finally:
            self.waiting -= 1
        loop = asyncio.get_running_loop()
        answer = loop.create_future()
        self.running.add(cancel)

        def done(result=None, error=None):
            if not answer.done():
                if error is not None:
                    answer.set_exception(error)
                else:
                    answer.set_result(result)

        def tell(*args) -> None:
            try:
                loop.call_soon_threadsafe(*args)
            except RuntimeError:  # the loop is closed (the server stopped): nobody waits for the answer
                pass

        def target():
            try:
                result = fn(cancel)
            except BaseException as e:  # noqa: BLE001 - handed to the request's task
                tell(done, None, e)
            else:
                tell(done, result)
            finally:
                self.running.discard(cancel)
                tell(self.slots.release)

        threading.Thread(target=target, name="tpindex-work", daemon=True).start()
        try:
            await asyncio.wait({answer, *([gone] if gone else [])}, return_when=asyncio.FIRST_COMPLETED)
            if not answer.done():
                cancel.set()
                raise Gone()
            return answer.result()
        except asyncio.CancelledError:  # the request's task ended: an MCP call cancelled, the server stopping
            cancel.set()
            raise
        finally:
            if gone is not None:
                gone.cancel()


async def _disconnected(receive) -> None:
    """Returns when the request's client has gone (its body, if any, read before or here)."""
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            return


def of(datasette) -> Queue:
    queue = getattr(datasette, "_tpindex_work", None)
    if queue is None:
        queue = Queue()
        datasette._tpindex_work = queue
    return queue


def cancel_all() -> None:
    """Every job of every queue of the process told to stop (the server is stopping)."""
    for queue in list(_queues):
        queue.cancel_all()


async def ask(datasette, database: str, question, request=None):
    """question(Index) as a job of the server's queue, on an Index of its own opened on the served file, its
    links to the served upstream, its children stopped at serve's --time-limit and when its client goes away
    (request: the page's; None for an MCP call, whose cancellation arrives as the task's)."""
    from ..api import Index
    from .state import state, upstream_for

    upstream = upstream_for(datasette, database, await state(datasette, database))
    path = datasette.get_database(database).path
    limit = datasette.setting("sql_time_limit_ms") / 1000

    def job(cancel):
        ix = Index.of_file(path, time_limit=limit, cancel=cancel)
        ix.db.upstream_override = upstream
        try:
            return question(ix)
        finally:
            ix.close()

    return await of(datasette).run(job, request.receive if request is not None else None)
