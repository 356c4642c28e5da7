# The public names of whileai.guard, one line each and nowhere else. At run time __init__.py
# hands this file to whileai/_lazy.py, which imports a name's module on its first use; type
# checkers and editors read it for the types.

from ._decontam import ContaminationReport as ContaminationReport
from ._decontam import Decontaminated as Decontaminated
from ._decontam import decontaminate as decontaminate
from ._grounding import GroundingReport as GroundingReport
from ._grounding import grounding_report as grounding_report
from ._grounding import mark_grounding as mark_grounding
from ._grounding import ungrounded_arguments as ungrounded_arguments
from ._hack import HackScanReport as HackScanReport
from ._hack import hack_scan as hack_scan
from ._hygiene import CorrelationReport as CorrelationReport
from ._hygiene import Deduped as Deduped
from ._hygiene import DedupeReport as DedupeReport
from ._hygiene import LengthReport as LengthReport
from ._hygiene import NearDuplicateReport as NearDuplicateReport
from ._hygiene import dedupe_groups as dedupe_groups
from ._hygiene import length_report as length_report
from ._hygiene import near_duplicate_prompts as near_duplicate_prompts
from ._hygiene import reward_correlations as reward_correlations
from ._leak import LeakReport as LeakReport
from ._leak import leak_report as leak_report
from ._lineage import STAGES as STAGES
from ._lineage import Spec as Spec
from ._lineage import SpecError as SpecError
from ._lineage import StageReport as StageReport
from ._lineage import Trait as Trait
from ._lineage import load_spec as load_spec
from ._lineage import spec_version as spec_version
from ._lineage import stage_of as stage_of
from ._lineage import stage_report as stage_report
from ._lineage import stamp_spec as stamp_spec
from ._lineage import stamp_stage as stamp_stage
from ._style import RefusalReport as RefusalReport
from ._style import StyleReport as StyleReport
from ._style import refusal_report as refusal_report
from ._style import style_markers as style_markers
from ._style import style_report as style_report
from ._trace import FLAGS as FLAGS
from ._trace import TRACE_MARKERS as TRACE_MARKERS
from ._trace import TraceFlagReport as TraceFlagReport
from ._trace import trace_flag_report as trace_flag_report
from ._trace import trace_markers as trace_markers
