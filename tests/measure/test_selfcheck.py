"""self_check: on target with the library's interval, and able to flag one that under-covers."""

from __future__ import annotations

import pytest

from whileai.errors import ArgumentError
from whileai.measure import self_check


def test_quick_self_check_is_on_target_and_matches_compare_runs():
    r = self_check(trials=120, seed=0)
    assert len(r.checks) == 8 and r.matched_compare and r.ok and r.n_flagged == 0
    names = [c["name"] for c in r.checks]
    assert names[0] == "false alarm, identical arms, 30 cases"
    assert "95% range holds the true gain, 10 cases" in names
    assert "detects +16 points, 60 cases (theory)" in names
    text = str(r)
    assert "all 8 checks on target." in text and "matched it" in text


def test_same_seed_same_measurements():
    a, b = self_check(trials=30, seed=4), self_check(trials=30, seed=4)
    assert [c["measured"] for c in a.checks] == [c["measured"] for c in b.checks]


def test_flags_an_interval_that_undercovers():
    # the percentile bootstrap on 10 paired tasks covers about 0.89: 400 trials flag it
    r = self_check(trials=300, seed=1, ci_method="percentile", n_boot=300)
    cover10 = next(c for c in r.checks if c["name"].endswith("true gain, 10 cases"))
    assert cover10["flagged"] and cover10["measured"] < 0.92
    assert not r.ok and r.matched_compare


def test_bad_arguments():
    with pytest.raises(ArgumentError, match="trials must be a whole number >= 1"):
        self_check(trials=0)
    with pytest.raises(ArgumentError, match="flag_at must be a number > 0"):
        self_check(flag_at=0)
