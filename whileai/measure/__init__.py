"""Measure: pass rates with intervals over tasks, paired comparison, noise and sizing.

``pass_at`` (pass@1, pass^k, pass@k with intervals over tasks), ``compare_runs`` (paired by task,
an interval and a sign-flip p-value), ``delta_report`` (``wai.compare``) and ``format_delta_report``
(the before/after verdict), ``eval_variance`` and ``noise_band`` (the eval's own re-run noise),
``holdout_size`` and ``detectable_effect`` (sizing), ``metric_summary`` and ``marker_summary``,
``failure_table`` (where the agent fails, by group), ``self_check`` (the statistics checked by
simulation), ``task_stats`` (the one group-by) and ``group_stats`` (a grouped trainer's k,
n0/n1 and reward spread per task).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from whileai._lazy import exports

#: Submodule -> the public names it defines; each loads on first use (whileai/_lazy.py).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "whileai.measure._compare": ("Comparison", "compare_runs"),
    "whileai.measure._delta": ("DeltaReport", "delta_report", "format_delta_report"),
    "whileai.measure._failures": ("FailureGroup", "FailureTable", "failure_table"),
    "whileai.measure._holdout": ("HoldoutSizeReport", "detectable_effect", "holdout_size"),
    "whileai.measure._holdout_block": ("HOLDOUT_KEYS", "holdout_block"),
    "whileai.measure._passat": ("PassAt", "pass_at", "pass_at_numbers"),
    "whileai.measure._selfcheck": ("SelfCheckReport", "self_check"),
    "whileai.measure._summary": ("MarkerSummary", "MetricSummary", "marker_summary", "metric_summary"),
    "whileai.measure._tasks": ("group_stats", "task_stats"),
    "whileai.measure._variance": ("EvalVarianceReport", "eval_variance", "noise_band"),
    "whileai.measure._common": ("check_reward_range", "nan_as_ungraded", "nan_rewards_unset"),
}
__getattr__, __dir__ = exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - what type checkers see: the table above (tested)
    from whileai.measure._common import check_reward_range as check_reward_range
    from whileai.measure._common import nan_as_ungraded as nan_as_ungraded
    from whileai.measure._common import nan_rewards_unset as nan_rewards_unset
    from whileai.measure._compare import Comparison as Comparison
    from whileai.measure._compare import compare_runs as compare_runs
    from whileai.measure._delta import DeltaReport as DeltaReport
    from whileai.measure._delta import delta_report as delta_report
    from whileai.measure._delta import format_delta_report as format_delta_report
    from whileai.measure._failures import FailureGroup as FailureGroup
    from whileai.measure._failures import FailureTable as FailureTable
    from whileai.measure._failures import failure_table as failure_table
    from whileai.measure._holdout import HoldoutSizeReport as HoldoutSizeReport
    from whileai.measure._holdout import detectable_effect as detectable_effect
    from whileai.measure._holdout import holdout_size as holdout_size
    from whileai.measure._holdout_block import HOLDOUT_KEYS as HOLDOUT_KEYS
    from whileai.measure._holdout_block import holdout_block as holdout_block
    from whileai.measure._passat import PassAt as PassAt
    from whileai.measure._passat import pass_at as pass_at
    from whileai.measure._passat import pass_at_numbers as pass_at_numbers
    from whileai.measure._selfcheck import SelfCheckReport as SelfCheckReport
    from whileai.measure._selfcheck import self_check as self_check
    from whileai.measure._summary import MarkerSummary as MarkerSummary
    from whileai.measure._summary import MetricSummary as MetricSummary
    from whileai.measure._summary import marker_summary as marker_summary
    from whileai.measure._summary import metric_summary as metric_summary
    from whileai.measure._tasks import group_stats as group_stats
    from whileai.measure._tasks import task_stats as task_stats
    from whileai.measure._variance import EvalVarianceReport as EvalVarianceReport
    from whileai.measure._variance import eval_variance as eval_variance
    from whileai.measure._variance import noise_band as noise_band

__all__ = [
    "Comparison",
    "DeltaReport",
    "EvalVarianceReport",
    "FailureGroup",
    "FailureTable",
    "HOLDOUT_KEYS",
    "HoldoutSizeReport",
    "MarkerSummary",
    "MetricSummary",
    "PassAt",
    "SelfCheckReport",
    "compare_runs",
    "delta_report",
    "detectable_effect",
    "eval_variance",
    "failure_table",
    "format_delta_report",
    "group_stats",
    "holdout_block",
    "holdout_size",
    "marker_summary",
    "metric_summary",
    "noise_band",
    "pass_at",
    "self_check",
    "task_stats",
    "pass_at_numbers",
    "check_reward_range",
    "nan_as_ungraded",
    "nan_rewards_unset",
]
