"""The tests' shared fixtures and helpers live in the package tests/fixtures/, loaded here as plugins: a test
module asks for a fixture by name and imports helpers and constants from `fixtures.<module>`, never from
another test module (test_fixture_imports.py says so)."""

import pytest

pytest.register_assert_rewrite("fixtures")

pytest_plugins = [
    "fixtures.browser",
    "fixtures.build",
    "fixtures.card",
    "fixtures.crash",
    "fixtures.eras",
    "fixtures.golden",
    "fixtures.helpers",
    "fixtures.hostile",
    "fixtures.links",
    "fixtures.logic",
    "fixtures.loopback",
    "fixtures.plugin_eras",
    "fixtures.pypi",
    "fixtures.real_logic",
    "fixtures.real_releases",
    "fixtures.registry_eras",
    "fixtures.replay_trees",
    "fixtures.sentinels",
    "fixtures.search",
    "fixtures.serve",
    "fixtures.small",
    "fixtures.unified",
    "fixtures.where",
]
