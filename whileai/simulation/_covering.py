"""A pairwise (strength-2) covering order over a grid of situation axes.

Each block of the grid (the main block over tools x world state x stance x ask family, and one
block per policy clause) is put in one fixed order: a greedy covering array first (each next cell
is the one that covers the most value pairs not yet covered, the AETG heuristic of Cohen et al.
1997, IEEE TSE 23(7)), then the rest of the block by a seeded priority, then the block again
as replica 1, 2, ... Every prefix of the order keeps the hard tiers at ``hard_share``. A run of N
tasks takes the first N cells, so a smaller run's tasks are a subset of a larger run's, and the
order never depends on N, on other blocks, or on which thread ran first.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

__all__ = ["BlockOrder", "Pick", "covered_pairs", "order_block"]


class Pick(NamedTuple):
    """One task slot: the cell (index into the block's product) and its replica number."""

    cell: int
    replica: int


class BlockOrder(NamedTuple):
    """The order of one block's cells, and how to read pair coverage off it."""

    picks: list[Pick]
    cells: np.ndarray
    """Every cell as a row of value indices, one column per axis (the full product)."""
    pairs_total: int
    """Value pairs across all pairs of axes (what a pairwise covering array must cover)."""


def _product(sizes: Sequence[int]) -> np.ndarray:
    if not sizes:
        return np.zeros((1, 0), dtype=np.int64)
    grids = np.meshgrid(*[np.arange(s) for s in sizes], indexing="ij")
    return np.stack([g.ravel() for g in grids], axis=1).astype(np.int64)


def _pair_ids(cells: np.ndarray, sizes: Sequence[int]) -> tuple[np.ndarray, int]:
    """Each cell's pair ids (one per pair of axes) and the number of distinct pairs."""
    columns = []
    offset = 0
    for a, b in itertools.combinations(range(len(sizes)), 2):
        columns.append(offset + cells[:, a] * sizes[b] + cells[:, b])
        offset += sizes[a] * sizes[b]
    if not columns:
        return np.zeros((cells.shape[0], 0), dtype=np.int64), 0
    return np.stack(columns, axis=1), offset


def _quota(i: int, share: float) -> int:
    """How many of the first ``i`` picks are hard: round half up of ``i * share``."""
    return int(math.floor(i * share + 0.5))


def order_block(sizes: Sequence[int], hard: np.ndarray, priority: np.ndarray, n: int, *, hard_share: float) -> BlockOrder:
    """Order the first ``n`` task slots of one block.

    Args:
        sizes: The number of values on each axis.
        hard: For each cell of the product (C order), whether it is in a hard tier.
        priority: For each cell, a seeded tie-break in [0, 1) (lower goes first).
        n: How many slots to produce.
        hard_share: The share of hard cells every prefix keeps (rounded half up).

    Returns:
        The picks (cell index, replica) and the product they index.
    """
    cells = _product(sizes)
    n_cells = cells.shape[0]
    pair_ids, n_pairs = _pair_ids(cells, sizes)
    hard = np.asarray(hard, dtype=bool)
    rank = np.empty(n_cells, dtype=np.int64)
    rank[np.argsort(np.asarray(priority), kind="stable")] = np.arange(n_cells)
    tier_total = {True: int(hard.sum()), False: int(n_cells - hard.sum())}
    covered = np.zeros(max(n_pairs, 1), dtype=bool)
    uncovered = n_pairs
    remaining = np.ones(n_cells, dtype=bool)
    tie = (n_cells - 1 - rank).astype(np.int64)
    sequence: dict[bool, list[int]] = {True: [], False: []}
    rest: dict[bool, list[int]] | None = None
    rest_at = {True: 0, False: 0}
    cycled = {True: 0, False: 0}
    picks: list[Pick] = []
    n_hard = 0
    for i in range(n):
        want = n_hard < _quota(i + 1, hard_share)
        if tier_total[want] == 0:
            want = not want
        if len(sequence[want]) < tier_total[want]:  # replica 0 of this tier is not used up
            if uncovered > 0:
                pool = np.flatnonzero(remaining & (hard == want))
                gain = (~covered[pair_ids[pool]]).sum(axis=1)
                score = gain * n_cells + tie[pool]
                cell = int(pool[int(np.argmax(score))])
                if n_pairs:
                    fresh = ~covered[pair_ids[cell]]
                    uncovered -= int(fresh.sum())
                    covered[pair_ids[cell]] = True
            else:
                if rest is None:
                    order = np.argsort(rank, kind="stable")
                    rest = {t: [int(c) for c in order if remaining[c] and hard[c] == t] for t in (True, False)}
                cell = rest[want][rest_at[want]]
                rest_at[want] += 1
            remaining[cell] = False
            sequence[want].append(cell)
            picks.append(Pick(cell, 0))
        else:  # cycle the tier again: replica 1, 2, ...
            j = cycled[want]
            cycled[want] += 1
            seq = sequence[want]
            picks.append(Pick(seq[j % len(seq)], 1 + j // len(seq)))
        n_hard += int(want)
    return BlockOrder(picks, cells, n_pairs)


def covered_pairs(cells: np.ndarray, sizes: Sequence[int], picked: Sequence[int]) -> int:
    """How many distinct value pairs the picked cells cover."""
    if not len(picked):
        return 0
    pair_ids, _ = _pair_ids(cells[np.asarray(sorted(set(picked)), dtype=np.int64)], sizes)
    return int(np.unique(pair_ids).size)
