"""Names kept so code written against whileai 0.131 runs unchanged: one table, each with its preferred name.

``wai.<alias>`` is the very object ``wai.<preferred>`` is (``wai.export_training is
wai.export_dataset``): ``whileai/__init__.pyi`` binds it (``optimize = select``), and
``tests/test_public_api.py`` keeps that stub and this table the same. New code should use the
preferred name; ``since`` is the whileai version that first shipped the alias here.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["ALIASES", "Alias"]


class Alias(NamedTuple):
    """One kept spelling."""

    preferred: str
    """The name to write in new code."""
    since: str
    """The whileai version that first shipped the alias."""
    why: str
    """Where the spelling comes from."""


ALIASES: dict[str, Alias] = {
    "cheat_probes": Alias("judge_probes", "0.1.0", "whileai 0.131 name of the judge exploit probes"),
    "compare": Alias("delta_report", "0.1.0", "whileai 0.131 before/after call"),
    "export": Alias("export_dataset", "0.1.0", "the landing page's wai.export / rows.export"),
    "export_training": Alias("export_dataset", "0.1.0", "whileai 0.131 spelling of export_dataset"),
    "optimize": Alias("select", "0.1.0", "whileai 0.131 name of select(mode=...)"),
}
