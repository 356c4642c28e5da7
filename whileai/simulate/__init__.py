"""Simulate: tools, a covering grid of situations, a world that fails on purpose, agents, endpoints.

Every rollout lands as a row of the rollout table.
"""


from whileai._callable import make_callable
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


make_callable(__name__)
__doc__ = f"{__doc__}\nCalling ``wai.simulate(...)`` runs :func:`simulate`:\n\n{simulate.__doc__}"
