"""The tests' shared fixtures and helpers live in the package tests/fixtures/, loaded here as plugins: a test
module asks for a fixture by name and imports helpers and constants from `fixtures.<module>`, never from
another test module (test_fixture_imports.py says so)."""

import pytest

# What `make test-fast` leaves out (pyproject's markers): a test that drives chromium is marked `browser` here, by
# the fixture it asks for, so that no browser test can be missed by a marker forgotten on it
BROWSER_FIXTURES = {"browser"}

pytest.register_assert_rewrite("fixtures")

pytest_plugins = [
    "fixtures.advice",
    "fixtures.atlas_trees",
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
    "fixtures.prompt_trees",
    "fixtures.pypi",
    "fixtures.real_logic",
    "fixtures.real_releases",
    "fixtures.rebind",
    "fixtures.registry_eras",
    "fixtures.replay_trees",
    "fixtures.sentinels",
    "fixtures.search",
    "fixtures.serve",
    "fixtures.small",
    "fixtures.unified",
    "fixtures.where",
]


def pytest_collection_modifyitems(config, items):
    for item in items:
        if BROWSER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.browser)


def pytest_sessionfinish(session, exitstatus):
    """A run that collected no test fails loudly (a marker expression or a path that selects nothing is a
    mistake, never a green suite)."""
    if session.testscollected == 0 and not session.config.option.collectonly:
        session.config.get_terminal_writer().line(
            "pytest collected no test: check the -m expression or the paths (make test-fast selects"
            " `not network and not slow and not browser and not crash`)",
            red=True,
        )
        session.exitstatus = pytest.ExitCode.NO_TESTS_COLLECTED
