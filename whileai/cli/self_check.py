"""``wai self-check``: the statistics checked by simulation (whileai.measure.self_check)."""

from __future__ import annotations

import click

from whileai.cli._options import json_option
from whileai.cli._output import emit
from whileai.defaults import SELF_CHECK_FULL_TRIALS, SELF_CHECK_SEED, SELF_CHECK_TRIALS


@click.command("self-check")
@click.option("--trials", type=click.IntRange(min=1), default=SELF_CHECK_TRIALS, show_default=True,
              help="Simulated evaluations per check.")
@click.option("--full", is_flag=True, help=f"{SELF_CHECK_FULL_TRIALS} trials per check: a reading worth quoting.")
@click.option("--seed", type=int, default=SELF_CHECK_SEED, show_default=True, help="Seed of the simulation.")
@json_option
@click.pass_context
def self_check(ctx: click.Context, trials: int, full: bool, seed: int, as_json: bool) -> None:
    """False alarms, interval coverage and power on scripted arms with known truth; exit 1 if a check is off."""
    from whileai.measure import self_check as check

    report = check(trials=SELF_CHECK_FULL_TRIALS if full else trials, seed=seed)
    emit(report, as_json)
    ctx.exit(1 if report.n_flagged else 0)
