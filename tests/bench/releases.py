"""The benchmark's corpus: a git repository of vllm's real release trees, one commit and tag per release.

Archives come from the package index through the project's own PypiSource (the index pip is
configured with, sha256-checked, cached under the user cache dir's `tpindex/sdists/`). Each archive's
tree, without PKG-INFO and *.egg-info/, becomes one commit tagged `vX.Y.Z`, in version order.

Trees are written with `git fast-import` straight from the archive, rather than unpacked into a work
tree and `git add -A`-ed: the tree is then exactly the archive's (an archive's own .gitignore or
.gitattributes cannot drop or rewrite files), nothing is written outside the repository, and it is
several times faster. The repository is bare: tpindex reads trees and blobs through git anyway.
Preparation is incremental (tags already there are kept) and safe to interrupt: a tag is written only
once its commit is complete.
"""

from __future__ import annotations

import fcntl
import subprocess
import sys
import tarfile
from pathlib import Path

SINCE = "v0.6.0..v0.33.0"  # the corpus of issue 45: 64 releases (a fixed range, comparable from run to run)
IDENTITY = "tpindex-bench <bench@localhost>"


def git(repo: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "--git-dir", str(repo), *args], check=True, capture_output=True, **kw)


def tags(repo: Path) -> set[str]:
    return set(git(repo, "tag", "--list", text=True).stdout.split())


def prepare(repo: Path, spec: str = SINCE, log=print) -> Path:
    """Make `repo` hold every non-yanked, non-pre-release version `spec` selects on the index."""
    from indexer.core.specs import select
    from indexer.sources.pypi import PypiSource

    source = PypiSource(progress=sys.stderr.isatty())
    wanted = select(spec, source.names()).names
    repo.parent.mkdir(parents=True, exist_ok=True)
    with open(str(repo) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (repo / "HEAD").exists():
            subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
        missing = [label for label in wanted if label not in tags(repo)]
        if missing:
            log(
                f"preparing {repo}: {len(missing)} of {len(wanted)} release(s) to add "
                f"(archives from {source.index_url}, cached in {source.cache_dir})"
            )
        for i, label in enumerate(missing, 1):
            archive, sha256 = source.archive(label)
            log(f"  [{i}/{len(missing)}] {label}  {archive.name}")
            commit_archive(repo, label, archive, sha256)
    return repo


def commit_archive(repo: Path, label: str, archive: Path, sha256: str) -> None:
    """One commit on refs/heads/main holding exactly the archive's tree, tagged `label`."""
    has_main = (
        subprocess.run(
            ["git", "--git-dir", str(repo), "rev-parse", "-q", "--verify", "refs/heads/main"],
            capture_output=True,
        ).returncode
        == 0
    )
    proc = subprocess.Popen(
        ["git", "--git-dir", str(repo), "fast-import", "--quiet", "--done"], stdin=subprocess.PIPE
    )
    out = proc.stdin
    try:
        with tarfile.open(archive, "r:gz") as tar:
            members = [
                m for m in tar.getmembers() if tree_path(m.name) and (m.isfile() or m.islnk() or m.issym())
            ]
            when = max((int(m.mtime) for m in members), default=0)
            message = f"vllm {label[1:]}: {archive.name} (sha256 {sha256})\n".encode()
            out.write(b"commit refs/heads/main\n")
            out.write(f"committer {IDENTITY} {when} +0000\n".encode())
            out.write(b"data %d\n%s" % (len(message), message))
            if has_main:
                out.write(b"from refs/heads/main^0\n")
            out.write(b"deleteall\n")
            for m in members:
                if m.issym():
                    mode, data = b"120000", m.linkname.encode()
                else:
                    mode = b"100755" if m.mode & 0o111 else b"100644"
                    data = tar.extractfile(m).read()
                out.write(b"M %s inline %s\ndata %d\n" % (mode, quote(tree_path(m.name)), len(data)))
                out.write(data)
                out.write(b"\n")
        out.write(f"\nreset refs/tags/{label}\nfrom refs/heads/main\n\ndone\n".encode())
        out.close()
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    if proc.wait() != 0:
        raise RuntimeError(f"git fast-import failed for {label} ({archive})")


def tree_path(name: str) -> str | None:
    """The repository path of an archive member; None for PKG-INFO, *.egg-info/ and anything odd."""
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if len(parts) < 2 or ".." in parts:
        return None
    rel = parts[1:]
    if rel == ["PKG-INFO"] or rel[0].endswith(".egg-info"):
        return None
    return "/".join(rel)


def quote(path: str) -> bytes:
    """A path in fast-import's C-style quotes."""
    raw = path.encode("utf-8", "surrogateescape")
    return b'"' + raw.replace(b"\\", b"\\\\").replace(b'"', b'\\"').replace(b"\n", b"\\n") + b'"'
