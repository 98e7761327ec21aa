"""Before a build writes anything: the versions it indexes, chosen from its source.

What goes wrong here (the package index, a download, git, the disk under the cache) is a Problem whose hint
says that nothing was indexed; the source says what is wrong, and its own hint wins when it has one."""

from __future__ import annotations

from collections.abc import Callable

from ..core.problems import BuildError
from ..core.specs import SpecError, select
from ..sources import VersionRef

SPEC_HINT = "see tpindex build --help for the spec grammar"
OFFLINE_NOTE = " (the package index cannot be reached: only cached archives are known)"
OFFLINE_HINT = "reconnect to the package index, or choose among the cached versions"
NOTHING_INDEXED = "nothing was indexed; run the build again once this is fixed"


def choose(
    source, spec: str | None, pre: bool = False, again: Callable[[str], str] | None = None
) -> tuple[list[VersionRef], list[str]]:
    """(the versions `spec` selects among the source's names, with the other refs it names; the names that
    ranges and globs ignored because they are not versions). Without a spec: every name of the source (a
    directory's one version). `again(spec)`: the build command with another spec, offered with the nearest
    versions when the spec names one version the source does not have."""
    try:
        if spec is None:
            return [source.ref(n) for n in source.names()], []
        names = source.names()
        offline = getattr(source, "offline", None)  # only the cached archives could be listed
        try:
            chosen = select(
                spec,
                names,
                pre=pre,
                is_ref=source.is_ref,
                note=OFFLINE_NOTE if offline else "",
                hint=OFFLINE_HINT if offline else SPEC_HINT,
                missing=getattr(source, "missing", None),
            )
        except SpecError as e:
            if e.nearest and again is not None and not offline:
                raise SpecError(
                    e.message, f"index the nearest instead: {again(','.join(e.nearest))}"
                ) from None
            raise
        return [source.ref(n) for n in chosen.names + chosen.refs], chosen.ignored
    except OSError as e:  # a source's error (SourceError), or the disk under it
        raise BuildError(str(e), getattr(e, "hint", None) or NOTHING_INDEXED) from None
