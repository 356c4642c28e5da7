"""Progress on long work: a ``tqdm.auto`` bar, a caller's callback, or nothing.

One helper for simulate, grade, judge_trust's re-judging, decontaminate, export and store saves
(docs/notebook.md). ``progress=None`` (the default) draws a bar only where a person watches: a
terminal (stderr is a TTY) or a notebook kernel with widgets; anywhere else it is silent, so logs
and captured cell output never hold a carriage return or an ANSI code. ``progress=True`` draws
the bar wherever it can, ``progress=False`` turns it off, and a callable receives
``(done, total, info)`` on each update instead of a bar (a trainer's own logging).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any, Union

from whileai.errors import ArgumentError

__all__ = ["ProgressArg", "Tracker", "check_progress", "in_notebook"]

#: What a ``progress=`` argument takes.
ProgressArg = Union[bool, None, Callable[[int, int, dict[str, Any]], Any]]


def check_progress(progress: Any) -> ProgressArg:
    """Check a ``progress=`` argument before any work starts.

    Examples:
        >>> check_progress(False)
        False
    """
    if progress is None or isinstance(progress, bool) or callable(progress):
        return progress
    raise ArgumentError(f"progress must be True, False, None or a callable taking (done, total, info), got {progress!r}. "
                        "Pass progress=False to turn the bar off.")


def in_notebook() -> bool:
    """True inside a Jupyter kernel (IPython with a kernel app), where tqdm.auto draws a widget."""
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        ip = shell.get_ipython()
    except Exception:  # boundary: any IPython oddity means "not a notebook"
        return False
    return ip is not None and "IPKernelApp" in getattr(ip, "config", {})


def _widgets() -> bool:
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        return False
    return True


class Tracker:
    """Counts done units of ``total`` and shows them the way ``progress`` asks.

    Thread-safe: workers call :meth:`update` concurrently. Use as a context manager or call
    :meth:`close`.
    """

    def __init__(self, total: int, *, desc: str, progress: ProgressArg = None, unit: str = "rows",
                 min_total: int = 0) -> None:
        self.total = int(total)
        self.done = 0
        self.info: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._callback = progress if callable(progress) and not isinstance(progress, bool) else None
        self._bar: Any = None
        show = progress is True or (progress is None and self.total >= min_total and self.total > 0
                                    and (in_notebook() or _stderr_tty()))
        if self._callback is None and show:
            self._bar = _make_bar(self.total, desc, unit)

    @property
    def active(self) -> bool:
        """Whether anything is shown or called."""
        return self._bar is not None or self._callback is not None

    def update(self, n: int = 1, **info: Any) -> None:
        """``n`` more units done; ``info`` (counts, reasons) goes to the callback and the bar's postfix."""
        if self._bar is None and self._callback is None:
            return
        with self._lock:
            self.done += n
            if info:
                self.info.update(info)
            if self._bar is not None:
                self._bar.update(n)
                if info:
                    self._bar.set_postfix(info, refresh=False)
            if self._callback is not None:
                self._callback(self.done, self.total, dict(self.info))

    def close(self) -> None:
        """End the bar (idempotent)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Tracker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _stderr_tty() -> bool:
    isatty = getattr(sys.stderr, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except ValueError:  # a closed stream
        return False


def _make_bar(total: int, desc: str, unit: str) -> Any:
    """A tqdm.auto bar: a widget in a notebook with ipywidgets, a line on a terminal, else None."""
    if in_notebook():
        if not _widgets():  # tqdm's text fallback would write carriage returns into the cell
            return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, leave=True, dynamic_ncols=True)
