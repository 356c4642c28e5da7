"""Parquet targets: the files of a folder a dataset reader reads, and the lazy scan of a file or folder."""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from whileai.errors import InputFileError, SchemaError

__all__ = ["SKIPPED_PREFIXES", "parquet_file", "parquet_files", "scan_parquet_target"]


#: Names a dataset reader skips inside a folder, as pyarrow.dataset (``ignore_prefixes``), Spark and
#: Dask do: Spark's ``_temporary/`` and ``_SUCCESS``, its ``.crc`` checksums, hidden folders.
SKIPPED_PREFIXES = (".", "_")


def parquet_files(folder: Path) -> list[Path]:
    """The ``.parquet`` files under ``folder`` a dataset reader reads, in name order.

    A file is skipped when its name, or a folder between ``folder`` and it, starts with one of
    ``SKIPPED_PREFIXES``.
    """
    return sorted(p for p in folder.rglob("*.parquet") if p.is_file()
                  and not any(part.startswith(SKIPPED_PREFIXES) for part in p.relative_to(folder).parts))


def scan_parquet_target(path: Path) -> pl.LazyFrame:
    """``pl.scan_parquet`` of a Parquet file or of a folder's ``parquet_files``.

    A plain folder's files are scanned as a list, in name order. A folder written partitioned
    (``scenario_id=t0/part-0.parquet``, as pyarrow's ``write_to_dataset``, Spark, Dask and Ray
    write one) keeps its partition columns, parsed from the folders below ``path`` only:

    - through a glob rooted at the folder, one ``[!._]*`` per partition level, so Spark's
      ``_SUCCESS``, ``.crc`` checksums and ``_temporary/`` stay out as Spark's own reader leaves
      them (Polars' walk of the folder fails on a checksum file);
    - a ``key=value`` folder above ``path`` (which Polars reads from a glob or a list of files as
      a column too) is dropped from the glob's columns; where the folder holds nothing else, or
      its partitions are of uneven depth, Polars' own walk of the folder reads it.
    """
    if not path.is_dir():
        return pl.scan_parquet(path)
    files = parquet_files(path)
    if not files:
        raise InputFileError(
            f"folder {str(path)!r} holds no .parquet files. Point at a folder of Parquet files or at one file.",
            path=str(path),
        )
    folders = {f.relative_to(path).parts[:-1] for f in files}
    below = {part.split("=", 1)[0] for parts in folders for part in parts if "=" in part}
    if not below:
        return pl.scan_parquet([str(f) for f in files])
    depths = {len(parts) for parts in folders}
    above = {part.split("=", 1)[0] for part in Path(str(path)).parts if "=" in part} - below
    visible = set(files)
    stray = any(p not in visible for p in path.rglob("*") if p.is_file())
    if len(depths) > 1 or (above and not stray):
        return pl.scan_parquet(str(path))
    return _scan_partition_glob(path, files, depths.pop(), above)


def _scan_partition_glob(path: Path, files: list[Path], depth: int, above: set[str]) -> pl.LazyFrame:
    """A partitioned folder's parts through a glob of ``depth`` levels, less the partition columns ``above`` it."""
    import glob

    pattern = os.path.join(glob.escape(str(path)), *(["[!._]*"] * depth), "[!._]*.parquet")
    lf = pl.scan_parquet(pattern, hive_partitioning=True)
    if above:
        if above & set(pl.scan_parquet(files[0]).collect_schema().names()):
            raise InputFileError(
                f"folder {str(path)!r} sits under a folder named like a partition ({', '.join(sorted(above))}=...) "
                "that is also a column of its files, and holds files other than its Parquet parts (Spark's "
                "_SUCCESS, checksums or _temporary/). Remove those files, or move the folder.", path=str(path))
        lf = lf.drop(sorted(above))
    return lf


def _unreadable_parquet(text: str, exc: BaseException) -> SchemaError:
    return SchemaError(f"file {text!r} is not a readable Parquet file ({type(exc).__name__}: {exc}). "
                       "Re-write it, or pass the JSONL it came from.", path=text)


def parquet_file(rows: object) -> Path | None:
    """The path of a single Parquet file (``.parquet`` or ``.pq``, an existing file) given as ``rows``, else None."""
    if not isinstance(rows, (str, os.PathLike)):
        return None
    path = Path(rows)
    return path if path.suffix.lower() in (".parquet", ".pq") and path.is_file() else None
