"""Tokenising text columns once, with Polars string expressions, into integer hashes.

Words are lower-cased runs of letters, digits and apostrophes. Every word becomes a 64-bit hash
(Polars' own hash), and n-grams of words are combined from those hashes with numpy, so nothing
downstream handles strings per token.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import polars as pl

from whileai.defaults import CHUNK_ROWS

__all__ = ["Tokens", "WORD_PATTERN", "byte_counts", "combine", "ngram_hashes", "pair", "text_hashes", "tokenize"]

#: What counts as a word: runs of anything but whitespace and ASCII punctuation (apostrophes
#: stay inside words), after lower-casing; letters and digits of every script are kept.
WORD_PATTERN = r"[^\s!-&(-/:-@\[-`{-~]+"

_K1 = np.uint64(0x9E3779B97F4A7C15)
_K2 = np.uint64(0xBF58476D1CE4E5B9)
_K3 = np.uint64(0x94D049BB133111EB)


class Tokens(NamedTuple):
    """A text column tokenised.

    ``row`` (int64 row of each token), ``hash`` (uint64 per token), ``offsets`` (row starts,
    length n_rows + 1) and ``words`` (the token strings, kept only to name the few tokens a
    report prints).
    """

    row: np.ndarray
    hash: np.ndarray
    offsets: np.ndarray
    words: pl.Series


def tokenize(texts: pl.Series, *, pattern: str = WORD_PATTERN) -> Tokens:
    """Split every text into lower-cased words and hash each once."""
    lists = texts.fill_null("").str.to_lowercase().str.extract_all(pattern)
    lens = lists.list.len().fill_null(0).to_numpy().astype(np.int64)
    words = lists.explode(empty_as_null=False).drop_nulls() if lens.sum() else pl.Series("w", [], dtype=pl.String)
    offsets = np.zeros(lens.size + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    row = np.repeat(np.arange(lens.size, dtype=np.int64), lens)
    h = words.hash(seed=1469598103).to_numpy().astype(np.uint64, copy=False) if len(words) else np.zeros(0, np.uint64)
    return Tokens(row=row, hash=h, offsets=offsets, words=words)


def pair(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A cheap ordered pair hash of two well-mixed uint64 hash arrays (a * K + b, wrapping)."""
    with np.errstate(over="ignore"):
        return a * _K1 + b


def combine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Mix two uint64 hash arrays into one (order matters), wrapping arithmetic."""
    with np.errstate(over="ignore"):
        x = (a * _K1) ^ (b + _K2)
        x ^= x >> np.uint64(31)
        x *= _K3
        x ^= x >> np.uint64(29)
    return x


def _mix(x: np.ndarray) -> np.ndarray:
    """Final avalanche of a uint64 array (splitmix64 finaliser), wrapping arithmetic."""
    with np.errstate(over="ignore"):
        x = x ^ (x >> np.uint64(30))
        x = x * _K2
        x ^= x >> np.uint64(27)
        x *= _K3
        x ^= x >> np.uint64(31)
    return x


def ngram_hashes(tokens: Tokens, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Hashes of every word n-gram that fits inside its row.

    A polynomial over the n word hashes (wrapping uint64), then one avalanche. Returns
    ``(start, hash)``: the flat index of each n-gram's first word and its hash. The n-gram
    starting at flat index i is valid when i + n - 1 lies in the same row.
    """
    m = tokens.hash.size
    if m < n:
        return np.zeros(0, np.int64), np.zeros(0, np.uint64)
    k = m - n + 1
    start = np.arange(k, dtype=np.int64)
    valid = tokens.row[:k] == tokens.row[n - 1:]
    with np.errstate(over="ignore"):
        h = tokens.hash[:k].copy()
        for j in range(1, n):  # n is small (2 or 8): a loop over offsets, not over rows
            h *= _K1
            h += tokens.hash[j:j + k]
    return start[valid], _mix(h[valid])


def text_hashes(tokens: Tokens) -> np.ndarray:
    """One hash per row over its whole word sequence (equal word sequences, equal hashes)."""
    n_rows = tokens.offsets.size - 1
    out = np.zeros(n_rows, dtype=np.uint64)
    if tokens.hash.size:
        pos = np.arange(tokens.hash.size, dtype=np.int64) - tokens.offsets[tokens.row]
        powers = np.ones(int(pos.max()) + 1, dtype=np.uint64)
        with np.errstate(over="ignore"):
            for i in range(1, powers.size):  # powers of the multiplier, once per position
                powers[i] = powers[i - 1] * _K1
            terms = tokens.hash * powers[pos]
        lens = np.diff(tokens.offsets)
        has = lens > 0
        out[has] = np.add.reduceat(terms, tokens.offsets[:-1][has])
    lens = np.diff(tokens.offsets).astype(np.uint64)
    with np.errstate(over="ignore"):
        return _mix(out + lens * _K3)


_PUNCT = np.zeros(256, dtype=np.uint8)
_PUNCT[[*range(33, 48), *range(58, 65), *range(91, 97), *range(123, 127)]] = 1
_DIGIT = np.zeros(256, dtype=np.uint8)
_DIGIT[48:58] = 1
_UPPER = np.zeros(256, dtype=np.uint8)
_UPPER[65:91] = 1
_CHAR = np.ones(256, dtype=np.uint8)
_CHAR[0x80:0xC0] = 0  # UTF-8 continuation bytes do not start a character


def byte_counts(texts: pl.Series) -> dict[str, np.ndarray]:
    """Per text: ASCII punctuation, digits, upper-case letters and characters.

    Counted on the raw UTF-8 bytes with numpy lookup tables (no regular expression); null texts
    count 0.
    """
    import pyarrow as pa

    if len(texts) > CHUNK_ROWS:  # bounded memory: the byte view is copied a chunk at a time
        parts = [byte_counts(texts.slice(i, CHUNK_ROWS)) for i in range(0, len(texts), CHUNK_ROWS)]
        return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    arr = texts.fill_null("").to_arrow()
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.type != pa.large_string():
        arr = arr.cast(pa.large_string())
    bufs = arr.buffers()
    off = np.frombuffer(bufs[1], dtype=np.int64)[arr.offset: arr.offset + len(arr) + 1]
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    data = data[off[0]: off[-1]]
    starts = off[:-1] - off[0]
    nonempty = off[1:] > off[:-1]
    out = {}
    for name, table in (("punct", _PUNCT), ("digits", _DIGIT), ("upper", _UPPER), ("chars", _CHAR)):
        counts = np.zeros(len(arr), dtype=np.int64)
        if data.size:
            sums = np.add.reduceat(table[data], starts[nonempty], dtype=np.int64)
            counts[nonempty] = sums
        out[name] = counts
    return out
