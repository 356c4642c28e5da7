"""How a command reads its rows: the paths as given, one table read from several, or Ray's paths.

Kept light (``whileai.table`` is imported inside the calls): every command module imports it, and
``wai --help`` imports every command module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["engine_rows", "ray_paths", "read_rows", "rows_source", "source_words"]


def rows_source(files: Sequence[str], mapping: Sequence[str] = (), scorer: str | None = None,
                shape: str | None = None) -> Any:
    """What a command passes on: the one path as given, else the rows read as one table.

    A single path with no ``--map``, ``--scorer`` or ``--shape`` stays a path, so steps that read
    only a few columns still scan Parquet lazily.
    """
    if len(files) == 1 and not mapping and not scorer and not shape:
        return files[0]
    from whileai import table

    source: Any = files[0] if len(files) == 1 else list(files)
    return table.frame(source, mapping=table.parse_mapping(list(mapping)) or None, scorer=scorer, shape=shape)


def ray_paths(files: Sequence[str], mapping: Sequence[str] = (), scorer: str | None = None,
              shape: str | None = None) -> str | list[str]:
    """What ``--engine ray`` reads: the one path as given, else the list of them (``read_dataset``).

    Raises:
        ArgumentError: ``--map`` or ``--scorer`` given, or ``-`` (stdin): Ray reads Parquet columns
            as they are, from paths its workers can open.
    """
    from whileai.errors import ArgumentError

    if mapping or scorer or shape:
        raise ArgumentError(f"--map, --scorer and --shape must be left off with --engine ray, got --map "
                            f"{list(mapping)!r} --scorer {scorer!r} --shape {shape!r}. Write the Parquet files with the table's column names "
                            "(wai.table.frame(..., mapping=...).write_parquet), or drop --engine ray.",
                            argument="--engine")
    if "-" in files:
        raise ArgumentError("FILE must be a Parquet path, folder or glob with --engine ray, got - (stdin). "
                            "Write the rows to a Parquet file first, or drop --engine ray.", argument="--engine")
    return files[0] if len(files) == 1 else list(files)


def source_words(file: Any) -> str:
    """How an error names a command's rows: ``stdin``, ``file 'PATH'``, or the files read as one table."""
    if not isinstance(file, str):
        return "the files"
    return "stdin" if file == "-" else f"file {file!r}"


def read_rows(source: Any, *, columns: Sequence[str] | None = None) -> Any:
    """Read a rows source with ``table.frame`` (only ``columns`` where the format allows)."""
    from whileai import table

    return table.frame(source, columns=columns)


def engine_rows(source: Any, engine: str) -> Any:
    """``source`` as the engine reads it: unchanged locally, a ``ray.data.Dataset`` with ``--engine ray``."""
    if engine != "ray":
        return source
    from whileai.table import read_dataset

    return read_dataset(source)
