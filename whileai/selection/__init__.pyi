# The public names of whileai.selection, one line each and nowhere else. At run time __init__.py
# hands this file to whileai/_lazy.py, which imports a name's module on its first use; type
# checkers and editors read it for the types.

from whileai.measure import group_stats as group_stats

from ._calibration import Calibration as Calibration
from ._calibration import CalibrationReport as CalibrationReport
from ._calibration import PolicyRef as PolicyRef
from ._calibration import calibrate as calibrate
from ._calibration import calibration_of as calibration_of
from ._curriculum import CurriculumReport as CurriculumReport
from ._curriculum import curriculum as curriculum
from ._curriculum import retire_solved as retire_solved
from ._gate import GateReport as GateReport
from ._gate import publish_gate as publish_gate
from ._groups import GroupSignal as GroupSignal
from ._groups import group_signal as group_signal
from ._optimize import MODES as MODES
from ._optimize import optimize as optimize
from ._pairs import PairsReport as PairsReport
from ._pairs import PreferencePairs as PreferencePairs
from ._pairs import build_preference_pairs as build_preference_pairs
from ._rl import RL_ORDERS as RL_ORDERS
from ._rl import TRUNCATED_POLICIES as TRUNCATED_POLICIES
from ._rl import RLSelectionReport as RLSelectionReport
from ._rl import select_for_rl as select_for_rl
from ._sft import SFT_SELECTIONS as SFT_SELECTIONS
from ._sft import SFTSelectionReport as SFTSelectionReport
from ._sft import select_for_sft as select_for_sft
