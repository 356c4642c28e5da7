"""Guard: the checks between a run and training on it.

The within-ask reward-hack scan, decontamination against eval sets, trajectory flags, argument
grounding, style and refusal markers, privileged-context leaks, and stage and spec lineage.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from whileai._lazy import exports

#: Submodule -> the public names it defines; each loads on first use (whileai/_lazy.py).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "whileai.guard._decontam": ("ContaminationReport", "Decontaminated", "decontaminate"),
    "whileai.guard._grounding": ("GroundingReport", "grounding_report", "mark_grounding", "ungrounded_arguments"),
    "whileai.guard._hack": ("HackScanReport", "hack_scan", "HACK_SCAN_COLUMNS"),
    "whileai.guard._hygiene": ("CorrelationReport", "Deduped", "DedupeReport", "LengthReport", "NearDuplicateReport", "dedupe_groups", "length_report", "near_duplicate_prompts", "reward_correlations", "feature_correlations", "star_pairs", "trajectory_signature", "truncated_flag"),
    "whileai.guard._leak": ("LeakReport", "leak_report", "leaking_rows"),
    "whileai.guard._lineage": ("STAGES", "Spec", "SpecError", "StageReport", "Trait", "load_spec", "spec_version", "stage_of", "stage_report", "stamp_spec", "stamp_stage"),
    "whileai.guard._style": ("RefusalReport", "StyleReport", "refusal_report", "style_markers", "style_report"),
    "whileai.guard._trace": ("FLAGS", "TRACE_MARKERS", "TraceFlagReport", "trace_flag_report", "trace_markers"),
}
__getattr__, __dir__ = exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - what type checkers see: the table above (tested)
    from whileai.guard._decontam import ContaminationReport as ContaminationReport
    from whileai.guard._decontam import Decontaminated as Decontaminated
    from whileai.guard._decontam import decontaminate as decontaminate
    from whileai.guard._grounding import GroundingReport as GroundingReport
    from whileai.guard._grounding import grounding_report as grounding_report
    from whileai.guard._grounding import mark_grounding as mark_grounding
    from whileai.guard._grounding import ungrounded_arguments as ungrounded_arguments
    from whileai.guard._hack import HACK_SCAN_COLUMNS as HACK_SCAN_COLUMNS
    from whileai.guard._hack import HackScanReport as HackScanReport
    from whileai.guard._hack import hack_scan as hack_scan
    from whileai.guard._hygiene import CorrelationReport as CorrelationReport
    from whileai.guard._hygiene import Deduped as Deduped
    from whileai.guard._hygiene import DedupeReport as DedupeReport
    from whileai.guard._hygiene import LengthReport as LengthReport
    from whileai.guard._hygiene import NearDuplicateReport as NearDuplicateReport
    from whileai.guard._hygiene import dedupe_groups as dedupe_groups
    from whileai.guard._hygiene import feature_correlations as feature_correlations
    from whileai.guard._hygiene import length_report as length_report
    from whileai.guard._hygiene import near_duplicate_prompts as near_duplicate_prompts
    from whileai.guard._hygiene import reward_correlations as reward_correlations
    from whileai.guard._hygiene import star_pairs as star_pairs
    from whileai.guard._hygiene import trajectory_signature as trajectory_signature
    from whileai.guard._hygiene import truncated_flag as truncated_flag
    from whileai.guard._leak import LeakReport as LeakReport
    from whileai.guard._leak import leak_report as leak_report
    from whileai.guard._leak import leaking_rows as leaking_rows
    from whileai.guard._lineage import STAGES as STAGES
    from whileai.guard._lineage import Spec as Spec
    from whileai.guard._lineage import SpecError as SpecError
    from whileai.guard._lineage import StageReport as StageReport
    from whileai.guard._lineage import Trait as Trait
    from whileai.guard._lineage import load_spec as load_spec
    from whileai.guard._lineage import spec_version as spec_version
    from whileai.guard._lineage import stage_of as stage_of
    from whileai.guard._lineage import stage_report as stage_report
    from whileai.guard._lineage import stamp_spec as stamp_spec
    from whileai.guard._lineage import stamp_stage as stamp_stage
    from whileai.guard._style import RefusalReport as RefusalReport
    from whileai.guard._style import StyleReport as StyleReport
    from whileai.guard._style import refusal_report as refusal_report
    from whileai.guard._style import style_markers as style_markers
    from whileai.guard._style import style_report as style_report
    from whileai.guard._trace import FLAGS as FLAGS
    from whileai.guard._trace import TRACE_MARKERS as TRACE_MARKERS
    from whileai.guard._trace import TraceFlagReport as TraceFlagReport
    from whileai.guard._trace import trace_flag_report as trace_flag_report
    from whileai.guard._trace import trace_markers as trace_markers

__all__ = [
    "FLAGS",
    "STAGES",
    "TRACE_MARKERS",
    "ContaminationReport",
    "CorrelationReport",
    "DedupeReport",
    "Deduped",
    "Decontaminated",
    "GroundingReport",
    "HackScanReport",
    "LeakReport",
    "LengthReport",
    "NearDuplicateReport",
    "RefusalReport",
    "Spec",
    "SpecError",
    "StageReport",
    "StyleReport",
    "TraceFlagReport",
    "Trait",
    "decontaminate",
    "dedupe_groups",
    "grounding_report",
    "hack_scan",
    "leak_report",
    "length_report",
    "load_spec",
    "mark_grounding",
    "near_duplicate_prompts",
    "refusal_report",
    "reward_correlations",
    "spec_version",
    "stage_of",
    "stage_report",
    "stamp_spec",
    "stamp_stage",
    "style_markers",
    "style_report",
    "trace_flag_report",
    "trace_markers",
    "ungrounded_arguments",
    "feature_correlations",
    "star_pairs",
    "trajectory_signature",
    "truncated_flag",
    "leaking_rows",
    "HACK_SCAN_COLUMNS",
]
