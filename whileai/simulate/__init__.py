"""Simulate: tools, a covering grid of situations, a world that fails on purpose, agents, endpoints.

Every rollout lands as a row of the rollout table.
"""

import inspect as _inspect
import sys as _sys
import types as _types
from typing import Any as _Any

from whileai.simulate._agents import RolloutContext, current_rollout
from whileai.simulate._endpoint import Endpoint
from whileai.simulate._engine import simulate
from whileai.simulate._quickstart import quickstart
from whileai.simulate._report import SimulationReport
from whileai.simulate._seeded import SEEDED_KINDS, SeededAgent, seeded_agent
from whileai.simulate._tools import Tool, tool
from whileai.simulate._util import UnknownArgumentError
from whileai.simulate._world import World
from whileai.simulate._writer import FAULT_KINDS, Situation, split_clauses

__all__ = [
    "FAULT_KINDS",
    "SEEDED_KINDS",
    "Endpoint",
    "RolloutContext",
    "SeededAgent",
    "SimulationReport",
    "Situation",
    "Tool",
    "UnknownArgumentError",
    "World",
    "current_rollout",
    "quickstart",
    "seeded_agent",
    "simulate",
    "split_clauses",
    "tool",
]


class _CallableModule(_types.ModuleType):
    """``whileai.simulate`` is both this package and the ``simulate`` function.

    Importing the package binds ``whileai.simulate`` to the module (Python sets the parent's
    attribute), which would hide the function ``wai.simulate``; calling the module runs it.
    """

    def __call__(self, *args: _Any, **kwargs: _Any) -> _Any:
        return simulate(*args, **kwargs)


_sys.modules[__name__].__class__ = _CallableModule
__signature__ = _inspect.signature(simulate)
__wrapped__ = simulate
__doc__ = f"{__doc__}\nCalling ``wai.simulate(...)`` runs :func:`simulate`:\n\n{simulate.__doc__}"
