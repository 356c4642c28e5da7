"""whileai.stats.power.noncentral_t_sf against scipy.stats.nct.sf, the reference it stands in for."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
from scipy import optimize, stats

from whileai.stats.power import noncentral_t_sf


def test_matches_scipy_stats_nct_over_a_wide_grid():
    df = np.concatenate([np.arange(1, 60), np.geomspace(60, 1e9, 60)])
    nc = np.concatenate([np.linspace(-80, 80, 321), [-1e6, -1e3, 1e3, 1e6]])
    d, n = np.meshgrid(df, nc)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy's own far-tail warnings
        for alpha in (0.2, 0.05, 0.01, 1e-6):
            q = stats.t.ppf(1 - alpha / 2, d)
            ref = stats.nct.sf(q, d, n)
            got = noncentral_t_sf(q, d, n)
            assert not np.isnan(got).any()
            np.testing.assert_allclose(got, ref, rtol=0, atol=1e-15)


def test_a_power_search_does_not_import_scipy_stats():
    """The compare command's sizing (the t test's power) runs on scipy.special alone where SciPy allows."""
    code = (
        "import sys, scipy\n"
        "from whileai.measure._holdout import detectable_gain\n"
        "g = detectable_gain(12_500, lambda gain: 0.3)\n"
        "old = tuple(int(p) for p in scipy.__version__.split('.')[:2]) < (1, 15)\n"
        "print(repr(g), old or 'scipy.stats' not in sys.modules)\n"
    )
    gain, clean = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert clean == "True"

    def power(g: float) -> float:  # the two-sided paired t test's power, from scipy.stats itself
        df, nc = 12_499, g * np.sqrt(12_500) / 0.3
        q = stats.t.ppf(0.975, df)
        return float(stats.nct.sf(q, df, nc) + stats.nct.sf(q, df, -nc))

    assert float(gain) == pytest.approx(optimize.brentq(lambda g: power(g) - 0.8, 1e-4, 1.0, xtol=1e-14), abs=1e-10)
