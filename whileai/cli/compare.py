"""``wai compare``: the before/after delta report, with an exit status for CI (whileai.measure.delta_report)."""

from __future__ import annotations

from typing import Any

import click

from whileai.cli._exits import EXIT_INTERNAL, EXIT_NOT_COMPARABLE, EXIT_PASS, EXIT_REFUSED
from whileai.cli._options import engine_option, json_option, read_options
from whileai.cli._output import emit
from whileai.cli._rows import engine_rows, ray_paths, read_rows, rows_source
from whileai.defaults import DEFAULT_SEED

#: Exit status by the report's first printed line (docs/cli.md, "wai compare").
EXIT_BY_HEADLINE = {"PASS": EXIT_PASS, "NO DIFFERENCE": EXIT_PASS, "FAIL": EXIT_REFUSED,
                    "NOT COMPARABLE": EXIT_NOT_COMPARABLE}


def exit_status(headline: str) -> int:
    """0 for PASS or NO DIFFERENCE, 1 for FAIL, 3 for NOT COMPARABLE, 4 for a headline it does not know (a bug)."""
    return next((code for word, code in EXIT_BY_HEADLINE.items() if headline.startswith(word)), EXIT_INTERNAL)


@click.command()
@click.argument("before", metavar="BEFORE")
@click.argument("after", metavar="AFTER")
@click.option("--target", default=None, metavar="METRIC", help="The metric the change was meant to move (default pass_at_1).")
@click.option("--must-not-regress", multiple=True, metavar="METRIC",
              help="A metric (a marker name) whose significant drop fails the report; repeatable.")
@click.option("--by", default=None, metavar="KEY", help="Also compare the target within each group of this row key or marker.")
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Seed of the permutation test.")
@read_options
@engine_option
@json_option
@click.pass_context
def compare(ctx: click.Context, before: Any, after: Any, target: str | None, must_not_regress: tuple[str, ...],
            by: str | None, seed: int, mapping: tuple[str, ...], scorer: str | None, shape: str | None, engine: str,
            as_json: bool) -> None:
    """Did the change help? Pairs BEFORE and AFTER by task and prints the verdict.

    Exit status: 0 on PASS or NO DIFFERENCE, 1 on FAIL, 3 on NOT COMPARABLE, 2 on bad input.
    BEFORE and AFTER are anything FILE is for the other commands (a folder of logs too);
    --map, --scorer and --shape apply to both.
    """
    from whileai.errors import ArgumentError
    from whileai.measure import delta_report

    if before == "-" and after == "-":
        raise ArgumentError("BEFORE and AFTER must not both be - (stdin can be read only once), got - -. Save one "
                            "side to a file: wai compare before.jsonl -", argument="after", value="-")
    if engine == "ray":  # both arms as Ray datasets: each arm's sums merged on Ray (docs/scale.md)
        before = engine_rows(ray_paths([before], mapping, scorer, shape), engine)
        after = engine_rows(ray_paths([after], mapping, scorer, shape), engine)
    else:
        before, after = rows_source([before], mapping, scorer, shape), rows_source([after], mapping, scorer, shape)
    if by is not None and engine != "ray":  # a path is read narrowly (measure's columns only); --by needs its grouping column too
        before, after = read_rows(before), read_rows(after)
    report = delta_report(before, after, target=target, must_not_regress=list(must_not_regress), by=by,
                          seed=seed)
    emit(report, as_json)
    ctx.exit(exit_status(str(report).splitlines()[0] if str(report) else ""))
