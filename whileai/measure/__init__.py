"""Measure: pass rates with intervals over tasks, paired comparison, noise and sizing.

``pass_at`` (pass@1, pass^k, pass@k with intervals over tasks), ``compare_runs`` (paired by task,
an interval and a sign-flip p-value), ``delta_report`` (``wai.compare``) and ``format_delta_report``
(the before/after verdict), ``eval_variance`` and ``noise_band`` (the eval's own re-run noise),
``holdout_size`` and ``detectable_effect`` (sizing), ``metric_summary`` and ``marker_summary``,
``failure_table`` (where the agent fails, by group), ``self_check`` (the statistics checked by
simulation), ``task_stats`` (the one group-by) and ``group_stats`` (a grouped trainer's k,
n0/n1 and reward spread per task).
"""

from whileai.measure._compare import Comparison, compare_runs
from whileai.measure._delta import DeltaReport, delta_report, format_delta_report
from whileai.measure._failures import FailureGroup, FailureTable, failure_table
from whileai.measure._holdout import HoldoutSizeReport, detectable_effect, holdout_size
from whileai.measure._passat import PassAt, pass_at
from whileai.measure._selfcheck import SelfCheckReport, self_check
from whileai.measure._summary import MarkerSummary, MetricSummary, marker_summary, metric_summary
from whileai.measure._tasks import group_stats, task_stats
from whileai.measure._variance import EvalVarianceReport, eval_variance, noise_band

__all__ = [
    "Comparison",
    "DeltaReport",
    "EvalVarianceReport",
    "FailureGroup",
    "FailureTable",
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
    "holdout_size",
    "marker_summary",
    "metric_summary",
    "noise_band",
    "pass_at",
    "self_check",
    "task_stats",
]
