"""``wai export``: training rows for a trainer (whileai.exporters.export_dataset)."""

from __future__ import annotations

from typing import Any

import click

from whileai.cli._options import ROWS_HELP, engine_option, json_option, rows_argument
from whileai.cli._output import check_output, emit
from whileai.cli._rows import engine_rows
from whileai.defaults import EXPORT_FORMAT, EXPORT_MASK_MODE


@click.command()
@rows_argument()
@click.option("-o", "--output", required=True, type=str,
              help="Where to write the training rows (.jsonl, .jsonl.gz or .parquet, or - for stdout), atomically; "
                   "a new folder of JSONL part files with --engine ray.")
@click.option("--format", "format_", type=click.Choice(["openai", "trl"]), default=EXPORT_FORMAT, show_default=True,
              help="openai: messages with a loss_mask; trl: what TRL's chat-template helpers accept.")
@click.option("--mask-mode", type=click.Choice(["assistant", "final"]), default=EXPORT_MASK_MODE, show_default=True,
              help="Train on every agent turn, or only the final reply.")
@click.option("--unroll", is_flag=True, help="One training row per agent turn.")
@click.option("--no-validate", "no_validate", is_flag=True,
              help="Write rows whose reply quotes their own privileged context instead of refusing them "
                   "(the report still counts them).")
@engine_option
@json_option
def export(file: Any, output: str, format_: str, mask_mode: str, unroll: bool, no_validate: bool, engine: str,
           as_json: bool) -> None:
    """Write FILE's rollouts as training rows to OUTPUT, with loss masks and group stats."""
    from whileai.exporters import export_dataset

    if engine != "ray":
        check_output(output)
    emit(export_dataset(engine_rows(file, engine), output, format=format_, mask_mode=mask_mode, unroll=unroll,  # type: ignore[arg-type]
                        validate=not no_validate), as_json, output=output)


export.help = f"{export.help}\n\n{ROWS_HELP}"
