"""``wai inspect``: what is in a rollout file (whileai.store.describe)."""

from __future__ import annotations

from typing import Any

import click

from whileai.cli._options import ROWS_HELP, json_option, rows_argument
from whileai.cli._output import emit


@click.command()
@rows_argument()
@json_option
def inspect(file: Any, as_json: bool) -> None:
    """Rows, tasks, k, graded share, columns, markers, and pass@1 with its 95% interval."""
    from whileai.store import describe

    emit(describe(file), as_json)


inspect.help = f"{inspect.help}\n\n{ROWS_HELP}"
