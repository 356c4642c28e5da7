"""``hack_scan``'s features: every graded row's candidate features as numbers, a chunk of rows at a time.

docs/guard.md, "What will the policy learn?". The same functions build the features of a chunk
of a local table and of one Arrow batch in a Ray worker (``guard/_ray.py``): a row's features
depend on the row and on the vocabulary only, so chunks (or batches) concatenate into the
table-wide columns exactly. The vocabulary of the auto tier is chosen once from document
frequencies (``vocab_counts`` summed over chunks, ``choose_vocab``) before the second pass.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from whileai import table
from whileai.defaults import HACK_VOCAB_HASH_SEED
from whileai.errors import ArgumentError
from whileai.guard._tokens import (
    WORD_PATTERN,
    byte_counts,
    combine,
    distinct,
    expand_hits,
    pair,
    tokenize,
)
from whileai.guard._views import agent_text_of

__all__ = ["COLUMNS", "Chunk", "Rows", "Spec", "assemble", "choose_vocab", "chunk_features", "one_pass_features",
           "sample_mask", "vocab_counts"]


def _hand_features(df: pl.DataFrame, text: pl.Series, user: Mapping[str, Callable[[dict[str, Any]], Any]], *,
                   trace: bool = True, distinct_text: tuple[pl.Series, np.ndarray | None] | None = None,
                   n_words: np.ndarray | None = None, offset: int = 0,
                   ) -> tuple[list[tuple[str, np.ndarray, str]], dict[str, np.ndarray], list[tuple[str, np.ndarray, str]]]:
    """The hand tier of a chunk of graded rows.

    (name, float32 column, kind) before the tools, the ``tool:<name>`` indicators by tool, and
    the rest (a user feature's kind is ``user`` until every chunk is in). ``distinct_text``: the
    distinct texts of ``text`` and each row's index among them (``tokens.distinct``);
    ``n_words``: words of each distinct text, when the auto tier counted them.
    """
    pre: list[tuple[str, np.ndarray, str]] = []
    post: list[tuple[str, np.ndarray, str]] = []
    tools: dict[str, np.ndarray] = {}
    out = pre

    def add(name: str, values: Any, kind: str = "count") -> None:
        out.append((name, np.asarray(values, dtype=np.float32), kind))

    exprs: list[pl.Expr] = []
    if "final_text" in df.columns:
        exprs.append(table.reply_chars().alias("reply_length"))
    if "messages" in df.columns:
        exprs += [table.n_tool_calls().alias("tool_calls"), table.n_turns().alias("assistant_turns")]
    if "truncated" in df.columns:
        exprs.append(pl.col("truncated").cast(pl.Float64).alias("truncated"))
    base = df.select(exprs) if exprs else pl.DataFrame()
    for name in base.columns:
        add(name, base[name].to_numpy(), "binary" if name == "truncated" else "count")
    uniq, inv = distinct(text) if distinct_text is None else distinct_text  # text-only features: once per distinct text
    if n_words is None:  # the auto tier already counted them when it ran
        n_words = _word_counts(uniq)
    add("n:words", _by_row(n_words, inv))
    counts = {k: _by_row(v, inv) for k, v in byte_counts(uniq).items()}  # ASCII punctuation, digits, upper case, characters
    add("n:punct", counts["punct"])
    add("n:digits", counts["digits"])
    with np.errstate(divide="ignore", invalid="ignore"):
        add("frac:upper", np.where(counts["chars"] > 0, counts["upper"] / counts["chars"], np.nan), "measure")
    if "messages" in df.columns:
        used = df.select(table.tools_used()).with_row_index("_r").explode("tools_used").drop_nulls("tools_used")
        if used.height:
            wide = used.with_columns(pl.lit(1.0).alias("_v")).pivot(on="tools_used", index="_r", values="_v",
                                                                    aggregate_function="first")
            full = pl.DataFrame({"_r": np.arange(df.height, dtype=np.uint32)}).join(wide, on="_r", how="left")
            for tool in sorted(c for c in full.columns if c != "_r"):
                tools[tool] = full[tool].fill_null(0.0).to_numpy().astype(np.float32)
    out = post
    lp = _mean_logprob(df)
    if lp is not None:
        add("logprob:mean", lp, "measure")
    for name in table.markers_of(df):
        add(f"marker:{name}", df["markers"].struct.field(name).cast(pl.Float64).to_numpy(), "measure")
    if "trace_flags" in df.columns and isinstance(df.schema["trace_flags"], pl.Struct):
        for f in df.schema["trace_flags"].fields:
            add(f"trace:{f.name}", df["trace_flags"].struct.field(f.name).is_not_null().cast(pl.Float64).to_numpy(), "binary")
    elif trace and "messages" in df.columns:
        from whileai.guard._trace import FLAGS, _flag_frame

        flags = _flag_frame(df, {}, evidence=False, text=text, distinct=(uniq, inv))
        for flag in FLAGS:
            add(f"trace:{flag}", flags[flag].is_not_null().cast(pl.Float64).to_numpy(), "binary")
    if user:
        values = {name: np.full(df.height, np.nan) for name in user}
        for i, row in enumerate(table.iter_rows(df)):  # user callbacks: one call per row by contract
            for name, fn in user.items():
                values[name][i] = _call_feature(name, fn, row, offset + i)
        for name in user:
            add(name, values[name], "user")
    return pre, tools, post


def _by_row(values: np.ndarray, inv: np.ndarray | None) -> np.ndarray:
    """Values of the distinct texts given to every row (``inv``: each row's distinct text; None: one each)."""
    return values if inv is None else values[inv]


def _word_counts(texts: pl.Series) -> np.ndarray:
    """Words (``WORD_PATTERN`` matches) of each text as given."""
    return pl.DataFrame({"t": texts}).select(pl.col("t").str.count_matches(WORD_PATTERN))["t"].to_numpy()


def _call_feature(name: str, fn: Callable[[dict[str, Any]], Any], row: dict[str, Any], index: int) -> float:
    try:
        value = fn(row)
    except Exception as exc:  # boundary: the user's feature raised; say which feature and which row
        raise ArgumentError(
            f"feature {name!r} raised {type(exc).__name__}: {exc} on graded row {index} "
            f"(task {row.get('task_key') or row.get('scenario_id') or row.get('task_id')!r}). "
            "Make the function handle every row (return None for 'not measured'), or drop it from features=.",
            name=name, row=index,
        ) from exc
    if value is None:
        return float("nan")
    if isinstance(value, (bool, np.bool_)):
        return float(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    raise ArgumentError(
        f"feature {name!r} must return a number, a bool or None, got {value!r} on graded row {index}. "
        "Return a number.", name=name, row=index,
    )


def _mean_logprob(df: pl.DataFrame) -> np.ndarray | None:
    cols = df.columns
    if "token_logprobs" in cols and isinstance(df.schema["token_logprobs"], pl.List):
        return df.select(pl.col("token_logprobs").list.mean().cast(pl.Float64))["token_logprobs"].to_numpy()
    if "mean_logprob" in cols and df.schema["mean_logprob"].is_numeric():
        return df["mean_logprob"].cast(pl.Float64).to_numpy()
    if "logprob" in cols and "n_tokens" in cols and df.schema["logprob"].is_numeric() and df.schema["n_tokens"].is_numeric():
        return df.select((pl.col("logprob").cast(pl.Float64) / pl.col("n_tokens").cast(pl.Float64)).alias("x"))["x"].to_numpy()
    return None


class Spec(NamedTuple):
    """What the feature pass needs to know (the same in the local chunks and in Ray's workers)."""

    reward: str
    user: dict[str, Callable[[dict[str, Any]], Any]]
    auto: bool
    top_k: int
    min_obs: int
    trace: bool


class Chunk(NamedTuple):
    """The features of one chunk of graded rows (numbers only: its text is gone)."""

    pre: list[tuple[str, np.ndarray, str]]
    tools: dict[str, np.ndarray]
    post: list[tuple[str, np.ndarray, str]]
    auto_rows: np.ndarray
    auto_cols: np.ndarray
    names: dict[int, str]
    sig: np.ndarray


class Rows(NamedTuple):
    """Every graded row as numbers: task key, reward, dense and auto features, trajectory signature."""

    n_rows: int
    keys: pl.Series
    y: np.ndarray
    dense_names: list[str]
    dense_cols: list[np.ndarray]
    dense_kind: list[str]
    auto_mat: Any
    auto_names: list[str]
    sig: np.ndarray


#: The columns the scan reads when no ``features=`` function needs the whole row.
COLUMNS = ("final_text", "messages", "truncated", "token_logprobs", "mean_logprob", "logprob", "n_tokens",
            "markers", "trace_flags")


def sample_mask(keys: pl.Series, share: float) -> np.ndarray:
    """Rows whose task key hashes below ``share`` of the 32-bit range (Polars' seeded hash)."""
    h = keys.hash(seed=HACK_VOCAB_HASH_SEED).to_numpy() >> np.uint64(32)
    return h < np.uint64(int(share * 2**32))


def vocab_counts(texts: pl.Series) -> pl.DataFrame:
    """Rows containing each word and word pair of ``texts``: columns ``h`` (uint64 hash) and ``df``."""
    uniq, inv = distinct(texts)
    r, h, _ = _doc_pairs(uniq)
    return _counts(h, _weights(r, uniq, inv))


def _weights(r: np.ndarray, uniq: pl.Series, inv: np.ndarray | None) -> np.ndarray | None:
    """Rows holding each (distinct text, hash) pair: its text's count among the rows (None: one each)."""
    return None if inv is None else np.bincount(inv, minlength=len(uniq))[r]


def _counts(h: np.ndarray, w: np.ndarray | None = None) -> pl.DataFrame:
    """Rows holding each hash: one a (row, hash) pair, or ``w`` of them."""
    if w is None:
        return pl.DataFrame({"h": h}).group_by("h").agg(pl.len().cast(pl.Int64).alias("df"))
    return pl.DataFrame({"h": h, "w": w}).group_by("h").agg(pl.col("w").sum().cast(pl.Int64).alias("df"))


def choose_vocab(counts: pl.DataFrame, *, n_voc: int, n: int, top_k: int, min_obs: int) -> np.ndarray | None:
    """The ``top_k`` hashes present in the most rows (ties by hash), sorted; None when none qualifies.

    ``counts`` holds ``h`` and ``df`` (rows among ``n_voc`` ranked rows, possibly several rows a
    hash: they are summed). A hash present in (or absent from) fewer than ``min_obs`` of the
    ``n`` graded rows, scaled to the ranked rows, is left out.
    """
    if counts.height == 0:
        return None
    total = counts.group_by("h").agg(pl.col("df").sum())
    lo = min_obs * n_voc / n
    chosen = (
        total.filter((pl.col("df") >= lo) & (pl.col("df") <= n_voc - lo))
        .sort(["df", "h"], descending=[True, False])
        .head(top_k)
        .sort("h")
    )
    return chosen["h"].to_numpy().astype(np.uint64) if chosen.height else None


def chunk_features(ch: pl.DataFrame, vocab: np.ndarray | None, spec: Spec, *, offset: int = 0) -> Chunk:
    """The features of a chunk of graded rows (the row index ``offset`` names its first row in errors)."""
    texts = agent_text_of(ch)
    uniq, inv = distinct(texts)  # words and counts once per distinct text
    n_words = None
    auto_r = auto_c = np.zeros(0, np.int64)
    names: dict[int, str] = {}
    if vocab is not None:
        toks = tokenize(uniq)
        n_words = np.diff(toks.offsets)
        auto_r, auto_c, first_c, first_r = _token_hits(toks, vocab, inv)
        if first_c.size:
            names = dict(zip(vocab[first_c].tolist(), _names(texts, vocab[first_c], first_r)))
    pre, tools, post = _hand_features(ch, texts, spec.user, trace=spec.trace, distinct_text=(uniq, inv), n_words=n_words,
                                      offset=offset)
    return Chunk(pre, tools, post, auto_r, auto_c, names, _signature(ch, texts))


def one_pass_features(df: pl.DataFrame, spec: Spec, *, chunk: int, n_voc: int, n: int,
                      progress: Callable[[int], None] | None = None) -> tuple[list[Chunk], np.ndarray | None]:
    """Every row's features with the text of each chunk tokenised once (the vocabulary is ranked on every row).

    The distinct words and word pairs of each chunk are kept (as hashes) while the vocabulary is
    chosen from their document frequencies, then matched against it: the chunks are the ones
    ``chunk_features`` builds with that vocabulary. ``n_voc`` and ``n`` are the rows ranked and
    graded (equal here; ``choose_vocab`` scales ``min_obs`` by them).
    """
    held: list[tuple[Chunk, np.ndarray, np.ndarray, np.ndarray | None]] = []
    counts: list[pl.DataFrame] = []
    for start in range(0, df.height, chunk):
        ch = df.slice(start, chunk)
        texts = agent_text_of(ch)
        uniq, inv = distinct(texts)  # words and pairs once per distinct text, counted once per row
        r, h, n_words = _doc_pairs(uniq)
        counts.append(_counts(h, _weights(r, uniq, inv)))
        pre, tools, post = _hand_features(ch, texts, spec.user, trace=spec.trace, distinct_text=(uniq, inv), n_words=n_words,
                                          offset=start)
        held.append((Chunk(pre, tools, post, np.zeros(0, np.int64), np.zeros(0, np.int64), {},
                           _signature(ch, texts)), r.astype(np.int32), h, inv))
        if progress is not None:
            progress(min(start + chunk, df.height))
    vocab = choose_vocab(pl.concat(counts), n_voc=n_voc, n=n, top_k=spec.top_k, min_obs=spec.min_obs)
    if vocab is None:  # no vocabulary: words are counted on the text as given, as chunk_features does
        parts = []
        for i, (c, _, _, _) in enumerate(held):
            texts = agent_text_of(df.slice(i * chunk, chunk))
            words = pl.DataFrame({"t": texts}).select(pl.col("t").str.count_matches(WORD_PATTERN))["t"].to_numpy()
            parts.append(c._replace(pre=[(nm, np.asarray(words, dtype=np.float32), k) if nm == "n:words" else (nm, v, k)
                                         for nm, v, k in c.pre]))
        return parts, None
    parts = []
    first: dict[int, int] = {}  # vocabulary position -> first row holding it
    for i, (c, r, h, inv) in enumerate(held):
        auto_r, auto_c, first_c, first_r = _auto_hits(r.astype(np.int64), h, vocab, inv)
        for col, row in zip(first_c.tolist(), first_r.tolist()):
            first.setdefault(col, i * chunk + row)
        parts.append(c._replace(auto_rows=auto_r, auto_cols=auto_c))
    held.clear()
    if first:
        cols = np.array(sorted(first), dtype=np.int64)
        rows = np.array([first[c] for c in cols.tolist()], dtype=np.int64)
        at, pos = np.unique(rows, return_inverse=True)
        texts = agent_text_of(df[at])
        parts[0] = parts[0]._replace(names=dict(zip(vocab[cols].tolist(), _names(texts, vocab[cols], pos))))
    return parts, vocab


def _token_hits(toks: Any, vocab: np.ndarray, inv: np.ndarray | None = None,
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``_auto_hits`` over every word and adjacent word pair of ``toks``, row numbers read only for hits.

    With ``inv`` the tokens are those of distinct texts and the hits are given to every row by it.
    """
    h, row = toks.hash, toks.row
    rows_parts: list[np.ndarray] = []
    cols_parts: list[np.ndarray] = []
    find = _vocab_finder(vocab)
    if h.size:
        at, col = find(h)
        rows_parts.append(row[at])
        cols_parts.append(col)
    if h.size > 1:  # every adjacent pair, then only the hits whose two words share a row
        at, col = find(pair(h[:-1], h[1:]))
        same = row[at] == row[at + 1]
        rows_parts.append(row[at[same]])
        cols_parts.append(col[same])
    if not rows_parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    auto_r = np.concatenate(rows_parts).astype(np.int64)
    auto_c = np.concatenate(cols_parts)
    if not auto_c.size:
        return auto_r, auto_c, np.zeros(0, np.int64), np.zeros(0, np.int64)
    auto_r, auto_c = _distinct_hits(auto_r, auto_c, n_rows=toks.offsets.size - 1, n_cols=vocab.size)
    if inv is not None:
        auto_r, auto_c = expand_hits(auto_r, auto_c, inv)
    first = pl.DataFrame({"c": auto_c, "r": auto_r}).group_by("c").agg(pl.col("r").min()).sort("c")
    return auto_r, auto_c, first["c"].to_numpy(), first["r"].to_numpy()


#: Slots (a power of two) of the table that finds a hash among the vocabulary by its low bits.
_VOCAB_SLOTS = 1 << 20


def _vocab_finder(vocab: np.ndarray) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """A function of hashes giving (where a hash is in the sorted ``vocab``, its vocabulary position).

    A table indexed by a hash's low 20 bits holds the one vocabulary position there, checked
    against the full hash; when two vocabulary hashes share low bits, a binary search instead.
    """
    mask = np.uint64(_VOCAB_SLOTS - 1)
    slots = (vocab & mask).astype(np.int64)
    if vocab.size >= np.iinfo(np.int16).max or np.unique(slots).size < vocab.size:
        ext = np.append(vocab, np.uint64(0))  # past the end: 0 never equals a hash above the largest

        def search(hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            pos = np.searchsorted(vocab, hashes)
            at = np.flatnonzero(ext[pos] == hashes)
            return at, pos[at].astype(np.int64)

        return search
    table = np.full(_VOCAB_SLOTS, -1, dtype=np.int16)
    table[slots] = np.arange(vocab.size, dtype=np.int16)

    def look(hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cand = table[(hashes & mask).view(np.int64)]
        at = np.flatnonzero(cand >= 0)
        col = cand[at].astype(np.int64)
        ok = vocab[col] == hashes[at]
        return at[ok], col[ok]

    return look


#: Cells (rows x vocabulary) of the chunk's presence mask that drops repeated hits; above it
#: they are dropped by sorting.
_MARK_CELLS = 1 << 27


def _distinct_hits(r: np.ndarray, c: np.ndarray, *, n_rows: int, n_cols: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (row, column) hits, by row then column (a word said twice in a row is one hit).

    The same presence matrix as the repeated hits give once summed and set to 1, with fewer
    entries to hold and to send.
    """
    code = r * n_cols + c
    if n_rows * n_cols <= _MARK_CELLS:
        mark = np.zeros(n_rows * n_cols, dtype=bool)
        mark[code] = True
        code = np.flatnonzero(mark)
    else:
        code = np.unique(code)
    return code // n_cols, code % n_cols


def _auto_hits(r: np.ndarray, h: np.ndarray, vocab: np.ndarray, inv: np.ndarray | None = None,
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(row, vocabulary position) of every hashed word or pair in ``vocab``; each hit column and its first row.

    With ``inv`` the rows ``r`` are distinct texts and the hits are given to every row by it.
    """
    pos = np.minimum(np.searchsorted(vocab, h), vocab.size - 1)
    hit = vocab[pos] == h
    auto_r, auto_c = r[hit], pos[hit].astype(np.int64)
    if inv is not None:
        by = np.argsort(auto_r, kind="stable")
        auto_r, auto_c = expand_hits(auto_r[by], auto_c[by], inv)
    if not auto_c.size:
        return auto_r, auto_c, np.zeros(0, np.int64), np.zeros(0, np.int64)
    first = pl.DataFrame({"c": auto_c, "r": auto_r}).group_by("c").agg(pl.col("r").min()).sort("c")
    return auto_r, auto_c, first["c"].to_numpy(), first["r"].to_numpy()


def assemble(n_rows: int, keys: pl.Series, y: np.ndarray, parts: Sequence[Chunk], vocab: np.ndarray | None) -> Rows:
    """Chunks of features, in row order, as one set of columns (a tool absent from a chunk is 0 there)."""
    n = int(y.size)
    sizes = [c.sig.size for c in parts]
    tools = sorted(set().union(*(c.tools for c in parts)))
    names: list[str] = []
    cols: list[np.ndarray] = []
    kinds: list[str] = []

    def add(name: str, kind: str, arrays: list[np.ndarray]) -> None:
        names.append(name)
        cols.append(np.concatenate(arrays) if len(arrays) != 1 else arrays[0])
        kinds.append(kind)

    for j, (name, _, kind) in enumerate(parts[0].pre):
        add(name, kind, [c.pre[j][1] for c in parts])
    for tool in tools:
        add(f"tool:{tool}", "binary", [c.tools.get(tool, np.zeros(m, np.float32)) for c, m in zip(parts, sizes)])
    for j, (name, _, kind) in enumerate(parts[0].post):
        add(name, kind, [c.post[j][1] for c in parts])
    for j, kind in enumerate(kinds):
        if kind == "user":  # binary when every measured value is 0 or 1 (over every graded row)
            fin = cols[j][np.isfinite(cols[j])]
            kinds[j] = "binary" if fin.size and np.all((fin == 0) | (fin == 1)) else "measure"
    auto_mat = None
    auto_names: list[str] = []
    if vocab is not None:
        starts = np.cumsum([0, *sizes[:-1]])
        rows_m = np.concatenate([c.auto_rows + s for c, s in zip(parts, starts)])
        cols_m = np.concatenate([c.auto_cols for c in parts])
        auto_mat = _presence(rows_m, cols_m, n, vocab.size)
        where: dict[int, str] = {}
        for c in parts:
            for k, v in c.names.items():
                where.setdefault(k, v)
        auto_names = [f"contains:{where.get(int(v), f'#{int(v):x}')}" for v in vocab.tolist()]
    sig = np.concatenate([c.sig for c in parts]) if parts else np.zeros(0, np.uint64)
    return Rows(n_rows, keys, y, names, cols, kinds, auto_mat, auto_names, sig)


def _presence(rows: np.ndarray, cols: np.ndarray, n: int, m: int) -> Any:
    """The (n, m) float32 CSR matrix with a 1 at every (row, column) hit (a repeated hit is one 1)."""
    import scipy.sparse as sp

    code = rows * m + cols
    if code.size and rows.max() < n and bool(np.all(code[1:] > code[:-1])):  # distinct and by row, then column
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
        idx = np.int32 if max(code.size, m) < np.iinfo(np.int32).max else np.int64
        mat = sp.csr_matrix((np.ones(rows.size, dtype=np.float32), cols.astype(idx), indptr.astype(idx)), shape=(n, m))
        mat.has_canonical_format = True  # sorted, no duplicate: what sum_duplicates would leave
        return mat
    mat = sp.csr_matrix((np.ones(rows.size, dtype=np.float32), (rows, cols)), shape=(n, m))
    mat.sum_duplicates()
    mat.data[:] = 1.0
    return mat


def _unigram_bigram(toks: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows and hashes of every word and adjacent word pair, and where each pair starts."""
    h, row = toks.hash, toks.row
    m = h.size
    same = row[:-1] == row[1:] if m > 1 else np.zeros(0, dtype=bool)
    bstart = np.flatnonzero(same)
    bh = pair(h[bstart], h[bstart + 1]) if bstart.size else np.zeros(0, np.uint64)
    return np.concatenate([row, row[bstart]]), np.concatenate([h, bh]), bstart


def _doc_pairs(texts: pl.Series, *, unique: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows and hashes of every word and word pair of a chunk, and words per row.

    The (row, hash) pairs are distinct per row when ``unique``.
    """
    toks = tokenize(texts)
    rows, ids, _ = _unigram_bigram(toks)
    if unique and ids.size:
        first = pl.Series(pair(rows.astype(np.uint64), ids)).is_first_distinct().to_numpy()
        rows, ids = rows[first], ids[first]
    return rows.astype(np.int64), ids, np.diff(toks.offsets)


def _names(texts: pl.Series, vocab: np.ndarray, first_rows: np.ndarray) -> list[str]:
    """The words behind the chosen hashes, read back from one row that holds each."""
    rows = np.unique(first_rows)
    toks = tokenize(texts.gather(rows))
    _, ids, bstart = _unigram_bigram(toks)
    m = toks.hash.size
    where: dict[int, str] = {}
    want = set(vocab.tolist())
    for i in np.flatnonzero(np.isin(ids, vocab)).tolist():  # at most a few hundred hits in a few hundred rows
        key = int(ids[i])
        if key in want and key not in where:
            where[key] = str(toks.words[i]) if i < m else f"{toks.words[int(bstart[i - m])]} {toks.words[int(bstart[i - m]) + 1]}"
    return [where.get(int(v), f"#{int(v):x}") for v in vocab.tolist()]


def _signature(df: pl.DataFrame, texts: pl.Series) -> np.ndarray:
    """One hash a row over its trajectory: agent text plus tool calls (names and arguments)."""
    sig = texts.hash().to_numpy()
    if "messages" in df.columns:
        calls = df.select(
            pl.col("messages").list.eval(
                pl.element().struct.field("tool_calls").list.eval(
                    pl.concat_str([pl.element().struct.field("name"), pl.element().struct.field("arguments")],
                                  ignore_nulls=True)
                ).list.join("|")
            ).list.join("\n").alias("c")
        )["c"].fill_null("")
        sig = combine(sig, calls.hash().to_numpy())
    return sig.astype(np.uint64, copy=False)
