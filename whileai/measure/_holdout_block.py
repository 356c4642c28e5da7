"""``summary["holdout"]``: the one shape a held-out delta takes wherever it is written.

The tracked-run client (``run.holdout``), the trainers and the trainer callback all write this
block, so it lives with the measures it is built from (``pass_at`` and ``delta_report``).
"""

from __future__ import annotations

from typing import Any

from whileai.table import IntoRows

__all__ = ["HOLDOUT_KEYS", "holdout_block"]

#: The keys of ``summary["holdout"]``, in order.
HOLDOUT_KEYS = ("metric", "before", "after", "delta", "ci95", "verdict")


def holdout_block(before: IntoRows, after: IntoRows, report: Any) -> dict[str, Any]:
    """``summary["holdout"]``: the one shape every path writes.

    ``metric`` (``pass_at_1``), each side's ``pass_rate`` with ``n_tasks``, ``k`` and its 95%
    bootstrap ``ci95`` over tasks (``pass_at``), the paired ``delta`` and its ``ci95`` from
    ``delta_report`` (``compare_runs``), and its verdict word. Rates are 0 to 1.
    """
    from whileai.measure._passat import pass_at

    block: dict[str, Any] = {"metric": "pass_at_1"}
    for side, rows in (("before", before), ("after", after)):
        pa = pass_at(rows)
        block[side] = {"pass_rate": pa.pass_at_1, "n_tasks": pa.n_tasks, "k": pa.k,
                       "ci95": list(pa.ci95) if pa.ci95 is not None else None}
    block["delta"] = report.target_delta
    block["ci95"] = list(report.target_ci95) if report.target_ci95 is not None else None
    block["verdict"] = report.target_verdict
    return block
