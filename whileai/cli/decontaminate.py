"""``wai decontaminate``: drop training rows that copy an eval set (whileai.guard.decontaminate)."""

from __future__ import annotations

from typing import Any, Literal

import click

from whileai.cli._options import ROWS_HELP, engine_option, json_option, rows_argument
from whileai.cli._output import check_output, emit
from whileai.cli._rows import engine_rows, read_rows
from whileai.defaults import DECONTAM_NEAR


@click.command()
@rows_argument()
@click.option("--eval", "evals", multiple=True, required=True, metavar="EVAL",
              help="An eval file (JSONL or Parquet) to check against; repeatable.")
@click.option("-o", "--output", default=None, type=str,
              help="Where to write the clean rows (.jsonl, .jsonl.gz or .parquet, or - for stdout), atomically; "
                   "a new folder of Parquet files with --engine ray. Without it, only the report is printed.")
@click.option("--field", "fields", multiple=True, metavar="FIELD",
              help="A row field checked against the eval texts (default: prompt); repeatable.")
@click.option("--near", type=click.Choice(["template", "eval_cover"]), default=DECONTAM_NEAR, show_default=True,
              help="The near-copy rule: template (8-grams may differ in one word; the row must reproduce the eval "
                   "text's slot words, so distinct tasks of one template are kept) or eval_cover (the earlier rule: "
                   "exact 8-grams only).")
@engine_option
@json_option
def decontaminate(file: Any, evals: tuple[str, ...], output: str | None, fields: tuple[str, ...],
                  near: Literal["template", "eval_cover"],
                  engine: str, as_json: bool) -> None:
    """Drop rows sharing a task, an exact text or 8-grams covering most of an EVAL text; write the rest."""
    from whileai import table
    from whileai.guard import decontaminate as clean_rows

    if output is None and engine == "ray":
        raise click.UsageError("--engine ray needs -o OUTPUT, a new folder: the workers write the clean rows there.")
    if output is None:  # the report alone: how much of FILE overlaps EVAL
        emit(clean_rows(read_rows(file), eval=list(evals), fields=list(fields) or ("prompt",), near=near).report,
             as_json)
        click.echo("No -o given: the clean rows were not written.", err=True)
        return
    if engine == "ray":  # the workers write OUTPUT as a Parquet folder; no row comes here
        path, report = clean_rows(engine_rows(file, engine), eval=list(evals), fields=list(fields) or ("prompt",),
                                  near=near, out=output)
        emit(report, as_json, output=path)
        return
    check_output(output)
    clean, report = clean_rows(read_rows(file), eval=list(evals), fields=list(fields) or ("prompt",), near=near)
    table.write(clean, output)
    emit(report, as_json, output=output)


decontaminate.help = f"{decontaminate.help}\n\n{ROWS_HELP}"
