"""Content hashes over one canonical form, tagged with the algorithm that made them.

The tag travels with the hash (``rows-v1-sha256:<hex>``), so a future change to the canonical
form is detectable rather than silently splitting the dedup space (the approach of simonw/llm's
``logs.py``). The canonical form is part of the store's contract: changing it changes every hash,
so a change must come with a new tag.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import polars as pl

from whileai._progress import ProgressArg, Tracker
from whileai.defaults import CHUNK_ROWS, PROGRESS_MIN_ROWS
from whileai.table.schema import DERIVED_COLUMNS

__all__ = ["ROWS_HASH", "TASKS_HASH", "content_hash", "short_hash", "tasks_hash"]

#: Tag of the rows hash: version 1 of the canonical row form, digested with sha256.
ROWS_HASH = "rows-v1-sha256"

#: Tag of the task-set hash of a pinned eval set.
TASKS_HASH = "tasks-v1-sha256"


def _canonical(expr: pl.Expr, dtype: Any) -> pl.Expr:
    """Rebuild struct values with their fields in sorted order, at every depth."""
    if isinstance(dtype, pl.Struct):
        fields = sorted(dtype.fields, key=lambda f: f.name)
        return pl.struct([_canonical(expr.struct.field(f.name), f.dtype).alias(f.name) for f in fields])
    if isinstance(dtype, (pl.List, pl.Array)) and _has_struct(dtype.inner):
        inner = dtype.inner
        assert inner is not None
        return expr.list.eval(_canonical(pl.element(), inner)) if isinstance(dtype, pl.List) else expr
    if isinstance(dtype, pl.Binary):
        return expr.bin.encode("hex")
    if isinstance(dtype, pl.Object):
        return expr.map_elements(repr, pl.String)
    return expr


def _has_struct(dtype: Any) -> bool:
    if isinstance(dtype, pl.Struct):
        return True
    if isinstance(dtype, (pl.List, pl.Array)):
        return _has_struct(dtype.inner)
    return False


def content_hash(df: pl.DataFrame, *, progress: ProgressArg = None) -> str:
    """The content hash of a rollout table, independent of row order and column order.

    Canonical form (version 1): derived columns (``task_key``) and columns that are null on every
    row are dropped; columns are sorted by name and struct fields by name at every depth; each
    row is one JSON object as Polars' ``struct.json_encode`` writes it; each row's UTF-8 text is
    digested with sha256; the digests are sorted and digested again. Two tables with the same
    rows in any order hash the same; changing any cell changes the hash.

    Examples:
        >>> a = pl.DataFrame({"scenario_id": ["t1", "t2"], "reward": [1.0, 0.0]})
        >>> content_hash(a) == content_hash(a.reverse().select("reward", "scenario_id"))
        True
        >>> content_hash(a).split(":")[0]
        'rows-v1-sha256'
    """
    nulls = df.null_count().row(0, named=True) if df.height else {}
    names = sorted(
        c for c in df.columns
        if c not in DERIVED_COLUMNS and not (df.height and nulls.get(c, 0) == df.height)
    )
    digests: list[bytes] = []
    if names and df.height:
        encoded = pl.struct([_canonical(pl.col(c), df.schema[c]).alias(c) for c in names]).struct.json_encode()
        sha = hashlib.sha256
        with Tracker(df.height, desc="hashing rows", progress=progress, min_total=PROGRESS_MIN_ROWS) as bar:
            for chunk in df.iter_slices(CHUNK_ROWS):
                texts = chunk.select(encoded.alias("_j")).to_series().to_list()
                digests.extend(sha(t.encode("utf-8")).digest() for t in texts)
                bar.update(chunk.height)
    digests.sort()
    whole = hashlib.sha256()
    whole.update(",".join(names).encode("utf-8"))
    whole.update(b"\n")
    for d in digests:
        whole.update(d)
    return f"{ROWS_HASH}:{whole.hexdigest()}"


def tasks_hash(task_keys: Iterable[str]) -> str:
    """The hash of a set of task keys: sha256 over the sorted, distinct keys, one per line.

    Examples:
        >>> tasks_hash(["b", "a", "a"]) == tasks_hash(["a", "b"])
        True
    """
    text = "\n".join(sorted(set(task_keys)))
    return f"{TASKS_HASH}:{hashlib.sha256(text.encode('utf-8')).hexdigest()}"


def short_hash(hash_text: str, n: int = 12) -> str:
    """The first ``n`` hex characters of a tagged hash, for display."""
    return hash_text.split(":", 1)[-1][:n]
