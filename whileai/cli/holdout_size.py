"""``wai holdout-size``: paired tasks a holdout needs to prove a gain (whileai.measure.holdout_size)."""

from __future__ import annotations

import click

from whileai.cli._options import json_option
from whileai.cli._output import emit
from whileai.defaults import BASE_PASS_RATE, HOLDOUT_EFFECT


@click.command("holdout-size")
@click.option("--effect", type=float, default=HOLDOUT_EFFECT, show_default=True,
              help="The gain in pass rate to prove (0.05 = 5 points).")
@click.option("--base", type=float, default=BASE_PASS_RATE, show_default=True, help="The baseline pass rate.")
@click.option("--k", type=click.IntRange(min=1), default=None, help="Rollouts per task on each side.")
@click.option("--before", default=None, metavar="FILE", help="A previous eval's baseline rows: size from measured spread.")
@click.option("--after", default=None, metavar="FILE", help="With --before: the same tasks after a change (paired sd).")
@json_option
def holdout_size(effect: float, base: float, k: int | None, before: str | None, after: str | None,
                 as_json: bool) -> None:
    """Paired tasks a holdout needs to prove a gain of EFFECT at 80% power."""
    from whileai.measure import holdout_size as size

    emit(size(effect, base=base, k=k, before=before, after=after), as_json)
