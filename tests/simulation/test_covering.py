from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from whileai.simulation._covering import covered_pairs, order_block


def all_pairs(sizes):
    """Every value pair across every pair of axes, enumerated directly (the reference)."""
    return {(a, b, va, vb) for a, b in itertools.combinations(range(len(sizes)), 2)
            for va in range(sizes[a]) for vb in range(sizes[b])}


def pairs_of(cells, sizes):
    return {(a, b, int(c[a]), int(c[b])) for c in cells for a, b in itertools.combinations(range(len(sizes)), 2)}


def make(sizes, hard_fn, seed=0):
    cells = np.stack(np.meshgrid(*[np.arange(s) for s in sizes], indexing="ij"), -1).reshape(-1, len(sizes))
    hard = np.array([hard_fn(c) for c in cells])
    priority = np.random.default_rng(seed).random(len(cells))
    return cells, hard, priority


@pytest.mark.parametrize("sizes", [(1, 4, 5, 3), (3, 4, 5, 3), (2, 4, 5, 1), (6, 4, 5, 3)])
def test_greedy_prefix_covers_every_pair_well_before_the_full_product(sizes):
    cells, hard, priority = make(sizes, lambda c: c[2] >= 3)
    n = len(cells)
    order = order_block(sizes, hard, priority, n, hard_share=0.4)
    picked = [order.cells[p.cell] for p in order.picks]
    reference = all_pairs(sizes)
    assert order.pairs_total == len(reference)
    # the whole replica-0 order is a permutation of the product
    assert sorted(p.cell for p in order.picks) == list(range(n))
    # find the first prefix that covers every pair (reference enumeration)
    covered: set = set()
    first_full = None
    for i, c in enumerate(picked, start=1):
        covered |= pairs_of([c], sizes)
        if covered == reference:
            first_full = i
            break
    assert first_full is not None
    # a pairwise array needs at least the largest pair product rows; greedy stays within 1.6x of it
    lower = max(sizes[a] * sizes[b] for a, b in itertools.combinations(range(len(sizes)), 2))
    assert lower <= first_full <= math.ceil(1.6 * lower) + 2
    assert covered_pairs(order.cells, sizes, [p.cell for p in order.picks[:first_full]]) == len(reference)


@pytest.mark.parametrize("share", [0.0, 0.25, 0.4, 0.5, 1.0])
def test_every_prefix_keeps_the_hard_share(share):
    sizes = (2, 4, 5, 3)
    cells, hard, priority = make(sizes, lambda c: c[2] >= 3 or c[1] == 2)
    order = order_block(sizes, hard, priority, 300, hard_share=share)
    flags = [bool(hard[p.cell]) for p in order.picks]
    for i in range(1, len(flags) + 1):
        assert sum(flags[:i]) == math.floor(i * share + 0.5)


def test_order_is_nested_and_cycles_replicas():
    sizes = (1, 4, 5, 3)
    cells, hard, priority = make(sizes, lambda c: c[2] >= 3)
    long = order_block(sizes, hard, priority, 500, hard_share=0.4).picks
    for n in (1, 7, 16, 60, 61, 200):
        assert order_block(sizes, hard, priority, n, hard_share=0.4).picks == long[:n]
    # past the product, every cell comes back as replica 1, 2, ... in the same per-tier order
    counts = {}
    for p in long:
        counts.setdefault(p.cell, []).append(p.replica)
    assert all(r == list(range(len(r))) for r in counts.values())
    assert max(len(r) for r in counts.values()) - min(len(r) for r in counts.values()) <= 2


def test_seed_changes_the_order_but_not_the_coverage_bound():
    sizes = (1, 4, 5, 3)
    a = order_block(sizes, *make(sizes, lambda c: c[2] >= 3, seed=1)[1:], 20, hard_share=0.4).picks
    b = order_block(sizes, *make(sizes, lambda c: c[2] >= 3, seed=2)[1:], 20, hard_share=0.4).picks
    assert a != b
