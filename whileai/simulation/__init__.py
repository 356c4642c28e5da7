"""The simulate step: tools, a covering grid of situations, a world that fails on purpose, agents, endpoints.

Every rollout lands as a row of the rollout table. :func:`simulate` here returns a
:class:`whileai.table.StepResult`; ``wai.simulate`` (the fluent layer, ``whileai.data``) wraps it
as ``SimulationData``.
"""


from whileai.simulation._agents import RolloutContext, current_rollout
from whileai.simulation._endpoint import Endpoint
from whileai.simulation._engine import simulate
from whileai.simulation._report import SimulationReport
from whileai.simulation._seeded import SEEDED_KINDS, SeededAgent, seeded_agent
from whileai.simulation._tools import Tool, tool
from whileai.simulation._util import UnknownArgumentError
from whileai.simulation._world import World
from whileai.simulation._writer import FAULT_KINDS, Situation, split_clauses

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
    "seeded_agent",
    "simulate",
    "split_clauses",
    "tool",
]

