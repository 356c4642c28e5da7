"""Pure numeric kernels on numpy arrays: bootstrap, permutation, pass@k, Wilson, kappa, power, correlation, MinHash."""

from whileai._lazy import attach_stub

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
