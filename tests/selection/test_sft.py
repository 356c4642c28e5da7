"""select(mode="sft"): rejection sampling rules, chance controls, completions per prompt, errors."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from tests.selection._helpers import row
from whileai import optimize, select_for_sft
from whileai.errors import ArgumentError, TrainingSelectionError


def graded_table(seed: int = 0, n_prompts: int = 12, k: int = 5, partial: bool = True) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(n_prompts):
        for j in range(k):
            reward = float(rng.integers(0, 5) / 4) if partial else float(rng.random() < 0.5)
            rows.append(row(f"t{p}", reward, reply=f"reply {j} to {p}", index=j, prompt=f"Question {p}?"))
    return rows


def test_top_per_prompt_keeps_each_prompts_best_completion_at_or_above_min_reward():
    rows = graded_table()
    sel = select_for_sft(rows, min_reward=0.5)
    best = defaultdict(float)
    for r in rows:
        best[r["prompt"]] = max(best[r["prompt"]], r["reward"])
    expected = {p: b for p, b in best.items() if b >= 0.5}
    got = {r["prompt"]: r["reward"] for r in sel.rows()}
    assert got == expected
    assert sel.report.n_selected == len(expected) == sel.report.prompts_eligible


def test_top_k_overall_takes_the_k_highest_rewards():
    rows = graded_table(seed=1)
    sel = select_for_sft(rows, select="top_k_overall", min_reward=0.25, k=7)
    rewards = sorted((r["reward"] for r in rows if r["reward"] >= 0.25), reverse=True)[:7]
    assert sorted(sel.df["reward"].to_list(), reverse=True) == rewards


def test_random_rules_are_seeded_chance_controls():
    rows = graded_table(seed=2, partial=False)
    a = select_for_sft(rows, select="random_per_prompt", seed=4)
    b = select_for_sft(rows, select="random_per_prompt", seed=4)
    assert a.df.equals(b.df)
    assert a.df["prompt"].n_unique() == a.report.n_selected  # one per prompt
    assert set(a.df["reward"].to_list()) == {1.0}  # drawn among eligible rows only
    picks = {select_for_sft(rows, select="random_per_prompt", seed=s).df["final_text"].to_list()[0] for s in range(12)}
    assert len(picks) > 1  # the draw moves with the seed
    k = select_for_sft(rows, select="random_k_overall", k=5, seed=1)
    assert k.report.n_selected == 5 and set(k.df["reward"].to_list()) == {1.0}


def test_uniform_tie_break_in_top_per_prompt():
    # four passing completions of one prompt: each seed's pick is a seeded draw, near-uniform over seeds
    rows = [row("t", 1.0, reply=f"r{j}", index=j, prompt="Q?") for j in range(4)]
    counts = defaultdict(int)
    for s in range(200):
        counts[select_for_sft(rows, seed=s).df["final_text"][0]] += 1
    assert set(counts) == {"r0", "r1", "r2", "r3"}
    assert all(25 <= c <= 75 for c in counts.values())  # 50 expected each; 4 sd is about 24


def test_completions_per_prompt_and_selection_effective():
    rows = graded_table(k=5)
    r = select_for_sft(rows, min_reward=0.0).report
    assert r.completions_per_prompt_mean == 5.0 and r.completions_per_prompt_median == 5
    assert r.selection_effective == "top_per_prompt"
    assert "wants 10 to 30" in r.note
    singles = [row(f"t{p}", 1.0, prompt=f"Q{p}", reply="done") for p in range(6)]
    r1 = select_for_sft(singles).report
    assert r1.selection_effective == "pass_filter" and r1.prompts_with_one_completion == 6
    assert "only a pass filter" in r1.note


def test_junk_and_ungraded_rows_are_never_picked():
    rows = [row("t", 1.0, calls=(), reply="  ", prompt="Q"), row("t", 1.0, calls=(), reply="?!", prompt="Q", index=1),
            row("t", None, prompt="Q", index=2), row("t", 1.0, prompt="Q", reply="fine", index=3)]
    sel = select_for_sft(rows)
    assert sel.df["final_text"].to_list() == ["fine"]
    assert (sel.report.n_junk, sel.report.n_ungraded, sel.report.n_eligible) == (2, 1, 1)


def test_target_caps_the_rows_and_order_is_input_order():
    rows = graded_table(n_prompts=30, partial=False)
    sel = select_for_sft(rows, target=10)
    assert sel.report.n_selected == 10
    positions = [rows.index(next(x for x in rows if x["final_text"] == t)) for t in sel.df["final_text"]]
    assert positions == sorted(positions)


def test_min_reward_nothing_meets_and_bad_arguments():
    rows = graded_table(partial=False)
    with pytest.raises(TrainingSelectionError, match="min_reward must be met.*best reward of 1.0"):
        select_for_sft(rows, min_reward=1.5)
    with pytest.raises(TrainingSelectionError, match="Grade first"):
        select_for_sft([row("t", None)])
    with pytest.raises(ArgumentError, match="select must be one of 'top_per_prompt', 'top_k_overall'"):
        select_for_sft(rows, select="best")
    with pytest.raises(ArgumentError, match="target must be a positive integer"):
        optimize(rows, mode="sft", target=None)
    with pytest.raises(ArgumentError, match="target must be an integer >= 1"):
        select_for_sft(rows, target=0)
    with pytest.raises(ArgumentError, match="seed must be an int"):
        select_for_sft(rows, seed="x")


def test_report_prints_the_0131_first_line():
    sel = optimize(graded_table(partial=False), mode="sft")
    assert str(sel).startswith(f"sft selection: kept {sel.report.n_selected} of 60 rows")
    assert sel.meta["mode"] == "sft"


def test_a_pass_that_recites_the_answer_key_is_not_a_demonstration():
    key = "refund limit is one hundred dollars without a manager"
    rows = [row("t", 1.0, reply=f"The {key}.", prompt="Q", privileged={"reference": key}),
            row("t", 1.0, reply="I can refund up to the limit.", prompt="Q", index=1, privileged={"reference": key})]
    sel = select_for_sft(rows)
    assert sel.df["final_text"].to_list() == ["I can refund up to the limit."]
    assert sel.report.privileged_leaks_dropped == 1 and sel.report.n_eligible == 1


@pytest.mark.parametrize("size", [1, 7, 60, 299, 300])
def test_head_end_is_the_last_row_pick_keeps(size):
    # the head's cut read one column at a time is the last of the rows pick orders by reward and
    # key together: rewards tied across the cut (and a -0.0 beside 0.0, equal to it in both orders)
    import polars as pl

    from whileai.selection._sft import _head_end, pick

    rng = np.random.default_rng(size)
    rewards = rng.choice([0.0, -0.0, 0.5, 1.0], 300)
    pool = pl.DataFrame({"reward": rewards, "_key": rng.random(300)})
    last = pick(pool, size, top=True).row(-1, named=True)
    assert _head_end(pool, size) == (last["reward"], last["_key"])


@pytest.mark.parametrize("top", [True, False])
@pytest.mark.parametrize(("n_prompts", "per_prompt", "n_take", "clustered"),
                         [(50, 20, 3, True), (60, 30, 7, True), (400, 3, 120, False), (30, 8, 500, False), (1, 40, 1, False)])
def test_per_prompt_picks_match_a_choice_over_every_prompt(top, n_prompts, per_prompt, n_take, clustered):
    # the head of the overall order grows until it holds n_take prompts (clustered keys put a
    # prompt's completions next to each other in that order, so the first head holds too few);
    # the picks are those of a plain loop over prompts
    import polars as pl

    from whileai.selection._sft import _per_prompt_picks

    rng = np.random.default_rng(n_prompts * 7 + per_prompt)
    n = n_prompts * per_prompt
    prompts = np.repeat(rng.permutation(n_prompts), per_prompt)
    keys = (prompts + rng.random(n)) / n_prompts if clustered else rng.random(n)
    rewards = np.ones(n) if clustered else rng.choice([0.5, 0.75, 1.0], n, p=[0.1, 0.1, 0.8])
    pool = pl.DataFrame({"_pos": np.arange(n), "_prompt": prompts.astype(np.uint64), "reward": rewards, "_key": keys})
    picks = {}
    for pos, prompt, reward, key in pool.iter_rows():
        rank = (-reward, key) if top else (key,)
        if prompt not in picks or rank < picks[prompt][0]:
            picks[prompt] = (rank, pos)
    expected = sorted(pos for _, pos in sorted(picks.values())[:n_take])
    assert sorted(_per_prompt_picks(pool, n_take, top=top)["_pos"].to_list()) == expected
