"""self_check: on target with the library's interval, and able to flag one that under-covers."""

from __future__ import annotations

import pytest

from whileai.errors import ArgumentError
from whileai.measure import self_check


def test_quick_self_check_is_on_target_and_matches_compare_runs():
    r = self_check(trials=120, seed=0, scope="compare")
    assert len(r.checks) == 8 and r.matched_compare and r.ok and r.n_flagged == 0
    names = [c["name"] for c in r.checks]
    assert names[0] == "false alarm, identical arms, 30 cases"
    assert "95% range holds the true gain, 10 cases" in names
    assert "detects +16 points, 60 cases (theory)" in names
    text = str(r)
    assert "all 8 checks on target." in text and "matched it" in text


def test_same_seed_same_measurements():
    a, b = self_check(trials=30, seed=4, scope="compare"), self_check(trials=30, seed=4, scope="compare")
    assert [c["measured"] for c in a.checks] == [c["measured"] for c in b.checks]


def test_flags_an_interval_that_undercovers_and_a_kernel_that_disagrees(monkeypatch):
    import whileai.measure._selfcheck as sc

    real = sc._intervals

    def half_width(d, **kwargs):  # an interval half as wide as it should be: covers about 0.7
        lo, hi = real(d, **kwargs)
        mid = (lo + hi) / 2
        return mid - (hi - lo) / 4, mid + (hi - lo) / 4

    monkeypatch.setattr(sc, "_intervals", half_width)
    r = self_check(trials=200, seed=1, scope="compare")
    cover = [c for c in r.checks if "true gain" in c["name"]]
    assert all(c["flagged"] and c["measured"] < 0.85 for c in cover)
    assert not r.matched_compare and not r.ok
    assert "did NOT match compare_runs" in str(r)


def test_percentile_bootstrap_reads_lower_than_t_on_ten_tasks():
    # the same simulated evaluations (same seed) read with both intervals; the paired-comparison
    # checks draw first from the seed, so scope="compare" gives them the same numbers as "all"
    t = self_check(trials=200, seed=0, scope="compare")
    boot = self_check(trials=200, seed=0, ci_method="percentile", n_boot=400, scope="compare")
    name = "95% range holds the true gain, 10 cases"
    t10 = next(c["measured"] for c in t.checks if c["name"] == name)
    b10 = next(c["measured"] for c in boot.checks if c["name"] == name)
    assert b10 < t10 and boot.matched_compare


def test_bad_arguments():
    with pytest.raises(ArgumentError, match="trials must be an integer >= 1"):
        self_check(trials=0)
    with pytest.raises(ArgumentError, match="flag_at must be a number > 0"):
        self_check(flag_at=0)


def test_full_scope_adds_the_interval_and_test_checks_and_they_are_on_target():
    r = self_check(trials=40, seed=2)
    names = [c["name"] for c in r.checks]
    assert len(names) == 15 and names[:8] == [c["name"] for c in self_check(trials=2, seed=2, scope="compare").checks]
    for name in ("pass^4 range, 8 rollouts, 30 cases", "pass@1 range, sparse passes, 16 cases",
                 "judge agreement range, 4 labels x 20 cases", "false alarm, hack scan floor",
                 "false alarm, sign-flip verdict, 8 cases", "false flag, failure table, 30 cases"):
        assert name in names
    assert r.ok and "all 15 checks on target." in str(r)
    with pytest.raises(ArgumentError, match="scope must be one of 'all', 'compare', got 'x'"):
        self_check(scope="x")  # type: ignore[arg-type]
