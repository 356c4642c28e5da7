"""The same rows give the same bits, call after call.

Polars' streaming engine (the engine a LazyFrame's ``collect()`` picks by default since Polars 2)
adds a group's partial float sums in the order its threads finish: on partial-credit rewards the
last bit of a task's sum moved between two identical calls (thousands of the 20,000 tasks below),
and a bootstrap over those task means could move its range. Per-task sums are collected by the
in-memory engine, whose order is fixed by the rows.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

import whileai as wai
from whileai.measure import task_stats
from whileai.measure._metrics import task_values

N_ROWS, N_TASKS, CALLS = 400_000, 20_000, 4


def _partial_credit(seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame({
        "task_key": rng.integers(0, N_TASKS, N_ROWS).astype(str),
        "reward": rng.random(N_ROWS),
        "markers": pl.DataFrame({"grounded": rng.random(N_ROWS)}).to_struct(),
    })


def test_task_sums_are_the_same_on_every_call_and_match_fsum() -> None:
    df = _partial_credit()
    first = task_stats(df)
    for _ in range(CALLS - 1):
        again = task_stats(df)
        assert again["task_key"].equals(first["task_key"])
        assert np.array_equal(again["reward_sum"].to_numpy(), first["reward_sum"].to_numpy())
        assert np.array_equal(again["reward_mean"].to_numpy(), first["reward_mean"].to_numpy())
    # the sums themselves: within a few ulps of the correctly rounded sum of each task's rewards
    exact = {k: math.fsum(v) for k, v in df.group_by("task_key").agg("reward").iter_rows()}
    got = dict(zip(first["task_key"].to_list(), first["reward_sum"].to_list(), strict=True))
    assert max(abs(got[k] - exact[k]) for k in exact) < 1e-12


def test_marker_means_are_the_same_on_every_call() -> None:
    df = _partial_credit(1).with_columns(pl.lit("k").alias("_unused"))
    first = task_values(df, ["pass_at_1", "grounded"])
    for _ in range(CALLS - 1):
        again = task_values(df, ["pass_at_1", "grounded"])
        assert np.array_equal(again["grounded"].to_numpy(), first["grounded"].to_numpy())
        assert np.array_equal(again["pass_at_1"].to_numpy(), first["pass_at_1"].to_numpy())


def test_a_bootstrap_over_task_means_gives_one_answer() -> None:
    df = _partial_credit(2).drop("markers").rename({"task_key": "task_id"})
    reports = {wai.pass_at(df, ci_method="percentile", n_boot=200).model_dump_json() for _ in range(CALLS)}
    assert len(reports) == 1
