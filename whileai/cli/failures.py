"""``wai failures``: where the agent fails, per group (whileai.measure.failure_table)."""

from __future__ import annotations

import click

from whileai.cli._common import ROWS_HELP, emit, json_option, rows_argument
from whileai.defaults import FAILURE_BY


@click.command("failures")
@rows_argument()
@click.option("--by", "by", multiple=True, default=FAILURE_BY, show_default=True,
              help="A column, tools_used or a marker to group on; repeat for several dimensions.")
@json_option
def failures(file: str, by: tuple[str, ...], as_json: bool) -> None:
    """Per group: pass rate with its interval, tasks, rows, share of failures, and a below-the-rest flag."""
    from whileai.measure import failure_table

    emit(failure_table(file, by=by), as_json)


failures.help = f"{failures.help}\n\n{ROWS_HELP}"
