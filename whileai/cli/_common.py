"""What every command shares: reading rows, printing a report, the common options.

Kept light (click only): every command module imports it, and ``wai --help`` imports every
command module.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any, TextIO, TypeVar

import click

from whileai import _shapes

__all__ = ["EXIT_BAD_INPUT", "EXIT_INTERNAL", "EXIT_NOT_COMPARABLE", "EXIT_PASS", "EXIT_REFUSED", "ROWS_HELP",
           "check_output", "colour_enabled", "emit", "json_option", "read_options", "read_rows",
           "ray_paths", "report_stream", "rows_argument", "rows_source", "source_words", "store_option", "styled"]

#: click colours per verdict tone (Report.verdict_word).
_TONE_COLOURS = {"good": "green", "bad": "red", "warn": "yellow"}

F = TypeVar("F", bound=Callable[..., Any])

#: Where ``emit`` prints a report while a command runs on Ray (``reports_kept_from_ray``); None
#: means ``sys.stdout`` as it is at the time.
_REPORT_STREAM: ContextVar[TextIO | None] = ContextVar("_REPORT_STREAM", default=None)

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

#: How a FILE argument is described in help text (the shapes from the registry, whileai/_shapes.py).
ROWS_HELP = ("FILE is JSONL, JSONL.gz, Parquet (file or folder), - for JSONL on stdin, a Hugging Face save_to_disk "
             "folder or .arrow file, or what another tool wrote, told by its shape: "
             + "; ".join(s.words for s in _shapes.SHAPES if s.name != _shapes.PLAIN and not s.refused)
             + ". Several FILEs (or a folder of logs) are read as one table. --map COLUMN=SOURCE names the source "
             "column of a table column (task=doc_id, reward=acc); --scorer NAME picks which score is the reward; "
             "--shape NAME reads the files as that shape instead of telling it from them.")


def read_options(fn: F) -> F:
    """``--map COLUMN=SOURCE`` (repeatable), ``--scorer NAME`` and ``--shape NAME``, for every command that reads rows."""
    fn = click.option("--shape", default=None, type=click.Choice(_shapes.names()), metavar="NAME",
                      help="Read the files as this shape instead of telling it from them: "
                           f"{_shapes.summary()}.")(fn)
    fn = click.option("--scorer", default=None, metavar="NAME",
                      help="Which score is the reward: an inspect scorer (SCORER.KEY for a dict score) or a marker.")(fn)
    return click.option("--map", "mapping", multiple=True, metavar="COLUMN=SOURCE",
                        help="Fill table column COLUMN from source column SOURCE (task=doc_id); repeatable.")(fn)


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


def rows_argument(name: str = "file") -> Callable[[F], F]:
    """A positional rows source: one or more paths (or ``-`` for stdin), with ``--map``, ``--scorer`` and ``--shape``.

    The command receives one value under ``name``: the path, or the table read from them all.
    """

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            files = kwargs.pop(name)
            mapping, scorer, shape = kwargs.pop("mapping", ()), kwargs.pop("scorer", None), kwargs.pop("shape", None)
            if kwargs.get("engine") == "ray":  # Ray reads the paths (a list is one dataset)
                kwargs[name] = ray_paths(files, mapping, scorer, shape)
            else:
                kwargs[name] = rows_source(files, mapping, scorer, shape)
            return fn(*args, **kwargs)

        decorated = read_options(wrapper)
        return click.argument(name, metavar=f"{name.upper()}...", nargs=-1, required=True, type=str)(decorated)  # type: ignore[return-value]

    return decorate


def json_option(fn: F) -> F:
    """``--json``: print the report's JSON instead of its text."""
    return click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")(fn)


def store_option(fn: F) -> F:
    """``--store PATH``: the store file (default ``$WAI_STORE``, else ``.wai/store.duckdb``)."""
    return click.option("--store", "store_path", type=click.Path(dir_okay=False), default=None,
                        help="Store file (default: $WAI_STORE, else .wai/store.duckdb here).")(fn)


def read_rows(source: Any, *, columns: Sequence[str] | None = None) -> Any:
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
    stderr, so the rows stay clean for a pipe. Under ``reports_kept_from_ray`` it goes to the
    standard output that block found.
    """
    err = writes_stdout(output)
    kept = None if err else report_stream()
    if as_json:
        click.echo(report.to_json(), file=kept, err=err)
        return
    colour = colour_enabled(sys.stderr if err else kept)
    click.echo(styled(report, colour=colour), file=kept, color=colour, err=err)


def writes_stdout(output: str | None) -> bool:
    """Whether ``-o`` names standard output (``-``, ``/dev/stdout``...), so the report goes to stderr."""
    return output in ("-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1")


def report_stream() -> TextIO | None:
    """The stream a command's report goes to.

    The standard output ``reports_kept_from_ray`` kept, else None (``click.echo``'s own choice,
    ``sys.stdout``).
    """
    return _REPORT_STREAM.get()


def check_output(output: str) -> str:
    """Check an ``-o`` path before any work (``table.check_output``); ``-`` is stdout."""
    from whileai import table

    table.check_output(output)
    return output


@contextlib.contextmanager
def reports_kept_from_ray() -> Iterator[None]:
    """Send what else prints to standard output to stderr while the block runs; reports keep stdout.

    Ray's driver prints the cluster's error messages (``(raylet) A worker died ...``) on
    ``sys.stdout`` from a thread of its own, whatever ``log_to_driver`` says (``ray._private.worker``,
    ``listen_error_messages``), so ``wai hack-scan --engine ray --json > report.json`` could write
    that line into the report. Inside this block ``sys.stdout`` is ``sys.stderr`` for the whole
    process, and ``emit`` prints to the standard output the block found.
    """
    token = _REPORT_STREAM.set(_REPORT_STREAM.get() or sys.stdout)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        _REPORT_STREAM.reset(token)


def engine_option(fn: F) -> F:
    """``--engine local|ray``: read the rows here (Polars), or as a Ray dataset (docs/scale.md).

    With ``--engine ray`` the command runs inside ``reports_kept_from_ray``: its report is all its
    standard output carries.
    """
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("engine") != "ray":
            return fn(*args, **kwargs)
        with reports_kept_from_ray():
            return fn(*args, **kwargs)

    return click.option("--engine", type=click.Choice(["local", "ray"]), default="local", show_default=True,
                        help="ray: FILE is a Parquet path, folder or glob read with ray.data.read_parquet; the "
                             "work runs on the Ray cluster ray.init() finds (RAY_ADDRESS), else a local one. "
                             "Ray's own messages go to stderr; stdout carries the report alone.")(wrapper)  # type: ignore[return-value]


def engine_rows(source: Any, engine: str) -> Any:
    """``source`` as the engine reads it: unchanged locally, a ``ray.data.Dataset`` with ``--engine ray``."""
    if engine != "ray":
        return source
    from whileai.table import read_dataset

    return read_dataset(source)
