"""Where the pattern files are: the top-level `queries/` of the project, or `indexer/queries/` in a wheel."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


def queries_dir() -> Path:
    from pathlib import Path  # here: importing extract/ (templates, tokens) for an answer needs no path

    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "queries", here.parent / "queries"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("tpindex's queries/ directory is missing from the installation")
