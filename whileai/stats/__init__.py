"""Pure numeric kernels on numpy arrays: bootstrap, permutation, pass@k, Wilson, kappa, power."""

from whileai.stats.agreement import cohen_kappa, confusion_2x2, percent_agreement
from whileai.stats.rng import check_rng

__all__ = ["check_rng", "cohen_kappa", "confusion_2x2", "percent_agreement"]
