"""``wai hack-scan``: what the reward tracks within ask (whileai.guard.hack_scan)."""

from __future__ import annotations

from typing import Any

import click

from whileai.cli._options import ROWS_HELP, engine_option, json_option, rows_argument
from whileai.cli._output import emit
from whileai.cli._rows import engine_rows, read_rows
from whileai.defaults import DEFAULT_SEED


@click.command("hack-scan")
@rows_argument()
@click.option("--endorsed", multiple=True, metavar="FEATURE",
              help="A feature the reward should track (substring of a feature name); repeatable.")
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Seed of the shuffle floor.")
@engine_option
@json_option
def hack_scan(file: Any, endorsed: tuple[str, ...], seed: int, engine: str, as_json: bool) -> None:
    """Rank what the reward tracks within ask against a shuffle floor."""
    from whileai.guard import HACK_SCAN_COLUMNS
    from whileai.guard import hack_scan as scan

    rows = engine_rows(file, engine) if engine == "ray" else read_rows(file, columns=[*HACK_SCAN_COLUMNS, "reward"])
    emit(scan(rows, endorsed=list(endorsed) or None, seed=seed), as_json)


hack_scan.help = f"{hack_scan.help}\n\n{ROWS_HELP}"
