# The public names of whileai.train, one line each and nowhere else. At run time __init__.py
# hands this file to whileai/_lazy.py, which imports a name's module on its first use; type
# checkers and editors read it for the types.

from ._callback import tracked_callback as tracked_callback
from ._extra import require_extra as require_extra
from ._knobs import check_knobs as check_knobs
from ._knobs import paper_value as paper_value
from ._monitor import ALARMS as ALARMS
from ._monitor import HackMonitor as HackMonitor
from ._monitor import format_hack_monitor as format_hack_monitor
from ._profile import SelectionReport as SelectionReport
from ._profile import TrainingProfile as TrainingProfile
from ._profile import profile as profile
from ._profile import selection_report as selection_report
from ._result import TrackedRun as TrackedRun
from ._result import TrainResult as TrainResult
from ._result import cost_line as cost_line
from ._reward import TrlReward as TrlReward
from ._reward import trl_reward as trl_reward
from ._tiny import build_tiny_model as build_tiny_model
from ._tiny import tiny_rollouts as tiny_rollouts
from ._trainers import dpo as dpo
from ._trainers import grpo as grpo
from ._trainers import reward_model as reward_model
from ._trainers import sft as sft
