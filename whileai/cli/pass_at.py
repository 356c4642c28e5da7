"""``wai pass-at``: pass@1, pass^k and pass@k with intervals over tasks (whileai.measure.pass_at)."""

from __future__ import annotations

from typing import Any

import click

from whileai.cli._options import ROWS_HELP, engine_option, json_option, rows_argument
from whileai.cli._output import emit, report_stream, writes_stdout
from whileai.cli._rows import engine_rows, source_words
from whileai.defaults import MIN_K


@click.command("pass-at")
@rows_argument()
@click.option("--k", type=click.IntRange(min=1), default=None,
              help="Rollouts per task for pass^k and pass@k (default: the smallest group, reported when it has "
                   "at least --min-k rollouts; pass --k 3 to report a smaller k).")
@click.option("--min-k", type=click.IntRange(min=1), default=MIN_K, show_default=True,
              help="With k read off the rows, report pass^k and pass@k only from this many rollouts per task up.")
@click.option("--table", "as_table", is_flag=True, help="Print the metric table with what each number says.")
@click.option("-o", "--output", default=None, metavar="FILE",
              help="Also write the per-task table (task, rollouts, passes, pass rate) to FILE: .csv, .json, .jsonl "
                   "or .parquet; - writes it to stdout as JSONL and the report to stderr.")
@engine_option
@json_option
def pass_at(file: Any, k: int | None, min_k: int, as_table: bool, output: str | None, engine: str, as_json: bool) -> None:
    """pass@1 with its 95% interval over tasks, pass^k and pass@k with theirs, and headroom."""
    from whileai.errors import EmptyInputError
    from whileai.measure import pass_at as measure
    from whileai.table import frame_format, write_frame

    if output is not None:
        frame_format(output)  # an unknown suffix is refused before any work
    report = measure(engine_rows(file, engine), k=k, min_k=min_k)
    if report.n_rows == 0:
        raise EmptyInputError(f"{source_words(file)} must hold graded rollouts, got no rows. Check the path, or run the eval "
                              "that should have filled it.", source=file)
    if output is not None:
        write_frame(report.per_task, output)
    if as_table and not as_json:
        to_stderr = writes_stdout(output)
        click.echo(report.table(style="text"), file=None if to_stderr else report_stream(), err=to_stderr)
    else:
        emit(report, as_json, output=output)


pass_at.help = f"{pass_at.help}\n\n{ROWS_HELP}"

