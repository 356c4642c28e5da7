"""DAPO dynamic sampling (Yu et al. 2025, section 3.2): oversample asks whose group is unanimous.

After the first k rollouts of every ask are graded, an all-pass or all-fail ask gets k more
until it is mixed or reaches the cap. Each ask's decision reads only its own rows, so the Ray
engine runs this on each worker's share. An ask the grader could not judge on any row is
neither unanimous nor mixed: it is counted as unjudged, with what the grader did instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from whileai.defaults import PASS_THRESHOLD
from whileai.simulation._frames import _by_count, _empty_frame
from whileai.simulation._progress import Progress
from whileai.simulation._rollout import Item, _Engine, _Stats
from whileai.simulation._rows import RowBuffer
from whileai.simulation._writer import Situation


def _oversample(engine: _Engine, buffer: RowBuffer, lost_buffer: RowBuffer, lost_by: dict[str, int],
                lost: list[dict[str, Any]], stats: _Stats, progress: Progress, *,
                by_id: dict[str, tuple[int, Situation]], k: int, cap: int,
                score_rows: Callable[[pl.DataFrame], pl.DataFrame],
                prepare: Callable[[pl.DataFrame], pl.DataFrame]) -> tuple[pl.DataFrame, dict[str, Any]]:
    """DAPO dynamic sampling (Yu et al. 2025, section 3.2): add k rollouts to unanimous asks until mixed or capped.

    Every group is graded; an all-pass or all-fail ask gets k more rollouts until it is mixed or
    has ``cap``. Each ask's decision reads only its own rows, so the Ray engine runs this on
    each worker's share of the tasks (``by_id``: the tasks in play, by scenario id, with their
    ordinals). An ask with no graded row (the grader raised or returned no reward on every
    one) cannot be called unanimous or mixed: it is not oversampled, and is counted as
    unjudged with what the grader did instead (:func:`_unjudged`). Returns the graded rows and
    the counts.
    """
    first = buffer.frame()
    graded = [score_rows(prepare(first if first is not None else _empty_frame()))]
    oversampled: set[tuple[str, int | None]] = set()
    extra = 0
    state: dict[tuple[str, int | None], tuple[int, int, int]] = {}  # key -> (rollouts, graded, passes)

    def tally(df: pl.DataFrame) -> None:
        if not df.height:
            return
        run = (pl.col("lineage").struct.field("eval_run") if "lineage" in df.columns else pl.lit(None, pl.Int64))
        counts = (df.with_columns(run.alias("_run"))
                  .group_by("scenario_id", "_run")
                  .agg(pl.len().alias("n"), pl.col("reward").is_not_null().sum().alias("g"),
                       (pl.col("reward") >= PASS_THRESHOLD).sum().alias("p")))
        for sid, run_id, n, g, p in counts.iter_rows():
            old = state.get((sid, run_id), (0, 0, 0))
            state[(sid, run_id)] = (old[0] + n, old[1] + g, old[2] + p)

    tally(graded[0])
    while True:
        todo = [(key, n) for key, (n, g, p) in state.items() if g and p in (0, g) and n < cap]
        if not todo:
            break
        items: list[Item] = []
        for (sid, run), n in todo:
            ordinal, task = by_id[sid]
            oversampled.add((sid, run))
            items.extend((task, index, run, ordinal) for index in range(n, min(n + k, cap)))
        fresh = RowBuffer(check_users=engine.user is not None)
        engine.run(iter(items), len(items), fresh, lost_buffer, lost_by, lost, stats, progress)
        extra += len(items)
        landed = fresh.frame()
        if landed is None:
            break
        more = score_rows(prepare(landed))
        graded.append(more)
        tally(more)
        for (sid, run), n in todo:  # an ask whose new rollouts were all lost stops growing
            if state[(sid, run)][0] == n:
                state[(sid, run)] = (cap, *state[(sid, run)][1:])
    never = sum(1 for key in oversampled if state[key][1] and state[key][2] in (0, state[key][1]))
    df = pl.concat(graded, how="diagonal_relaxed") if len(graded) > 1 else graded[0]
    unjudged = sum(1 for _, g, _ in state.values() if not g)
    return df, {"asks_oversampled": len(oversampled), "asks_never_mixed": never, "rollouts_oversampled": extra,
                "asks_unjudged": unjudged, **_unjudged(df if unjudged else df.clear())}


def _unjudged(df: pl.DataFrame) -> dict[str, Any]:
    """The graded rows the grader gave no reward: how many, by ``judge_status``, and the first ``reason``."""
    if "reward" not in df.columns:
        return {"rows_unjudged": df.height, "unjudged_by": {}, "unjudged_first": None}
    failed = df.filter(pl.col("reward").is_null())
    by: dict[str, int] = {}
    if "judge_status" in failed.columns:
        by = {str(a): int(b) for a, b in failed["judge_status"].drop_nulls().value_counts().iter_rows()}
    first = None
    if "reason" in failed.columns:
        reasons = failed["reason"].drop_nulls()
        first = str(reasons[0]) if len(reasons) else None
    return {"rows_unjudged": failed.height, "unjudged_by": by, "unjudged_first": first}


def _no_dynamic() -> dict[str, Any]:
    """The dynamic-sampling account of a run without it (and the zero a Ray merge starts from)."""
    return {"asks_oversampled": 0, "asks_never_mixed": 0, "rollouts_oversampled": 0, "asks_unjudged": 0,
            "rows_unjudged": 0, "unjudged_by": {}, "unjudged_first": None}


def _unjudged_warning(dynamic: dict[str, Any], n_tasks: int) -> str:
    """The warning for asks dynamic sampling could not judge, naming what the grader did and the fix."""
    by = ", ".join(f"{v} {k}" for k, v in _by_count(dynamic["unjudged_by"]).items())
    first = dynamic["unjudged_first"]
    what = f"{dynamic['rows_unjudged']} rows without one" + (f": {by}" if by else "")
    what += f"; first: {first}" if first else ""
    return (f"dynamic sampling: the grader could not judge {dynamic['asks_unjudged']} of {n_tasks} asks: none of their "
            f"rows got a reward ({what}), so they were not oversampled and their groups are unknown, not mixed. Fix "
            "the grader (run it on a few of these rows with wai.run_judge(rows, grader) to see each failure), then "
            "run again.")
