"""Measure: pass rates with intervals over tasks, paired comparison, noise and sizing.

``pass_at`` (pass@1, pass^k, pass@k with intervals over tasks), ``compare_runs`` (paired by task,
an interval and a sign-flip p-value), ``delta_report`` (``wai.compare``) and ``format_delta_report``
(the before/after verdict), ``eval_variance`` and ``noise_band`` (the eval's own re-run noise),
``holdout_size`` and ``detectable_effect`` (sizing), ``metric_summary`` and ``marker_summary``,
``failure_table`` (where the agent fails, by group), ``self_check`` (the statistics checked by
simulation), ``task_stats`` (the one group-by) and ``group_stats`` (a grouped trainer's k,
n0/n1 and reward spread per task).
"""

from whileai._lazy import attach_stub

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
