"""Every option of every command is in the command's --help and in the README (issue 24): a new option
cannot land undocumented. Read from the click commands themselves, not from a list."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from indexer.cli.main import main

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def commands():
    ctx = click.Context(main)
    return [(name, main.get_command(ctx, name)) for name in main.list_commands(ctx)]


def options(cmd: click.Command) -> list[list[str]]:
    """Each visible option's spellings (--ignore-case, -i); hidden ones (benchmarking switches) are not
    documented on purpose."""
    return [
        p.opts + p.secondary_opts
        for p in cmd.params
        if isinstance(p, click.Option) and not p.hidden and "--help" not in p.opts
    ]


def named(opt: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", text) is not None


@pytest.mark.parametrize("name", [n for n, _ in commands()])
def test_every_option_is_in_help_and_in_the_readme(name):
    cmd = dict(commands())[name]
    help_text = CliRunner().invoke(main, [name, "--help"], prog_name="tpindex", terminal_width=200).output
    assert f"Usage: tpindex {name}" in help_text
    missing_help = [o for o in options(cmd) if not all(named(x, help_text) for x in o)]
    assert not missing_help, f"tpindex {name} --help does not show {missing_help}"
    missing = [o for o in options(cmd) if not any(named(x, README) for x in o)]
    assert not missing, f"the README never names {missing} (tpindex {name})"
    assert re.search(rf"tpindex {re.escape(name)}\b", README), f"the README never shows `tpindex {name}`"


def test_the_walk_sees_every_command():
    names = [n for n, _ in commands()]
    help_text = CliRunner().invoke(main, ["--help"], prog_name="tpindex", terminal_width=200).output
    listed = re.findall(r"^  ([a-z][a-z-]+)\s", help_text.split("Commands:")[1], re.M)
    assert listed == names and all(cmd is not None for _, cmd in commands())
