"""curriculum (and its printed form), retire_solved: buckets against the task_stats truth."""

from __future__ import annotations

import polars as pl
import pytest

from tests.selection._helpers import group
from whileai.data import ScoredData
from whileai.errors import ArgumentError, TrainingSelectionError
from whileai.selection import curriculum, retire_solved
from whileai.testing import rollout_table

RATES = [0.0, 0.1, 0.2, 0.25, 0.5, 0.5, 0.75, 0.8, 0.9, 1.0]


def table_with_exact_rates() -> list[dict]:
    rows = []
    for i, p in enumerate(RATES):
        passes = round(p * 20)
        rows += group(f"t{i}", [1.0] * passes + [0.0] * (20 - passes))
    rows += group("thin", [1.0])
    return rows


def test_buckets_follow_the_edges_inclusively():
    cur = curriculum(table_with_exact_rates())
    assert cur.n_tasks == 11 and cur.n_thin == 1
    assert [t["task_id"] for t in cur.retired] == ["t9", "t8"]           # 1.0, 0.9 > 0.8
    assert [t["task_id"] for t in cur.not_ready] == ["t1", "t0"]         # 0.1, 0.0 < 0.2
    assert cur.schedule == ["t7", "t6", "t4", "t5", "t3", "t2"]          # easy -> hard, ties by id
    assert cur.n_trainable == 6 and cur.n_solved == 2 and cur.n_not_ready == 2
    assert cur.n_in_band == 6
    assert [t["pass_rate"] for t in cur.trainable] == [0.8, 0.75, 0.5, 0.5, 0.25, 0.2]
    assert [[t["task_id"] for t in tier] for tier in cur.tiers] == [["t7", "t6"], ["t4", "t5"], ["t3", "t2"]]
    assert cur.trainable[0] == {"task_id": "t7", "prompt": "Please help with t7", "n": 20, "pass_rate": 0.8}


def test_band_only_counts_and_tiers_split_evenly():
    cur = curriculum(table_with_exact_rates(), floor=0.0, solved=1.0, band=(0.3, 0.7), tiers=4)
    assert cur.n_trainable == 10 and cur.n_in_band == 2
    assert [len(t) for t in cur.tiers] == [3, 2, 3, 2]
    assert sum(len(t) for t in cur.tiers) == cur.n_trainable


def test_matches_task_stats_on_a_generated_table():
    df = rollout_table(200, 8, seed=4)
    cur = curriculum(df)
    rates = df.group_by("scenario_id").agg((pl.col("reward") >= 0.5).mean().alias("p"))["p"].to_numpy()
    assert cur.n_solved == int((rates > 0.8).sum())
    assert cur.n_not_ready == int((rates < 0.2).sum())
    assert cur.n_trainable == int(((rates >= 0.2) & (rates <= 0.8)).sum())


def test_format_curriculum_prints_counts_and_tiers():
    text = str(curriculum(table_with_exact_rates()))
    assert text.splitlines()[0] == "tasks 11  trainable 6 (in band 6)  retired 2  not ready 2  thin 1"
    assert "  tier 1: 2 tasks, pass 0.80 -> 0.75" in text
    assert str(curriculum(table_with_exact_rates())) == text


def test_retire_solved_drops_the_solved_tasks_and_keeps_fluent_type():
    rows = table_with_exact_rates()
    kept = retire_solved(pl.DataFrame(rows) if isinstance(rows, list) else rows)
    assert isinstance(kept, pl.DataFrame)
    assert isinstance(retire_solved(rows), type(rows))  # rows come back in the kind they came in
    assert set(kept["task_key"].unique()) == {f"t{i}" for i in range(8)} | {"thin"}
    scored = ScoredData(rows, meta={"tools": []})
    out = retire_solved(scored, solved=0.5)
    assert isinstance(out, ScoredData) and out.meta == {"tools": []}
    assert "t6" not in set(out.df["task_key"])


def test_bad_arguments_and_ungraded():
    with pytest.raises(ArgumentError, match="floor must be at most solved"):
        curriculum(table_with_exact_rates(), floor=0.9, solved=0.5)
    with pytest.raises(ArgumentError, match="tiers must be an integer"):
        curriculum(table_with_exact_rates(), tiers=0)
    with pytest.raises(ArgumentError, match="solved must be a number between 0 and 1"):
        retire_solved(table_with_exact_rates(), solved=2)
    with pytest.raises(TrainingSelectionError, match="Grade first"):
        curriculum(group("t", [None, None]))


def test_matches_whileai_0131_on_its_quickstart_rows():
    from pathlib import Path

    cur = curriculum(Path(__file__).parents[1] / "data" / "wai131" / "scored.jsonl")
    assert str(cur) == (  # whileai 0.131 format_curriculum on the same rows
        "tasks 7  trainable 4 (in band 4)  retired 3  not ready 0  thin 0\n"
        "  tier 1: 2 tasks, pass 0.75 -> 0.75\n"
        "  tier 2: 1 tasks, pass 0.75 -> 0.75\n"
        "  tier 3: 1 tasks, pass 0.50 -> 0.50"
    )
