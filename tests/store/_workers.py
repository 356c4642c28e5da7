"""Child-process bodies for the concurrency tests (importable, so ``spawn`` can run them)."""

from __future__ import annotations

import contextlib
import time

import polars as pl


def _rows(tag: str, n: int = 6) -> pl.DataFrame:
    return pl.DataFrame({"scenario_id": [f"{tag}-{i // 2}" for i in range(n)], "reward": [float(i % 2) for i in range(n)]})


def save_many(path: str, name: str, n: int, start, results) -> None:
    import whileai as wai

    # A generous lock wait: on a loaded machine the default can run out while the other writer
    # commits, and this test is about both writers landing, not about the default.
    store = wai.store.open(path, timeout=120)
    start.wait()
    ids = []
    for i in range(n):
        ids.append(store.save_dataset(_rows(f"{name}-{i}-{time.time_ns()}"), name).id)
    results.put(ids)


def hold_lock(path: str, seconds: float, ready) -> None:
    import whileai as wai
    from whileai.store._db import transaction

    store = wai.store.open(path)
    with store._connect() as con, transaction(con):
        con.execute("SELECT count(*) FROM datasets").fetchall()
        ready.set()
        time.sleep(seconds)


def crash_before_commit(path: str, ready) -> None:
    """Insert the dataset record, then stall before COMMIT until the parent kills us."""
    import whileai as wai
    from whileai.store import _store

    @contextlib.contextmanager
    def stalled(con):
        con.execute("BEGIN TRANSACTION")
        yield con
        ready.set()  # the insert ran; COMMIT never will
        time.sleep(600)

    _store.transaction = stalled
    wai.store.open(path).save_dataset(_rows("crash"), "victim")


def crash_mid_parquet(path: str, ready) -> None:
    """Write half a Parquet file into the atomic temp path, then stall until killed."""
    import whileai as wai
    from whileai import table

    def half_write(df, target):
        with table.atomic_path(target) as tmp:
            tmp.write_bytes(b"PAR1" + b"\0" * 1000)
            ready.set()
            time.sleep(600)

    table.write_parquet = half_write
    wai.store.open(path).save_dataset(_rows("crash"), "victim")
