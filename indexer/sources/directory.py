"""One version from a directory: an installed `vllm` package (site-packages/vllm), or a tree containing
`vllm/` (an unpacked archive, a checkout, site-packages itself).

Repository paths are what they would be in vLLM's repository: "vllm/..." for the package layout, the
path relative to the directory otherwise. The label is read from the version vLLM's build writes
(`vllm/_version.py`), else from the distribution's metadata (a sibling `vllm-*.dist-info/METADATA`, or
`PKG-INFO` of an unpacked archive); `--label` overrides it. The version's identity (`commit`) is a digest
of its sorted in-scope (path, blob id) pairs, so an unchanged directory is skipped on the next build and a
changed one is indexed again.
"""

from __future__ import annotations

import ast
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

from ..core.problems import Problem
from . import FileEntry, VersionRef, git_blob_id

SKIP_DIRS = {"__pycache__", ".git"}


DIRECTORY_HINT = "see tpindex build --help for --repo, --tags and --path"


class NotAVllmTree(Problem, ValueError):
    """The directory is not one version of vLLM (or its version is not found: pass --label)."""


class DirectorySource:
    kind = "dir"

    def __init__(self, path: str | Path, label: str | None = None, scope=None):
        self.root = Path(os.path.abspath(os.path.expanduser(str(path))))
        if not self.root.is_dir():
            raise NotAVllmTree(f"{path} is not a directory", DIRECTORY_HINT)
        if self.root.name == "vllm" and (self.root / "__init__.py").is_file():
            self.prefix = "vllm/"  # the package itself: site-packages/vllm
        elif (self.root / "vllm").is_dir():
            self.prefix = ""  # a tree containing vllm/
        else:
            raise NotAVllmTree(
                f"{path} is neither a vllm package directory (vllm/ with __init__.py) nor a "
                "directory containing vllm/; pass site-packages/vllm or an unpacked source tree",
                DIRECTORY_HINT,
            )
        self.label = label or self.read_label()
        if not self.label:
            raise NotAVllmTree(
                f"no version found in {path} (looked for vllm/_version.py, dist-info METADATA and "
                "PKG-INFO); pass --label LABEL",
                DIRECTORY_HINT,
            )
        self.scope = scope
        self._walks: dict[tuple, list[tuple[str, str, bytes]]] = {}

    # -- label ---------------------------------------------------------------------------------------
    def read_label(self) -> str | None:
        package = self.root if self.prefix else self.root / "vllm"
        version = version_from_file(package / "_version.py")
        if version is None and self.prefix:
            metas = sorted(self.root.parent.glob("vllm-*.dist-info/METADATA"))
            version = metadata_version(metas[0]) if len(metas) == 1 else None
        if version is None and not self.prefix:
            version = metadata_version(self.root / "PKG-INFO")
        return f"v{version}" if version else None

    # -- versions ------------------------------------------------------------------------------------
    def names(self) -> list[str]:
        return [self.label]

    def is_ref(self, name: str) -> bool:
        return False

    def ref(self, name: str) -> VersionRef:
        from ..core.specs import sort_key

        if name != self.label:
            raise NotAVllmTree(f"{self.root} holds one version, {self.label}, not {name}", DIRECTORY_HINT)
        digest = hashlib.sha256()
        scope = self.scope or _default_scope()
        for path, blob_id, _ in sorted(self._walk(_every_file() if scope.tree else scope)):
            digest.update(f"{path}\0{blob_id}\n".encode())
        return VersionRef(
            label=self.label,
            ref=str(self.root),
            commit=digest.hexdigest(),
            source="dir",
            sort_key=sort_key(self.label),
            origin=str(self.root),
        )

    # -- files ---------------------------------------------------------------------------------------
    def files(self, version: VersionRef, scope) -> Iterator[FileEntry]:
        for path, blob_id, data in self._walk(scope):
            yield FileEntry(path, blob_id, _const(data))

    def tree(self, version: VersionRef) -> list[FileEntry]:
        """Every file under the directory (for an installed package: the package's)."""
        return [FileEntry(path, blob_id, _const(data)) for path, blob_id, data in self._walk(_every_file())]

    def _walk(self, scope) -> list[tuple[str, str, bytes]]:
        """(repository path, blob id, bytes) of every in-scope file, read once per scope."""
        key = tuple(scope.patterns)
        if key in self._walks:
            return self._walks[key]
        out: dict[str, tuple[str, str, bytes]] = {}
        for root in scope.roots():
            local = self._local(root)
            if local is None:
                continue
            start = self.root / local if local else self.root
            if not self._inside(start):
                continue
            if start.is_file():
                candidates = [(root, start)]
            elif start.is_dir():
                base = self.prefix + (local + "/" if local else "")
                candidates = _tree(start, base)
            else:
                continue
            for path, file in candidates:
                if path not in out and scope.matches(path) and (not file.is_symlink() or self._inside(file)):
                    data = file.read_bytes()
                    out[path] = (path, git_blob_id(data), data)
        self._walks[key] = sorted(out.values())
        return self._walks[key]

    def _inside(self, path: Path) -> bool:
        """Whether a path, symbolic links followed, is inside the directory: nothing outside it is read."""
        real, top = os.path.realpath(path), os.path.realpath(self.root)
        return real == top or real.startswith(top.rstrip("/") + "/")

    def _local(self, root: str) -> str | None:
        """A scope root as a path inside this directory ("" = all of it); None if it is outside."""
        if not self.prefix:
            return root
        if root in ("", "vllm"):
            return ""
        if root.startswith("vllm/"):
            return root[len("vllm/") :]
        return None  # examples/, tests/: not part of an installed package


def _tree(start: Path, base: str) -> list[tuple[str, Path]]:
    """Every regular file under a directory (symlinked directories and __pycache__ not entered)."""
    out: list[tuple[str, Path]] = []
    with os.scandir(start) as it:
        for entry in it:
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in SKIP_DIRS:
                    out.extend(_tree(Path(entry.path), f"{base}{entry.name}/"))
            elif entry.is_file():
                out.append((base + entry.name, Path(entry.path)))
    return out


def version_from_file(path: Path) -> str | None:
    """The string assigned to __version__ (or version) in a version file such as setuptools-scm writes."""
    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return None
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            for t in targets:
                if isinstance(t, ast.Name) and t.id in ("__version__", "version"):
                    found[t.id] = value.value.strip()
    return found.get("__version__") or found.get("version") or None


def metadata_version(path: Path) -> str | None:
    """The `Version:` header of core metadata (PKG-INFO, METADATA)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.strip():
                    break  # end of the headers
                key, _, value = line.partition(":")
                if key.strip().lower() == "version" and value.strip():
                    return value.strip()
    except OSError:
        return None
    return None


def _default_scope():
    from ..core.scope import Scope

    return Scope.named("all")


def _every_file():
    """A scope of every path ('*' matches across '/'; its one root is the whole directory)."""
    from ..core.scope import Scope

    return Scope(("*",), "every-file")


def _const(data: bytes):
    return lambda: data
