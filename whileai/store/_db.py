"""Opening the store file: path resolution, the busy-lock retry, migrations, transactions.

DuckDB lets one process at a time open a database file for writing and holds an OS file lock
while it does. The store therefore opens the file only for the length of one call and closes it
again; a call that meets another process's lock retries with backoff for ``timeout`` seconds and
then raises :class:`StoreBusyError`. Every write runs in one transaction, so a process killed
mid-write leaves the file as it was (DuckDB rolls the uncommitted WAL back on the next open).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from whileai.defaults import STORE_ENV, STORE_PATH
from whileai.errors import StoreBusyError, StoreError, translate
from whileai.store._migrations import migrate

__all__ = ["connect", "resolve_path", "transaction"]


def resolve_path(path: str | os.PathLike[str] | None) -> Path:
    """The store file: ``path``, else ``$WAI_STORE``, else ``.wai/store.duckdb`` in the working folder."""
    if path is None:
        path = os.environ.get(STORE_ENV) or STORE_PATH
    resolved = Path(path).expanduser()
    if resolved.is_dir():
        raise StoreError(
            f"store path must be a file, got the folder {str(resolved)!r}. "
            f"Point {STORE_ENV} (or open(path=)) at a file such as {str(resolved / 'store.duckdb')!r}.",
            path=str(resolved),
        )
    return resolved.absolute()


def _is_lock_error(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "lock" in text and ("conflicting" in text or "could not set" in text)


@contextlib.contextmanager
def connect(path: Path, *, timeout: float, create: bool = True) -> Iterator[Any]:
    """Open the store (creating and migrating it on first use) for one call, then close it.

    Raises:
        StoreBusyError: Another process held the store for longer than ``timeout`` seconds.
        StoreError: The file is not a DuckDB database or cannot be created.
    """
    import duckdb

    if create:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"store folder {str(path.parent)!r} cannot be created ({exc}). "
                f"Set {STORE_ENV} to a writable location.",
                path=str(path),
            ) from exc
    deadline = time.monotonic() + max(float(timeout), 0.0)
    delay = 0.01
    while True:
        try:
            con = duckdb.connect(str(path))
            break
        except duckdb.Error as exc:
            if not _is_lock_error(exc):
                raise StoreError(
                    f"store file {str(path)!r} cannot be opened ({exc}). "
                    f"If it is not a whileai store, point {STORE_ENV} elsewhere; if it is damaged, move it aside.",
                    path=str(path),
                ) from exc
            if time.monotonic() >= deadline:
                raise StoreBusyError(
                    f"store is busy, retry: another process has held {str(path)!r} for over {timeout:g} s. "
                    "Retry in a moment, or pass a longer timeout to whileai.store.open(timeout=).",
                    path=str(path),
                ) from exc
            time.sleep(delay)
            delay = min(delay * 2, 0.25)
    try:
        try:
            migrate(con)
        except duckdb.Error as exc:
            raise StoreError(
                f"store file {str(path)!r} cannot be migrated ({exc}). Move it aside and let whileai create a new one.",
                path=str(path),
            ) from exc
        with translate(f"the store at {str(path)!r}", path=str(path), store=True):
            yield con
    finally:
        con.close()


@contextlib.contextmanager
def transaction(con: Any) -> Iterator[Any]:
    """Run the block in one transaction: commit on success, roll back on any error."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
    except BaseException:
        with contextlib.suppress(Exception):
            con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")
