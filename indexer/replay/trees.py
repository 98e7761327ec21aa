"""Version trees for replay, materialized once per version into the user cache from the source the version
was indexed from (the `versions` row: git repository, cached release archive, directory)."""

from __future__ import annotations

import fnmatch
import json
import os
import shlex
import shutil
import tempfile
import threading
from pathlib import Path

from ..core.cachedir import cache_home
from ..core.problems import Problem

WANTED = ("vllm/*.py", "requirements*.txt", "requirements/*.txt")
TREES_FORMAT = 1  # bump when what a tree holds changes


class ReplayError(Problem):
    """A replay that cannot run as asked."""


def cache_root() -> Path:
    override = os.environ.get("TPINDEX_REPLAY_CACHE")
    if override:
        return Path(override).expanduser()
    return cache_home() / "replay"


def wanted(path: str) -> bool:
    return any(fnmatch.fnmatchcase(path, p) for p in WANTED)


def tree_dir(root: Path, row: dict) -> Path:
    label = "".join(c if c.isalnum() or c in "._-" else "_" for c in row["label"])
    return root / "trees" / f"{label}-{row['commit_id'][:12]}-f{TREES_FORMAT}"


def _source(row: dict):
    kind, origin = row["source"], row["origin"]
    from ..sources import VersionRef

    ref = VersionRef(
        label=row["label"], ref=row["ref"], commit=row["commit_id"], source=kind, origin=origin or ""
    )
    if kind == "git":
        from ..sources.git import GitSource, NotARepository

        try:
            return GitSource(origin), ref
        except (NotARepository, OSError, TypeError):
            raise ReplayError(
                f"{row['label']} was indexed from the git repository {origin}, which is no longer there",
                "rebuild the version from a source that exists, or restore the repository",
            ) from None
    if kind == "pypi":
        from ..sources.pypi import PypiSource

        return PypiSource(), ref
    if kind == "dir":
        from ..sources.directory import DirectorySource

        if not origin or not Path(origin).is_dir():
            raise ReplayError(
                f"{row['label']} was indexed from the directory {origin}, which is no longer there",
                "rebuild the version from a directory that exists",
            )
        return DirectorySource(origin, row["label"]), ref
    raise ReplayError(f"{row['label']}: unknown source {kind!r}", "rebuild the version")


def materialize(
    row: dict, root: Path | None = None, notice=None, indexed: dict[str, str] | None = None
) -> Path:
    """The version's tree in the cache (made now if it is not there yet); -> the tree's directory.
    `indexed` (a version indexed from a directory, whose files may have changed since): path -> blob id
    of the files the index holds; a tree whose files differ from them is refused (what runs must be what
    was indexed)."""
    root = root or cache_root()
    dest = tree_dir(root, row)
    if (dest / ".complete").is_file():
        if indexed is not None:
            _same_as_indexed(row, _manifest(dest), indexed)
        return dest
    if notice:
        notice(f"replay: materializing {row['label']} into {dest} (once)")
    source, ref = _source(row)
    try:
        return _materialize(row, root, dest, source, ref, indexed)
    finally:
        close = getattr(source, "close", None)
        if close is not None:  # a git source's cat-file process: one per tree read, none left behind
            close()


def _materialize(row: dict, root: Path, dest: Path, source, ref, indexed) -> Path:
    try:
        entries = [e for e in source.tree(ref) if wanted(e.path)]
    except OSError as e:
        raise ReplayError(
            f"{row['label']}: cannot read its tree from {row['source']} {row['origin']} ({e})",
            getattr(e, "hint", None) or "check that the source it was indexed from is reachable",
        ) from None
    if not any(e.path.startswith("vllm/") for e in entries):
        raise ReplayError(
            f"{row['label']}: its source has no vllm/ package to run", "replay needs a vLLM tree"
        )
    if indexed is not None:
        _same_as_indexed(row, {e.path: e.blob_id for e in entries}, indexed)
    blobs = root / "blobs"
    (root / "trees").mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=root / "trees"))
    try:
        manifest = {}
        for e in entries:
            blob = blobs / e.blob_id[:2] / e.blob_id[2:]
            if not blob.is_file():
                blob.parent.mkdir(parents=True, exist_ok=True)
                # one name per writer (two threads of one process, e.g. the web server's, may write a blob at once)
                part = blob.with_name(blob.name + f".{os.getpid()}.{threading.get_ident()}.part")
                part.write_bytes(e.read())
                os.replace(part, blob)
            target = tmp / e.path
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(blob, target)
            except OSError:
                shutil.copyfile(blob, target)
            manifest[e.path] = e.blob_id
        (tmp / ".manifest.json").write_text(json.dumps(manifest, sort_keys=True))
        (tmp / ".complete").write_text(row["label"] + "\n")
        try:
            os.rename(tmp, dest)
        except OSError:  # another run made it meanwhile
            if not (dest / ".complete").is_file():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return dest


def _manifest(tree: Path) -> dict[str, str]:
    try:
        data = json.loads((tree / ".manifest.json").read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _same_as_indexed(row: dict, have: dict[str, str], indexed: dict[str, str]) -> None:
    """Refuse a tree whose files (those replay runs: WANTED) are not the ones the index holds."""
    changed = sorted(p for p, blob in indexed.items() if wanted(p) and have.get(p, blob) != blob)
    gone = sorted(p for p in indexed if wanted(p) and p not in have)
    if changed or gone:
        first = (changed or gone)[0]
        raise ReplayError(
            f"{row['label']} was indexed from the directory {row['origin']}, whose files changed since"
            f" ({len(changed)} changed, {len(gone)} gone: {first}); replay runs what was indexed, not what"
            " the directory holds now",
            f"index the directory again (tpindex build --path {shlex.quote(str(row['origin']))} --label"
            f" {shlex.quote(row['label'])}), then replay",
        )
