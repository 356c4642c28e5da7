"""Grade: a reward per rollout under one contract, and the checks that say whether to believe it.

``run_judge`` (what ``data.grade(judge=...)`` calls) runs any judge or verifier over the rows and
writes reward, judge_status, reason, markers, judge_meta and lineage back as columns.
``attach_labels`` stamps people's (or a program's) 0/1 labels; ``judge_trust`` measures the judge
against them (agreement with a Wilson interval, Cohen's kappa, halves, length bias, consistency)
and ``judge_probes`` tries the reward hacks a policy finds first. ``Rubric``/``Criterion`` and
``rubric_judge`` make a model judge that checks criteria one by one.
"""

from whileai.grade._contract import STATUSES, Verdict, judge_name_of, normalize_judge_result
from whileai.grade._labels import Labeled, LabelReport, attach_labels
from whileai.grade._perturb import ADDITIVE_PROBES, FILLER, PROBES, REPLACEMENT_PROBES, rubric_words
from whileai.grade._probes import ProbeReport, judge_probes, resolvable_rate
from whileai.grade._rubric import Criterion, Rubric, RubricJudge, rubric_judge, tool_facts
from whileai.grade._run import GradeReport, run_judge
from whileai.grade._trust import (
    GOLD_KINDS,
    JudgeTrustReport,
    format_judge_trust,
    gold_words,
    judge_trust,
)

__all__ = [
    "ADDITIVE_PROBES",
    "FILLER",
    "GOLD_KINDS",
    "PROBES",
    "REPLACEMENT_PROBES",
    "STATUSES",
    "Criterion",
    "GradeReport",
    "JudgeTrustReport",
    "LabelReport",
    "Labeled",
    "ProbeReport",
    "Rubric",
    "RubricJudge",
    "Verdict",
    "attach_labels",
    "format_judge_trust",
    "gold_words",
    "judge_name_of",
    "judge_probes",
    "judge_trust",
    "normalize_judge_result",
    "resolvable_rate",
    "rubric_judge",
    "rubric_words",
    "run_judge",
    "tool_facts",
]
