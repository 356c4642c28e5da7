"""``wai record``: record an eval file as a run in the local store (whileai.store.Store.record_run)."""

from __future__ import annotations

from typing import Any

import click

from whileai.cli._options import ROWS_HELP, json_option, rows_argument, store_option
from whileai.cli._output import emit


@click.command()
@rows_argument()
@click.option("--agent", required=True, help="The agent the eval ran (recorded as the run's name).")
@click.option("--version", "version", required=True, help="The agent version that produced the rows (the run's policy).")
@click.option("--judge", default=None, help="The judge (default: read off the rows).")
@click.option("--save-as", default=None, metavar="NAME",
              help="Also save the rows as dataset NAME (purpose eval), so wai records diff pairs them by task.")
@store_option
@json_option
def record(file: Any, agent: str, version: str, judge: str | None, save_as: str | None, store_path: str | None,
           as_json: bool) -> None:
    """Record FILE (an inspect, lm-eval, vf-eval or whileai eval) as a run: pass rates with intervals.

    The run joins the same history as runs recorded from Python (wai records list, wai records diff).
    It is recorded in the local store; a server is not contacted.
    """
    from whileai import store
    from whileai.errors import ArgumentError

    if not version.strip():  # an empty policy would be read from the rows instead
        raise ArgumentError(f"--version must name the agent version that produced the rows, got {version!r}. "
                            "Pass --version v1, for example.", argument="version")
    meta = {"agent": agent, "version": version}
    if isinstance(file, str):  # one path (several, or --map/--scorer, arrive as the table read from them)
        meta["source"] = file
    info = store.open(store_path).record_run(file, name=agent, policy=version, judge=judge, save_as=save_as, meta=meta)
    emit(info, as_json)


record.help = f"{record.help}\n\n{ROWS_HELP}"
