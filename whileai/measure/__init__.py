"""Measure: pass rates with intervals over tasks, paired comparison, noise and sizing."""

from whileai.measure._tasks import task_stats

__all__ = ["task_stats"]
