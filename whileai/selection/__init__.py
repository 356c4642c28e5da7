"""The select step: keep the rows that carry training signal.

RL selection (the difficulty band, unanimous and duplicate drops, round-robin groups), SFT
rejection sampling, preference pairs, a curriculum, the publish gate and the calibration stamp.
The selectors here return a :class:`whileai.table.StepResult`; ``wai.select(rows, mode=...)``,
``wai.select_for_rl`` and the rest (the fluent layer, ``whileai.data``) wrap it as a
``Selection``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from whileai._lazy import exports

#: Submodule -> the public names it defines; each loads on first use (whileai/_lazy.py).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "whileai.measure": ("group_stats",),
    "whileai.selection._calibration": ("Calibration", "CalibrationReport", "PolicyRef", "calibrate", "calibration_of"),
    "whileai.selection._curriculum": ("CurriculumReport", "curriculum", "retire_solved"),
    "whileai.selection._gate": ("GateReport", "publish_gate"),
    "whileai.selection._groups": ("GroupSignal", "group_signal"),
    "whileai.selection._optimize": ("MODES", "optimize"),
    "whileai.selection._pairs": ("PairsReport", "PreferencePairs", "build_preference_pairs"),
    "whileai.selection._rl": ("RL_ORDERS", "TRUNCATED_POLICIES", "RLSelectionReport", "select_for_rl"),
    "whileai.selection._sft": ("SFT_SELECTIONS", "SFTSelectionReport", "select_for_sft"),
}
__getattr__, __dir__ = exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - what type checkers see: the table above (tested)
    from whileai.measure import group_stats as group_stats
    from whileai.selection._calibration import Calibration as Calibration
    from whileai.selection._calibration import CalibrationReport as CalibrationReport
    from whileai.selection._calibration import PolicyRef as PolicyRef
    from whileai.selection._calibration import calibrate as calibrate
    from whileai.selection._calibration import calibration_of as calibration_of
    from whileai.selection._curriculum import CurriculumReport as CurriculumReport
    from whileai.selection._curriculum import curriculum as curriculum
    from whileai.selection._curriculum import retire_solved as retire_solved
    from whileai.selection._gate import GateReport as GateReport
    from whileai.selection._gate import publish_gate as publish_gate
    from whileai.selection._groups import GroupSignal as GroupSignal
    from whileai.selection._groups import group_signal as group_signal
    from whileai.selection._optimize import MODES as MODES
    from whileai.selection._optimize import optimize as optimize
    from whileai.selection._pairs import PairsReport as PairsReport
    from whileai.selection._pairs import PreferencePairs as PreferencePairs
    from whileai.selection._pairs import build_preference_pairs as build_preference_pairs
    from whileai.selection._rl import RL_ORDERS as RL_ORDERS
    from whileai.selection._rl import TRUNCATED_POLICIES as TRUNCATED_POLICIES
    from whileai.selection._rl import RLSelectionReport as RLSelectionReport
    from whileai.selection._rl import select_for_rl as select_for_rl
    from whileai.selection._sft import SFT_SELECTIONS as SFT_SELECTIONS
    from whileai.selection._sft import SFTSelectionReport as SFTSelectionReport
    from whileai.selection._sft import select_for_sft as select_for_sft

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
