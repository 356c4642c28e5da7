"""Train/holdout split by a stable hash of the task, so a task is wholly on one side."""

from __future__ import annotations

import hashlib
from typing import NamedTuple

import polars as pl

from whileai import table
from whileai.defaults import HOLDOUT_BUCKET_HEX_CHARS, HOLDOUT_SHARE
from whileai.errors import ArgumentError

__all__ = ["Split", "split", "task_buckets"]


class Split(NamedTuple):
    """The two sides of a split: rows of the train tasks and rows of the holdout tasks."""

    train: pl.DataFrame
    holdout: pl.DataFrame


def task_buckets(task_keys: pl.Series, *, salt: str = "") -> pl.DataFrame:
    """Each distinct task's bucket in [0, 1): the first hex characters of sha256(salt + task_key).

    The bucket depends on the task key and the salt only, so a task gets the same bucket on every
    run, on every machine, whatever other rows are present.

    Examples:
        >>> task_buckets(pl.Series(["t1"]))["bucket"].round(6).to_list()
        [0.384938]
    """
    keys = task_keys.drop_nulls().unique(maintain_order=True)
    scale = float(16**HOLDOUT_BUCKET_HEX_CHARS)
    # One sha256 per distinct task (not per row): a stable, documented hash every language can
    # reproduce; Polars' own hash is not stable across versions.
    sha = hashlib.sha256
    buckets = [int(sha((salt + k).encode("utf-8")).hexdigest()[:HOLDOUT_BUCKET_HEX_CHARS], 16) / scale
               for k in keys.to_list()]
    return pl.DataFrame({"task_key": keys, "bucket": pl.Series(buckets, dtype=pl.Float64)})


def split(rows: table.IntoRows, /, *, holdout: float = HOLDOUT_SHARE, salt: str = "") -> Split:
    """Split rows into train and holdout by a stable hash of each row's task.

    A task (``task_key``: scenario_id, else task_id, else the prompt hash) goes to the holdout when
    its bucket, the first ``HOLDOUT_BUCKET_HEX_CHARS`` hex characters of sha256(salt + task_key)
    read as a fraction, is below ``holdout``. So every rollout of a task lands on one side, the
    same task lands on the same side every run (docs/store.md, "Train and holdout"), and raising the
    share only moves tasks from train to holdout, never back.

    Args:
        rows: Any rows ``table.frame`` accepts.
        holdout: Share of tasks (not rows) for the holdout, in (0, 1). Default ``HOLDOUT_SHARE``.
        salt: Changes which tasks are drawn, for a second independent split of the same tasks.

    Returns:
        ``Split(train, holdout)``, two rollout tables in the input's row order.

    Raises:
        ArgumentError: ``holdout`` outside (0, 1).

    Examples:
        >>> rows = [{"scenario_id": f"t{i}", "reward": 1.0} for i in range(100)]
        >>> s = split(rows, holdout=0.2)
        >>> s.train.height + s.holdout.height, s.holdout.height
        (100, 18)
    """
    if isinstance(holdout, bool) or not isinstance(holdout, (int, float)) or not 0.0 < float(holdout) < 1.0:
        raise ArgumentError(
            f"holdout must be a share of tasks strictly between 0 and 1, got {holdout!r}. Pass holdout=0.2 for 20%."
        )
    if not isinstance(salt, str):
        raise ArgumentError(f"salt must be a string, got {salt!r}. Pass salt='' for the default split.")
    df = table.frame(rows)
    buckets = task_buckets(df["task_key"], salt=salt)
    side = df.select("task_key").join(buckets, on="task_key", how="left", maintain_order="left")["bucket"] < holdout
    return Split(train=df.filter(~side), holdout=df.filter(side))
