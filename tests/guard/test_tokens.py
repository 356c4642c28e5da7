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


def test_distinct_texts_and_their_index_rebuild_every_row():
    from whileai.guard._tokens import distinct

    texts = pl.Series("t", ["b", "a", None, "b", "", "a", None, "c", "b"])
    uniq, inv = distinct(texts)
    assert uniq.to_list() == ["b", "a", None, "", "c"]  # first-seen order, null one of them
    assert uniq.name == "t"
    assert inv is not None and uniq.gather(inv).to_list() == texts.to_list()
    once = pl.Series(["x", "y", None])
    same, none = distinct(once)
    assert none is None and same.to_list() == once.to_list()


def test_expanded_hits_are_each_row_s_text_hits_in_order():
    from whileai.guard._tokens import expand_hits

    rng = np.random.default_rng(2)
    n_u = 40
    hits = sorted({(int(u), int(c)) for u, c in zip(rng.integers(0, n_u, 300), rng.integers(0, 25, 300))})
    r = np.array([u for u, _ in hits], dtype=np.int64)
    c = np.array([c for _, c in hits], dtype=np.int64)
    inv = rng.integers(0, n_u, 500)
    rows, cols = expand_hits(r, c, inv)
    want = [(i, cc) for i, u in enumerate(inv.tolist()) for uu, cc in hits if uu == u]
    assert list(zip(rows.tolist(), cols.tolist())) == want
    e_r, e_c = expand_hits(np.zeros(0, np.int64), np.zeros(0, np.int64), inv)
    assert e_r.size == 0 and e_c.size == 0


def test_features_of_repeated_texts_equal_the_row_by_row_ones(monkeypatch):
    """Every feature pass gives the same numbers whether or not each distinct text is read once."""
    import whileai.guard._hackfeat as hf
    from whileai import table
    from whileai.testing import rollout_table

    df = table.frame(rollout_table(30, 8, seed=4, shortcut="zzq", shortcut_strength=0.9))
    df = pl.concat([df, df, df.head(50)])  # more repeats, across asks and chunks
    spec = hf.Spec(reward="reward", user={}, auto=True, top_k=50, min_obs=3, trace=True)
    texts = hf.agent_text_of(df)
    assert texts.n_unique() < df.height / 2

    def run():
        counts = hf.vocab_counts(texts).sort("h")
        vocab = hf.choose_vocab(counts, n_voc=df.height, n=df.height, top_k=50, min_obs=3)
        parts, vocab1 = hf.one_pass_features(df, spec, chunk=70, n_voc=df.height, n=df.height)
        return counts, vocab, hf.chunk_features(df, vocab, spec), parts, vocab1

    fast = run()
    monkeypatch.setattr(hf, "distinct", lambda t: (t, None))  # every row read on its own
    slow = run()
    assert fast[0].equals(slow[0])
    assert np.array_equal(fast[1], slow[1]) and np.array_equal(fast[4], slow[4])
    for a, b in [(fast[2], slow[2]), *zip(fast[3], slow[3])]:
        for x, y in zip(a.pre + a.post, b.pre + b.post):
            assert x[0] == y[0] and x[2] == y[2] and np.array_equal(x[1], y[1], equal_nan=True)
        assert a.names == b.names and np.array_equal(a.sig, b.sig)
        fa = sorted(zip(a.auto_rows.tolist(), a.auto_cols.tolist()))
        assert fa == sorted(zip(b.auto_rows.tolist(), b.auto_cols.tolist())) and len(fa) > 0
