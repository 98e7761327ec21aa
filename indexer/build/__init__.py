"""Layer 4: sources -> extract -> store -> resolve, version by version (and the --tree tier)."""
