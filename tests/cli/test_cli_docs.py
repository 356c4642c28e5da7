"""docs/cli.md documents every ``wai`` command and subcommand: the click group, walked, against the page."""

from __future__ import annotations

import re
from pathlib import Path

import click

from whileai.cli.main import cli

PAGE = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def _commands(group: click.Group, prefix: str, ctx: click.Context) -> list[str]:
    """Every visible command under ``group`` as the words a person types (``wai keys list``)."""
    found = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        found.append(f"{prefix} {name}")
        if isinstance(command, click.Group):
            found += _commands(command, f"{prefix} {name}", click.Context(command, parent=ctx))
    return found


COMMANDS = _commands(cli, "wai", click.Context(cli))


def test_the_walk_finds_groups_and_their_subcommands():
    assert {"wai select", "wai runs", "wai runs promote", "wai keys revoke"} <= set(COMMANDS)


def test_every_command_has_a_heading_or_a_table_row_on_the_page():
    # where a command is documented: a heading, or the first cell of a table row, naming it in code
    places = [line for line in PAGE.read_text(encoding="utf-8").splitlines() if line.startswith(("#", "| `"))]
    missing = [c for c in COMMANDS if not any(re.search(f"`{re.escape(c)}(?=[ `])", line) for line in places)]
    assert not missing, f"docs/cli.md documents no {missing}: add a heading or a table row for each"
