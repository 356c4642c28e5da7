r"""Tokenising text columns once, with Polars string expressions, into integer hashes.

Words are lower-cased runs of letters, digits and apostrophes. Every word becomes a 64-bit hash
(Polars' own hash), and n-grams of words are combined from those hashes with numpy, so nothing
downstream handles strings per token.

The words of ``WORD_PATTERN`` are cut without a regex match per word: every separator character
(ASCII white space and punctuation but the apostrophe, and the other Unicode white space the
regex's ``\s`` takes) becomes a space with one multi-pattern replacement, the text is split on
spaces and the empty pieces dropped. The runs between separators are the same words, in order.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import polars as pl

__all__ = ["Tokens", "WORD_PATTERN", "byte_counts", "combine", "distinct", "expand_hits", "masked_ngram_hashes", "ngram_hashes",
           "pair",
           "text_hashes", "tokenize"]

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


#: The separators of WORD_PATTERN other than the space: ASCII white space and punctuation but the
#: apostrophe, and every other character of Unicode White_Space (what the regex engine's ``\s`` is).
_SEPARATORS = [chr(c) for c in (*range(0x09, 0x0E), *range(0x21, 0x27), *range(0x28, 0x30), *range(0x3A, 0x41),
                                *range(0x5B, 0x61), *range(0x7B, 0x7F), 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B),
                                0x2028, 0x2029, 0x202F, 0x205F, 0x3000)]


def tokenize(texts: pl.Series, *, pattern: str = WORD_PATTERN) -> Tokens:
    """Split every text into lower-cased words and hash each once."""
    low = texts.fill_null("").str.to_lowercase()
    if pattern == WORD_PATTERN:  # the same words as extract_all(WORD_PATTERN), without a match per word
        pieces = low.str.replace_many(_SEPARATORS, [" "] * len(_SEPARATORS)).str.split(" ")
        per = pieces.list.len().to_numpy().astype(np.int64)
        flat = pieces.explode()
        keep = (flat.str.len_bytes() > 0).to_numpy()
        words = flat.filter(pl.Series(keep))
        lens = np.bincount(np.repeat(np.arange(per.size), per)[keep], minlength=per.size).astype(np.int64)
    else:
        lists = low.str.extract_all(pattern)
        lens = lists.list.len().fill_null(0).to_numpy().astype(np.int64)
        words = lists.explode(empty_as_null=False).drop_nulls() if lens.sum() else pl.Series("w", [], dtype=pl.String)
    offsets = np.zeros(lens.size + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    row = np.repeat(np.arange(lens.size, dtype=np.int64), lens)
    h = words.hash(seed=1469598103).to_numpy().astype(np.uint64, copy=False) if len(words) else np.zeros(0, np.uint64)
    return Tokens(row=row, hash=h, offsets=offsets, words=words)


def distinct(texts: pl.Series) -> tuple[pl.Series, np.ndarray | None]:
    """The distinct texts (null is one of them) in first-seen order, and each row's index among them.

    The index is None when every text is distinct. A feature that is a function of the text
    alone is then computed once per distinct text and gathered by the index: the same numbers,
    and the agent often repeats itself within ask (the scan's ``distinct_per_ask``).
    """
    g = pl.DataFrame({"t": texts}).with_row_index("i").group_by("t", maintain_order=True).agg(pl.col("i"))
    if g.height == len(texts):
        return texts, None
    inv = np.empty(len(texts), dtype=np.int64)
    inv[g["i"].explode().to_numpy()] = np.repeat(np.arange(g.height, dtype=np.int64), g["i"].list.len().to_numpy())
    return g["t"].alias(texts.name), inv


def expand_hits(r: np.ndarray, c: np.ndarray, inv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hits ``(r, c)`` of distinct texts (sorted by ``r``) as hits of every row, ``inv`` its distinct text.

    Row ``i`` gets the hits of text ``inv[i]`` in their order: sorted by row, then as given.
    """
    n_u = int(inv.max()) + 1 if inv.size else 0
    counts = np.bincount(r, minlength=n_u)
    starts = np.cumsum(counts) - counts
    per = counts[inv]
    rows = np.repeat(np.arange(inv.size, dtype=np.int64), per)
    ends = np.cumsum(per)
    pos = np.arange(int(ends[-1]) if ends.size else 0, dtype=np.int64) - np.repeat(ends - per - starts[inv], per)
    return rows, c[pos]


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


#: ASCII punctuation (the 32 characters of Python's ``string.punctuation``), digits, upper case.
_PUNCT_CLASS = r"[!-/:-@\[-`{-~]"
_DIGIT_CLASS = r"[0-9]"
_UPPER_CLASS = r"[A-Z]"


def byte_counts(texts: pl.Series) -> dict[str, np.ndarray]:
    """Per text: ASCII punctuation, digits, upper-case letters and characters (code points).

    Polars string kernels over the whole column (one character-class count each, in Rust); null
    texts count 0.
    """
    t = pl.col("t").fill_null("")
    out = pl.DataFrame({"t": texts}).select(
        t.str.count_matches(_PUNCT_CLASS).alias("punct"),
        t.str.count_matches(_DIGIT_CLASS).alias("digits"),
        t.str.count_matches(_UPPER_CLASS).alias("upper"),
        t.str.len_chars().alias("chars"),
    )
    return {name: out[name].to_numpy().astype(np.int64) for name in out.columns}


#: The word hash a masked n-gram puts in place of its masked word (any fixed odd constant).
_MASK = np.uint64(0xD6E8FEB86659FD93)


def masked_ngram_hashes(tokens: Tokens, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hashes of every word n-gram with one word masked, once per masked position.

    The n-gram starting at flat index i with its j-th word replaced by a fixed mask word: two
    n-grams that agree on every word but the j-th get the same j-th hash (a one-word skip-gram,
    as Llama 2's contamination analysis lets matched spans differ in a few positions, Touvron et
    al. 2023 appendix A.6). Returns ``(start, j, hash)`` for every n-gram that fits inside its
    row, start-major.
    """
    m = tokens.hash.size
    if m < n:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.uint64)
    k = m - n + 1
    valid = np.flatnonzero(tokens.row[:k] == tokens.row[n - 1:])
    with np.errstate(over="ignore"):
        raw = tokens.hash[:k].copy()
        for j in range(1, n):
            raw *= _K1
            raw += tokens.hash[j:j + k]
        raw = raw[valid]
        out = np.empty((valid.size, n), dtype=np.uint64)
        power = np.uint64(1)
        for j in range(n - 1, -1, -1):  # the j-th word weighs _K1 ** (n - 1 - j)
            out[:, j] = _mix(raw + (_MASK - tokens.hash[valid + j]) * power)
            power = power * _K1
    return np.repeat(valid, n), np.tile(np.arange(n, dtype=np.int64), valid.size), out.reshape(-1)
