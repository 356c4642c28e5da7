"""The Ray engine's shared pieces: recognising a dataset, the extra check, error translation, I/O.

A ``ray.data.Dataset`` passed as the rows takes the Ray path of the same step (``docs/scale.md``):
per-task partial sums in ``map_batches`` over Arrow batches, merged by a Ray Data group-by on the
task key, then the kernel the local path calls. Nothing here imports ray at module level:
:func:`is_ray_dataset` looks at the object's type only.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import polars as pl
import pyarrow as pa

from whileai.errors import ArgumentError, WaiError, missing_extra
from whileai.table._kind import is_ray_dataset as is_ray_dataset
from whileai.table._read import frame
from whileai.table._write import atomic_path

T = TypeVar("T")


#: Placeholder for "no eval-run label" in a Ray group key (Ray's hash group-by keeps nulls apart
#: poorly across partitions); mapped back to null on the driver.
NO_RUN = "\x00"


def require_ray(what: str) -> Any:
    """Import and return ``ray``, or raise ``MissingExtraError`` naming ``pip install 'whileai[ray]'``."""
    if importlib.util.find_spec("ray") is None or importlib.util.find_spec("ray.data") is None:
        raise missing_extra("ray", "ray", what)
    import ray
    import ray.data  # noqa: F401

    return ray


def unwrap(exc: BaseException) -> WaiError | None:
    """The ``WaiError`` a worker raised, found inside Ray's wrapping (``RayTaskError``, ``UserCodeException``)."""
    seen: set[int] = set()
    stack: list[BaseException | None] = [exc]
    while stack:
        e = stack.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, WaiError) and type(e).__module__.startswith("whileai"):
            return e
        stack.extend([getattr(e, "cause", None), e.__cause__, e.__context__])
    # Ray pickles the worker's exception without its chain: the traceback text still names it
    import re

    from whileai import errors

    found = re.search(r"whileai\.errors\.(\w+): (.+)", str(exc))
    cls = getattr(errors, found.group(1), None) if found else None
    if found and isinstance(cls, type) and issubclass(cls, WaiError):
        return cls(found.group(2).strip())
    return None


@contextmanager
def translated() -> Iterator[None]:
    """Re-raise a ``WaiError`` raised inside a Ray task as itself (the one boundary for Ray errors)."""
    try:
        yield
    except WaiError:
        raise
    except Exception as exc:
        found = unwrap(exc)
        if found is not None:
            raise type(found)(found.message, **found.context) from exc
        raise


def batch_frame(batch: pa.Table, columns: Sequence[str] | None = None) -> pl.DataFrame:
    """One Arrow batch as the canonical rollout table (``table.frame``), empty allowed."""
    return frame(batch, columns=columns, allow_empty=True)


def collect_small(ds: Any) -> pl.DataFrame:
    """A small Ray dataset (a per-task table) as one Polars frame on the driver."""
    ray = require_ray("the Ray engine")
    with translated():
        refs = ds.to_arrow_refs()
        tables = [t for t in ray.get(refs) if t.num_rows]
    if not tables:
        return pl.DataFrame()
    return pl.from_arrow(pa.concat_tables(tables, promote_options="default"))  # type: ignore[return-value]


def marker_fields(ds: Any) -> list[str]:
    """Marker names the dataset's ``markers`` struct carries (read off the schema, no rows read)."""
    schema = ds.schema()
    if schema is None:
        return []
    names = list(schema.names)
    if "markers" not in names:
        return []
    typ = schema.types[names.index("markers")]
    return sorted(f.name for f in typ) if pa.types.is_struct(typ) else []


def check_output_folder(out: Any, what: str) -> str:
    """The folder a Ray step writes its rows to: a new name or an empty folder (or a URI)."""
    if out is None:
        raise ArgumentError(f"out must be a folder path for the rows {what} writes, got None. Pass out='selected/' "
                            "(a Ray dataset's rows are written by the workers, never collected to the driver).")
    if not isinstance(out, (str, os.PathLike)) or not str(out):
        raise ArgumentError(f"out must be a folder path, got {out!r}. Pass out='selected/'.")
    return os.fspath(out)


def write_rows(ds: Any, out: str) -> str:
    """Write a Ray dataset as a Parquet folder: a local path through a temporary folder and one rename."""
    if "://" in out:
        with translated():
            ds.write_parquet(out)
        return out
    with atomic_path(out, folder=True) as tmp, translated():
        ds.write_parquet(str(Path(tmp).resolve()))
    return str(Path(out))


def run(fn: Callable[[], T]) -> T:
    """Call ``fn`` with Ray errors translated."""
    with translated():
        return fn()


class FolderResult(NamedTuple):
    """What a Ray step whose output is rows returns: the Parquet folder the workers wrote, and the report."""

    path: str
    """The output folder (read it back with ``ray.data.read_parquet`` or ``whileai.table.frame``)."""
    report: Any
    """The step's typed report, as the local path gives it."""
    meta: dict[str, Any]
    """Run context (``mode``, ``engine``)."""

    def __str__(self) -> str:
        return f"{self.report}\nrows written to {self.path}"


def read_dataset(source: Any) -> Any:
    """A Parquet path, folder, glob or URI (or a list of them) as a ``ray.data.Dataset``.

    Starts Ray when it is not running (``ray.init()``: the cluster ``RAY_ADDRESS`` names, else a
    local one). Local globs are expanded here, in sorted order; a URI (``s3://...``) is passed to
    Ray as given.

    Raises:
        InputFileError: A local path or glob that matches no Parquet file.
    """
    import glob

    from whileai.errors import InputFileError

    ray = require_ray("--engine ray")
    items = [os.fspath(s) for s in source] if isinstance(source, (list, tuple)) else [os.fspath(source)]
    paths: list[str] = []
    for item in items:
        if "://" in item:
            paths.append(item)
            continue
        found = sorted(glob.glob(item)) if glob.has_magic(item) else ([item] if os.path.exists(item) else [])
        if not found:
            raise InputFileError(f"rows must be a Parquet file, folder or glob that exists, got {item!r}. "
                                 "Check the path (--engine ray reads Parquet only).", path=item)
        paths.extend(found)
    if not ray.is_initialized():
        ray.init(include_dashboard=False)
    with translated():
        return ray.data.read_parquet(paths if len(paths) > 1 else paths[0])


# ------------------------------------------------------------------------------------------
# per-block writers: the workers write part files and hand back one small summary per block
# ------------------------------------------------------------------------------------------

#: What a block function returns: the part file's content (an Arrow table written as Parquet,
#: bytes written as they are, or None for no file) and a JSON-able summary of the block.
Part = tuple["pa.Table | bytes | None", dict[str, Any]]


@contextmanager
def in_order(ds: Any) -> Iterator[None]:
    """Run ``ds``'s stages with Ray Data's ``preserve_order`` on, so blocks come back in input order.

    The report's row indices (the first offenders, the first broken rows) count rows from the
    start of the data, as the local path does; that needs the blocks' order. The option is the
    dataset's own ``DataContext``; it is restored afterwards.
    """
    from ray.data import DataContext

    # A derived dataset (ds.map_batches(...)) may take its context from the current one rather
    # than from ds, so both are set: blocks out of order would reorder the part files.
    contexts = {id(c): c for c in (ds.context, DataContext.get_current())}.values()
    before = [(c.execution_options, c.execution_options.preserve_order) for c in contexts]
    for options, _ in before:
        options.preserve_order = True
    try:
        yield
    finally:
        for options, value in before:
            options.preserve_order = value


def _write_part(batch: pa.Table, *, fn: Callable[[pa.Table], Part], folder: str, suffix: str) -> pa.Table:
    """Run ``fn`` on one block in a worker, write its part file, return the block's summary row."""
    import json
    import uuid

    import pyarrow.fs as pafs
    import pyarrow.parquet as pq

    payload, summary = fn(batch)
    name = None
    if payload is not None and (len(payload) if isinstance(payload, bytes) else payload.num_rows):
        fs, root = pafs.FileSystem.from_uri(folder) if "://" in folder else (pafs.LocalFileSystem(), folder)
        token = uuid.uuid4().hex
        name = f"part-{token}.{suffix}"
        tmp = f"{root}/.{name}.tmp"
        if isinstance(payload, bytes):
            with fs.open_output_stream(tmp) as handle:
                handle.write(payload)
        else:
            pq.write_table(payload, tmp, filesystem=fs, compression="zstd")
        fs.move(tmp, f"{root}/{name}")
    return pa.table({"part": pa.array([name], pa.string()), "n_in": pa.array([batch.num_rows], pa.int64()),
                     "summary": pa.array([json.dumps(summary)], pa.string())})


def write_parts(ds: Any, out: str, fn: Callable[[pa.Table], Part], *, suffix: str,
                finish: Callable[[list[dict[str, Any]]], T]) -> tuple[str, T]:
    """Write ``fn``'s part files from the workers into the folder ``out``, then ``finish`` the summaries.

    Each block (``map_batches`` with whole blocks, in input order) goes through ``fn`` in a worker,
    which writes the block's part file straight to the folder: no row reaches the driver. The
    driver gets one summary per block, in input order (each with ``n_in``, the block's input
    rows, and ``offset``, the rows before it), and calls ``finish`` on them before the folder
    lands, so a ``finish`` that raises leaves nothing behind. Part files are then renamed
    ``part-00000.<suffix>``... in input order. A local ``out`` is filled as a temporary folder
    beside it and renamed into place; a URI (``s3://...``) is written in place.

    Returns:
        The folder written and what ``finish`` returned.
    """
    import functools
    import json

    def run_all(folder: str) -> tuple[list[str], T]:
        with in_order(ds), translated():
            parts = ds.map_batches(functools.partial(_write_part, fn=fn, folder=folder, suffix=suffix),
                                   batch_format="pyarrow", batch_size=None, zero_copy_batch=True)
            parts.context.execution_options.preserve_order = True
            got = collect_small(parts)
        summaries, names, offset = [], [], 0
        for row in got.iter_rows(named=True) if got.height else []:
            summaries.append({**json.loads(row["summary"]), "n_in": int(row["n_in"]), "offset": offset})
            offset += int(row["n_in"])
            if row["part"] is not None:
                names.append(row["part"])
        return names, finish(summaries)

    import pyarrow.fs as pafs

    def in_place(folder: str) -> T:  # the parts in input order: part-00000..., inside the folder being filled
        names, result = run_all(folder)
        fs, root = pafs.FileSystem.from_uri(folder) if "://" in folder else (pafs.LocalFileSystem(), folder)
        for i, name in enumerate(names):
            fs.move(f"{root}/{name}", f"{root}/part-{i:05d}.{suffix}")
        return result

    if "://" in out:
        return out, in_place(out)
    with atomic_path(out, folder=True) as tmp:
        result = in_place(str(Path(tmp).resolve()))
    return str(Path(out)), result
