"""The optional ``train`` extra: imported only when a training call runs."""

from __future__ import annotations

import importlib.util

from whileai.errors import missing_extra

__all__ = ["require"]


def require(*packages: str, what: str = "whileai.train") -> None:
    """Raise ``MissingExtraError`` naming ``pip install 'whileai[train]'`` unless every package imports."""
    for package in packages:
        if importlib.util.find_spec(package) is None:
            raise missing_extra(package, "train", what)
