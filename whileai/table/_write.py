"""Rows out: the table as dicts, JSONL and Parquet, written atomically."""

from __future__ import annotations

import contextlib
import errno
import glob
import gzip
import io
import json
import os
import secrets
import shutil
import signal
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from whileai.defaults import (
    CHUNK_ROWS,
    FRAME_SUFFIXES,
    OUTPUT_SUFFIXES,
    SCHEMA_VERSION,
    STALE_TEMP_AGE_S,
    TEMP_SUFFIX,
)
from whileai.errors import ArgumentError, InputFileError, WaiError, translate
from whileai.table._rowdicts import _row_out, message_out, row_dicts
from whileai.table.schema import DERIVED_COLUMNS

__all__ = ["atomic_path", "frame_format", "write_frame", "check_output", "iter_rows", "message_out", "open_binary", "output_format", "rows", "sweep_temp_files", "write",
           "write_jsonl", "write_parquet"]

#: Output names that mean this process's standard output: written through it (so ``>>`` appends),
#: never opened or replaced by name.
STDOUT_NAMES = frozenset({"-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"})



@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], *, folder: bool = False) -> Iterator[Path]:
    """Yield the path to write ``path``'s new content to; put it in place only if the block succeeds.

    The one writer every file whileai writes goes through (docs/reliability.md, "Writes"):

    * a regular file (or a new one) is written to a temporary file beside it, then renamed over
      it, so a failure or a kill never leaves a half-written file; the old file's permission
      bits (and owner, when run as root) are kept, a new file gets ``0666`` less the umask;
    * a symlink is followed: its target is replaced and the link stays a link;
    * a character device or a FIFO (``/dev/null``, ``/dev/stdout``, a named pipe) is written
      directly, with no rename, so the device stays a device (``/dev/full`` fails with ENOSPC);
    * ``-`` is standard output;
    * a folder, a block device or a socket is refused with :class:`InputFileError`.

    With ``folder=True`` the block fills a temporary folder, which replaces ``path`` (absent or an
    empty folder) in one rename.

    Temporary files are named ``.<name>.<pid>.<token>.wai-tmp``; one left by a killed process is
    swept by the next write to the same name (``STALE_TEMP_AGE_S``). SIGTERM during the write
    (when no other handler is installed) and Ctrl-C remove the temporary file before exiting.

    Raises:
        InputFileError: The folder does not exist, or the target is not something rows can go to.
    """
    text = os.fspath(path)
    if folder:
        with _atomic_folder(Path(text)) as tmp:
            yield tmp
        return
    if text in STDOUT_NAMES:
        with _stdout_path() as tmp:
            yield tmp
        return
    try:
        st: os.stat_result | None = os.stat(text)  # follows a symlink: the kind of what it points at
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise InputFileError(f"output {text!r} cannot be checked ({exc.strerror or exc}). "
                             "Choose a path in a folder you can reach.", path=text) from exc
    if st is not None and (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
        try:
            yield Path(text)  # a device or a pipe: written in place, never replaced
        except WaiError:
            raise
        except OSError as exc:
            raise _write_error(text, exc) from exc
        return
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise _folder_error(text)
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise InputFileError(f"output {text!r} must be a regular file, a character device or a FIFO, got a "
                             f"{_kind(st.st_mode)}. Pass a file path.", path=text)
    # a symlink stays a link: the file it points at is the one replaced
    target = Path(os.path.realpath(text)) if os.path.islink(text) else Path(text)
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise InputFileError(
            f"folder {str(parent)!r} does not exist, so {text!r} cannot be written. Create the folder first.",
            path=text,
        )
    sweep_temp_files(parent, target.name)
    # SIGTERM raises from before the temporary file exists, so no moment leaves it behind
    with _signals_raise():
        tmp_path = _new_temp(parent, target.name)
        try:
            yield tmp_path
            if st is not None:
                os.chmod(tmp_path, stat.S_IMODE(st.st_mode))
                if os.geteuid() == 0 and (st.st_uid, st.st_gid) != (0, 0):
                    with contextlib.suppress(OSError):
                        os.chown(tmp_path, st.st_uid, st.st_gid)
            else:
                os.chmod(tmp_path, 0o666 & ~_umask())
            os.replace(tmp_path, target)
        except BaseException as exc:
            with contextlib.suppress(OSError):
                tmp_path.unlink()
            if isinstance(exc, OSError) and not isinstance(exc, WaiError):
                raise _write_error(text, exc) from exc
            if isinstance(exc, Exception) and not isinstance(exc, WaiError) and _disk_full(exc):
                # Polars and pyarrow say a full disk in their own exception types (os error 28)
                raise _write_error(text, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))) from exc
            raise


def check_output(path: str | os.PathLike[str]) -> Path:
    """Check, before any work, that rows can be written to ``path``; return it.

    The suffix must be one :func:`output_format` knows, the folder must exist and be writable,
    and the target must be something :func:`atomic_path` writes (a file, a symlink to one, a
    character device, a FIFO, or ``-``). Nothing is created.

    Raises:
        ArgumentError: An unknown suffix.
        InputFileError: A folder, a missing or unwritable folder, a block device or a socket.
    """
    text = os.fspath(path)
    output_format(text)
    if text in STDOUT_NAMES or _is_stream(text):
        return Path(text)
    target = Path(os.path.realpath(text))
    if target.exists() and not target.is_file():
        mode = target.stat().st_mode
        raise InputFileError(f"output {text!r} must be a regular file, a character device or a FIFO, got a "
                             f"{_kind(mode)}. Pass a file path.", path=text)
    parent = target.parent
    if not parent.is_dir():
        raise InputFileError(
            f"folder {str(parent)!r} does not exist, so {text!r} cannot be written. Create the folder first.",
            path=text,
        )
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputFileError(f"output {text!r} cannot be written: folder {str(parent)!r} is not writable. "
                             "Choose a path in a folder you can write to.", path=text)
    return Path(text)


def open_binary(tmp: Path, target: str | os.PathLike[str], *, compresslevel: int = 9) -> IO[bytes]:
    """Open ``tmp`` (from :func:`atomic_path`) for bytes; gzip when ``target`` ends in ``.gz``.

    The gzip header records ``target``'s name, not the temporary one.
    """
    raw = open(tmp, "wb")  # noqa: SIM115
    if not os.fspath(target).lower().endswith(".gz"):
        return raw
    name = Path(os.fspath(target)).name[: -len(".gz")]
    handle = gzip.GzipFile(filename=name, mode="wb", fileobj=raw, compresslevel=compresslevel)
    handle.myfileobj = raw  # type: ignore[assignment]  # GzipFile closes the file it was given this way, as when it opens one itself
    return handle  # type: ignore[return-value]


def output_format(path: str | os.PathLike[str]) -> str:
    """``"jsonl"`` or ``"parquet"`` for an output path, by its suffix (``OUTPUT_SUFFIXES``).

    ``-``, a character device and a FIFO take JSONL. Any other suffix is refused, so rows are
    never written as JSONL under a ``.csv`` (or ``.json``) name.

    Raises:
        ArgumentError: The suffix is not one whileai writes.
    """
    text = os.fspath(path)
    if os.path.isdir(text):
        raise _folder_error(text)
    name = Path(text).name.lower()
    for suffix in sorted(OUTPUT_SUFFIXES, key=len, reverse=True):
        if name.endswith(suffix):
            return OUTPUT_SUFFIXES[suffix]
    if text in STDOUT_NAMES or _is_stream(text):
        return "jsonl"
    raise ArgumentError(
        f"output must end in {', '.join(OUTPUT_SUFFIXES)}, got {text!r}. "
        "Name the file rows.jsonl, rows.jsonl.gz or rows.parquet (or pass - for stdout).",
        argument="output", value=text,
    )


def sweep_temp_files(folder: Path, name: str) -> list[Path]:
    """Remove temporary files a killed write to ``folder/name`` left behind; return those removed.

    A file is swept when the process id in its name is not running and it has not been written
    for ``STALE_TEMP_AGE_S`` seconds.
    """
    removed: list[Path] = []
    now = time.time()
    try:
        candidates = list(folder.glob(f".{glob.escape(name)}.*{TEMP_SUFFIX}"))
    except OSError:
        return removed
    for candidate in candidates:
        middle = candidate.name[len(name) + 2: -len(TEMP_SUFFIX)]
        pid_text = middle.split(".", 1)[0]
        if not pid_text.isdigit() or _alive(int(pid_text)):
            continue
        with contextlib.suppress(OSError):
            if now - candidate.lstat().st_mtime >= STALE_TEMP_AGE_S:
                if candidate.is_dir() and not candidate.is_symlink():
                    shutil.rmtree(candidate)
                else:
                    candidate.unlink()
                removed.append(candidate)
    return removed


@contextlib.contextmanager
def _atomic_folder(target: Path) -> Iterator[Path]:
    parent = target.parent if str(target.parent) else Path(".")
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise InputFileError(f"output {str(target)!r} must be an empty folder or a new name, got one that holds files. "
                             "Pass a new path, or empty the folder.", path=str(target))
    sweep_temp_files(parent, target.name)
    tmp = parent / f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
    with _signals_raise():  # from before the temporary folder exists
        try:
            tmp.mkdir(mode=0o700)
        except OSError as exc:
            raise _write_error(str(target), exc) from exc
        try:
            yield tmp
            tmp.chmod(0o777 & ~_umask())
            if target.exists():
                target.rmdir()  # empty, checked above
            os.replace(tmp, target)
        except BaseException as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            if isinstance(exc, OSError) and not isinstance(exc, WaiError):
                raise _write_error(str(target), exc) from exc
            raise


def _new_temp(folder: Path, name: str) -> Path:
    for _ in range(100):
        tmp = folder / f".{name}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except FileExistsError:
            continue
        except OSError as exc:  # a read-only or 0555 folder, a full disk: the old file is untouched
            raise _write_error(str(folder / name), exc) from exc
        except BaseException:  # a SIGTERM as it was made: the name is ours (O_EXCL), so is any file
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        return tmp
    raise InputFileError(f"no temporary file could be made in {str(folder)!r}. Remove its {TEMP_SUFFIX} files.",
                         path=str(folder))


@contextlib.contextmanager
def _stdout_path() -> Iterator[Path]:
    """A temporary file whose bytes go to standard output when the block succeeds."""
    with _signals_raise():  # from before the temporary file exists
        tmp = _new_temp(Path(tempfile.gettempdir()), "stdout")
        try:
            yield tmp
            out = getattr(sys.stdout, "buffer", None)
            sys.stdout.flush()
            with open(tmp, "rb") as handle:
                if out is not None:
                    shutil.copyfileobj(handle, out)
                    out.flush()
                else:
                    sys.stdout.write(handle.read().decode("utf-8", errors="replace"))
                    sys.stdout.flush()
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()


class _Terminated(SystemExit):
    """SIGTERM during a write: unwinds like ``sys.exit(143)`` so temporary files are removed."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise _Terminated(128 + signum)


@contextlib.contextmanager
def _signals_raise() -> Iterator[None]:
    """While writing, turn SIGTERM into an exception (only where SIGTERM still has its default action)."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _is_stream(text: str) -> bool:
    try:
        mode = os.stat(text).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def _disk_full(exc: BaseException) -> bool:
    """Whether a writer library's error is the OS saying the disk is full (ENOSPC)."""
    text = str(exc)
    return "No space left on device" in text or "os error 28" in text


def _write_error(text: str, exc: OSError) -> InputFileError:
    return InputFileError(f"output {text!r} cannot be written ({exc.strerror or exc}). "
                          "Choose a path in a folder you can write to, with room on its disk; the old file is unchanged.",
                          path=text, reason=errno.errorcode.get(exc.errno, "OSError") if exc.errno else "OSError")


def _folder_error(text: str) -> InputFileError:
    return InputFileError(f"output {text!r} is a folder, not a file. Pass a file path such as "
                          f"{str(Path(text) / 'rows.jsonl')!r}.", path=text)


def _kind(mode: int) -> str:
    if stat.S_ISBLK(mode):
        return "block device"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "special file"


def iter_rows(df: pl.DataFrame, *, chunk_rows: int = CHUNK_ROWS) -> Iterator[dict[str, Any]]:
    """Yield the table's rows as plain dicts (the wire shape: None dropped, JSON decoded).

    Built column by column one chunk at a time, so memory stays at one chunk of dicts.
    """
    for chunk in df.iter_slices(chunk_rows):
        yield from row_dicts(chunk)


def rows(df: pl.DataFrame) -> list[dict[str, Any]]:
    """The table as a list of row dicts (the wire shape: None dropped, JSON columns decoded)."""
    return row_dicts(df)


def _row_out_slow(row: dict[str, Any]) -> dict[str, Any]:
    """The per-row reference for ``rows`` (tests check the column-wise builder against it)."""
    return _row_out(row)


def write_jsonl(df: pl.DataFrame, path: str | os.PathLike[str], *, schema_version: bool = True) -> Path:
    """Write rows as JSONL (``.gz`` compresses), atomically, stamping ``schema_version``."""
    target = Path(path)
    with atomic_path(path) as tmp, open_binary(tmp, target) as raw, io.TextIOWrapper(raw, encoding="utf-8") as handle:
        dumps = json.dumps
        for row in iter_rows(df):
            if schema_version:
                row.setdefault("schema_version", SCHEMA_VERSION)
            handle.write(dumps(row, ensure_ascii=False, default=str))
            handle.write("\n")
    return target


def write_parquet(df: pl.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write the table as Parquet, atomically, with ``whileai.schema_version`` in the metadata."""
    target = Path(path)
    table = df.drop([c for c in DERIVED_COLUMNS if c in df.columns]).to_arrow()
    meta = dict(table.schema.metadata or {})
    meta[b"whileai.schema_version"] = SCHEMA_VERSION.encode()
    table = table.replace_schema_metadata(meta)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd")
    return target


def write(df: pl.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write to JSONL or Parquet by the path's suffix (:func:`output_format`), atomically.

    Raises:
        ArgumentError: A suffix other than ``.jsonl``, ``.jsonl.gz``, ``.ndjson``, ``.parquet``, ``.pq``.
        InputFileError: The target cannot be written (see :func:`atomic_path`).
    """
    with translate(f"writing {str(path)!r}", path=path):
        if output_format(path) == "parquet":
            return write_parquet(df, path)
        return write_jsonl(df, path)


def to_arrow(df: pl.DataFrame) -> pa.Table:
    """The table as a pyarrow Table (derived columns dropped)."""
    return df.drop([c for c in DERIVED_COLUMNS if c in df.columns]).to_arrow()


def write_frame(df: pl.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write a result table (per-task stats, a SQL answer) by its suffix, atomically.

    ``.csv`` (nested values as JSON text), ``.json`` (one array of row objects), ``.jsonl`` /
    ``.ndjson`` (one object a line) or ``.parquet``; ``-``, a character device (``/dev/null``)
    or a FIFO takes JSONL; any other suffix is refused before anything is written (docs/cli.md,
    "Output formats").

    Raises:
        ArgumentError: A suffix not in ``FRAME_SUFFIXES``.
    """
    text = os.fspath(path)
    kind = frame_format(text)
    with atomic_path(text) as tmp:
        if kind == "csv":
            nested = [c for c, t in df.schema.items() if t.is_nested() or t == pl.Object]
            flat = df.with_columns(pl.col(c).map_elements(lambda v: json.dumps(v.to_list() if isinstance(v, pl.Series) else v, default=str),
                                                          return_dtype=pl.String) for c in nested)
            flat.write_csv(tmp)
        elif kind == "json":
            df.write_json(tmp)
        elif kind == "jsonl":
            df.write_ndjson(tmp)
        else:
            df.write_parquet(tmp)
    return Path(text)


def frame_format(path: str | os.PathLike[str]) -> str:
    """``"csv"``, ``"json"``, ``"jsonl"`` or ``"parquet"`` for a result-table path, by its suffix.

    ``-`` (standard output), a character device and a FIFO take JSONL, as rows do
    (:func:`output_format`).

    Raises:
        ArgumentError: A suffix not in ``FRAME_SUFFIXES``.
    """
    text = os.fspath(path)
    name = Path(text).name.lower()
    kind = next((FRAME_SUFFIXES[s] for s in sorted(FRAME_SUFFIXES, key=len, reverse=True) if name.endswith(s)), None)
    if kind is None and (text in STDOUT_NAMES or _is_stream(text)):
        return "jsonl"  # -, /dev/null, a FIFO: written in place, as rows are (docs/reliability.md, "Writes")
    if kind is None:
        raise ArgumentError(f"output must end in {', '.join(FRAME_SUFFIXES)}, got {text!r}. "
                            "Name the file tasks.csv, tasks.json, tasks.jsonl or tasks.parquet (or pass - for stdout).",
                            argument="output", value=text)
    return kind
