"""The whileai error tree.

Every error the library raises on purpose is a :class:`WaiError`. Each subclass also inherits the
built-in it replaces, so ``except ValueError`` written against older code keeps working::

    WaiError(Exception)
    ├── SchemaError(WaiError, ValueError)          rows that do not fit the rollout table
    │   └── EmptyInputError(SchemaError)           no rows at all
    ├── InputFileError(WaiError, FileNotFoundError) a path that cannot be read
    ├── ArgumentError(WaiError, ValueError)        an option outside its allowed values
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
    └── SandboxError(WaiError, RuntimeError)       submitted code cannot be run isolated here

Messages follow one shape: ``"<thing> must be <constraint>, got <value!r>. <what to do>."``
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ArgumentError",
    "ContaminationError",
    "EmptyInputError",
    "EndpointError",
    "InputFileError",
    "JudgeError",
    "MissingExtraError",
    "PublishGateError",
    "SandboxError",
    "SchemaError",
    "SimulationError",
    "StageError",
    "StoreBusyError",
    "StoreError",
    "ToolSchemaError",
    "TrainingSelectionError",
    "WaiError",
]


class WaiError(Exception):
    """Root of every error whileai raises on purpose; the message says what to do."""

    def __init__(self, message: str, **context: Any) -> None:
        super().__init__(message)
        self.message = message
        self.context = context
        for key, value in context.items():
            setattr(self, key, value)

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


class MissingExtraError(WaiError, ImportError):
    """An optional dependency is not installed; the message names the pip extra."""


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
