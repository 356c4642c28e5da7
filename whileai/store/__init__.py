"""The local store: datasets with lineage and content hashes, runs with scores, eval sets.

One DuckDB file (``.wai/store.duckdb`` in the working folder, ``WAI_STORE`` overrides), created
and migrated on first use; each dataset's rows are a Parquet file beside it. DuckDB is imported
only when a store call runs, never by ``import whileai``.

    >>> import whileai as wai
    >>> store = wai.store.open()                       # doctest: +SKIP
    >>> store.save_dataset("train.jsonl", "refunds")   # doctest: +SKIP
"""

from whileai.store._db import connect, resolve_path, transaction
from whileai.store._describe import RolloutSummary, describe
from whileai.store._migrations import utcnow
from whileai.store._reports import (
    DatasetDiff,
    DatasetInfo,
    EvalSetInfo,
    Listing,
    RunDiff,
    RunInfo,
    SplitInfo,
)
from whileai.store._split import Split, split
from whileai.store._store import Purpose, Store, check_name, fingerprint, harness_fingerprint, open
from whileai.table import content_hash, tasks_hash

__all__ = [
    "DatasetDiff",
    "DatasetInfo",
    "EvalSetInfo",
    "Listing",
    "Purpose",
    "RolloutSummary",
    "RunDiff",
    "RunInfo",
    "Split",
    "SplitInfo",
    "Store",
    "content_hash",
    "describe",
    "harness_fingerprint",
    "open",
    "split",
    "tasks_hash",
    "connect",
    "resolve_path",
    "transaction",
    "utcnow",
    "check_name",
    "fingerprint",
]
