"""Griffe extension: a package stub's ``b = a`` line documents ``b`` as the object ``a`` names.

Each package lists its public names in ``__init__.pyi`` (whileai/_lazy.py); a second name of an
object is written ``canonical_json = dumps`` after ``from .normalize import dumps``, the form the
typing spec exports. whileai/_lazy.py and type checkers read that line as the function; griffe
reads any assignment as a module attribute, so the API page would show ``canonical_json = dumps``
instead of the function's signature and docstring. This turns each such line of a stub into the
alias it is. mkdocs.yml names this file in the python handler's ``extensions``.
"""

from __future__ import annotations

from typing import Any

import griffe


class StubAliases(griffe.Extension):
    """In an ``__init__.pyi``, ``b = a`` where ``a`` is imported becomes an alias of ``a``'s target."""

    def on_module_members(self, *, mod: griffe.Module, **kwargs: Any) -> None:
        """Replace each such attribute of a package stub by an alias (griffe's hook, once per module)."""
        if not str(mod.filepath).endswith("__init__.pyi"):
            return
        for name, member in list(mod.members.items()):
            if member.is_alias or not member.is_attribute:
                continue
            source = mod.members.get(str(member.value))
            if source is not None and source.is_alias:
                mod.set_member(name, griffe.Alias(name, source.target_path, lineno=member.lineno,
                                                  endlineno=member.endlineno))
