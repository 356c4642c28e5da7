"""The simulate step: tools, a covering grid of situations, a world that fails on purpose, agents, endpoints.

Every rollout lands as a row of the rollout table. :func:`simulate` here returns a
:class:`whileai.table.StepResult`; ``wai.simulate`` (the fluent layer, ``whileai.data``) wraps it
as ``SimulationData``.
"""


from __future__ import annotations

from typing import TYPE_CHECKING

from whileai._lazy import exports

#: Submodule -> the public names it defines; each loads on first use (whileai/_lazy.py).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "whileai.simulation._agents": ("RolloutContext", "current_rollout"),
    "whileai.simulation._endpoint": ("Endpoint",),
    "whileai.simulation._engine": ("simulate", "Mode", "RepeatPolicy"),
    "whileai.simulation._report": ("SimulationReport",),
    "whileai.simulation._seeded": ("SEEDED_KINDS", "SeededAgent", "seeded_agent"),
    "whileai.simulation._tools": ("Tool", "tool"),
    "whileai.simulation._user_checks": ("USER_FLAGS", "user_error_summary", "USER_JUDGE_CRITERIA", "context_of_row"),
    "whileai.simulation._util": ("UnknownArgumentError",),
    "whileai.simulation._world": ("World",),
    "whileai.simulation._writer": ("FAULT_KINDS", "Situation", "split_clauses"),
}
__getattr__, __dir__ = exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - what type checkers see: the table above (tested)
    from whileai.simulation._agents import RolloutContext as RolloutContext
    from whileai.simulation._agents import current_rollout as current_rollout
    from whileai.simulation._endpoint import Endpoint as Endpoint
    from whileai.simulation._engine import Mode as Mode
    from whileai.simulation._engine import RepeatPolicy as RepeatPolicy
    from whileai.simulation._engine import simulate as simulate
    from whileai.simulation._report import SimulationReport as SimulationReport
    from whileai.simulation._seeded import SEEDED_KINDS as SEEDED_KINDS
    from whileai.simulation._seeded import SeededAgent as SeededAgent
    from whileai.simulation._seeded import seeded_agent as seeded_agent
    from whileai.simulation._tools import Tool as Tool
    from whileai.simulation._tools import tool as tool
    from whileai.simulation._user_checks import USER_FLAGS as USER_FLAGS
    from whileai.simulation._user_checks import USER_JUDGE_CRITERIA as USER_JUDGE_CRITERIA
    from whileai.simulation._user_checks import context_of_row as context_of_row
    from whileai.simulation._user_checks import user_error_summary as user_error_summary
    from whileai.simulation._util import UnknownArgumentError as UnknownArgumentError
    from whileai.simulation._world import World as World
    from whileai.simulation._writer import FAULT_KINDS as FAULT_KINDS
    from whileai.simulation._writer import Situation as Situation
    from whileai.simulation._writer import split_clauses as split_clauses

__all__ = [
    "FAULT_KINDS",
    "SEEDED_KINDS",
    "USER_FLAGS",
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
    "user_error_summary",
    "Mode",
    "RepeatPolicy",
    "USER_JUDGE_CRITERIA",
    "context_of_row",
]

