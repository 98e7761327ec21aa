"""A bounded loopback load generator for `tpindex serve` (bench figure (s)).

`clients` threads, each with its own keep-alive HTTP connection to 127.0.0.1, request the given paths in
turn (each client starting at another one) for `seconds`, one request at a time, every request with a
timeout; nothing else. Bounded three ways: the duration, the number of clients, and at most
`max_requests` requests in all. A request is an error when it raises (timeout, refused, reset) or answers
with a status other than 200. Latency is from sending the request to reading the whole body.
"""

from __future__ import annotations

import http.client
import statistics
import threading
import time

TIMEOUT = 30.0  # seconds one request may take before it counts as an error


def run(
    port: int, paths: list[str], clients: int = 20, seconds: float = 60.0, max_requests: int = 200_000
) -> dict:
    lock = threading.Lock()
    latencies: list[float] = []
    errors: dict[str, int] = {}
    by_path: dict[str, list[float]] = {p: [] for p in paths}
    sent = 0
    deadline = time.monotonic() + seconds

    def client(n: int) -> None:
        nonlocal sent
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
        i = n
        while time.monotonic() < deadline:
            with lock:
                if sent >= max_requests:
                    return
                sent += 1
            path = paths[i % len(paths)]
            i += 1
            t0 = time.perf_counter()
            try:
                conn.request("GET", path)
                resp = conn.getresponse()
                resp.read()
                status = resp.status
            except (OSError, http.client.HTTPException) as e:
                status = type(e).__name__
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
            took = time.perf_counter() - t0
            with lock:
                latencies.append(took)
                by_path[path].append(took)
                if status != 200:
                    key = f"{status} {path}"
                    errors[key] = errors.get(key, 0) + 1
        conn.close()

    threads = [threading.Thread(target=client, args=(n,), daemon=True) for n in range(clients)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + TIMEOUT + 5)
    wall = time.monotonic() - t0
    return {
        "clients": clients,
        "seconds": wall,
        "requests": len(latencies),
        "errors": sum(errors.values()),
        "error_kinds": errors,
        "p50_ms": _pct(latencies, 50),
        "p95_ms": _pct(latencies, 95),
        "max_ms": max(latencies, default=0) * 1000,
        "rps": len(latencies) / wall if wall else 0,
        "p95_ms_by_path": {p: _pct(v, 95) for p, v in by_path.items()},
    }


def _pct(values: list[float], q: int) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0] * 1000
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] * 1000
