"""Guard: the checks between a run and training on it.

The within-ask reward-hack scan, decontamination against eval sets, trajectory flags, argument
grounding, style and refusal markers, privileged-context leaks, and stage and spec lineage.
"""

from whileai.guard._decontam import ContaminationReport, Decontaminated, decontaminate
from whileai.guard._grounding import (
    GroundingReport,
    grounding_report,
    mark_grounding,
    ungrounded_arguments,
)
from whileai.guard._hack import HackScanReport, hack_scan
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
from whileai.guard._leak import LeakReport, leak_report
from whileai.guard._lineage import (
    STAGES,
    Spec,
    SpecError,
    StageReport,
    Trait,
    load_spec,
    spec_version,
    stage_of,
    stage_report,
    stamp_spec,
    stamp_stage,
)
from whileai.guard._style import (
    RefusalReport,
    StyleReport,
    refusal_report,
    style_markers,
    style_report,
)
from whileai.guard._trace import (
    FLAGS,
    TRACE_MARKERS,
    TraceFlagReport,
    trace_flag_report,
    trace_markers,
)

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
]
