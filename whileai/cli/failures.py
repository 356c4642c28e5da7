"""``wai failures``: where the agent fails, per group (whileai.measure.failure_table)."""

from __future__ import annotations

from typing import Any

import click

from whileai.cli._options import ROWS_HELP, json_option, rows_argument
from whileai.cli._output import emit
from whileai.defaults import FAILURE_BY


@click.command("failures")
@rows_argument()
@click.option("--by", "by", multiple=True, default=FAILURE_BY, show_default=True,
              help="A column, tools_used or a marker to group on; repeat for several dimensions.")
@click.option("-o", "--output", default=None, metavar="FILE",
              help="Also write the table, one row per group, to FILE: .csv, .json, .jsonl or .parquet; - writes it to "
                   "stdout as JSONL and the report to stderr.")
@json_option
def failures(file: str, by: tuple[str, ...], output: str | None, as_json: bool) -> None:
    """Per group: pass rate with its interval, tasks, rows, share of failures, and a below-the-rest flag."""
    from whileai.measure import failure_table
    from whileai.table import frame_format, write_frame

    if output is not None:
        frame_format(output)  # an unknown suffix is refused before any work
    report = failure_table(file, by=by)
    if output is not None:
        write_frame(_groups_frame(report.groups), output)
    emit(report, as_json, output=output)


failures.help = f"{failures.help}\n\n{ROWS_HELP}"


def _groups_frame(groups: list[Any]) -> Any:
    """One row per group: the group's fields, the interval as two columns, a column per marker."""
    import polars as pl

    rows = []
    for g in groups:
        low, high = g.ci95 if g.ci95 is not None else (None, None)
        rows.append({**g.model_dump(exclude={"ci95", "markers"}), "ci95_low": low, "ci95_high": high,
                     **{f"marker.{k}": v for k, v in g.markers.items()}})
    return pl.DataFrame(rows, infer_schema_length=None)
