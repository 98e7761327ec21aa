"""Before a build writes anything: the versions it indexes, chosen from its source.

What goes wrong here (the package index, a download, git, the disk under the cache) is a Problem whose hint
says that nothing was indexed; the source says what is wrong, and its own hint wins when it has one."""

from __future__ import annotations

from ..core.problems import BuildError
from ..core.specs import select
from ..sources import VersionRef

SPEC_HINT = "see tpindex build --help for the spec grammar"
OFFLINE_NOTE = " (the package index cannot be reached: only cached archives are known)"
OFFLINE_HINT = "reconnect to the package index, or choose among the cached versions"
NOTHING_INDEXED = "nothing was indexed; run the build again once this is fixed"


def choose(source, spec: str | None, pre: bool = False) -> tuple[list[VersionRef], list[str]]:
    """(the versions `spec` selects among the source's names, with the other refs it names; the names that
    ranges and globs ignored because they are not versions). Without a spec: every name of the source (a
    directory's one version)."""
    try:
        if spec is None:
            return [source.ref(n) for n in source.names()], []
        names = source.names()
        offline = getattr(source, "offline", None)  # only the cached archives could be listed
        chosen = select(
            spec,
            names,
            pre=pre,
            is_ref=source.is_ref,
            note=OFFLINE_NOTE if offline else "",
            hint=OFFLINE_HINT if offline else SPEC_HINT,
        )
        return [source.ref(n) for n in chosen.names + chosen.refs], chosen.ignored
    except OSError as e:  # a source's error (SourceError), or the disk under it
        raise BuildError(str(e), getattr(e, "hint", None) or NOTHING_INDEXED) from None
