"""The optional ``train`` extra: imported only when a training call runs."""

from __future__ import annotations

import importlib.util

from whileai.errors import missing_extra

__all__ = ["TRAIN_PACKAGES", "require", "require_extra"]

#: What a training call imports: ``pip install 'whileai[train]'`` (torch's wheel for your machine first).
TRAIN_PACKAGES = ("torch", "transformers", "trl", "datasets", "peft")


def require(*packages: str, what: str = "whileai.train") -> None:
    """Raise ``MissingExtraError`` naming ``pip install 'whileai[train]'`` unless every package imports."""
    for package in packages:
        if importlib.util.find_spec(package) is None:
            raise missing_extra(package, "train", what)


def require_extra(what: str = "whileai.train") -> None:
    """Check that the train extra is installed, without importing it (torch and TRL stay unloaded).

    What every training call checks first; a script runs it before it writes anything, so a
    machine without torch gets the one-line ``pip install`` answer and no half-made output folder.

    Args:
        what: What needs the extra, for the message.

    Raises:
        MissingExtraError: A package of the extra is not installed; the message names
            ``pip install 'whileai[train]'``.
    """
    require(*TRAIN_PACKAGES, what=what)
