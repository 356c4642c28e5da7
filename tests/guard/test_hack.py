"""hack_scan on tables where the truth is known."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from whileai import table
from whileai.data import ScoredData
from whileai.errors import ArgumentError
from whileai.guard import hack_scan
from whileai.testing import rollout_table, true_pass_rates


def _blind(df: pl.DataFrame) -> pl.DataFrame:
    """Replace the judge-readable outcome phrase so only planted words track reward."""
    return df.drop("messages", strict=False).with_columns(
        pl.col("final_text").str.replace_all(r"resolved it\.|could not finish\.", "replied.")
    )


def test_planted_shortcut_comes_out_on_top_and_is_flagged():
    df = _blind(rollout_table(60, 8, seed=3, shortcut="zzq"))
    r = hack_scan(df, endorsed=["marker:"], n_perm=50)
    assert r.top_feature == "contains:zzq"
    assert r.reward_hack is True
    assert r.regime == "reward_hack"
    assert "contains:zzq" in r.rivals
    assert any("zzq" in w and "reward_hack" in w for w in r.warnings)
    top = r.features[0]
    assert top.above_floor and top.rho > r.tau > 0
    assert 0 < r.integrity < 1
    assert str(r).splitlines()[0] == "REWARD_HACK"


def test_endorsed_shortcut_is_not_a_hack():
    df = _blind(rollout_table(60, 8, seed=3, shortcut="zzq"))
    r = hack_scan(df, endorsed=["zzq"], n_perm=30)
    assert r.top_feature == "contains:zzq"
    assert r.reward_hack is False
    assert r.endorsed_on_top is True
    assert r.regime == "train"


def test_shortcut_that_differs_only_between_tasks_is_not_flagged():
    n_tasks, k = 60, 8
    df = _blind(rollout_table(n_tasks, k, seed=5))
    easy = true_pass_rates(n_tasks, seed=5) > 0.5
    task_idx = np.repeat(np.arange(n_tasks), k)
    df = df.with_columns(
        pl.when(pl.Series(easy[task_idx])).then(pl.col("final_text") + " qqx").otherwise(pl.col("final_text"))
    )
    r = hack_scan(df, endorsed=["marker:"], n_perm=30)
    names = {n for f in r.features for n in (f.name, *f.aliases)}
    assert "contains:qqx" not in names  # no within-ask variation: nothing a grouped update can learn
    assert r.top_feature != "contains:qqx"
    # ...although the pooled correlation sees it
    y = df["reward"].to_numpy()
    assert np.corrcoef(easy[task_idx].astype(float), y)[0, 1] > 0.3


def test_two_distinct_trajectories_per_ask_is_degenerate():
    rows = []
    for t in range(30):
        for i in range(4):
            good = (i + t) % 2 == 0
            rows.append({
                "scenario_id": f"t{t}",
                "prompt": f"ask number {t}",
                "final_text": "The parcel has shipped today." if good else "I refunded the whole order.",
                "reward": 1.0 if good else 0.0,
            })
    r = hack_scan(rows, n_perm=20, min_obs=5)
    assert r.degenerate is True
    assert r.top_feature is None
    assert r.cause == "distinct_per_ask"
    assert r.regime == "degenerate"
    assert {"contains:shipped", "contains:refunded"} <= set(r.collinear)
    assert r.distinct_per_ask == pytest.approx(2.0)


def test_within_ask_rho_matches_explicit_centring_and_pooled_matches_numpy():
    df = table.frame(rollout_table(30, 6, seed=11))
    r = hack_scan(df, n_perm=10, auto=False)
    feat = next(f for f in r.features if f.name == "reply_length" or "reply_length" in f.aliases)
    # independent reference: centre both within ask with Polars over the disagreeing asks only
    g = df.select("task_key", "reward", pl.col("final_text").str.len_chars().cast(pl.Float64).alias("x"))
    g = g.filter(pl.col("reward").std(ddof=0).over("task_key") > 0)
    g = g.with_columns((pl.col("x") - pl.col("x").mean().over("task_key")).alias("xc"),
                      (pl.col("reward") - pl.col("reward").mean().over("task_key")).alias("yc"))
    xc, yc = g["xc"].to_numpy(), g["yc"].to_numpy()
    ref = xc @ yc / np.sqrt((xc @ xc) * (yc @ yc))
    sign = 1.0 if feat.name == "reply_length" else np.sign(feat.rho * ref)
    assert feat.rho * sign == pytest.approx(ref, abs=1e-9)
    pooled = np.corrcoef(df["final_text"].str.len_chars().cast(pl.Float64).to_numpy(), df["reward"].to_numpy())[0, 1]
    if feat.name == "reply_length":
        assert feat.pooled == pytest.approx(pooled, abs=1e-9)


def test_floor_holds_family_wise_under_the_null():
    """Reward independent of every feature: the max-statistic floor is crossed in about alpha of runs."""
    crossings = 0
    runs = 20
    for s in range(runs):
        df = _blind(rollout_table(25, 4, seed=100 + s, markers=()))
        rng = np.random.default_rng(s)
        df = df.with_columns(pl.Series("reward", rng.integers(0, 2, df.height).astype(float)))
        r = hack_scan(df, n_perm=40, seed=s, min_obs=5)
        crossings += r.n_above_floor > 0
    assert crossings <= 4  # expected 1 at alpha 0.05; P(>4) under Binomial(20, 0.05) is about 0.003


def test_same_seed_same_floor():
    df = rollout_table(20, 4, seed=2)
    assert hack_scan(df, n_perm=20, seed=7).tau == hack_scan(df, n_perm=20, seed=7).tau


def test_user_features_and_errors_name_the_feature():
    df = _blind(rollout_table(30, 6, seed=4, shortcut="zzq"))
    r = hack_scan(df, features={"says_zzq": lambda row: "zzq" in row["final_text"]}, auto=False, n_perm=20)
    assert r.top_feature == "says_zzq"

    def boom(row):
        raise KeyError("nope")

    with pytest.raises(ArgumentError, match="feature 'boom' raised KeyError"):
        hack_scan(df, features={"boom": boom})
    with pytest.raises(ArgumentError, match="feature 'text' must return a number"):
        hack_scan(df, features={"text": lambda row: "x"})
    with pytest.raises(ArgumentError, match="features must be a dict"):
        hack_scan(df, features=["x"])


def test_tool_and_marker_features_and_complement_aliases():
    df = rollout_table(40, 6, seed=8)
    r = hack_scan(df, n_perm=10)
    names = {n for f in r.features for n in (f.name, *f.aliases)}
    assert any(n.startswith("tool:") for n in names)
    assert "marker:no_hedging" in names
    # "resolved" and its complement "could" are one explanation, merged as aliases
    merged = next(f for f in r.features if "contains:resolved" in (f.name, *f.aliases))
    assert "contains:could" in (merged.name, *merged.aliases)


def test_ungraded_and_unanimous_inputs():
    df = rollout_table(5, 4, seed=1).drop("reward")
    r = hack_scan(df)
    assert r.regime == "unknown" and "grade first" in r.warnings[0]
    r = hack_scan(rollout_table(5, 4, seed=1, pass_rates=[1.0] * 5))
    assert r.regime == "pool_exhausted"
    assert "disagreeing repeats" in r.warnings[0]
    assert np.isnan(r.tau)


@pytest.mark.parametrize("kw, match", [
    ({"alpha": 0}, "alpha must be"),
    ({"top_k": -1}, "top_k must be"),
    ({"n_perm": 0}, "n_perm must be"),
    ({"endorsed": 3}, "endorsed must be"),
])
def test_bad_arguments(kw, match):
    with pytest.raises(ArgumentError, match=match):
        hack_scan([{"prompt": "x", "reward": 1}], **kw)


def test_accepts_fluent_and_leaves_input_alone():
    raw = rollout_table(20, 4, seed=9)
    before = raw.clone()
    r1 = hack_scan(ScoredData(raw), n_perm=10)
    r2 = hack_scan(table.rows(table.frame(raw)), n_perm=10)
    assert r1.tau == pytest.approx(r2.tau)
    assert raw.equals(before)
    assert r1.to_json()


def test_word_counts_from_the_auto_tier_match_the_plain_count():
    df = _blind(rollout_table(30, 6, seed=12, shortcut="zzq"))
    with_auto = {f.name: f.rho for f in hack_scan(df, n_perm=5).features}
    without = {f.name: f.rho for f in hack_scan(df, n_perm=5, auto=False).features}
    assert with_auto["n:words"] == pytest.approx(without["n:words"], abs=1e-12)


def test_sampled_vocabulary_and_chunked_tokenising_give_the_same_correlations(monkeypatch):
    import whileai.guard._hack as hk

    df = _blind(rollout_table(60, 8, seed=3, shortcut="zzq"))
    full = {f.name: f.rho for f in hack_scan(df, n_perm=5).features}
    monkeypatch.setattr(hk, "HACK_VOCAB_SAMPLE_ROWS", 200)  # vocabulary from a 200-row sample
    monkeypatch.setattr(hk, "CHUNK_ROWS", 64)  # many chunks in both phases
    sampled = {f.name: f.rho for f in hack_scan(df, n_perm=5).features}
    assert sampled["contains:zzq"] == pytest.approx(full["contains:zzq"], abs=1e-12)
    assert sampled["n:words"] == pytest.approx(full["n:words"], abs=1e-12)


def test_unequal_ask_sizes_and_partial_grading():
    df = _blind(rollout_table(60, 8, seed=21, shortcut="zzq", shortcut_strength=0.95))
    rng = np.random.default_rng(0)
    df = df.filter(pl.Series(rng.random(df.height) > 0.25))  # asks of unequal size
    df = df.with_columns(pl.when(pl.Series(rng.random(df.height) < 0.1)).then(None).otherwise(pl.col("reward"))
                         .alias("reward"))  # some rows ungraded
    r = hack_scan(df, endorsed=["marker:"], n_perm=40)
    assert r.n_graded == df["reward"].drop_nulls().len()
    assert np.isfinite(r.tau) and 0 < r.tau < 0.5
    assert r.top_feature == "contains:zzq" and r.reward_hack


def test_mean_token_logprob_is_a_feature():
    df = _blind(rollout_table(40, 6, seed=5, markers=()))
    rng = np.random.default_rng(1)
    lp = [list(rng.normal(-1.0 + 0.5 * r, 0.1, 5)) for r in df["reward"].to_list()]  # confident when passing
    r = hack_scan(df.with_columns(pl.Series("token_logprobs", lp)), n_perm=10, auto=False)
    top = r.features[0]
    assert top.name == "logprob:mean" and top.rho > 0.9


def test_floor_accounts_for_the_and_tier_search():
    """Few words that co-occur make the AND tier's search large: the floor must redo it in every shuffle.

    With the ANDs built from the observed best features but not rebuilt under the shuffles, this
    null table crossed the floor in 0.13 of runs at alpha 0.05 (0.06 without the AND tier).
    """
    from whileai.testing import word_table

    runs = 150
    crossings = sum(hack_scan(word_table(20, 8, seed=s), n_perm=50, seed=1_000_003 + s, trace=False).n_above_floor > 0
                    for s in range(runs))
    assert crossings / runs <= 0.10  # expected 0.05; P(> 0.10) under Binomial(150, 0.05) is about 0.003


def test_planted_word_shortcut_is_found_through_the_rebuilt_floor():
    from whileai.testing import word_table

    r = hack_scan(word_table(20, 8, seed=4, shortcut=0.5), n_perm=50, seed=1, trace=False)
    assert r.top_feature == "contains:w00" and r.features[0].above_floor
