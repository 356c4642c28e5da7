"""hack_scan in bounded memory: a chunked feature pass gives the one-chunk report exactly.

The features of a row depend on the row and the vocabulary only, and the kernel sees the rows in
a canonical order (by ask, then by content), so chunk size and input order change nothing: every
number, name and flag of the report is equal, not merely close.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import whileai.guard._hack as hk
from tests._same import same
from whileai import table
from whileai.guard import hack_scan
from whileai.testing import rollout_table


def _planted(seed: int = 3) -> pl.DataFrame:
    """Tool calls, markers and conversations, a planted word shortcut, asks of unequal size, some ungraded rows."""
    df = rollout_table(60, 8, seed=seed, shortcut="zzq", shortcut_strength=0.9)
    outcome = r"resolved it\.|could not finish\."  # judge-readable outcome: only planted words track reward
    df = df.with_columns(
        pl.col("final_text").str.replace_all(outcome, "replied."),
        pl.col("messages").list.eval(pl.element().struct.with_fields(pl.field("content").str.replace_all(outcome, "replied."))),
    )
    rng = np.random.default_rng(seed)
    df = df.filter(pl.Series(rng.random(df.height) > 0.2))
    return df.with_columns(pl.when(pl.Series(rng.random(df.height) < 0.05)).then(None).otherwise(pl.col("reward"))
                           .alias("reward"))


def _scan(df: pl.DataFrame, **kw):
    return hack_scan(df, endorsed=["marker:"], n_perm=40, seed=5, **kw).model_dump()


def test_chunked_features_give_the_one_chunk_report_exactly(monkeypatch):
    df = _planted()
    whole = _scan(df)
    assert whole["top_feature"] == "contains:zzq" and whole["reward_hack"]
    assert any(f["name"].startswith("tool:") for f in whole["features"])
    monkeypatch.setattr(hk, "_CHUNK", 37)  # many chunks, boundaries inside asks, tools absent from some chunks
    same(_scan(df), whole)


def test_row_order_does_not_change_the_report(monkeypatch):
    df = _planted(seed=8)
    whole = _scan(df)
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=1)
    monkeypatch.setattr(hk, "_CHUNK", 50)
    same(_scan(shuffled), whole)


def test_user_features_across_chunks_keep_their_kind_and_row_index(monkeypatch):
    df = _planted(seed=4)
    feats = {"says_zzq": lambda row: "zzq" in (row.get("final_text") or ""),
             "length": lambda row: len(row.get("final_text") or "")}
    whole = _scan(df, features=feats)
    monkeypatch.setattr(hk, "_CHUNK", 29)
    same(_scan(df, features=feats), whole)
    graded = df.filter(pl.col("reward").is_not_null())
    bad = graded["rollout_id"][100]

    def boom(row):
        if row["rollout_id"] == bad:
            raise ValueError("no")
        return 1.0

    with pytest.raises(hk.ArgumentError, match=r"feature 'boom' raised ValueError: no on graded row 100"):
        hack_scan(df, features={"boom": boom}, n_perm=5)


def test_sampled_vocabulary_is_chosen_by_ask_and_is_the_same_in_chunks(monkeypatch):
    df = _planted(seed=6)
    monkeypatch.setattr(hk, "HACK_VOCAB_SAMPLE_ROWS", 150)  # rank the vocabulary on about 150 rows' asks
    whole = _scan(df)
    monkeypatch.setattr(hk, "_CHUNK", 41)
    same(_scan(df.sample(fraction=1.0, shuffle=True, seed=2)), whole)
    keys = table.frame(df).filter(pl.col("reward").is_not_null())["task_key"]
    mask = hk.sample_mask(keys, 150 / keys.len())
    per_ask = pl.DataFrame({"k": keys, "m": mask}).group_by("k").agg(pl.col("m").n_unique())
    assert per_ask["m"].max() == 1  # whole asks in or out
    assert 0 < mask.sum() < keys.len()


def test_canonical_order_is_the_sort_by_ask_signature_reward_and_feature_bits():
    """Only rows tied in ask, signature and reward are hashed; the order is the full four-key sort's."""
    from whileai.guard._tokens import combine

    rng = np.random.default_rng(0)
    for trial in range(200):
        n = int(rng.integers(1, 300))
        keys = pl.Series(rng.integers(0, rng.integers(1, 30), n).astype(str))
        sig = rng.integers(0, rng.integers(1, 6), n).astype(np.uint64)
        y = rng.integers(0, 2, n).astype(float)
        cols = [rng.integers(0, rng.integers(1, 4), n).astype(np.float32) for _ in range(int(rng.integers(0, 4)))]
        if cols and trial % 3 == 0:
            cols[0][rng.random(n) < 0.2] = np.nan
        got = hk.Rows(n, keys, y, [], cols, [], None, [], sig)
        gid = keys.rank("dense").to_numpy().astype(np.int64)
        h = np.zeros(n, np.uint64)
        for col in cols:
            h = combine(h, col.view(np.uint32).astype(np.uint64))
        want = np.lexsort((h, y, sig, gid))
        out = hk._canonical(got)
        assert np.array_equal(out.y, y[want]) and np.array_equal(out.sig, sig[want]), trial
        assert all(np.array_equal(a, c[want], equal_nan=True) for a, c in zip(out.dense_cols, cols)), trial


def test_presence_matrix_built_from_sorted_hits_is_the_summed_coo_one():
    import scipy.sparse as sp

    from whileai.guard._hackfeat import _presence

    rng = np.random.default_rng(0)
    for trial in range(200):
        n, m, k = int(rng.integers(1, 50)), int(rng.integers(1, 30)), int(rng.integers(0, 200))
        r, c = rng.integers(0, n, k), rng.integers(0, m, k)
        if trial % 2:  # distinct hits by row then column, as the chunk pass gives them
            code = np.unique(r * m + c)
            r, c = code // m, code % m
        want = sp.csr_matrix((np.ones(k if trial % 2 == 0 else r.size, np.float32), (r, c)), shape=(n, m))
        want.sum_duplicates()
        want.data[:] = 1.0
        got = _presence(r, c, n, m)
        assert got.shape == want.shape and got.has_canonical_format
        for part in ("indptr", "indices", "data"):
            assert getattr(got, part).dtype == getattr(want, part).dtype, (trial, part)
            assert np.array_equal(getattr(got, part), getattr(want, part)), (trial, part)
