"""The train/holdout split: whole tasks, stable, monotone in the share, checked against hashlib."""

from __future__ import annotations

import hashlib

import polars as pl
import pytest

from whileai.errors import ArgumentError
from whileai.store import split
from whileai.store._split import task_buckets
from whileai.testing import rollout_table


def _bucket(key: str, salt: str = "") -> float:
    return int(hashlib.sha256((salt + key).encode()).hexdigest()[:8], 16) / 16**8


def test_sides_match_an_independent_hash():
    df = rollout_table(300, 3, seed=1, messages=False)
    sides = split(df, holdout=0.25)
    expected = {k for k in df["scenario_id"].unique().to_list() if _bucket(k) < 0.25}
    assert set(sides.holdout["task_key"].unique().to_list()) == expected
    assert set(sides.train["task_key"].unique().to_list()).isdisjoint(expected)
    assert sides.train.height + sides.holdout.height == df.height


def test_a_task_is_wholly_on_one_side_and_keeps_row_order():
    df = rollout_table(200, 4, seed=2, messages=False)
    sides = split(df, holdout=0.3)
    assert not set(sides.train["task_key"]).intersection(set(sides.holdout["task_key"]))
    assert sides.holdout.group_by("task_key").len()["len"].min() == 4
    assert sides.train["rollout_id"].to_list() == [r for r in df["rollout_id"].to_list()
                                                   if r in set(sides.train["rollout_id"])]


def test_same_task_same_side_whatever_else_is_present():
    df = rollout_table(200, 2, seed=4, messages=False)
    full = set(split(df, holdout=0.2).holdout["task_key"])
    part = set(split(df.filter(pl.col("scenario_id").str.ends_with("1")), holdout=0.2).holdout["task_key"])
    assert part == {k for k in full if k.endswith("1")}


def test_raising_the_share_only_moves_tasks_into_the_holdout():
    df = rollout_table(400, 1, seed=5, messages=False)
    small = set(split(df, holdout=0.1).holdout["task_key"])
    large = set(split(df, holdout=0.3).holdout["task_key"])
    assert small < large


def test_share_of_tasks_is_near_the_asked_share():
    keys = pl.Series([f"task-{i}" for i in range(20_000)])
    share = float((task_buckets(keys)["bucket"] < 0.2).mean())
    # binomial sd at n=20,000 is 0.0028; 4 sd either side
    assert abs(share - 0.2) < 0.012


def test_salt_gives_another_split():
    df = rollout_table(200, 1, seed=6, messages=False)
    assert set(split(df, salt="a").holdout["task_key"]) != set(split(df).holdout["task_key"])
    expected = {k for k in df["scenario_id"].to_list() if _bucket(k, "a") < 0.2}
    assert set(split(df, salt="a").holdout["task_key"]) == expected


@pytest.mark.parametrize("bad", [0, 1, 1.5, -0.1, "0.2", True])
def test_bad_share(bad):
    with pytest.raises(ArgumentError, match="holdout must be a share of tasks"):
        split([{"scenario_id": "t", "reward": 1}], holdout=bad)
