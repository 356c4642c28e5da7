"""The Ray engine: whileai's steps on a ``ray.data.Dataset`` (the ``ray`` extra, ``docs/scale.md``).

A step given a Ray dataset computes per-task partial sums in ``map_batches`` on Arrow batches,
merges them with a Ray Data group-by on the task key, and hands the small per-task table to the
kernel the local path calls, so the same rows give the same numbers. Steps whose output is rows
(select, decontaminate) write them back as a Parquet folder from the workers and return the
report with the folder. ``ray`` is imported only when such a call runs.
"""

from typing import Any

from whileai.engines.ray._common import FolderResult, read_dataset
from whileai.engines.ray._measure import (
    compare_side,
    delta_cells,
    pass_at,
    side_from_cells,
    variance_values,
)

__all__ = [
    "FolderResult",
    "compare_side",
    "delta_cells",
    "pass_at",
    "read_dataset",
    "select",
    "side_from_cells",
    "variance_values",
]


def select(ds: Any, /, *, mode: str = "rl", out: Any = None, **options: Any) -> FolderResult:
    """``whileai.select`` on a Ray dataset: the report, and the kept rows as a Parquet folder at ``out``.

    ``mode="rl"`` takes the options of ``select_for_rl`` except ``endorsed`` (the hack scan reads
    the kept rows: run ``wai.hack_scan`` on the folder). ``mode="sft"`` ranks completions by a
    seeded draw in row order, which a partitioned dataset does not have, so it is refused.
    """
    import inspect

    from whileai._checks import check_choice
    from whileai.defaults import DIFFICULTY_BAND, SELECT_TARGET
    from whileai.engines.ray._select import select_rl
    from whileai.errors import ArgumentError
    from whileai.selection._common import check_band
    from whileai.selection._rl import (
        RL_ORDERS,
        TRUNCATED_POLICIES,
        check_positive_int,
        select_for_rl,
    )

    if mode != "rl":
        raise ArgumentError(f"mode must be 'rl' for a Ray dataset, got {mode!r}. Rejection sampling (mode='sft') draws "
                            "its tie-breaks in row order: read the rows into Polars first (whileai.table.frame(folder)).")
    allowed = {n for n, p in inspect.signature(select_for_rl).parameters.items() if p.kind is p.KEYWORD_ONLY} - {"endorsed"}
    stray = sorted(set(options) - allowed)
    if stray:
        raise ArgumentError(f"options must be those select(mode='rl') takes on a Ray dataset, got {', '.join(stray)}. "
                            f"Pass only {', '.join(sorted(allowed | {'out'}))} (run wai.hack_scan on the output folder).")
    truncated = check_choice("truncated", options.get("truncated", "drop"), TRUNCATED_POLICIES)
    order = check_choice("order", options.get("order", "spread"), RL_ORDERS)
    band = check_band(options.get("band", DIFFICULTY_BAND))
    target = check_positive_int("target", options.get("target", SELECT_TARGET), allow_none=True)
    return select_rl(ds, out=out, target=target, band=band, enforce_band=bool(options.get("enforce_band", True)),
                     truncated=truncated, order=order)
