"""Within-group correlations of many feature columns with one reward, and their within-group shuffles.

The kernel behind ``hack_scan`` (docs/guard.md, "What will the policy learn?"), on numpy and
scipy.sparse arrays only. Rows are sorted by group (``gid``, 0..G-1); ``yc`` is the reward minus
its group mean, so for a feature column x the within-group cross product is ``x . yc`` and the
within-group sum of squares is ``sum x^2 - sum_g (sum_{i in g} x_i)^2 / n_g``: every correlation
is one matrix product plus one sparse group-indicator product. A within-group shuffle keeps
every group's mean, so shuffled numerators are ``X.T @ Yp`` for a block of shuffled copies and
the denominators do not change (Westfall and Young 1993, ch. 2: the max statistic over every
feature gives a family-wise floor).
"""

from __future__ import annotations

import math
from contextlib import AbstractContextManager
from typing import Any, NamedTuple

import numpy as np

from whileai.defaults import CHUNK_ROWS

__all__ = ["AndTier", "WithinKernel", "row_chunks", "single_blas_thread"]

PERM_CELLS = 4_000_000  # rows x shuffles held at once
_WORD = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_AND_BATCH = 16  # AND columns built at once when their within-ask sums of squares are cached
_CODE_BITS = 16  # at most this many seeds: a shuffle's AND cross products from one code per row (2^16 codes)


class AndTier(NamedTuple):
    """What a shuffle needs to rebuild the AND tier: the binary pool and where its rho comes from."""

    pool_t: np.ndarray
    """Bool (pool features x disagreeing-ask rows), one feature a contiguous row: dense binary
    features, then auto ones."""
    pair_obs: np.ndarray
    """Rows (over every graded row) where both features of a pair are present."""
    n_graded: int
    dense_pos: np.ndarray
    """Positions of the dense pool features among the scanned dense columns."""
    auto_pos: np.ndarray
    """Positions of the auto pool features among the scanned auto columns."""
    seeds: int
    min_obs: int
    sxx: dict[int, float]
    """Cache: within-ask sum of squares of the AND of pool features a < b, keyed a * m + b."""


def single_blas_thread() -> AbstractContextManager[Any]:
    """BLAS limited to one thread inside the block (threadpoolctl).

    The kernel runs hundreds of small products (a shuffle block, a row chunk, a seeds x seeds
    AND matrix): a second BLAS thread adds little to each and spins between them, which costs
    CPU time and no wall time saved. One thread also makes every product's bits independent of
    the machine's core count.
    """
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def row_chunks(n: int, size: int = CHUNK_ROWS) -> list[slice]:
    """Slices of at most ``size`` rows covering ``0..n`` (one empty slice when ``n`` is 0)."""
    return [slice(i, min(i + size, n)) for i in range(0, n, size)] or [slice(0, 0)]


def _pattern_cross(pool_t: np.ndarray, top: np.ndarray, w: np.ndarray, bits: np.ndarray) -> np.ndarray:
    """``X @ (X * w).T`` for the bool rows ``pool_t[top]``, summed exactly.

    Each row's pattern over the chosen features is one integer code; the weights are summed per
    code (float64, exact for the values ``_exact32`` admits) and every pair's sum is the sum
    over the codes holding both bits. Linear in rows, whatever the number of pairs.
    """
    n = pool_t.shape[1]
    lo = np.zeros(n, dtype=np.uint8)  # bits 0-7 and 8-15 of the code, one byte a row each
    hi = np.zeros(n, dtype=np.uint8)
    tmp = np.empty(n, dtype=np.uint8)
    for k, f in enumerate(top.tolist()):  # at most _CODE_BITS features
        # a 0/1 byte times its bit's value: numpy multiplies bytes in SIMD, its byte shift is a plain loop
        np.multiply(pool_t[f].view(np.uint8), np.uint8(1 << (k % 8)), out=tmp)
        np.bitwise_or(lo if k < 8 else hi, tmp, out=lo if k < 8 else hi)
    code = lo
    if top.size > 8:
        code = hi.astype(np.uint16)
        code *= np.uint16(256)
        code |= lo
    per = np.bincount(code, weights=w, minlength=bits.shape[0])
    return bits.T @ (bits * per[:, None])


class WithinKernel:
    """Within-ask correlations of many feature columns with one centred reward, and shuffles."""

    _exact_sums: bool | None

    def _and_max(self, tier: AndTier, pool_rho: np.ndarray, Yp: np.ndarray) -> np.ndarray:
        """Per shuffle: the largest |rho| over the pairwise ANDs of its own best ``seeds`` pool features.

        An AND's within-ask sum of squares does not depend on the reward, so it is computed once
        per pair and cached; its cross product with a shuffle is one entry of ``X' (X * y)`` over
        the shuffle's chosen columns X (a seeds x seeds matrix product).
        """
        b = Yp.shape[1]
        out = np.zeros(b)
        take = min(tier.seeds, pool_rho.shape[0])
        if take < 2:
            return out
        ia, ib = np.triu_indices(take, k=1)
        ranked = np.argsort(-np.nan_to_num(pool_rho, nan=-1.0), axis=0, kind="stable")[:take]
        m = tier.pool_t.shape[0]
        top_all = ranked.T  # (shuffle, seed rank)
        lo_all, hi_all = np.minimum(top_all[:, ia], top_all[:, ib]), np.maximum(top_all[:, ia], top_all[:, ib])
        both_all = tier.pair_obs[lo_all, hi_all]
        keep_all = (both_all >= tier.min_obs) & (tier.n_graded - both_all >= tier.min_obs)
        codes_all = lo_all * m + hi_all
        self._and_sxx(tier, sorted(set(codes_all[keep_all].tolist()) - tier.sxx.keys()))
        exact = take <= _CODE_BITS and self._exact32()
        bits = ((np.arange(1 << take)[:, None] >> np.arange(take)) & 1).astype(np.float64) if exact else None
        # each shuffle's rewards as one contiguous float64 row (the values bincount would cast them to)
        w64 = np.ascontiguousarray(Yp.T, dtype=np.float64) if exact else None
        for j in np.flatnonzero(keep_all.any(axis=1)).tolist():
            keep = keep_all[j]
            sxx = np.array([tier.sxx[c] for c in codes_all[j][keep].tolist()])
            if bits is not None:  # every float32 sum below is exact: the same numbers from exact sums
                S = _pattern_cross(tier.pool_t, top_all[j], w64[j], bits)  # type: ignore[index]
            else:
                Xt = tier.pool_t[top_all[j]].astype(np.float32)  # the shuffle's seeds, one contiguous row each
                S = Xt @ (Xt * np.ascontiguousarray(Yp[:, j])).T
            sxy = S[ia[keep], ib[keep]].astype(np.float64)
            with np.errstate(divide="ignore", invalid="ignore"):
                r = np.where(sxx > 1e-9, np.abs(sxy) / np.sqrt(sxx * self.syy), 0.0)
            out[j] = float(r.max(initial=0.0))
        return out

    def _exact32(self) -> bool:
        """Every float32 sum of a subset of the float32 centred rewards is exact, in any order.

        True when the values are integer multiples of one power of two 2^-e and their absolute
        sum is at most 2^24 times it: every partial sum is then a multiple of 2^-e below 2^24 of
        them, which float32 holds exactly (0/1 rewards in asks of equal size, the usual case).
        """
        if self._exact_sums is None:
            v = np.abs(self.yc.astype(np.float32).astype(np.float64))
            total = float(v.sum())
            if total == 0.0:
                self._exact_sums = True
            else:
                e = math.floor(math.log2(2.0**24 / total))
                scaled = v * 2.0**e
                self._exact_sums = bool(np.all(scaled == np.floor(scaled)))
        return self._exact_sums

    def _and_sxx(self, tier: AndTier, codes: list[int]) -> None:
        """Within-ask sums of squares of the ANDs named by ``codes`` (a * m + b), into the cache."""
        if not codes:
            return
        m = tier.pool_t.shape[0]
        left = np.array([c // m for c in codes])
        right = np.array([c % m for c in codes])
        sxx = np.zeros(left.size)
        for k in range(0, left.size, _AND_BATCH):  # bounded memory: a batch of ANDs at a time, over every row
            P = tier.pool_t[left[k:k + _AND_BATCH]] & tier.pool_t[right[k:k + _AND_BATCH]]
            per = self._group_counts(P)
            # (groups, batch) in row order: each column summed over the groups one after another, as the
            # whole (groups, ANDs) matrix was (the same bits), a batch at a time
            s = np.ascontiguousarray(per.T, dtype=np.float64)
            sxx[k:k + _AND_BATCH] = np.maximum(per.sum(axis=1) - (s * s / self.n_g[:, None]).sum(axis=0), 0.0)
        tier.sxx.update(zip(codes, sxx.tolist()))

    def _group_counts(self, P: np.ndarray) -> np.ndarray:
        """Per row of the bool ``P`` (features x rows sorted by group), its count in each group (exact)."""
        sizes = self.n_g.astype(np.int64)
        if sizes.size and np.all(sizes == sizes[0]):  # equal groups: one reshape
            k = int(sizes[0])
            if k in _WORD and P.flags.c_contiguous:  # a group's k bools (bytes 0/1) as one word: its popcount
                return np.bitwise_count(P.view(np.uint8).view(_WORD[k]).reshape(P.shape[0], sizes.size)).astype(np.int64)
            return P.reshape(P.shape[0], sizes.size, k).sum(axis=2, dtype=np.int64)
        cs = np.zeros((P.shape[0], P.shape[1] + 1), dtype=np.int64)
        np.cumsum(P, axis=1, dtype=np.int64, out=cs[:, 1:])
        ends = self.starts + sizes
        return cs[:, ends] - cs[:, self.starts]

    def __init__(self, gid: np.ndarray, n_g: np.ndarray, yc: np.ndarray, syy: float) -> None:
        """``gid``: group of each row (sorted); ``n_g``: rows per group; ``yc``: centred reward; ``syy``: its sum of squares."""
        import scipy.sparse as sp

        self.gid = gid
        self.n_g = n_g
        self.yc = yc
        self.syy = syy
        n = gid.size
        self.G = sp.csr_matrix((np.ones(n), (np.arange(n), gid)), shape=(n, n_g.size))
        self._exact_sums: bool | None = None
        self.starts = np.concatenate([[0], np.cumsum(n_g.astype(np.int64))[:-1]]) if n_g.size else np.zeros(0, np.int64)

    def _rho(self, sxy: np.ndarray, sxx: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            r = sxy / np.sqrt(sxx * self.syy)
        return np.where(sxx > 1e-9 * np.maximum(1.0, np.abs(sxx).max(initial=0.0)), np.clip(r, -1.0, 1.0), np.nan)

    def rho_dense(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Within-group rho of every column of a dense X (float or bool), and its within-group sum of squares."""
        p = X.shape[1]
        S = np.zeros((self.n_g.size, p))
        sq = np.zeros(p)
        sxy = np.zeros(p)
        for sl in row_chunks(X.shape[0]):  # bounded memory: a row chunk at a time, cast to float there
            Xc = X[sl].astype(np.float64)
            S += np.asarray(self.G[sl].T @ Xc)
            sq += (Xc * Xc).sum(axis=0)
            sxy += Xc.T @ self.yc[sl]
        sxx = np.maximum(sq - (S * S / self.n_g[:, None]).sum(axis=0), 0.0)
        return self._rho(sxy, sxx), sxx

    def rho_sparse(self, A: Any) -> tuple[np.ndarray, np.ndarray]:
        """Within-group rho of every column of a scipy.sparse A, and its within-group sum of squares."""
        S = (self.G.T @ A).tocsr()
        sq = np.asarray(A.multiply(A).sum(axis=0)).ravel()
        between = np.asarray(S.multiply(S).multiply(1.0 / self.n_g[:, None]).sum(axis=0)).ravel()
        sxx = np.maximum(sq - between, 0.0)
        return self._rho(np.asarray(A.T @ self.yc).ravel(), sxx), sxx

    def shuffle_max(self, blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]], A: Any, sxx_a: np.ndarray, *,
                    n_perm: int, rng: np.random.Generator, and_tier: AndTier | None = None) -> np.ndarray:
        """Largest |rho| over all features for each of ``n_perm`` within-ask shuffles of reward.

        ``blocks`` are dense feature matrices (float or bool) with the mask of scanned columns and
        their within-ask sums of squares; ``A`` is the sparse auto tier. With ``and_tier`` each
        shuffle also rebuilds the AND tier from its own best ``seeds`` binary features (the
        search redone under the null, Westfall and Young 1993, ch. 2) and counts its ANDs.
        """
        n = self.gid.size
        # the scanned dense columns once, as float32 with one feature a contiguous row
        dense = [(np.ascontiguousarray(X[:, np.flatnonzero(m)].T, dtype=np.float32), np.flatnonzero(m), sxx[m])
                 for X, m, sxx in blocks[:1] if X.shape[1] and m.any()]
        if not dense and (A is None or A.shape[1] == 0):
            return np.zeros(0)
        block = max(1, min(n_perm, PERM_CELLS // max(n, 1)))
        out = np.empty(n_perm)
        gidf = self.gid.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            invs = [np.where(sxx > 1e-12, 1.0 / np.sqrt(sxx * self.syy), 0.0) for _, _, sxx in dense]
            inv_a = np.where(sxx_a > 1e-12, 1.0 / np.sqrt(sxx_a * self.syy), 0.0) if A is not None else None
        sizes = self.n_g.astype(np.int64)
        equal = bool(sizes.size and np.all(sizes == sizes[0]))
        chunks = row_chunks(n)
        yc32 = self.yc.astype(np.float32)
        for start in range(0, n_perm, block):  # blocks of shuffles, each a matrix product
            b = min(block, n_perm - start)
            # float32 for the shuffled products: the floor needs |rho| to about 1e-6, not 1e-15
            if equal:  # rows are sorted by ask: sort k random keys inside each ask, for b shuffles at once
                k = int(sizes[0])
                order = np.argsort(rng.random((b, sizes.size, k)), axis=2)
                order += np.arange(0, n, k)[None, :, None]  # each ask's own rows, as flat positions
                Yp = np.ascontiguousarray(yc32[order.reshape(b, n)].T)
            else:
                keys = gidf[:, None] + rng.random((n, b))
                Yp = yc32[np.argsort(keys, axis=0)]
            best = np.zeros(b)
            rho_dense = np.zeros((0, b))
            rho_auto = np.zeros((0, b))
            for (Xt, cols, _), inv in zip(dense, invs):
                acc = np.zeros((cols.size, b))
                for sl in chunks:
                    acc += Xt[:, sl] @ Yp[sl]
                rho_dense = acc * inv[:, None]
                best = np.maximum(best, np.abs(rho_dense).max(axis=0))
            if A is not None and A.shape[1] and inv_a is not None:
                rho_auto = np.asarray(A.T @ Yp) * inv_a[:, None]
                best = np.maximum(best, np.abs(rho_auto).max(axis=0))
            if and_tier is not None:
                pool_rho = np.abs(np.concatenate([rho_dense[and_tier.dense_pos], rho_auto[and_tier.auto_pos]], axis=0))
                best = np.maximum(best, self._and_max(and_tier, pool_rho, Yp))
            out[start:start + b] = best
        return out
