"""What every request to `tpindex serve` passes before any page sees it (the plugin's asgi_wrapper, outermost):

- **Host**: a request must be addressed to this server: a loopback name (`localhost`, `*.localhost`), an IP
  address, the address served on, or a name `serve --allow-host` gives. Any other Host is a page of another
  site reaching this server through a name that resolves to it (DNS rebinding: it could read every page and
  run SQL): refused, 421 (Misdirected Request, as the MCP SDK answers it).
- **Origin**: a request a browser sends from another site's page carries that site's Origin: refused (403)
  unless its host passes the Host rule too. A POST (the forms that run code: fit, replay; check-doc) must
  come from this server's own origin: its Origin, when it has one, is the request's own scheme and host, and
  its Sec-Fetch-Site, when it has one, says same-origin. (A client that is not a browser sends neither.)
- **Body**: a POST body is read no further than its path's limit (BODY_LIMITS, else DEFAULT_BODY): a
  declared length over it is answered 413 at once; a longer body is cut there and the page is told
  (`scope["tpindex_body_too_large"]`). Datasette's CSRF check and post_vars() read a whole body (100 MB took
  16.7 s and stalled the other pages) before a page could look at its size.

/-/mcp has its own Host and Origin check on top of this one (app.py: loopback only).
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
FORM = 4096  # bytes of a form's other fields
BODY_LIMITS = {  # path (after the base URL) -> the bytes of a POST body read at most
    "-/check-doc": 3 * 200_000 + FORM,  # the 200 kB document, url-encoded (each byte %XX at worst)
    "-/fit": 3 * (4 << 20) + FORM,  # the 4 MB file fit reads from a page
    "-/replay": 3 * 100_000 + FORM,  # the 100 kB raw output
    "-/mcp": 6 * (4 << 20) + (64 << 10),  # a tool's 4 MB text, JSON-escaped (\uXXXX at worst)
}
DEFAULT_BODY = 64 << 10
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def allowed_hosts(host: str | None, allow: list[str] | tuple[str, ...] = ()) -> frozenset[str]:
    """The names a request may be addressed to (beside IP addresses and *.localhost): loopback, the address
    served on when it is a name, and `allow`."""
    names = {*LOOPBACK_NAMES, *(a.strip().lower().strip("[]") for a in allow if a.strip())}
    if host and host not in ("0.0.0.0", "::", ""):
        names.add(host.lower().strip("[]"))
    return frozenset(names)


def _hostname(value: str) -> str | None:
    """The host of a Host header or an Origin's netloc (no port, no brackets, lower case); None if unreadable."""
    try:
        return urlsplit("//" + value).hostname
    except ValueError:
        return None


def host_allowed(value: str, names: frozenset[str]) -> bool:
    name = _hostname(value)
    if name is None:
        return False
    if name in names or name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        ipaddress.ip_address(name)  # an address cannot be rebound: a page on it is the server's own origin
        return True
    except ValueError:
        return False


def refusal(scope, names: frozenset[str]) -> tuple[int, str] | None:
    """(status, why) a request is refused with (None: it passes the Host and Origin rules)."""
    headers = dict(scope.get("headers") or [])
    host = headers.get(b"host", b"").decode("latin-1")
    if host and not host_allowed(host, names):
        return 421, (
            f"this server answers requests addressed to it (Host {host!r} is not one of its names:"
            f" {', '.join(sorted(names))}, an IP address); serve --allow-host NAME allows another"
        )
    why = _origin_refusal(headers, host, scope.get("method") in SAFE_METHODS, names)
    return None if why is None else (403, why)


def _origin_refusal(headers: dict, host: str, safe: bool, names: frozenset[str]) -> str | None:
    origin = headers.get(b"origin", b"").decode("latin-1")
    if origin and origin != "null":
        parts = urlsplit(origin)
        if not host_allowed(parts.netloc, names):
            return f"a page of {origin} may not ask this server"
        if not safe and (not host or parts.netloc.lower() != host.lower()):
            return f"a form of {origin} may not be posted to this server: only its own pages post forms"
    elif origin == "null" and not safe:
        return "a form of an opaque origin (a sandboxed page, a file) may not be posted to this server"
    site = headers.get(b"sec-fetch-site", b"").decode("latin-1")
    if not safe and site and site not in ("same-origin", "none"):
        return f"a {site} form may not be posted to this server: only its own pages post forms"
    return None


def body_limit(path: str, base: str) -> int:
    rest = path[len(base) :] if path.startswith(base) else path.lstrip("/")
    return BODY_LIMITS.get(rest.rstrip("/"), DEFAULT_BODY)


async def _answer(send, status: int, text: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"cache-control", b"no-store"),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": text.encode() + b"\n"})


def wrap(app, datasette):
    """The ASGI app behind the Host, Origin and body rules (see the module)."""

    async def guarded(scope, receive, send):
        if scope["type"] not in ("http", "websocket"):
            return await app(scope, receive, send)
        names = getattr(datasette, "_tpindex_hosts", None) or allowed_hosts(None)
        refused = refusal(scope, names)
        if refused is not None:
            if scope["type"] == "websocket":
                return await send({"type": "websocket.close", "code": 1008})
            return await _answer(send, *refused)
        if scope["type"] != "http" or scope.get("method") in SAFE_METHODS:
            return await app(scope, receive, send)
        limit = body_limit(scope.get("path", ""), datasette.urls.path("/"))
        length = dict(scope.get("headers") or []).get(b"content-length", b"")
        if length.isdigit() and int(length) > limit:
            return await _answer(
                send, 413, f"the request's body is larger than this page reads ({limit // 1000} kB)"
            )
        seen = 0

        async def bounded():
            nonlocal seen
            message = await receive()
            if message.get("type") == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    scope["tpindex_body_too_large"] = True
                    return {"type": "http.request", "body": b"", "more_body": False}
            return message

        return await app(scope, bounded, send)

    return guarded
