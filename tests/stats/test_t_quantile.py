"""The Student-t quantile without scipy, against scipy.special.stdtrit, and the envelope's one-end Wilson."""

import math

import numpy as np
import pytest
from scipy.special import gammaincinv, stdtr, stdtrit

from whileai.defaults import T_QUANTILE_SERIES_MAX_DF
from whileai.stats.intervals import normal_quantile, t_quantile
from whileai.stats.score import _modified_wilson, clustered_rate_interval, modified_wilson

DFS = [*range(1, 80), *range(80, 3 * T_QUANTILE_SERIES_MAX_DF, 41), T_QUANTILE_SERIES_MAX_DF,
       T_QUANTILE_SERIES_MAX_DF + 1, 10**4, 10**5, 10**6, 10**8]


@pytest.mark.parametrize(("level", "tol"), [(0.01, 1e-12), (0.5, 1e-12), (0.8, 1e-12), (0.9, 1e-12),
                                            (0.95, 1e-12), (0.99, 1e-12), (0.999, 1e-12),
                                            (0.9999, 1e-11), (0.999999, 1e-9)])
def test_whole_df_gives_back_its_tail_under_scipys_cdf(level, tol):
    # the reference is scipy's t CDF (the incomplete beta, accurate to about 1e-15 in every scipy we
    # admit), evaluated on the lower tail so the tail keeps its relative precision: a relative error
    # e in t moves the tail by about (1 + t^2) e
    tail = (1.0 - level) / 2.0
    for nu in DFS:
        ours = t_quantile(level, nu)
        assert isinstance(ours, float)
        assert abs(float(stdtr(nu, -ours)) / tail - 1.0) <= tol * (1.0 + ours * ours) + 1e-14, (level, nu, ours)


@pytest.mark.parametrize("level", [0.01, 0.5, 0.9, 0.95, 0.99, 0.999, 0.9999, 0.999999])
def test_whole_df_matches_stdtrit(level):
    # scipy's own inverse, a looser reference: scipy 1.13's is good to about 2e-11 (its stdtrit(1, 0.75)
    # is 1 + 1.3e-11, where tan(pi / 4) is 1), 1.17's to about 1e-15; ours is within 2e-10 of either
    for nu in DFS:
        ours, ref = t_quantile(level, nu), float(stdtrit(nu, 0.5 + level / 2.0))
        assert abs(ours - ref) <= 5e-10 * ref, (level, nu, ours, ref)


def test_closed_forms_and_the_normal_limit():
    # Cauchy at one df, the closed form at two (t = 2 (q - 1/2) / sqrt(2 q (1 - q)))
    assert t_quantile(0.95, 1) == pytest.approx(math.tan(math.pi * 0.475), rel=1e-15)
    q = 0.975
    assert t_quantile(0.95, 2) == pytest.approx((2 * q - 1) / math.sqrt(2 * q * (1 - q)), rel=1e-14)
    assert t_quantile(0.95, math.inf) == normal_quantile(0.95)
    assert t_quantile(0.95, np.float64(30.0)) == t_quantile(0.95, 30)
    # decreasing in df toward z, increasing in the level
    seq = [t_quantile(0.95, nu) for nu in range(1, 400)]
    assert all(a > b for a, b in zip(seq, seq[1:])) and seq[-1] > normal_quantile(0.95)
    assert t_quantile(0.9, 7) < t_quantile(0.95, 7) < t_quantile(0.99, 7)


def test_fractional_df_and_arrays_are_stdtrits():
    assert t_quantile(0.95, 7.5) == float(stdtrit(7.5, 0.975))
    arr = np.array([3.0, 10.0, np.inf])
    out = t_quantile(0.95, arr)
    assert isinstance(out, np.ndarray)
    np.testing.assert_allclose(out, [stdtrit(3.0, 0.975), stdtrit(10.0, 0.975), 1.959963984540054], rtol=1e-14)


def test_one_end_wilson_is_that_end_of_the_whole():
    x = np.array([0.0, 0.5, 1.0, 2.0, 3.0, 3.5, 10.0, 47.0, 48.5, 49.0, 50.0])
    n = np.full_like(x, 50.0)
    lo, hi = modified_wilson(x, n)
    lo_only, hi_wilson = _modified_wilson(x, n, 0.95, lower=True, upper=False)
    lo_wilson, hi_only = _modified_wilson(x, n, 0.95, lower=False, upper=True)
    np.testing.assert_array_equal(lo_only, lo)
    np.testing.assert_array_equal(hi_only, hi)
    # the left-out end is Wilson's: the Poisson corner only ever widens it
    assert (lo_wilson >= lo).all() and (hi_wilson <= hi).all()
    assert (lo_wilson > lo).any() and (hi_wilson < hi).any()
    # the corner itself: lambda_x / n, the 5% quantile of Gamma(x, 1) over n (Brown, Cai and DasGupta 4.1.1)
    assert lo[1] == pytest.approx(min(float(lo_wilson[1]), gammaincinv(0.5, 0.05) / 50.0), rel=1e-15)


@pytest.mark.parametrize("seed", range(4))
def test_the_one_end_envelope_gives_the_both_ends_interval(monkeypatch, seed):
    from whileai.stats import score

    rng = np.random.default_rng(seed)
    # rates near 0 and 1 too, so the Poisson corners are on the envelope's path
    passes = rng.binomial(8, rng.choice([0.02, 0.3, 0.7, 0.98], 40))
    rollouts = rng.integers(6, 10, 40)
    passes = np.minimum(passes, rollouts)
    got = clustered_rate_interval(passes, rollouts)
    whole = score._modified_wilson
    monkeypatch.setattr(score, "_modified_wilson",
                        lambda x, n, level, *, lower, upper: whole(x, n, level, lower=True, upper=True))
    assert clustered_rate_interval(passes, rollouts) == got
