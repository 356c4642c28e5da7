"""``delta_report``'s arguments, checked once: :class:`DeltaOptions` and :func:`delta_options`.

Each option is checked in the order the signature gives it (level, power, ci_method, the draw
counts, min_paired, ceiling_pass_rate, balance_rollouts, the guard and marker names, target, by,
run_std, seed), each refusal an ``ArgumentError`` saying what was wrong and what to pass; a
``run_std`` (a number, a dict per metric, or an ``EvalVarianceReport``) becomes a dict keyed by
metric (None: the target) and the re-runs behind it, and the seed becomes one Generator that
every later draw reads in turn. The phases after this read only the checked options.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

from whileai._checks import check_choice, check_int
from whileai.errors import ArgumentError
from whileai.measure._args import check_level, check_probability
from whileai.measure._compare import COMPARE_CI_METHODS
from whileai.measure._metrics import metric_label
from whileai.measure._variance import EvalVarianceReport
from whileai.stats.rng import check_rng


class DeltaOptions(NamedTuple):
    """``delta_report``'s options once checked: what the reading, comparing and sizing phases use."""

    target: str | None
    """The target as given (None: pass_at_1)."""
    guards: list[str]
    """``must_not_regress`` as metric names."""
    wanted_markers: list[str] | None
    """``markers`` as metric names (None: every shared marker)."""
    by: str | Callable[[dict[str, Any]], Any] | None
    balance_rollouts: bool
    given_std: dict[str | None, float] | None
    """The given run_std by metric (None: the target); None when not given."""
    given_runs: int | None
    """The re-runs behind the given run_std."""
    level: float
    power: float
    ci_method: str
    n_boot: int
    n_perm: int
    ceiling_pass_rate: float
    min_paired: int
    rng: np.random.Generator


def delta_options(*, target: Any, must_not_regress: Any, markers: Any, by: Any, run_std: Any, run_std_runs: Any,
                  balance_rollouts: Any, level: Any, power: Any, ci_method: Any, n_boot: Any, n_perm: Any,
                  ceiling_pass_rate: Any, min_paired: Any, seed: Any) -> DeltaOptions:
    """``delta_report``'s keyword arguments checked, in order; raises ``ArgumentError`` on the first bad one."""
    level = check_level(level)
    power = check_probability("power", power)
    check_choice("ci_method", ci_method, COMPARE_CI_METHODS)
    check_int("n_boot", n_boot)
    check_int("n_perm", n_perm)
    check_int("min_paired", min_paired, minimum=2)
    ceiling_pass_rate = check_probability("ceiling_pass_rate", ceiling_pass_rate, open_high=False)
    if not isinstance(balance_rollouts, bool):
        raise ArgumentError(f"balance_rollouts must be True or False, got {balance_rollouts!r}. Pass balance_rollouts=True.")
    guards = _names("must_not_regress", must_not_regress)
    wanted_markers = None if markers is None else _names("markers", markers)
    if target is not None and (not isinstance(target, str) or not target):
        raise ArgumentError(f"target must be a metric name such as 'pass_at_1', got {target!r}. Pass target='pass_at_1'.")
    if by is not None and not (isinstance(by, str) or callable(by)):
        raise ArgumentError(f"by must be a row key, a marker name or a callable on a row, got {by!r}. Pass by='tier'.")
    given_std, given_runs = _check_run_std(run_std, run_std_runs)
    return DeltaOptions(target=target, guards=guards, wanted_markers=wanted_markers, by=by,
                        balance_rollouts=balance_rollouts, given_std=given_std, given_runs=given_runs, level=level,
                        power=power, ci_method=ci_method, n_boot=n_boot, n_perm=n_perm,
                        ceiling_pass_rate=ceiling_pass_rate, min_paired=min_paired, rng=check_rng(seed))


def _names(what: str, value: Any) -> list[str]:
    if isinstance(value, str):
        value = [value]
    try:
        names = list(value)
    except TypeError:
        raise ArgumentError(f"{what} must be a list of metric names, got {value!r}. Pass {what}=['pass_at_1'].") from None
    bad = [n for n in names if not isinstance(n, str) or not n]
    if bad:
        raise ArgumentError(f"{what} must be a list of metric names, got {bad[0]!r} in it. Pass names such as 'honest_claims'.")
    return [metric_label(n) for n in names]


def _check_run_std(run_std: Any, runs: Any) -> tuple[dict[str | None, float] | None, int | None]:
    if runs is not None:
        runs = check_int("run_std_runs", runs, minimum=2)
    if run_std is None:
        if runs is not None:
            raise ArgumentError(f"run_std_runs needs run_std, got run_std_runs={runs!r} alone. "
                                "Pass run_std= from eval_variance too.")
        return None, None
    if isinstance(run_std, EvalVarianceReport):
        std: dict[str | None, float] = {k: v for k, v in run_std.run_std_by_metric.items() if math.isfinite(v)}
        if not std:
            raise ArgumentError(f"run_std must carry a run_std, got an eval_variance report over {run_std.n_runs} run(s). "
                                "Pass three or more re-runs to eval_variance.")
        return std, runs if runs is not None else run_std.n_runs
    items: dict[str | None, Any] = dict(run_std) if isinstance(run_std, Mapping) else {None: run_std}
    for key, value in items.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise ArgumentError(f"run_std must be a number >= 0 (or a dict of them), got {value!r}"
                                f"{'' if key is None else f' for {key!r}'}. Pass eval_variance(...).run_std.")
    return {k: float(v) for k, v in items.items()}, runs

