"""Where tpindex keeps what it fetches and computes outside the repository and the database (the release
archives, the replay trees and environments, the character classes of grep): platformdirs'
`user_cache_dir("tpindex")`, computed here on Linux by its rule so that a short command (a grep with a
character class) does not import platformdirs (a third of that search's start-up); elsewhere platformdirs
answers. tests/test_code.py checks the rule against platformdirs."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def cache_home() -> Path:
    """platformdirs' user_cache_dir("tpindex"): on Linux $XDG_CACHE_HOME when absolute, else ~/.cache, and
    tpindex under it."""
    if sys.platform == "linux":
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        return Path(xdg if os.path.isabs(xdg) else os.path.expanduser("~/.cache")) / "tpindex"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("tpindex"))
