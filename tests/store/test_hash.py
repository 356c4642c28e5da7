"""Content hashes: order-free, change-sensitive, and pinned to a known value."""

from __future__ import annotations

import hashlib

import polars as pl

from whileai.store import content_hash, tasks_hash
from whileai.testing import rollout_table


def test_hash_ignores_row_and_column_order():
    df = rollout_table(12, 4, seed=3)
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=1).select(list(reversed(df.columns)))
    assert content_hash(df) == content_hash(shuffled)


def test_hash_changes_with_any_cell():
    df = rollout_table(12, 4, seed=3)
    flipped = df.with_columns(pl.when(pl.int_range(pl.len()) == 17).then(1.0 - pl.col("reward"))
                              .otherwise(pl.col("reward")).alias("reward"))
    assert content_hash(df) != content_hash(flipped)
    assert content_hash(df) != content_hash(df.head(df.height - 1))


def test_hash_ignores_struct_field_order_and_null_columns_and_task_key():
    a = pl.DataFrame({"scenario_id": ["t1", "t2"], "markers": [{"x": 1.0, "y": 0.0}, {"x": 0.0, "y": 1.0}]})
    b = pl.DataFrame({"scenario_id": ["t1", "t2"], "markers": [{"y": 0.0, "x": 1.0}, {"y": 1.0, "x": 0.0}]})
    c = a.with_columns(pl.lit(None, pl.String).alias("reason"), pl.col("scenario_id").alias("task_key"))
    assert content_hash(a) == content_hash(b) == content_hash(c)


def test_duplicate_rows_count():
    a = pl.DataFrame({"scenario_id": ["t1"], "reward": [1.0]})
    assert content_hash(a) != content_hash(pl.concat([a, a]))


def test_hash_is_pinned_to_its_documented_form():
    # Recompute the documented canonical form by hand: sorted columns, one JSON object per row,
    # sha256 per row, digests sorted, then sha256 over the column list and the digests.
    df = pl.DataFrame({"scenario_id": ["b", "a"], "reward": [0.5, 1.0]})
    rows = ['{"reward":0.5,"scenario_id":"b"}', '{"reward":1.0,"scenario_id":"a"}']
    digests = sorted(hashlib.sha256(r.encode()).digest() for r in rows)
    whole = hashlib.sha256(b"reward,scenario_id\n" + b"".join(digests)).hexdigest()
    assert content_hash(df) == f"rows-v1-sha256:{whole}"


def test_tasks_hash_is_a_set_hash():
    assert tasks_hash(["b", "a", "a"]) == tasks_hash(["a", "b"])
    assert tasks_hash(["a"]) != tasks_hash(["a", "b"])
    assert tasks_hash(["a", "b"]) == "tasks-v1-sha256:" + hashlib.sha256(b"a\nb").hexdigest()
