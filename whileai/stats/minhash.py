"""MinHash signatures and LSH band keys over sets of 64-bit hashes (one kernel for every caller).

Broder 1997 ("On the resemblance and containment of documents"): for a random hash function, the
chance that two sets share their minimum is their Jaccard similarity. ``n_hashes`` functions give
a signature; cutting it into ``bands`` bands of ``n_hashes / bands`` rows and bucketing on each
band makes a pair at Jaccard ``s`` a candidate with probability ``1 - (1 - s**r)**b`` (Leskovec,
Rajaraman, Ullman, Mining of Massive Datasets, section 3.4.3). Callers verify every candidate
exactly, so the kernel only decides which pairs are looked at.
"""

from __future__ import annotations

import numpy as np

from whileai.errors import ArgumentError

__all__ = ["band_keys", "fmix64", "minhash_signatures"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_CHUNK = 262_144  # (member, hash) pairs mixed at once: bounded memory whatever the input's size


def fmix64(x: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finaliser: a bijection on uint64 that mixes every bit (wrapping)."""
    with np.errstate(over="ignore"):
        x = x ^ (x >> np.uint64(33))
        x = x * np.uint64(0xFF51AFD7ED558CCD)
        x = x ^ (x >> np.uint64(33))
        x = x * np.uint64(0xC4CEB9FE1A85EC53)
        return x ^ (x >> np.uint64(33))


def minhash_signatures(sets: np.ndarray, hashes: np.ndarray, *, n_hashes: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """MinHash signatures of the sets given as (set id, member hash) pairs sorted by set id.

    The i-th hash function is ``fmix64(h ^ seed_i)`` with ``seed_i = fmix64(i * golden ratio)``.

    Args:
        sets: Set id of each pair, sorted ascending (int64).
        hashes: The member's 64-bit hash (uint64), one per pair; repeats within a set are harmless.
        n_hashes: Signature length.

    Returns:
        ``(ids, signatures)``: the distinct set ids in order, and a ``len(ids) x n_hashes`` uint64
        array of their minimum hash under each function.

    Examples:
        >>> ids, sig = minhash_signatures(np.array([0, 0, 1, 1]), np.array([1, 2, 2, 1], dtype=np.uint64), n_hashes=4)
        >>> ids.tolist(), bool((sig[0] == sig[1]).all())
        ([0, 1], True)
    """
    sets = np.asarray(sets)
    hashes = np.asarray(hashes, dtype=np.uint64)
    if sets.size == 0:
        return sets[:0], np.zeros((0, n_hashes), dtype=np.uint64)
    seeds = fmix64(np.arange(1, n_hashes + 1, dtype=np.uint64) * _GOLDEN)
    starts = np.flatnonzero(np.r_[True, sets[1:] != sets[:-1]])
    ids = sets[starts]
    sig = np.full((ids.size, n_hashes), np.iinfo(np.uint64).max, dtype=np.uint64)
    slot = np.repeat(np.arange(ids.size), np.diff(np.r_[starts, sets.size]))
    for lo in range(0, sets.size, _CHUNK):
        s = slot[lo:lo + _CHUNK]
        mixed = fmix64(hashes[lo:lo + _CHUNK, None] ^ seeds[None, :])
        first = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
        rows = s[first]
        sig[rows] = np.minimum(sig[rows], np.minimum.reduceat(mixed, first, axis=0))
    return ids, sig


def band_keys(signatures: np.ndarray, bands: int) -> np.ndarray:
    """One bucket key per set and band: the band's rows folded into one uint64 (``n x bands``).

    Examples:
        >>> band_keys(np.array([[1, 2, 3, 4], [1, 2, 9, 9]], dtype=np.uint64), 2)[:, 0].tolist() == [
        ...     band_keys(np.array([[1, 2, 0, 0]], dtype=np.uint64), 2)[0, 0]] * 2
        True
    """
    n, k = signatures.shape
    if bands < 1 or k % bands:
        raise ArgumentError(f"bands must be a divisor of the signature length {k}, got {bands!r}. Pass for example "
                            f"bands={max(1, k // 4)}.", argument="bands", value=bands)
    per = k // bands
    view = signatures.reshape(n, bands, per)
    keys = np.zeros((n, bands), dtype=np.uint64)
    for r in range(per):  # a loop over the rows of a band (4), each vectorised over every set and band
        keys = fmix64(keys ^ view[:, :, r])
    return keys
