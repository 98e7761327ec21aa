"""Datasette plugin (see issue 6)."""
