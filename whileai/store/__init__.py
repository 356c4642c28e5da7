"""The local store: datasets with lineage and content hashes, runs with scores, eval sets.

One DuckDB file (``.wai/store.duckdb`` in the working folder, ``WAI_STORE`` overrides), created
and migrated on first use; each dataset's rows are a Parquet file beside it. DuckDB is imported
only when a store call runs, never by ``import whileai``.

    >>> import whileai as wai
    >>> store = wai.store.open()                       # doctest: +SKIP
    >>> store.save_dataset("train.jsonl", "refunds")   # doctest: +SKIP
"""

from whileai._lazy import attach_stub

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
