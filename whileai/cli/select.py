"""``wai select``: keep the rows that carry training signal (whileai.selection.optimize)."""

from __future__ import annotations

from typing import Any, Literal

import click

from whileai.cli._options import ROWS_HELP, engine_option, json_option, rows_argument
from whileai.cli._output import check_output, emit
from whileai.cli._rows import engine_rows
from whileai.defaults import SELECT_TARGET


@click.command()
@rows_argument()
@click.option("--mode", type=click.Choice(["rl", "sft"]), required=True,
              help="rl: the difficulty band and whole groups; sft: rejection sampling.")
@click.option("-o", "--output", required=True, type=str,
              help="Where to write the kept rows (.jsonl, .jsonl.gz or .parquet, or - for stdout), atomically; "
                   "a new folder of Parquet files with --engine ray.")
@click.option("--target", type=click.IntRange(min=0), default=SELECT_TARGET, show_default=True,
              help="Most rows to keep; 0 keeps every eligible group (rl only).")
@click.option("--endorsed", multiple=True, metavar="FEATURE",
              help="rl only: run the hack scan with this endorsed feature; repeatable.")
@engine_option
@json_option
def select(file: Any, mode: Literal["rl", "sft"], output: str, target: int, endorsed: tuple[str, ...], engine: str,
           as_json: bool) -> None:
    """Keep the rows that carry training signal and write them to OUTPUT; print what was dropped."""
    # select's door with the options as one mapping (wai.select's overloads name them one by one)
    from whileai.data import optimize
    from whileai.errors import ArgumentError

    if engine == "ray":  # the workers write OUTPUT as a Parquet folder; no row comes here
        result = optimize(engine_rows(file, engine), mode=mode, out=output, target=target or None,
                          **({"endorsed": list(endorsed)} if endorsed else {}))
        emit(result.report, as_json, output=result.path)  # type: ignore[attr-defined]
        return
    check_output(output)
    if mode == "sft" and target == 0:
        raise ArgumentError("--target must be at least 1 with --mode sft (0 means every eligible group, which only "
                            "--mode rl has), got 0. Pass --target 1000 for example.", argument="target", value=0)
    options = {"endorsed": list(endorsed)} if endorsed else {}
    selection = optimize(file, mode=mode, target=target or None, **options)
    selection.write(output)
    emit(selection.report, as_json, output=output)


select.help = f"{select.help}\n\n{ROWS_HELP}"
