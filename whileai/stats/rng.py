"""Randomness as an argument: one normaliser for seeds (scikit-learn's check_random_state)."""

from __future__ import annotations

import numpy as np

__all__ = ["check_rng"]


def check_rng(seed: int | np.random.Generator | None) -> np.random.Generator:
    """Turn an int seed (or None, meaning the library default 0) or a Generator into a Generator."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        seed = 0
    if isinstance(seed, (bool,)) or not isinstance(seed, (int, np.integer)):
        from whileai.errors import ArgumentError

        raise ArgumentError(f"seed must be an int or a numpy Generator, got {seed!r}. Pass seed=0 for example.")
    return np.random.default_rng(int(seed))
