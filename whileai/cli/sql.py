"""``wai sql``: SQL over the local store, read-only (whileai.store.Store.sql)."""

from __future__ import annotations

import click

from whileai.cli._options import store_option


@click.command()
@click.argument("query")
@click.option("--format", "format_", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True,
              help="How to print the answer: an aligned table, CSV, or a JSON array of rows.")
@click.option("-o", "--output", default=None, metavar="FILE",
              help="Write the answer to FILE instead (.csv, .json, .jsonl or .parquet), atomically; - writes it to "
                   "stdout as JSONL.")
@store_option
def sql(query: str, format_: str, output: str | None, store_path: str | None) -> None:
    """Run QUERY against the store on a read-only connection and print the answer.

    Tables: datasets, runs, eval_sets, eval_set_tasks; a dataset's rows are dataset_rows('name')
    (or 'name@version'), read straight from its Parquet file wherever you run wai from, and
    dataset_files lists each version's Parquet file as an absolute path.
    """
    import polars as pl

    from whileai import store
    from whileai.table import frame_format, write_frame

    if output is not None:
        frame_format(output)  # an unknown suffix is refused before the query runs
    answer = store.open(store_path).sql(query)
    if output is not None:
        write_frame(answer, output)
    elif format_ == "csv":
        click.echo(answer.write_csv(), nl=False)
    elif format_ == "json":
        click.echo(answer.write_json())
    else:
        with pl.Config(tbl_rows=-1, tbl_cols=-1, fmt_str_lengths=80, tbl_hide_dataframe_shape=True):
            click.echo(str(answer))
