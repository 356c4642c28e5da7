"""Packages that are also their main function: ``wai.simulate``, ``wai.select``, ``wai.export``.

A step package named like its main function (``whileai.select`` defines ``select``) is bound on
``whileai`` as the package once imported (Python sets the parent's attribute). Rather than fight
that, the package module itself is made callable: ``wai.select(rows, mode="rl")`` runs the
function, ``import whileai.select as S`` still gives the package, and ``S.publish_gate`` works.
"""

from __future__ import annotations

import inspect
import sys
import types
from typing import Any

__all__ = ["make_callable"]


class _CallablePackage(types.ModuleType):
    """A package module whose call runs its function of the same name."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return getattr(self, self.__name__.rsplit(".", 1)[-1])(*args, **kwargs)


def make_callable(module_name: str) -> None:
    """Make the package ``module_name`` callable as its function of the same short name."""
    module = sys.modules[module_name]
    fn = getattr(module, module_name.rsplit(".", 1)[-1])
    module.__class__ = _CallablePackage
    module.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
    module.__wrapped__ = fn  # type: ignore[attr-defined]
