"""The whileai error tree.

Every error the library raises on purpose is a :class:`WaiError`. Each subclass also inherits the
built-in it replaces, so ``except ValueError`` written against older code keeps working::

    WaiError(Exception)
    ├── SchemaError(WaiError, ValueError)          rows that do not fit the rollout table
    │   └── EmptyInputError(SchemaError)           no rows at all
    ├── InputFileError(WaiError, FileNotFoundError) a path that cannot be read
    ├── ArgumentError(WaiError, ValueError)        an option outside its allowed values
    │   ├── UnknownArgumentError(ArgumentError, TypeError) a keyword the function does not take
    │   └── SpecError(ArgumentError, TypeError)    a spec that cannot be loaded
    ├── JudgeError(WaiError, ValueError)           a judge or label set that cannot be used
    ├── ToolSchemaError(WaiError, TypeError)       a function that cannot become a tool schema
    ├── SimulationError(WaiError, RuntimeError)    the engine cannot run the agent at all
    ├── EndpointError(WaiError, RuntimeError)      a model server that cannot be reached or used
    ├── PublishGateError(WaiError, ValueError)     a training set a grouped update would learn nothing from
    ├── TrainingSelectionError(WaiError, ValueError) a selection or export that cannot be made
    ├── ContaminationError(WaiError, ValueError)   an eval source or embedder that cannot be used
    ├── StageError(WaiError, ValueError)           an unknown pipeline stage
    ├── StoreError(WaiError, RuntimeError)         the local store cannot be read or written
    │   └── StoreBusyError(StoreError)             another process holds the store; retry
    ├── MissingExtraError(WaiError, ImportError)   an optional dependency is not installed
    ├── SandboxError(WaiError, RuntimeError)       submitted code cannot be run isolated here
    └── PlatformError(WaiError, RuntimeError)      a tracked-run call the store or wai server refused

Messages follow one shape: ``"<thing> must be <constraint>, got <value!r>. <what to do>."``

Context travels as typed keyword-only attributes of the base, the same few names everywhere (each
``None`` when it does not apply; ``error.context`` holds the ones that were given):

``argument``  the argument, option or parameter at fault (``"min_margin"``)
``value``     the offending value
``path``      the file or folder
``source``    the input, described (``"file 'runs.jsonl'"``, ``"the DataFrame given"``)
``column``    the column of the rollout table
``row``       the row index (0-based); ``rows`` several of them
``line``      the line of a text file (1-based)
``name``      the named thing at fault: a tool, judge, feature or stage
``url``       the server address
``status``    the HTTP status a server answered
``reason``    a short code for what went wrong (``"no_pairs"``, ``"ungraded_rl_rows"``)
``report``    the report that explains it (a ``whileai.report.Report``)
``counts``    the numbers behind it (``{"n_rows": 12}``)

Errors raised by the libraries we build on (duckdb, polars, pyarrow, pydantic) and by the
operating system inside a step are translated at one boundary, :func:`translate`, into the error
of this tree that says what to do, with the original kept as ``__cause__``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

__all__ = [
    "ArgumentError",
    "ContaminationError",
    "EmptyInputError",
    "EndpointError",
    "InputFileError",
    "JudgeError",
    "MissingExtraError",
    "PlatformError",
    "PublishGateError",
    "SandboxError",
    "SchemaError",
    "SimulationError",
    "SpecError",
    "StageError",
    "StoreBusyError",
    "StoreError",
    "ToolSchemaError",
    "TrainingSelectionError",
    "UnknownArgumentError",
    "WaiError",
    "translate",
]


class WaiError(Exception):
    """Root of every error whileai raises on purpose; the message says what to do."""

    def __init__(self, message: str, *, argument: str | None = None, value: Any = None,
                 path: str | os.PathLike[str] | None = None, source: str | None = None, column: str | None = None,
                 row: int | None = None, rows: Sequence[int] | None = None, line: int | None = None,
                 name: str | None = None, url: str | None = None, status: int | None = None,
                 reason: str | None = None, report: Any = None, counts: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.argument = argument
        self.value = value
        self.path = path
        self.source = source
        self.column = column
        self.row = row
        self.rows = list(rows) if rows is not None else None
        self.line = line
        self.name = name
        self.url = url
        self.status = status
        self.reason = reason
        self.report = report
        self.counts = dict(counts) if counts is not None else None
        given = {"argument": argument, "value": value, "path": path, "source": source, "column": column, "row": row,
                 "rows": self.rows, "line": line, "name": name, "url": url, "status": status, "reason": reason,
                 "report": report, "counts": self.counts}
        self.context: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
        """The context attributes that were given."""

    def __str__(self) -> str:
        return self.message


class SchemaError(WaiError, ValueError):
    """Rows that do not fit the rollout table (a missing field, a broken line, a wrong type)."""


class EmptyInputError(SchemaError):
    """The input holds no rows, so there is nothing to measure."""


class InputFileError(WaiError, FileNotFoundError):
    """A path that does not exist or cannot be read as rows."""


class ArgumentError(WaiError, ValueError):
    """An option outside its allowed values."""


class JudgeError(WaiError, ValueError):
    """A judge, label set or rubric that cannot be used."""


class ToolSchemaError(WaiError, TypeError):
    """A function whose signature cannot be turned into a JSON schema."""


class SimulationError(WaiError, RuntimeError):
    """The simulation engine cannot run the agent at all."""


class EndpointError(WaiError, RuntimeError):
    """A model server that cannot be reached or answers something unusable."""


class PublishGateError(WaiError, ValueError):
    """An RL-shaped set that is ungraded or has no mixed group."""

    @property
    def refusal(self) -> str | None:
        """The refusal code (``reason``), the key ``publish_gate``'s report names it by."""
        return self.reason


class TrainingSelectionError(WaiError, ValueError):
    """A selection or export that cannot be made from these rows."""


class ContaminationError(WaiError, ValueError):
    """An eval source or embedder that decontamination cannot use."""


class StageError(WaiError, ValueError):
    """A stage name outside ``STAGES``."""


class StoreError(WaiError, RuntimeError):
    """The local store cannot be opened, read or written."""


class StoreBusyError(StoreError):
    """Another process is writing the store; retry in a moment."""


class MissingExtraError(WaiError, ImportError):  # type: ignore[misc]  # ImportError.path is str | None
    """An optional dependency is not installed; the message names the pip extra."""

    def __init__(self, message: str, *, package: str, extra: str) -> None:
        WaiError.__init__(self, message, name=package)
        self.package = package
        """The module that could not be imported."""
        self.extra = extra
        """The pip extra that installs it (``pip install 'whileai[<extra>]'``)."""


class SandboxError(WaiError, RuntimeError):
    """No isolated sandbox can run submitted code on this machine (``docs/security.md``)."""


def missing_extra(package: str, extra: str, what: str) -> MissingExtraError:
    """Build the error for a missing optional dependency, naming the exact install command."""
    return MissingExtraError(
        f"{what} needs the optional package {package!r}, which is not installed. "
        f"Install it with: pip install 'whileai[{extra}]'.",
        package=package,
        extra=extra,
    )


class UnknownArgumentError(ArgumentError, TypeError):
    """A keyword argument the function does not take (a ``TypeError``, as Python raises)."""


class SpecError(ArgumentError, TypeError):
    """A spec that cannot be loaded (also a TypeError, as whileai 0.131 raised)."""


# ------------------------------------------------------------------------------------------
# the one translation boundary
# ------------------------------------------------------------------------------------------


def _foreign(exc: BaseException) -> tuple[type[WaiError], str] | None:
    """Our error class and the advice for an exception of a library we build on (None: not ours to map)."""
    module = type(exc).__module__.split(".")[0].lstrip("_")  # duckdb raises from _duckdb
    name = type(exc).__name__
    if module == "duckdb":
        if "lock" in str(exc).lower():
            return StoreBusyError, "Another process holds the store; retry in a moment or close the other process."
        return StoreError, "Check the store path (WAI_STORE) and that the file is a whileai store."
    if module in ("polars", "pyarrow"):
        if name == "ColumnNotFoundError":
            return SchemaError, "Check the column names; table.frame lists the columns it reads."
        return SchemaError, "Check that the rows fit the rollout table (docs/table.md)."
    if module in ("pydantic", "pydantic_core"):
        return ArgumentError, "Check the fields and their types against the docstring."
    if isinstance(exc, FileNotFoundError | IsADirectoryError | NotADirectoryError):
        return InputFileError, "Check the path."
    if isinstance(exc, PermissionError):
        return InputFileError, "Check the file's permissions."
    if isinstance(exc, OSError):
        return InputFileError, "Check the path and that the disk has room."
    return None


@contextlib.contextmanager
def translate(what: str, *, path: str | os.PathLike[str] | None = None, store: bool = False,
              mapper: Callable[[BaseException], WaiError | None] | None = None) -> Iterator[None]:
    """Map an error of duckdb, polars, pyarrow, pydantic or the OS inside the block to our tree.

    The boundary each layer puts around the calls into a library (httpx's
    ``map_httpcore_exceptions`` is the model): a :class:`WaiError` passes through untouched; a
    foreign error becomes the subclass that says what to do, ``raise ... from exc``, so the
    original stays on ``__cause__``. Anything else (a bug, a user callback's own error) passes
    through too.

    Args:
        what: What the block was doing, the first words of the message (``"reading 'runs.jsonl'"``).
        path: The file or folder involved, kept on the error as ``path``.
        store: The block works on the local store: an OS error there is a :class:`StoreError`.
        mapper: A layer's own wording for a foreign error it knows better (the store names the
            file and the fix); None from it, or no mapper, gives the default translation.

    Raises:
        WaiError: The translated error (a subclass; see the tree above).

    Examples:
        >>> import polars as pl
        >>> with translate("summing the rewards"):
        ...     pl.DataFrame({"a": [1]}).select(pl.col("reward"))
        Traceback (most recent call last):
        ...
        whileai.errors.SchemaError: summing the rewards failed: ...
    """
    try:
        yield
    except WaiError:
        raise
    except Exception as exc:  # the boundary itself: a foreign error is mapped here or re-raised as it is
        mapped = _foreign(exc)
        if mapped is None:
            raise
        own = mapper(exc) if mapper is not None else None
        if own is not None:
            raise own from exc
        cls, advice = mapped
        if store and cls is InputFileError:
            cls, advice = StoreError, "Check the store path (WAI_STORE), its permissions and free disk space."
        first = str(exc).strip().splitlines()[0].rstrip(".!") if str(exc).strip() else type(exc).__name__
        raise cls(f"{what} failed: {type(exc).__name__}: {first}. {advice}",
                  path=path if path is not None else getattr(exc, "filename", None),
                  reason=type(exc).__name__) from exc


class PlatformError(WaiError, RuntimeError):
    """A tracked-run call that ``wai server`` (or the local store) refused.

    Carries the HTTP ``status`` (404 for an unknown run, 422 for a bad body, 401 for a missing or
    wrong key), a machine-readable ``code`` (``not_found``, ``invalid``, ``unauthorized``,
    ``conflict``, ``unreachable``; also on ``reason``) and the ``message``, which says what to do;
    ``argument`` names the body field at fault, ``name`` the unknown id.
    """

    def __init__(self, status: int, code: str, message: str, *, argument: str | None = None,
                 name: str | None = None, url: str | None = None) -> None:
        super().__init__(message, argument=argument, name=name, url=url, status=int(status), reason=str(code))
        self.status: int = int(status)
        self.code = str(code)

    def __reduce__(self) -> Any:
        return (type(self), (self.status, self.code, self.message))


