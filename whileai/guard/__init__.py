"""Guard: the checks between a run and training on it.

The within-ask reward-hack scan, decontamination against eval sets, trajectory flags, argument
grounding, style and refusal markers, privileged-context leaks, and stage and spec lineage.
"""

from whileai.guard._decontam import ContaminationReport, Decontaminated, decontaminate
from whileai.guard._hack import HackScanReport, format_hack_scan, hack_scan
from whileai.guard._hygiene import (
    CorrelationReport,
    Deduped,
    DedupeReport,
    LengthReport,
    NearDuplicateReport,
    dedupe_groups,
    length_report,
    near_duplicate_prompts,
    reward_correlations,
)

__all__ = [
    "ContaminationReport",
    "Decontaminated",
    "decontaminate",
    "CorrelationReport",
    "DedupeReport",
    "Deduped",
    "HackScanReport",
    "LengthReport",
    "NearDuplicateReport",
    "dedupe_groups",
    "format_hack_scan",
    "hack_scan",
    "length_report",
    "near_duplicate_prompts",
    "reward_correlations",
]
