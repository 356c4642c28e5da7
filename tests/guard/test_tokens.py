"""Words cut by replacing separators and splitting on spaces are the regex's words, in order."""

from __future__ import annotations

import numpy as np
import polars as pl

from whileai.guard._tokens import _SEPARATORS, WORD_PATTERN, tokenize


def _regex_words(texts: pl.Series) -> tuple[list[str], list[int]]:
    lists = texts.fill_null("").str.to_lowercase().str.extract_all(WORD_PATTERN)
    return lists.explode().drop_nulls().to_list(), lists.list.len().fill_null(0).to_list()


def test_separators_are_exactly_the_pattern_s_non_word_characters():
    cps = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    chars = pl.Series([chr(c) for c in cps])
    word = chars.str.contains(f"^{WORD_PATTERN}$").to_numpy()
    sep = {chr(c) for c, w in zip(cps, word) if not w}
    assert sep == {*_SEPARATORS, " "}


def test_words_and_counts_match_the_regex():
    rng = np.random.default_rng(0)
    alphabet = [*"ab Zq'.,!\t\n\r-_é日İ", "\u00a0", "\u3000", "\u2009", "\u0085", "\u2028", "\u202f", "x y"]
    texts = pl.Series(["".join(rng.choice(alphabet, rng.integers(0, 20))) for _ in range(3000)]
                      + [None, "", "   ", "a", " a", "a ", "...", "Déjà vu — ÉTÉ 42!"])
    toks = tokenize(texts)
    words, lens = _regex_words(texts)
    assert toks.words.to_list() == words
    assert np.diff(toks.offsets).tolist() == lens
    assert toks.row.tolist() == np.repeat(np.arange(len(texts)), lens).tolist()


def test_vocabulary_finder_agrees_with_a_set_lookup():
    from whileai.guard._hackfeat import _VOCAB_SLOTS, _vocab_finder

    rng = np.random.default_rng(1)
    hashes = rng.integers(0, 2**64, 50_000, dtype=np.uint64)
    vocab = np.unique(np.concatenate([rng.choice(hashes, 150), rng.integers(0, 2**64, 20, dtype=np.uint64)]))
    clash = np.unique(np.concatenate([vocab, vocab[:3] + np.uint64(_VOCAB_SLOTS)]))  # shared low bits: the search
    for v in (vocab, clash):
        at, col = _vocab_finder(v)(hashes)
        want = np.flatnonzero(np.isin(hashes, v))
        assert want.size > 100 and np.array_equal(at, want) and np.array_equal(v[col], hashes[at])
