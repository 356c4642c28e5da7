"""What every command shares: reading rows, printing a report, the common options.

Kept light (click only): every command module imports it, and ``wai --help`` imports every
command module.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO, TypeVar

import click

__all__ = ["ROWS_HELP", "check_output", "colour_enabled", "emit", "json_option", "read_rows", "rows_argument",
           "store_option", "styled"]

#: click colours per verdict tone (Report.verdict_word).
_TONE_COLOURS = {"good": "green", "bad": "red", "warn": "yellow"}

F = TypeVar("F", bound=Callable[..., Any])

#: How a FILE argument is described in help text.
ROWS_HELP = "FILE is JSONL, JSONL.gz, Parquet (file or folder), an inspect_ai log, or - for JSONL on stdin."


def rows_argument(name: str = "file") -> Callable[[F], F]:
    """A positional rows source: a path, or ``-`` for stdin."""
    return click.argument(name, metavar=name.upper(), type=str)


def json_option(fn: F) -> F:
    """``--json``: print the report's JSON instead of its text."""
    return click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")(fn)


def store_option(fn: F) -> F:
    """``--store PATH``: the store file (default ``$WAI_STORE``, else ``.wai/store.duckdb``)."""
    return click.option("--store", "store_path", type=click.Path(dir_okay=False), default=None,
                        help="Store file (default: $WAI_STORE, else .wai/store.duckdb here).")(fn)


def read_rows(source: str, *, columns: Sequence[str] | None = None) -> Any:
    """Read a rows source with ``table.frame`` (only ``columns`` where the format allows)."""
    from whileai import table

    return table.frame(source, columns=columns)


def colour_enabled(stream: TextIO | None = None) -> bool:
    """Colour only on a terminal, and never with ``NO_COLOR`` set (no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    out = stream if stream is not None else sys.stdout
    isatty = getattr(out, "isatty", None)
    return bool(isatty()) if callable(isatty) else False


def styled(report: Any, *, colour: bool | None = None) -> str:
    """A report's text with its verdict word coloured (green good, red bad, yellow warn) on a terminal."""
    text = str(report)
    verdict = getattr(report, "verdict_word", None)
    found = verdict() if callable(verdict) else None
    if not found or not (colour_enabled() if colour is None else colour):
        return text
    word, tone = found
    first, sep, rest = text.partition("\n")
    if tone in _TONE_COLOURS and word in first:
        first = first.replace(word, click.style(word, fg=_TONE_COLOURS[tone], bold=True), 1)
    return first + sep + rest


def emit(report: Any, as_json: bool, *, output: str | None = None) -> None:
    """Print a report: its text (verdict word coloured on a terminal) or, with ``--json``, ``report.to_json()``.

    When the rows went to standard output (``-o -`` or ``-o /dev/stdout``) the report goes to
    stderr, so the rows stay clean for a pipe.
    """
    err = output in ("-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1")
    if as_json:
        click.echo(report.to_json(), err=err)
        return
    colour = colour_enabled(sys.stderr if err else None)
    click.echo(styled(report, colour=colour), color=colour, err=err)


def check_output(output: str) -> str:
    """Check an ``-o`` path before any work (``table.check_output``); ``-`` is stdout."""
    from whileai import table

    table.check_output(output)
    return output


def engine_option(fn: F) -> F:
    """``--engine local|ray``: read the rows here (Polars), or as a Ray dataset (docs/scale.md)."""
    return click.option("--engine", type=click.Choice(["local", "ray"]), default="local", show_default=True,
                        help="ray: FILE is a Parquet path, folder or glob read with ray.data.read_parquet; the "
                             "work runs on the Ray cluster ray.init() finds (RAY_ADDRESS), else a local one.")(fn)


def engine_rows(source: Any, engine: str) -> Any:
    """``source`` as the engine reads it: unchanged locally, a ``ray.data.Dataset`` with ``--engine ray``."""
    if engine != "ray":
        return source
    from whileai.engines.ray import read_dataset

    return read_dataset(source)
