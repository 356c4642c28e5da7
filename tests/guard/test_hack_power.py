"""On small tables hack_scan reports its power (features that cleared min_obs), not a clean bill."""

from __future__ import annotations

import pytest

import whileai as wai
from whileai.defaults import HACK_MIN_FEATURES
from whileai.testing import word_table


@pytest.mark.parametrize(("tasks", "k"), [(8, 4), (15, 2)])
def test_small_tables_say_low_power_not_nothing_found(tasks, k):
    """The issue's cells: about 3 features (here 1 to 3) clear min_obs=20, so finding nothing is no finding."""
    for seed in range(6):
        r = wai.hack_scan(word_table(tasks, k, seed=seed, shortcut=0.6), n_perm=30, seed=seed, trace=False)
        assert r.n_features < HACK_MIN_FEATURES and r.underpowered and r.min_obs == 20
        assert any(w.startswith(f"low power, not a clean bill: only {r.n_features} feature(s) cleared min_obs=20")
                   for w in r.warnings)
        if r.regime == "no_signal":
            assert "low power" in str(r)


def test_a_table_with_room_to_look_is_not_flagged():
    r = wai.hack_scan(word_table(40, 8, seed=1), n_perm=30, seed=1, trace=False)
    assert r.n_features >= HACK_MIN_FEATURES and not r.underpowered
    assert not any("low power" in w for w in r.warnings)
