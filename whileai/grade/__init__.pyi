# The public names of whileai.grade, one line each and nowhere else. At run time __init__.py
# hands this file to whileai/_lazy.py, which imports a name's module on its first use; type
# checkers and editors read it for the types.

from ._contract import STATUSES as STATUSES
from ._contract import Verdict as Verdict
from ._contract import check_judge as check_judge
from ._contract import error_verdict as error_verdict
from ._contract import judge_name_of as judge_name_of
from ._contract import normalize_judge_result as normalize_judge_result
from ._labels import Labeled as Labeled
from ._labels import LabelReport as LabelReport
from ._labels import attach_labels as attach_labels
from ._perturb import ADDITIVE_PROBES as ADDITIVE_PROBES
from ._perturb import FILLER as FILLER
from ._perturb import PROBES as PROBES
from ._perturb import REPLACEMENT_PROBES as REPLACEMENT_PROBES
from ._perturb import rubric_words as rubric_words
from ._probes import ProbeReport as ProbeReport
from ._probes import judge_probes as judge_probes
from ._probes import resolvable_rate as resolvable_rate
from ._rubric import Criterion as Criterion
from ._rubric import Rubric as Rubric
from ._rubric import RubricJudge as RubricJudge
from ._rubric import rubric_judge as rubric_judge
from ._rubric import tool_facts as tool_facts
from ._run import GradeReport as GradeReport
from ._run import run_judge as run_judge
from ._trust import GOLD_KINDS as GOLD_KINDS
from ._trust import JudgeTrustReport as JudgeTrustReport
from ._trust import format_judge_trust as format_judge_trust
from ._trust import gold_words as gold_words
from ._trust import judge_trust as judge_trust
