"""What every command shares: reading rows, printing a report, the common options.

Kept light (click only): every command module imports it, and ``wai --help`` imports every
command module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

__all__ = ["EXIT_BAD_INPUT", "EXIT_INTERNAL", "EXIT_NOT_COMPARABLE", "EXIT_PASS", "EXIT_REFUSED", "ROWS_HELP",
           "check_output", "emit", "json_option", "read_rows", "rows_argument", "store_option"]

F = TypeVar("F", bound=Callable[..., Any])

#: Exit statuses CI can tell apart (docs/cli.md, "Exit status").
EXIT_PASS = 0
#: The check failed: a regression, a refused gate, an untrusted judge.
EXIT_REFUSED = 1
#: Usage or bad input (any WaiError), as argparse and click use for usage errors.
EXIT_BAD_INPUT = 2
#: Not comparable: the two sides of ``wai compare`` cannot be paired into a verdict.
EXIT_NOT_COMPARABLE = 3
#: An unexpected internal error (a bug).
EXIT_INTERNAL = 4

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


def emit(report: Any, as_json: bool, *, output: str | None = None) -> None:
    """Print a report: its text (``str``) or, with ``--json``, ``report.to_json()``.

    When the rows went to standard output (``-o -`` or ``-o /dev/stdout``) the report goes to
    stderr, so the rows stay clean for a pipe.
    """
    click.echo(report.to_json() if as_json else str(report), err=output in ("-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"))


def check_output(output: str) -> str:
    """Check an ``-o`` path before any work (``table.check_output``); ``-`` is stdout."""
    from whileai import table

    table.check_output(output)
    return output

