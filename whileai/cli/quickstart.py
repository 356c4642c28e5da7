"""``wai quickstart``: the offline loop end to end (whileai.simulation.quickstart), recorded in the store."""

from __future__ import annotations

import json

import click

from whileai.cli._options import store_option
from whileai.defaults import DEFAULT_SEED


@click.command()
@click.option("-o", "--out", default="train.jsonl", show_default=True, type=click.Path(dir_okay=False),
              help="Where the selected training rows go.")
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Seed of the situations and the agent.")
@store_option
@click.option("--json", "as_json", is_flag=True, help="Print what happened as JSON.")
def quickstart(out: str, seed: int, store_path: str | None, as_json: bool) -> None:
    """Simulate, grade, measure, select and export offline, then record the run in the local store."""
    from whileai import store
    from whileai._loop import quickstart as loop

    result = loop(out=out, seed=seed)
    run = store.open(store_path).record_run(report=result["pass_at"], name="quickstart", seed=seed,
                                            meta={"out": result["out"], "selected": result["selected"]})
    if as_json:
        keep = {k: v for k, v in result.items() if k in ("line", "rows", "tasks", "selected", "out", "elapsed_s")}
        click.echo(json.dumps({**keep, "run": run.id}, indent=2))
        return
    click.echo(result["printed"])
    click.echo(f"kept {result['selected']:,} of {result['rows']:,} rows ({result['tasks']:,} tasks) -> {result['out']}")
    click.echo(f"recorded run {run.id} in {store.open(store_path).path} ({result['elapsed_s']:.1f} s)")
