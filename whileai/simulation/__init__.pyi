# The public names of whileai.simulation, one line each and nowhere else. At run time __init__.py
# hands this file to whileai/_lazy.py, which imports a name's module on its first use; type
# checkers and editors read it for the types.

from ._agents import RolloutContext as RolloutContext
from ._agents import current_rollout as current_rollout
from ._endpoint import Endpoint as Endpoint
from ._engine import simulate as simulate
from ._options import Mode as Mode
from ._options import RepeatPolicy as RepeatPolicy
from ._report import SimulationReport as SimulationReport
from ._seeded import SEEDED_KINDS as SEEDED_KINDS
from ._seeded import SeededAgent as SeededAgent
from ._seeded import seeded_agent as seeded_agent
from ._tools import Tool as Tool
from ._tools import tool as tool
from ._user_checks import USER_FLAGS as USER_FLAGS
from ._user_checks import USER_JUDGE_CRITERIA as USER_JUDGE_CRITERIA
from ._user_checks import context_of_row as context_of_row
from ._user_checks import user_error_summary as user_error_summary
from ._util import UnknownArgumentError as UnknownArgumentError
from ._world import World as World
from ._writer import FAULT_KINDS as FAULT_KINDS
from ._writer import Situation as Situation
from ._writer import split_clauses as split_clauses
