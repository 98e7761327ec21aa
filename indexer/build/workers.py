"""The build's worker processes, as the builder and its --tree tier both see them: what a died worker means
to the user."""

from __future__ import annotations

from ..core.problems import BuildError


def worker_died() -> BuildError:
    return BuildError(
        "a parser worker process died (killed, or out of memory)",
        "versions indexed before the failure are kept; run the build again (-j 1 uses less memory)",
    )
