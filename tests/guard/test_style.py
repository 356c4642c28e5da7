"""Style markers, style_report and refusal_report."""

from __future__ import annotations

import numpy as np
import pytest

from whileai.errors import ArgumentError
from whileai.guard import refusal_report, style_markers, style_report
from whileai.stats import cluster_mean_ci


def rows_of(texts, rewards=None):
    return [{"scenario_id": f"t{i // 2}", "prompt": f"q{i}", "final_text": t,
             **({"reward": rewards[i]} if rewards is not None else {})} for i, t in enumerate(texts)]


def test_style_markers_polarity_and_existing_markers_kept():
    rows = rows_of(["Absolutely! Happy to help.", "It is worth noting the box is late.", "I apologize for that.",
                    "You're absolutely right.", "I can't help with that.", "", "The order shipped."])
    rows[6]["markers"] = {"judge_ok": 1.0}
    out = style_markers(rows)
    m = [r["markers"] for r in out]
    assert m[0]["no_boilerplate"] == 0.0 and m[0]["no_hedging"] == 1.0
    assert m[1]["no_hedging"] == 0.0
    assert m[2]["no_apology"] == 0.0
    assert m[3]["no_sycophancy"] == 0.0
    assert m[4]["answered"] == 0.0 and m[5]["answered"] == 0.0 and m[6]["answered"] == 1.0
    assert m[6]["judge_ok"] == 1.0 and all(v == 1.0 for k, v in m[6].items())
    custom = style_markers(rows, phrases={"no_hedging": ["the box"]})
    assert custom[1]["markers"]["no_hedging"] == 0.0
    with pytest.raises(ArgumentError, match="phrases must"):
        style_markers(rows, phrases={"no_hedging": "arguably"})


def test_style_report_numbers_degenerate_and_not_stamped():
    texts = ["I apologize, done." if i % 3 == 0 else "Done." for i in range(30)]
    rewards = [1.0 if i % 3 == 0 else float(i % 2) for i in range(30)]
    r = style_report(rows_of(texts, rewards))
    ap = r["markers"]["no_apology"]
    clean = np.array([0.0 if i % 3 == 0 else 1.0 for i in range(30)])
    groups = np.array([f"t{i // 2}" for i in range(30)])
    m, lo, hi = cluster_mean_ci(clean, groups)
    assert ap["clean"] == pytest.approx(clean.mean()) and ap["ci95"] == pytest.approx((lo, hi))
    assert ap["hits"] == 10 and ap["top_phrases"][0] == ("i apologize", 10)
    assert ap["reward_corr"] == pytest.approx(np.corrcoef(clean, rewards)[0, 1])
    assert r["markers"]["no_hedging"]["degenerate"] is True and r["markers"]["no_hedging"]["ci95"] is None
    assert any("degenerate markers" in w and "no_hedging" in w for w in r.warnings)
    text = str(r)
    assert text.splitlines()[-1].startswith("not stamped here: 8 markers in other families. trace_markers(rows) stamps honest_claims")
    assert "mark_grounding(rows) stamps argument_grounding" in text.splitlines()[-1]
    assert any("apology" in w and "rises" in w for w in r.warnings)  # corr clean~reward is negative: reward pays for apologies


def test_cluster_interval_covers_at_nominal_rate():
    """Simulated coverage of the cluster-robust interval on a clustered Bernoulli mean."""
    rng = np.random.default_rng(1)
    truth, hits, sims = 0.7, 0, 400
    groups = np.repeat(np.arange(40), 4)
    for _ in range(sims):
        p = np.clip(rng.beta(7, 3, 40), 0, 1)  # task-level rates around 0.7
        v = (rng.random(160) < p[groups]).astype(float)
        _, lo, hi = cluster_mean_ci(v, groups)
        hits += lo <= truth <= hi
    assert 0.91 <= hits / sims <= 0.98


def test_refusal_report():
    r = refusal_report(rows_of(["I can't help with that.", "Sure thing.", "I'm unable to do it.", "Done."]))
    assert (r["n_refused"], r["refusal_rate"], r["answered_rate"]) == (2, 0.5, 0.5)
    assert [e["index"] for e in r["examples"]] == [0, 2]
    assert dict(r["top_phrases"]) == {"i can't help with": 1, "i'm unable to": 1}
    none = refusal_report(rows_of(["ok", "fine"]))
    assert none["n_refused"] == 0 and none["ci95"] is None and "no interval" in none.warnings[0]
    with pytest.raises(ArgumentError, match="phrases"):
        refusal_report(rows_of(["x"]), phrases="no")
