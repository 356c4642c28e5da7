"""``delta_report`` (``wai.compare``): before against after, run as named phases.

Check the arguments (``_delta_args``), read both arms down to per-task values (``_delta_sides``),
compare every metric against the eval's re-run noise band (``_delta_compare``), settle whether the
arms compare and the headline (``_delta_verdict``), size what these tasks detect and what would
resolve a NO DIFFERENCE (``_delta_sizing``), then the by-group table and the warnings that
qualify the reading. :func:`delta_from_sides` is the kernel every engine shares (local rows, a
streamed Parquet arm, a Ray dataset's merged sums; ``docs/scale.md``); the report it fills is
``_delta``'s :class:`DeltaReport`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from whileai.defaults import (
    BOOTSTRAP_DRAWS,
    CEILING_PASS_RATE,
    CI_LEVEL,
    COMPARE_CI_METHOD,
    DEFAULT_SEED,
    MIN_PAIRED_TASKS,
    PERMUTATION_DRAWS,
    POWER,
)
from whileai.measure._compare import CompareMethod
from whileai.measure._delta import DeltaReport
from whileai.measure._delta_args import DeltaOptions, delta_options
from whileai.measure._delta_compare import by_groups, compared_report
from whileai.measure._delta_sides import DeltaSides, read_sides
from whileai.measure._delta_sizing import size_report
from whileai.measure._delta_verdict import config_warnings, movement_warnings, settle_verdict
from whileai.measure._variance import EvalVarianceReport
from whileai.table import IntoRows

__all__ = ["delta_from_sides", "delta_report"]


def delta_report(before: IntoRows, after: IntoRows, *, target: str | None = None, must_not_regress: Sequence[str] = (),
                 markers: Sequence[str] | None = None, by: str | Callable[[dict[str, Any]], Any] | None = None,
                 run_std: float | Mapping[str, float] | EvalVarianceReport | None = None,
                 run_std_runs: int | None = None, balance_rollouts: bool = False, level: float = CI_LEVEL,
                 power: float = POWER, ci_method: CompareMethod = COMPARE_CI_METHOD,
                 n_boot: int = BOOTSTRAP_DRAWS, n_perm: int = PERMUTATION_DRAWS,
                 ceiling_pass_rate: float = CEILING_PASS_RATE, min_paired: int = MIN_PAIRED_TASKS,
                 seed: int | np.random.Generator | None = DEFAULT_SEED) -> DeltaReport:
    """Before against after: pass@1 and every shared marker compared on paired tasks, with a verdict.

    Each metric runs the ``compare_runs`` comparison (per-task values paired by task_key, the MOVER
    interval from each side's clustered score interval, Zou and Donner 2008, Statistics in Medicine
    27:1693, or the Student-t interval on the paired differences with ``ci_method="t"``, and the
    exact sign-flip test; Miller 2024, arXiv:2411.00640, section 4). The test decides; its verdict word reads the test against the
    eval's own re-run band (docs/measure.md, "delta_report (and compare)" and "Run the eval three
    times"): ``moved`` (the test rejects and the delta clears the band), ``moved_unreplicated``
    (rejects, but one eval run a side and no run_std), ``within_eval_noise`` (rejects, inside the
    band: equivalence, not a win), ``no_change_detected`` (the test does not reject). When the
    printed interval reads otherwise (at few tasks it can exclude zero while the exact test cannot
    reject), the metric's line says so and that the test decides. The band is
    q x run_std x sqrt(1/n_before + 1/n_after) with q the t quantile at the run_std's degrees of
    freedom; rows carrying ``lineage.eval_run`` give run_std themselves (pooled over both sides,
    df = runs - 2 in all); a bare ``run_std=`` keeps 1.96 and warns. The first printed line is
    PASS (the target moved up), NO DIFFERENCE (the test does not reject, or inside the band), FAIL
    (the target moved down, or a ``must_not_regress`` metric dropped significantly) or
    NOT COMPARABLE (causes) when under half the tasks pair, a side is ungraded, or too few tasks.

    Args:
        before: The baseline rows.
        after: The rows after the change, on the same tasks.
        target: The metric the change was meant to move (default ``pass_at_1``).
        must_not_regress: Metrics whose significant drop fails the report (markers: 1.0 is good).
        markers: Compare only these markers (default every marker both sides carry).
        by: A row key, a marker, or a callable on a row dict that groups rows; the target is
            compared within each group and ``groups_down`` names groups that dropped.
        run_std: The eval's re-run sd: a number (for the target), a dict per metric, or an
            :class:`EvalVarianceReport`.
        run_std_runs: The re-runs run_std came from; the band then uses t at runs - 1 df.
        balance_rollouts: Trim every paired task to the rollouts both sides have (drawn by seed).
        level: Confidence level (``CI_LEVEL``).
        power: Power for the sizing line (``POWER``).
        ci_method: ``"sign_flip"`` (default, ``COMPARE_CI_METHOD``), ``"score"``, ``"t"``, ``"percentile"`` or ``"bca"``.
        n_boot: Bootstrap draws for a bootstrap ``ci_method``.
        n_perm: Monte Carlo sign flips when the exact test is too large.
        ceiling_pass_rate: A before pass@1 at or above this sets ``ceiling`` (``CEILING_PASS_RATE``).
        min_paired: Fewest shared tasks for a paired comparison (``MIN_PAIRED_TASKS``).
        seed: Seed or Generator.

    Returns:
        A :class:`DeltaReport`; ``print`` gives :func:`format_delta_report`.

    Raises:
        ArgumentError: An option outside its allowed values, or a target / guard neither side measures.
        SchemaError: A reward outside [0, 1] or not a number.

    Examples:
        >>> a = [{"task_id": f"t{i}", "reward": r} for i in range(8) for r in (0, 1, 0, 0)]
        >>> b = [{"task_id": f"t{i}", "reward": r} for i in range(8) for r in (1, 1, 1, 0)]
        >>> delta_report(a, b).headline
        'PASS (UNREPLICATED: one eval run a side and no noise floor, so this could be eval noise)'
    """
    opts = delta_options(target=target, must_not_regress=must_not_regress, markers=markers, by=by, run_std=run_std,
                         run_std_runs=run_std_runs, balance_rollouts=balance_rollouts, level=level, power=power,
                         ci_method=ci_method, n_boot=n_boot, n_perm=n_perm, ceiling_pass_rate=ceiling_pass_rate,
                         min_paired=min_paired, seed=seed)
    warnings: list[str] = []
    sides = read_sides(before, after, opts, warnings)
    return delta_from_sides(sides, opts, warnings)


def delta_from_sides(sides: DeltaSides, opts: DeltaOptions, warnings: list[str]) -> DeltaReport:
    """The :func:`delta_report` report from each arm's :class:`DeltaSide` (the kernel both engines share).

    ``by=`` groups need the rows themselves (``sides.frames``); the Ray engine refuses ``by=`` up front.
    """
    report = compared_report(sides, opts, warnings)
    settle_verdict(report, sides.a, sides.b, opts.guards, warnings)
    size_report(report, sides.a.values, power=opts.power, level=opts.level, ceiling_pass_rate=opts.ceiling_pass_rate,
                warnings=warnings)
    config_warnings(report, warnings)
    by_groups(report, sides, opts, warnings)
    movement_warnings(report, target_name=sides.target_name, guards=opts.guards, warnings=warnings)
    report.warnings = warnings
    return report
