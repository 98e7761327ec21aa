"""A version that cannot be asked as written (issue 41, item 2): the closest versions are the nearest in version
order on both sides, a version the package index has no source archive of says so, and every hint is a
command that works as written (each test runs it). The fake index imitates vllm's: 0.15.x has wheels only."""

from __future__ import annotations

import shlex

import pytest
from click.testing import CliRunner
from fixtures.pypi import cli_build

from indexer.core.specs import SpecError, closest, select

RELEASES = ("0.1.0", "0.5.0", "0.14.0", "0.14.1", "0.16.0", "0.25.0", "0.31.0")


@pytest.fixture
def fifteen(index):
    for v in RELEASES:
        index.add(v)
    index.add_wheel_only("0.15.0")
    index.add_wheel_only("0.15.1")
    return index


def run(monkeypatch, index, command: str):
    """Run a hint's command as written (`tpindex ...`), against the fake index."""
    from indexer.cli.main import main

    words = shlex.split(command)
    assert words[0] == "tpindex", command
    monkeypatch.setenv("PIP_INDEX_URL", index.url)
    return CliRunner().invoke(main, words[1:])


def hint(output: str) -> str:
    (line,) = [x for x in output.splitlines() if x.startswith("Hint:")]
    return line


def command_in(text: str) -> str:
    """The command a hint names: from `tpindex` to the end, or to a parenthesized aside."""
    return "tpindex " + text.split("tpindex ", 1)[1].split("  (")[0].strip()


def test_closest_versions_are_nearest_in_version_order_on_both_sides():
    names = [f"v{v}" for v in RELEASES]
    assert closest("v0.15.0", names) == ["v0.14.1", "v0.16.0"]
    assert closest("v0.40.0", names) == ["v0.31.0"]
    with pytest.raises(SpecError) as e:
        select("v0.15.0", names)
    assert "v0.14.1, v0.16.0" in str(e.value) and "v0.5.0" not in str(e.value)


def test_build_of_a_version_without_a_source_archive_says_so_and_offers_a_working_build(
    monkeypatch, fifteen, tmp_path
):
    db, cache = tmp_path / "x.db", tmp_path / "c"
    r = cli_build(monkeypatch, fifteen, "--tags", "v0.15.0", "--db", db, "--cache-dir", cache)
    assert r.exit_code == 2
    first = r.output.splitlines()[0]
    assert "no source archive" in first and "wheels" in first
    assert "v0.14.1, v0.16.0" in first and "v0.5.0" not in first and "v0.31.0" not in first
    again = run(monkeypatch, fifteen, command_in(hint(r.output)))
    assert again.exit_code == 0, again.output
    r = cli_build(monkeypatch, fifteen, "--tags", "v0.17.0", "--db", db, "--cache-dir", cache)
    assert r.exit_code == 2 and "no release v0.17.0" in r.output and "v0.16.0, v0.25.0" in r.output


def test_which_at_a_version_without_a_release_says_so_and_its_hint_works(monkeypatch, fifteen, tmp_path):
    db, cache = tmp_path / "x.db", tmp_path / "c"
    assert (
        cli_build(
            monkeypatch, fifteen, "--tags", "v0.14.0..v0.16.0", "--db", db, "--cache-dir", cache
        ).exit_code
        == 0
    )
    r = run(monkeypatch, fifteen, f"tpindex which alpha --at v0.15.0 --db {db}")
    assert r.exit_code == 2
    assert "no source archive" in r.output and "nearest indexed: v0.14.0, v0.14.1, v0.16.0" in r.output
    assert "build" not in hint(r.output)  # nothing to index: the nearest are indexed
    ok = run(monkeypatch, fifteen, command_in(hint(r.output)))
    assert ok.exit_code == 0, ok.output


def test_which_at_a_release_not_indexed_offers_the_build_that_indexes_it(monkeypatch, fifteen, tmp_path):
    db, cache = tmp_path / "x.db", tmp_path / "c"
    assert (
        cli_build(
            monkeypatch, fifteen, "--tags", "v0.14.0..v0.16.0", "--db", db, "--cache-dir", cache
        ).exit_code
        == 0
    )
    r = run(monkeypatch, fifteen, f"tpindex which alpha --at v0.25.0 --db {db}")
    assert r.exit_code == 2 and "--tags v0.25.0" in hint(r.output)
    built = run(monkeypatch, fifteen, command_in(hint(r.output)) + f" --cache-dir {cache}")
    assert built.exit_code == 0, built.output
    assert run(monkeypatch, fifteen, f"tpindex which alpha --at v0.25.0 --db {db}").exit_code == 0
    # a version the index lists nothing of: no release, and the releases beside it not indexed to index instead
    r = run(monkeypatch, fifteen, f"tpindex which alpha --at v0.28.0 --db {db}")
    assert r.exit_code == 2 and "no release v0.28.0" in r.output and "--tags v0.31.0 " in hint(r.output)
    built = run(monkeypatch, fifteen, command_in(hint(r.output)) + f" --cache-dir {cache}")
    assert built.exit_code == 0, built.output
