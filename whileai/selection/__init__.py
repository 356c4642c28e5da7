"""The select step: keep the rows that carry training signal.

RL selection (the difficulty band, unanimous and duplicate drops, round-robin groups), SFT
rejection sampling, preference pairs, a curriculum, the publish gate and the calibration stamp.
The selectors here return a :class:`whileai.table.StepResult`; ``wai.select(rows, mode=...)``,
``wai.select_for_rl`` and the rest (the fluent layer, ``whileai.data``) wrap it as a
``Selection``.
"""

from __future__ import annotations

from whileai.measure import group_stats  # lives beside task_stats; kept importable here
from whileai.selection._calibration import (
    Calibration,
    CalibrationReport,
    PolicyRef,
    calibrate,
    calibration_of,
)
from whileai.selection._curriculum import (
    CurriculumReport,
    curriculum,
    retire_solved,
)
from whileai.selection._gate import GateReport, publish_gate
from whileai.selection._groups import GroupSignal, group_signal
from whileai.selection._optimize import MODES, optimize
from whileai.selection._pairs import PairsReport, PreferencePairs, build_preference_pairs
from whileai.selection._rl import RL_ORDERS, TRUNCATED_POLICIES, RLSelectionReport, select_for_rl
from whileai.selection._sft import SFT_SELECTIONS, SFTSelectionReport, select_for_sft

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
    "group_signal",
    "group_stats",
    "optimize",
    "publish_gate",
    "retire_solved",
    "select_for_rl",
    "select_for_sft",
]
