"""judge_trust: agreement, kappa and Wilson against formulas; the statuses; halves, length, re-judge."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest

from whileai.errors import ArgumentError, JudgeError
from whileai.grade import format_judge_trust, judge_trust


def _table(tp, fp, fn, tn, *, kind="human", partial=0, ungraded=0, tasks=10, long_pass_bias=False):
    """Rows whose (judge, gold) pairs form the given confusion table."""
    pairs = [(1, 1)] * tp + [(1, 0)] * fp + [(0, 1)] * fn + [(0, 0)] * tn
    rows = []
    for i, (j, g) in enumerate(pairs):
        text = "x" * (300 if (long_pass_bias and j == 1) else 40 + (i % 7))
        rows.append({"scenario_id": f"t{i % tasks}", "rollout_id": f"r{i}", "prompt": f"ask {i}", "final_text": text,
                     "reward": float(j), "gold_reward": float(g), "gold_kind": kind})
    for i in range(partial):
        rows.append({"scenario_id": "tp", "rollout_id": f"p{i}", "prompt": "p", "final_text": "y", "reward": 0.5,
                     "gold_reward": 1.0, "gold_kind": kind})
    for i in range(ungraded):
        rows.append({"scenario_id": "tu", "rollout_id": f"u{i}", "prompt": "u", "final_text": "y", "reward": None,
                     "gold_reward": 1.0, "gold_kind": kind})
    return rows


def test_numbers_match_formulas_and_scipy():
    tp, fp, fn, tn = 53, 2, 2, 23
    r = judge_trust(_table(tp, fp, fn, tn))
    n = tp + fp + fn + tn
    po = (tp + tn) / n
    pe = ((tp + fp) / n) * ((tp + fn) / n) + ((fn + tn) / n) * ((fp + tn) / n)
    assert r.n_gold == n and r.confusion == {"tp": tp, "fp": fp, "fn": fn, "tn": tn}
    assert r.agreement == pytest.approx(po)
    assert r.kappa == pytest.approx((po - pe) / (1 - pe))
    ci = binomtest(tp + tn, n).proportion_ci(method="wilson")
    assert r.agreement_ci95 == pytest.approx((ci.low, ci.high))
    assert r.agreement_low == pytest.approx(ci.low)
    assert r.judge_pass_rate == pytest.approx((tp + fp) / n)
    assert r.gold_pass_rate == pytest.approx((tp + fn) / n)
    assert r.pass_when_gold_fail == pytest.approx(fp / (fp + tn))
    assert r.fail_when_gold_pass == pytest.approx(fn / (fn + tp))
    assert r.ok and r.status == "ok" and r.gold_kind == "human"
    assert r.summary() == {"agreement": pytest.approx(po), "agreement_low": pytest.approx(ci.low),
                           "kappa": pytest.approx(r.kappa), "n_gold": n, "ok": True, "status": "ok"}
    text = format_judge_trust(r)
    assert text.splitlines()[0].startswith("OK") and "agreement 95% (95% 88%..98%, n=80 over 10 tasks, clustered by task), kappa 0.88" in text
    assert r.agreement_method == "cluster_wilson" and r.n_gold_tasks == 10


def test_all_agree():
    r = judge_trust(_table(30, 0, 0, 30))
    assert r.agreement == 1.0 and r.kappa == pytest.approx(1.0) and r.ok
    assert r.n_disagreements == 0 and r.disagreements == []


def test_fail_says_number_floor_and_fix():
    r = judge_trust(_table(30, 12, 10, 28))
    assert not r.ok and r.status == "fail"
    assert any("under the 80% floor" in w and "disagreements" in w for w in r.warnings)
    assert any("kappa against human labels is" in w and "0.60 floor" in w for w in r.warnings)
    assert format_judge_trust(r).startswith("FAIL")
    # the lower bound decides, not the point estimate: 85% on 40 rows has a lower bound under 0.80
    small = judge_trust(_table(17, 3, 3, 17))
    assert small.agreement == pytest.approx(0.85) and small.agreement_low < 0.8 and not small.ok


def test_review_queue():
    r = judge_trust(_table(10, 2, 1, 10))
    assert r.n_disagreements == 3 and len(r.disagreements) == 3
    keys = {d["key"] for d in r.disagreements}
    assert keys == {"r10", "r11", "r12"}
    assert all(d["reward"] != d["gold_reward"] for d in r.disagreements)


def test_not_measured():
    rows = [{"scenario_id": "a", "prompt": "p", "reward": 1.0}]
    r = judge_trust(rows)
    assert not r.ok and r.status == "not_measured" and r.n_labeled == 0
    assert format_judge_trust(r).startswith("NOT MEASURED")
    assert any("unmeasured" in w and "attach_labels" in w for w in r.warnings)
    r = judge_trust(_table(0, 0, 0, 0, ungraded=5))
    assert r.status == "not_measured" and r.skipped["ungraded"] == 5


@pytest.mark.parametrize("which,table", [("passes", (20, 0, 5, 0)), ("failures", (0, 3, 0, 20))])
def test_one_class(which, table):
    r = judge_trust(_table(*table))
    assert r.one_class and math.isnan(r.kappa) and not r.ok and r.status == "inconclusive"
    assert any(f"all {which}" in w and "kappa and the length check are skipped" in w for w in r.warnings)
    assert r.length_sensitivity == {"skipped": "gold has one class only"}
    assert format_judge_trust(r).startswith("INCONCLUSIVE")


def test_partial_credit_skipped_and_inconclusive():
    r = judge_trust(_table(40, 0, 0, 40, partial=5))  # 5 of 85 = 6%: counted, still ok
    assert r.skipped["partial"] == 5 and r.ok and r.n_gold == 80
    r = judge_trust(_table(40, 0, 0, 40, partial=20))  # 20 of 100: over 10%
    assert not r.ok and r.status == "inconclusive"
    assert any("Criterion(kind='hard')" in w and "20 of 100" in w for w in r.warnings)
    assert judge_trust(_table(40, 0, 0, 40, partial=20), max_skipped_share=0.5).ok


def test_model_gold_refused_unless_allowed():
    with pytest.raises(JudgeError, match="written by a model.*allow_model_gold=True"):
        judge_trust(_table(20, 0, 0, 20, kind="model"))
    r = judge_trust(_table(20, 0, 0, 20, kind="model"), allow_model_gold=True)
    assert r.ok and r.gold_kind == "model"
    mixed = _table(20, 0, 0, 20) + _table(5, 0, 0, 5, kind="model")
    for row in mixed[40:]:
        row["rollout_id"] += "m"
    r = judge_trust(mixed)
    assert r.n_gold == 40 and r.skipped["model_gold"] == 10
    assert any("10 model-labeled rows were not counted" in w for w in r.warnings)


def test_program_and_unknown_kinds():
    r = judge_trust(_table(20, 0, 0, 20, kind="verifier"))
    assert r.gold_kind == "program" and "gold labels (program)" in format_judge_trust(r)
    rows = _table(20, 0, 0, 20)
    for row in rows:
        row.pop("gold_kind")
    r = judge_trust(rows)
    assert r.gold_kind == "unknown" and any("no gold_kind" in w for w in r.warnings)


def test_gold_must_be_zero_or_one():
    rows = _table(5, 0, 0, 5)
    rows[0]["gold_reward"] = 0.5
    with pytest.raises(JudgeError, match="gold_reward must be 0 or 1, got 0.5"):
        judge_trust(rows)


def test_halves_split_tasks():
    r = judge_trust(_table(40, 5, 5, 30, tasks=16), seed=1)
    a, b = r.held_out_halves["a"], r.held_out_halves["b"]
    assert a["n"] + b["n"] == r.n_gold
    assert a["n_tasks"] + b["n_tasks"] == 16
    assert r.held_out_halves == judge_trust(_table(40, 5, 5, 30, tasks=16), seed=1).held_out_halves
    assert r.held_out_halves["gap"] == pytest.approx(a["agreement"] - b["agreement"])


def test_length_bias_flagged_within_label():
    # Within rows people passed, the judge passes exactly the long ones: a pure length reader.
    rows = []
    for i in range(80):
        long_ = i % 2 == 0
        gold = 1.0 if i < 40 else 0.0
        rows.append({"scenario_id": f"t{i % 8}", "rollout_id": f"r{i}", "prompt": "p",
                     "final_text": "y" * (400 if long_ else 50), "reward": 1.0 if long_ else 0.0,
                     "gold_reward": gold, "gold_kind": "human"})
    r = judge_trust(rows)
    ls = r.length_sensitivity
    assert ls["flagged"] and ls["max_gap"] == pytest.approx(1.0)
    assert ls["gold_1"]["long"]["pass_rate"] == 1.0 and ls["gold_1"]["short"]["pass_rate"] == 0.0
    assert any("reads length" in w for w in r.warnings)
    clean = judge_trust(_table(30, 0, 0, 30))
    assert not clean.length_sensitivity["flagged"]


def test_rejudge_consistency_and_filler():
    rows = _table(25, 0, 0, 25)

    def honest(row):
        return row["rollout_id"] in {f"r{i}" for i in range(25)}

    r = judge_trust(rows, honest)
    p = r.perturbation
    assert p["consistency_flips"] == 0 and p["filler_flips"] == 0 and p["n"] == 40
    assert r.judge_name == "honest"

    def length_reader(row):  # passes anything long enough; the filler pushes short failures over
        return len(row.get("final_text", "")) > 100 or row["rollout_id"] in {f"r{i}" for i in range(25)}

    r = judge_trust(rows, length_reader, sample=50)
    assert r.perturbation["filler_flips"] == 25 and r.perturbation["filler_flagged"]
    assert any("filler" in w and "pad" in w for w in r.warnings)

    rng = np.random.default_rng(0)
    r = judge_trust(rows, lambda row: bool(rng.random() < 0.5), sample=50)
    assert r.perturbation["consistency_flagged"]


def test_probes_need_the_judge():
    r = judge_trust(_table(5, 0, 0, 5), probes="all")
    assert any("probes need the judge" in w for w in r.warnings)


@pytest.mark.parametrize("kwargs,match", [({"min_agreement": 1.5}, "min_agreement"), ({"min_kappa": 2}, "min_kappa"),
                                          ({"sample": 0}, "sample"), ({"probes": ["nope"]}, "probes must be names"),
                                          ({"max_skipped_share": -0.1}, "max_skipped_share")])
def test_bad_options(kwargs, match):
    with pytest.raises(ArgumentError, match=match):
        judge_trust(_table(5, 0, 0, 5), **kwargs)


def test_judge_not_callable():
    with pytest.raises(JudgeError, match="judge must be a callable"):
        judge_trust(_table(5, 0, 0, 5), "judge")


def test_agreement_is_clustered_by_task_when_tasks_carry_several_labels():
    """Judge accuracy varying by task, 8 labelled rollouts a task: rows read as independent covered 0.70-0.91."""
    from whileai.stats.score import cluster_wilson
    from whileai.stats.wilson import wilson

    rng = np.random.default_rng(4)
    rows = []
    acc = rng.beta(1.7, 0.3, size=20)
    for t in range(20):
        for i in range(8):
            gold = int(rng.random() < 0.6)
            judge = gold if rng.random() < acc[t] else 1 - gold
            rows.append({"scenario_id": f"t{t}", "rollout_id": f"r{t}-{i}", "prompt": f"ask {t} {i}",
                         "final_text": "x" * (40 + i), "reward": float(judge), "gold_reward": float(gold),
                         "gold_kind": "human"})
    r = judge_trust(rows)
    agree = np.array([[float(rows[t * 8 + i]["reward"] == rows[t * 8 + i]["gold_reward"]) for i in range(8)]
                      for t in range(20)])
    lo, hi = cluster_wilson(agree.sum(axis=1), np.full(20, 8))
    assert r.agreement_method == "cluster_wilson" and r.n_gold_tasks == 20
    assert r.agreement_ci95 == pytest.approx((float(lo), float(hi)))
    wlo, _ = wilson(agree.sum(), 160)
    assert r.agreement_low < float(wlo)  # the gate reads the honest, lower bound
    assert "over 20 tasks, clustered by task" in format_judge_trust(r)
    single = judge_trust([{**row, "scenario_id": row["rollout_id"]} for row in rows])
    assert single.agreement_method == "wilson" and single.agreement_low == pytest.approx(float(wlo))
