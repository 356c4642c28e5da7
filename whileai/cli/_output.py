"""How a command prints its report: text with the verdict coloured on a terminal, or JSON.

The report goes to stdout, to stderr when the rows go to stdout, and keeps stdout to itself
while a command runs on Ray.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any, TextIO

import click

__all__ = ["check_output", "colour_enabled", "emit", "report_stream", "reports_kept_from_ray", "styled", "writes_stdout"]


#: click colours per verdict tone (Report.verdict_word).
_TONE_COLOURS = {"good": "green", "bad": "red", "warn": "yellow"}


#: Where ``emit`` prints a report while a command runs on Ray (``reports_kept_from_ray``); None
#: means ``sys.stdout`` as it is at the time.
_REPORT_STREAM: ContextVar[TextIO | None] = ContextVar("_REPORT_STREAM", default=None)


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
