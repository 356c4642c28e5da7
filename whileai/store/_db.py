"""Opening the store file: path resolution, the busy-lock retry, migrations, transactions.

DuckDB lets one process at a time open a database file for writing and holds an OS file lock
while it does. The store therefore opens the file only for the length of one call and closes it
again; a call that meets another process's lock retries with backoff for ``timeout`` seconds and
then raises :class:`StoreBusyError`. Every write runs in one transaction, so a process killed
mid-write leaves the file as it was (DuckDB rolls the uncommitted WAL back on the next open).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from whileai._version import __version__
from whileai.defaults import DUCKDB_MIN_VERSION, STORE_ENV, STORE_PATH, STORE_STORAGE_VERSION
from whileai.errors import StoreBusyError, StoreError, WaiError, translate
from whileai.store import _migrations
from whileai.store._migrations import migrate, recorded, written_by

__all__ = ["connect", "errors_as_store_errors", "resolve_path", "store_error", "transaction"]


def resolve_path(path: str | os.PathLike[str] | None) -> Path:
    """The store file: ``path``, else ``$WAI_STORE``, else ``.wai/store.duckdb`` in the working folder.

    A folder, or a path named like the store's folder (``.wai``) that is not a file, is refused:
    opening it would create a database file named ``.wai``.
    """
    if path is None:
        path = os.environ.get(STORE_ENV) or STORE_PATH
    resolved = Path(path).expanduser()
    if resolved.is_dir():
        raise StoreError(
            f"store path must be a file, got the folder {str(resolved)!r}. "
            f"Point {STORE_ENV} (or open(path=)) at a file such as {str(resolved / 'store.duckdb')!r}.",
            path=str(resolved),
        )
    folder_name = Path(STORE_PATH).parent.name
    if resolved.name == folder_name and not resolved.is_file():
        raise StoreError(
            f"store path must be the store file, got {str(path)!r}, the name of the store's folder (a file by that "
            f"name would be created). Pass {str(resolved / Path(STORE_PATH).name)!r}, or no path for the default "
            f"{STORE_PATH!r}.",
            path=str(resolved),
        )
    return resolved.absolute()


#: DuckDB's answer to a second open of a file this process holds with other settings (read-only
#: beside read-write).
_SAME_FILE_OTHER_SETTINGS = "same database file with a different configuration"
#: Who holds the lock, as DuckDB's lock error says it ("Conflicting lock is held in EXE (PID N)").
_LOCK_HOLDER = re.compile(r"lock is held in (?P<exe>.+?) \(PID (?P<pid>\d+)\)")


def _is_lock_error(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "lock" in text and ("conflicting" in text or "could not set" in text)


def _config() -> dict[str, Any]:
    """Connection settings for every open of the store.

    No extension is ever downloaded or loaded behind the user's back (a file that is not a DuckDB
    database once made DuckDB fetch one over HTTP), and a new file is written in a storage format
    DuckDB 1.1 onward can open (``STORE_STORAGE_VERSION``).
    """
    import duckdb

    check_duckdb(duckdb.__version__)
    config: dict[str, Any] = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
    if tuple(int(p) for p in duckdb.__version__.split(".")[:2] if p.isdigit()) >= (1, 2):
        config["storage_compatibility_version"] = STORE_STORAGE_VERSION  # older releases write that format anyway
    return config


def check_duckdb(version: str) -> None:
    """Refuse a duckdb older than ``DUCKDB_MIN_VERSION`` (pyproject.toml's floor) before it touches a store.

    Raises:
        StoreError: The version, the floor and the pip command.

    Examples:
        >>> check_duckdb("1.1.3"), check_duckdb("2.0.0")
        (None, None)
    """
    parts = tuple(int(p) for p in version.split(".")[:2] if p.isdigit())
    if parts < DUCKDB_MIN_VERSION:
        floor = ".".join(map(str, DUCKDB_MIN_VERSION))
        raise StoreError(f"duckdb must be {floor} or newer to open a whileai store, got duckdb {version} (it cannot "
                         f"read the store's storage format). Upgrade it: pip install 'duckdb>={floor}'.")


def store_error(path: Path, exc: BaseException) -> StoreError:
    """The one translation of a filesystem or DuckDB error into a :class:`StoreError` naming the path and the fix."""
    import duckdb

    text = " ".join(str(exc).split())
    low = text.lower()
    where = str(path)
    if "sqlite" in low or _header(path).startswith(b"SQLite format 3"):
        return StoreError(f"store file {where!r} must be a DuckDB database, got a SQLite file. Point {STORE_ENV} "
                          "(or open(path=)) at a .duckdb file; whileai never converts it.", path=where)
    if "no space left" in low or getattr(exc, "errno", None) == errno.ENOSPC:  # whatever DuckDB calls it
        return StoreError(f"store file {where!r} cannot be written: the disk is full ({text}). Free space on the disk "
                          f"that holds it, or set {STORE_ENV} to a file on another disk; the store itself is fine.",
                          path=where, reason="disk_full")
    if "not a valid duckdb database" in low or "extension" in low:
        return StoreError(f"store file {where!r} cannot be opened as a DuckDB database ({text}). If it is not a "
                          f"whileai store, point {STORE_ENV} elsewhere; if it is damaged, move it aside.", path=where)
    if isinstance(exc, OSError) or isinstance(exc, duckdb.IOException) or "permission denied" in low:
        if "no space" in low or getattr(exc, "errno", None) == errno.ENOSPC:
            fix = f"Free space on the disk that holds it, or set {STORE_ENV} to a file on another disk."
        elif "read-only" in low or "permission" in low or getattr(exc, "errno", None) in (errno.EACCES, errno.EPERM,
                                                                                           errno.EROFS):
            fix = f"Make it writable, or set {STORE_ENV} to a file in a folder you can write to."
        else:
            fix = f"Check the disk and the path, or set {STORE_ENV} to a writable location."
        return StoreError(f"store file {where!r} cannot be read or written ({text}). {fix}", path=where)
    if isinstance(exc, (duckdb.ConstraintException, duckdb.BinderException, duckdb.CatalogException,
                        duckdb.ConversionException)):
        return StoreError(
            f"store file {where!r} must have the tables this whileai {__version__} made, but a query failed ({text}); "
            "the file was changed outside whileai. Restore it from a copy, or move it aside and let whileai create a "
            "new one.", path=where)
    return StoreError(f"store file {where!r} cannot be opened or used ({text}). If it is not a whileai store, point "
                      f"{STORE_ENV} elsewhere; if it is damaged, move it aside.", path=where)


def _header(path: Path) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read(16)
    except OSError:
        return b""


@contextlib.contextmanager
def errors_as_store_errors(path: Path) -> Iterator[None]:
    """Run the block with every OSError and DuckDB error raised as :func:`store_error` (WaiErrors pass).

    The store's boundary is ``whileai.errors.translate`` with the store's own wording for the
    errors it knows (a polars or pydantic error in the block gets translate's default).
    """

    def mapper(exc: BaseException) -> WaiError | None:
        ours = isinstance(exc, OSError) or type(exc).__module__.lstrip("_").startswith("duckdb")
        return store_error(path, exc) if ours else None

    with translate(f"the store at {str(path)!r}", path=str(path), store=True, mapper=mapper):
        yield


def _open(path: Path, *, timeout: float, read_only: bool) -> Any:
    import duckdb

    deadline = time.monotonic() + max(float(timeout), 0.0)
    delay = 0.01
    while True:
        try:
            con = duckdb.connect(str(path), read_only=read_only, config=_config())
            con.execute("SET enable_progress_bar = false")  # DuckDB draws one on stderr for a query past 2 s
            return con
        except duckdb.Error as exc:
            if read_only and _SAME_FILE_OTHER_SETTINGS in str(exc):
                # this process holds the file open for writing (a wai server, a tracked run's store):
                # a read joins that database, it takes no lock of its own
                read_only = False
                continue
            if not _is_lock_error(exc):
                raise store_error(path, exc) from exc
            if time.monotonic() >= deadline:
                holder = _LOCK_HOLDER.search(str(exc))
                who = f" (PID {holder['pid']}, {holder['exe']})" if holder else ""
                raise StoreBusyError(
                    f"store is busy, retry: another process{who} has held {str(path)!r} for over {timeout:g} s. "
                    "Retry in a moment, or pass a longer timeout to whileai.store.open(timeout=); if that "
                    "process is `wai server`, send the call to the server (base_url=, or WHILEAI_BASE_URL).",
                    path=str(path),
                ) from exc
            time.sleep(delay)
            delay = min(delay * 2, 0.25)


@contextlib.contextmanager
def connect(path: Path, *, timeout: float, create: bool = True, read_only: bool = False) -> Iterator[Any]:
    """Open the store (creating and migrating it on first use) for one call, then close it.

    ``read_only`` opens it for reading only (the file must exist), so a read runs beside other
    readers, such as a DuckDB session a user left open read-only. Every filesystem and DuckDB
    error inside the block comes out as a :class:`StoreError` naming the path and the fix.

    Raises:
        StoreBusyError: Another process held the store for longer than ``timeout`` seconds.
        StoreError: The file is not a DuckDB database, cannot be created, was written by a newer
            whileai, or a query against it failed.
    """
    if create and not read_only:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"store folder {str(path.parent)!r} cannot be created ({exc}). "
                f"Set {STORE_ENV} to a writable location.",
                path=str(path),
            ) from exc
    con = _open(path, timeout=timeout, read_only=read_only)
    try:
        with errors_as_store_errors(path):
            if read_only and pending(con, path):
                con.close()  # an older store: migrate it once with a writer, then read
                with connect(path, timeout=timeout):
                    pass
                con = _open(path, timeout=timeout, read_only=True)
            elif not read_only:
                check_known(con, path)
                migrate(con)
            yield con
    finally:
        con.close()


def check_known(con: Any, path: Path) -> None:
    """Refuse a store that records a migration this whileai does not have (a newer whileai wrote it)."""
    known = {fn.__name__ for fn in _migrations.MIGRATIONS}
    done = recorded(con)
    unknown = sorted(done - known)
    if unknown:
        writer = written_by(con) or "a newer version"
        raise StoreError(
            f"store file {str(path)!r} was written by whileai {writer}; upgrade: this whileai {__version__} does not "
            f"know its migrations {', '.join(unknown)} and would misread it. Run pip install -U whileai, or point "
            f"{STORE_ENV} at another file.", path=str(path), value=writer, reason="unknown_migrations",
            counts={"unknown_migrations": len(unknown)})


def pending(con: Any, path: Path) -> bool:
    """Check the store is known (:func:`check_known`); True when it still needs a migration."""
    check_known(con, path)
    return bool({fn.__name__ for fn in _migrations.MIGRATIONS} - recorded(con))


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
