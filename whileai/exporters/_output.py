"""Where an export writes and how: the target path, its format by suffix, and the atomic write."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from whileai.errors import ArgumentError, InputFileError, WaiError
from whileai.table import atomic_path, output_format

__all__ = ["is_parquet", "target_path", "writing"]


def target_path(source: Any, output: str | os.PathLike[str] | None) -> Path:
    """Where to write: ``output``, or ``<name>.train.jsonl`` beside a path source; never the source."""
    if output is None:
        if isinstance(source, (str, os.PathLike)) and str(source) != "-":
            src = Path(source)
            stem = src.name
            for suffix in (".gz", ".jsonl", ".ndjson", ".json", ".parquet", ".pq"):
                if stem.lower().endswith(suffix):
                    stem = stem[: -len(suffix)]
            return src.with_name(f"{stem}.train.jsonl")
        raise ArgumentError(
            "output must be a file path (.jsonl, .jsonl.gz or .parquet), got None. "
            "Pass a path, or call training_rows(...) for the rows as a list.",
            argument="output",
        )
    target = Path(output)
    if isinstance(source, (str, os.PathLike)) and Path(source).exists() and target.exists():
        if target.resolve() == Path(source).resolve():
            raise ArgumentError(f"output must differ from the source, got {str(target)!r} for both. "
                                "Write the training rows to another file.", argument="output")
    return target


def is_parquet(path: Path) -> bool:
    """Parquet by suffix (``.parquet``, ``.pq``); JSONL for ``.jsonl``/``.jsonl.gz``; any other suffix raises.

    Raises:
        ArgumentError: A suffix whileai does not write (``table.output_format``).
    """
    return output_format(path) == "parquet"


@contextmanager
def writing(path: Path) -> Iterator[Path]:
    """``table.atomic_path`` with OS errors turned into a clear InputFileError (no file left)."""
    try:
        with atomic_path(path) as tmp:
            yield tmp
    except WaiError:
        raise
    except OSError as exc:
        raise InputFileError(
            f"output {str(path)!r} cannot be written ({exc.strerror or exc}). "
            "Choose a path in a folder you can write to; nothing was written.",
            path=str(path),
        ) from exc
