"""Where the pattern files are: the top-level `queries/` of the project, or `indexer/queries/` in a wheel."""

from __future__ import annotations

from pathlib import Path


def queries_dir() -> Path:
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "queries", here.parent / "queries"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("tpindex's queries/ directory is missing from the installation")
