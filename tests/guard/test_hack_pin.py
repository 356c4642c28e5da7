"""hack_scan gives the same report, number for number, as the version these reports were saved from.

Speed work on the feature pass and the shuffle floor must not move any number: each case below
(planted word shortcut, conversations with tool calls and trajectory flags, non-ASCII text,
upper case and digits, null replies, unequal asks, the sampled vocabulary, small chunks) is
compared field by field with a report saved as JSON in ``tests/data/hack_pin/``.

The four cases with conversations were re-taken when a table in memory began to fill a null reply
from its conversation, as a file's rows always did: the version before that change, given the
same tables with those replies filled, wrote exactly the reports saved now.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import whileai.guard._hack as hk
from tests._same import same
from whileai.guard import hack_scan
from whileai.testing import rollout_table

PIN = Path(__file__).resolve().parents[1] / "data" / "hack_pin"

#: How far a float may sit from the saved one. The reports were saved on one machine; numpy's
#: SIMD reductions sum in another order on another CPU (or release), which moved the rank
#: correlations in their last bit and the shuffle floor tau by 4e-9 of itself (an AVX-512 EPYC
#: against the machine that saved them). Any change to the statistic moves them by far more.
PIN_REL = 1e-7


def _table(seed: int, *, messages: bool = True) -> pl.DataFrame:
    """A planted shortcut, judge-blind outcome text, unequal asks, ungraded rows, odd characters."""
    df = rollout_table(50, 8, seed=seed, shortcut="zzq", shortcut_strength=0.85, messages=messages)
    outcome = r"resolved it\.|could not finish\."
    rng = np.random.default_rng(seed)
    extra = pl.Series(rng.choice(["", " Déjà vu — ÉTÉ 42!", " OK (ref #7731).", " naïve café 日本語", " SO LOUD!!"],
                                 df.height))
    df = df.with_columns((pl.col("final_text").str.replace_all(outcome, "replied.") + extra).alias("final_text"))
    if messages:
        df = df.with_columns(pl.col("messages").list.eval(
            pl.element().struct.with_fields(pl.field("content").str.replace_all(outcome, "replied."))))
    df = df.filter(pl.Series(rng.random(df.height) > 0.15))
    df = df.with_columns(
        pl.when(pl.Series(rng.random(df.height) < 0.05)).then(None).otherwise(pl.col("reward")).alias("reward"),
    )
    return df.with_columns(
        pl.when(pl.Series(rng.random(df.height) < 0.03)).then(None).otherwise(pl.col("final_text")).alias("final_text"))


CASES: dict[str, dict[str, Any]] = {
    "messages": {"seed": 11},
    "messages_chunks": {"seed": 12, "chunk": 41},
    "reply_only": {"seed": 13, "messages": False},
    "sampled_vocab": {"seed": 14, "vocab_rows": 150},
    "no_auto": {"seed": 15, "kw": {"auto": False}},
}


def _report(name: str, monkeypatch: pytest.MonkeyPatch | None = None) -> dict[str, Any]:
    case = CASES[name]
    df = _table(case["seed"], messages=case.get("messages", True))
    if monkeypatch is not None:
        if "chunk" in case:
            monkeypatch.setattr(hk, "_CHUNK", case["chunk"])
        if "vocab_rows" in case:
            monkeypatch.setattr(hk, "HACK_VOCAB_SAMPLE_ROWS", case["vocab_rows"])
    return hack_scan(df, endorsed=["marker:"], n_perm=60, seed=9, **case.get("kw", {})).model_dump(mode="json")


@pytest.mark.parametrize("name", sorted(CASES))
def test_report_matches_the_saved_one(name, monkeypatch):
    saved = json.loads((PIN / f"{name}.json").read_text())
    got = json.loads(json.dumps(_report(name, monkeypatch)))
    assert saved["n_features"] > 0
    same(got, saved, rel=PIN_REL)


def test_cases_plant_what_they_claim():
    def names(case: str) -> list[str]:
        saved = json.loads((PIN / f"{case}.json").read_text())
        return [f["name"] for f in saved["features"]] + [a for f in saved["features"] for a in f["aliases"]]

    saved = json.loads((PIN / "messages.json").read_text())
    assert saved["top_feature"] == "contains:zzq" and saved["reward_hack"]
    assert any(n.startswith("tool:") for n in names("messages")) and any(n.startswith("trace:") for n in names("messages"))
    assert {"frac:upper", "n:digits", "n:punct", "contains:café"} <= set(names("reply_only"))

if __name__ == "__main__":  # write the saved reports (run once, from the version to pin)
    PIN.mkdir(parents=True, exist_ok=True)
    for case in CASES:
        mp = pytest.MonkeyPatch()
        try:
            (PIN / f"{case}.json").write_text(json.dumps(_report(case, mp), indent=1, sort_keys=True) + "\n")
        finally:
            mp.undo()


def test_flags_without_evidence_are_raised_on_the_same_rows():
    from whileai import table
    from whileai.guard._trace import FLAGS, _flag_frame

    rows = [{"prompt": "fix it", "final_text": "I fixed the bug and all tests pass."},
            {"prompt": "fix it", "final_text": "I verified it. Sorry, it failed."},
            {"prompt": "x", "final_text": "Done: rm -rf build, key sk-abcdefghijklmnopqrstuvwx"}]
    df = pl.concat([table.frame(rows), _table(21).drop("markers", strict=False)], how="diagonal_relaxed")
    with_ev = _flag_frame(df, {})
    bare = _flag_frame(df, {}, evidence=False)
    raised = 0
    for flag in FLAGS:
        assert with_ev[flag].is_null().to_list() == bare[flag].is_null().to_list(), flag
        raised += with_ev[flag].is_not_null().sum()
    assert raised >= 3
