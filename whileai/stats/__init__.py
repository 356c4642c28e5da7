"""Pure numeric kernels on numpy arrays: bootstrap, permutation, pass@k, Wilson, kappa, power."""

from whileai.stats.rng import check_rng

__all__ = ["check_rng"]
