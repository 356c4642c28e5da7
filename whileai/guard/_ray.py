"""``hack_scan`` on Ray Data: the features of every graded row built in the workers, three passes.

docs/scale.md, "What runs where". The workers read and parse the conversations (the costly part);
only numbers reach the driver:

1. per task: rows and graded rows (``map_batches``, merged by a Ray Data group-by on the task
   key), which say how many rows rank the vocabulary;
2. document frequencies of every word and word pair (``map_batches``, merged by a group-by on
   the hash), from which the driver picks the vocabulary exactly as the local path does, and
   hands it to the workers with ``ray.put``;
3. each graded row's features against that vocabulary (``map_batches``): task key, reward, the
   hand features, the vocabulary positions it contains and its trajectory signature.

The within-ask shuffle floor pairs rows inside an ask, so it needs each graded row's features,
not only per-task sums: the driver receives those (tens of bytes a row, never a conversation)
and runs the same kernel as the local path on them, in the same canonical order, so the numbers
are the local path's (``tests/engines/test_ray_hack.py``).
"""

from __future__ import annotations

import functools
import json
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from whileai.defaults import HACK_VOCAB_SAMPLE_ROWS
from whileai.errors import ArgumentError
from whileai.guard._hackfeat import (
    COLUMNS,
    Chunk,
    Rows,
    Spec,
    assemble,
    choose_vocab,
    chunk_features,
    sample_mask,
    vocab_counts,
)
from whileai.guard._views import agent_text_of
from whileai.table.raydata import batch_frame, collect_small, require_ray, translated

__all__ = ["scan_rows"]

_F = "f:"  # prefix of a dense feature column in the rows the workers return


def _graded(batch: pa.Table, spec: Spec) -> pl.DataFrame:
    """One batch as the rollout table, graded rows only (runs in a worker)."""
    df = batch_frame(batch, None if spec.user else [*COLUMNS, spec.reward])
    if spec.reward not in df.columns or df.height == 0:
        return df.head(0)
    return df.filter(pl.col(spec.reward).cast(pl.Float64, strict=False).is_finite().fill_null(False))


def _task_counts(batch: pa.Table, *, reward: str) -> pa.Table:
    """Rows and graded rows per task of one batch (runs in a worker)."""
    df = batch_frame(batch, [reward])
    graded = (pl.col(reward).cast(pl.Float64, strict=False).is_finite().fill_null(False) if reward in df.columns
              else pl.lit(False))
    out = (df.group_by("task_key").agg(pl.len().cast(pl.Int64).alias("n"), graded.sum().cast(pl.Int64).alias("n_graded"))
           if df.height else pl.DataFrame(schema={"task_key": pl.String, "n": pl.Int64, "n_graded": pl.Int64}))
    return out.to_arrow()


def _doc_counts(batch: pa.Table, *, spec: Spec, share: float | None) -> pa.Table:
    """Document frequencies of the words and word pairs of one batch's ranked rows (runs in a worker)."""
    g = _graded(batch, spec)
    if share is not None and g.height:
        g = g.filter(pl.Series(sample_mask(g["task_key"], share)))
    counts = vocab_counts(agent_text_of(g)) if g.height else pl.DataFrame(schema={"h": pl.UInt64, "df": pl.Int64})
    # the 64-bit hash travels as its signed bits: Ray's sort-based shuffle (a DataContext choice, the
    # default before Ray 2.4x) cannot sort a uint64 key it has turned into Python objects
    return counts.with_columns(pl.col("h").reinterpret(signed=True)).to_arrow()


def _features(batch: pa.Table, *, spec: Spec, vocab_ref: Any) -> pa.Table:
    """Every graded row of one batch as numbers (runs in a worker)."""
    import ray

    vocab = ray.get(vocab_ref) if vocab_ref is not None else None
    g = _graded(batch, spec)
    if g.height == 0:
        return pa.table({"task_key": pa.array([], pa.string())})
    c = chunk_features(g, vocab, spec)
    cols: dict[str, Any] = {"task_key": g["task_key"].cast(pl.String).to_arrow(),
                            "_y": pa.array(g[spec.reward].cast(pl.Float64).to_numpy()),
                            "_sig": pa.array(c.sig, pa.uint64())}
    for name, arr, _ in [*c.pre, *c.post]:
        cols[_F + name] = pa.array(arr, pa.float32())
    for tool, arr in c.tools.items():
        cols[f"{_F}tool:{tool}"] = pa.array(arr, pa.float32())
    auto = pl.DataFrame({"r": c.auto_rows, "c": c.auto_cols.astype(np.int32)}).group_by("r").agg(pl.col("c").unique())
    per_row = pl.DataFrame({"r": np.arange(g.height, dtype=np.int64)}).join(auto, on="r", how="left")["c"]
    cols["_auto"] = per_row.to_arrow()
    layout = json.dumps({"pre": [(n, k) for n, _, k in c.pre], "post": [(n, k) for n, _, k in c.post],
                         "names": {str(k): v for k, v in c.names.items()}})
    cols["_layout"] = pa.array([layout] + [None] * (g.height - 1), pa.string())
    return pa.table(cols)


def _check_shippable(spec: Spec) -> None:
    """``features=`` functions travel to the workers by cloudpickle: refuse one that cannot, naming the fix."""
    if not spec.user:
        return
    from ray import cloudpickle

    for name, fn in spec.user.items():
        try:
            cloudpickle.dumps(fn)
        except Exception as exc:  # boundary: pickling user code raises anything; name the feature
            raise ArgumentError(
                f"features[{name!r}] must be a function Ray can ship to its workers (cloudpickle), got {fn!r} "
                f"({type(exc).__name__}: {exc}). Define it at module level without open files, locks or clients, "
                "or run hack_scan on a local table (table.frame(...)).", name=name,
            ) from exc


def scan_rows(ds: Any, spec: Spec) -> Rows:
    """Every graded row of a Ray dataset as the numbers the kernel needs (see the module docstring)."""
    ray = require_ray("hack_scan on a Ray dataset")
    from ray.data.aggregate import Sum

    _check_shippable(spec)
    with translated():
        tasks = collect_small(ds.map_batches(functools.partial(_task_counts, reward=spec.reward), batch_format="pyarrow")
                              .groupby("task_key").aggregate(Sum("n", alias_name="n"),
                                                             Sum("n_graded", alias_name="n_graded")))
    n_rows = int(tasks["n"].sum()) if tasks.height else 0
    n = int(tasks["n_graded"].sum()) if tasks.height else 0
    if n == 0:
        return Rows(n_rows, pl.Series("task_key", [], pl.String), np.zeros(0), [], [], [], None, [],
                    np.zeros(0, np.uint64))
    vocab = None
    if spec.auto:
        share = HACK_VOCAB_SAMPLE_ROWS / n if n > HACK_VOCAB_SAMPLE_ROWS else None
        ranked = tasks.filter(pl.Series(sample_mask(tasks["task_key"], share))) if share is not None else tasks
        n_voc = int(ranked["n_graded"].sum())
        with translated():
            counts = collect_small(ds.map_batches(functools.partial(_doc_counts, spec=spec, share=share),
                                                  batch_format="pyarrow")
                                   .groupby("h").aggregate(Sum("df", alias_name="df")))
        if counts.height:
            counts = counts.with_columns(pl.col("h").cast(pl.Int64).reinterpret(signed=False),
                                         pl.col("df").cast(pl.Int64))
            vocab = choose_vocab(counts, n_voc=n_voc, n=n, top_k=spec.top_k, min_obs=spec.min_obs)
    vocab_ref = ray.put(vocab) if vocab is not None else None
    with translated():
        rows = collect_small(ds.map_batches(functools.partial(_features, spec=spec, vocab_ref=vocab_ref),
                                            batch_format="pyarrow"))
    return _as_rows(rows, n_rows, vocab)


def _as_rows(rows: pl.DataFrame, n_rows: int, vocab: np.ndarray | None) -> Rows:
    """The workers' rows as one chunk of features, then the same assembly as the local path."""
    layouts = [json.loads(x) for x in rows["_layout"].drop_nulls().to_list()]
    names: dict[int, str] = {}
    for lay in layouts:
        for k, v in lay["names"].items():
            names.setdefault(int(k), v)
    lay = layouts[0]

    def col(name: str) -> np.ndarray:
        return rows[_F + name].fill_null(0.0).to_numpy().astype(np.float32)

    pre = [(nm, col(nm), k) for nm, k in lay["pre"]]
    post = [(nm, col(nm), k) for nm, k in lay["post"]]
    tools = {c[len(_F) + 5:]: rows[c].fill_null(0.0).to_numpy().astype(np.float32)
             for c in rows.columns if c.startswith(f"{_F}tool:")}
    auto = rows.select(pl.col("_auto")).with_row_index("r").explode("_auto").drop_nulls("_auto")
    chunk = Chunk(pre, tools, post, auto["r"].to_numpy().astype(np.int64), auto["_auto"].to_numpy().astype(np.int64),
                  names, rows["_sig"].to_numpy().astype(np.uint64))
    return assemble(n_rows, rows["task_key"], rows["_y"].to_numpy(), [chunk], vocab)
