"""Select: keep the rows that carry training signal.

RL selection (the difficulty band, unanimous and duplicate drops, round-robin groups), SFT
rejection sampling, preference pairs, a curriculum, the publish gate and the calibration stamp.
``wai.select(rows, mode=...)`` is :func:`optimize` (``whileai/__init__.py`` keeps the function,
not this package, under that name however the package was imported).
"""

from __future__ import annotations

from whileai.select._calibration import (
    Calibration,
    CalibrationReport,
    PolicyRef,
    calibrate,
    calibration_of,
)
from whileai.select._curriculum import (
    CurriculumReport,
    curriculum,
    format_curriculum,
    retire_solved,
)
from whileai.select._gate import GateReport, publish_gate
from whileai.select._groups import GroupSignal, group_signal, group_stats
from whileai.select._optimize import MODES, optimize, select
from whileai.select._pairs import PairsReport, PreferencePairs, build_preference_pairs
from whileai.select._rl import RL_ORDERS, TRUNCATED_POLICIES, RLSelectionReport, select_for_rl
from whileai.select._sft import SFT_SELECTIONS, SFTSelectionReport, select_for_sft

__all__ = [
    "MODES",
    "RL_ORDERS",
    "SFT_SELECTIONS",
    "TRUNCATED_POLICIES",
    "Calibration",
    "CalibrationReport",
    "CurriculumReport",
    "GateReport",
    "GroupSignal",
    "PairsReport",
    "PolicyRef",
    "PreferencePairs",
    "RLSelectionReport",
    "SFTSelectionReport",
    "build_preference_pairs",
    "calibrate",
    "calibration_of",
    "curriculum",
    "format_curriculum",
    "group_signal",
    "group_stats",
    "optimize",
    "publish_gate",
    "retire_solved",
    "select",
    "select_for_rl",
    "select_for_sft",
]

from whileai._callable import make_callable  # noqa: E402

make_callable(__name__)
