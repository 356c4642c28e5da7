"""Grade: a reward per rollout under one contract, and the checks that say whether to believe it.

``run_judge`` (what ``data.grade(judge=...)`` calls) runs any judge or verifier over the rows and
writes reward, judge_status, reason, markers, judge_meta and lineage back as columns.
``attach_labels`` stamps people's (or a program's) 0/1 labels; ``judge_trust`` measures the judge
against them (agreement with a Wilson interval, Cohen's kappa, halves, length bias, consistency)
and ``judge_probes`` tries the reward hacks a policy finds first. ``Rubric``/``Criterion`` and
``rubric_judge`` make a model judge that checks criteria one by one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from whileai._lazy import exports

#: Submodule -> the public names it defines; each loads on first use (whileai/_lazy.py).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "whileai.grade._contract": ("STATUSES", "Verdict", "judge_name_of", "normalize_judge_result", "check_judge", "error_verdict"),
    "whileai.grade._labels": ("Labeled", "LabelReport", "attach_labels"),
    "whileai.grade._perturb": ("ADDITIVE_PROBES", "FILLER", "PROBES", "REPLACEMENT_PROBES", "rubric_words"),
    "whileai.grade._probes": ("ProbeReport", "judge_probes", "resolvable_rate"),
    "whileai.grade._rubric": ("Criterion", "Rubric", "RubricJudge", "rubric_judge", "tool_facts"),
    "whileai.grade._run": ("GradeReport", "run_judge"),
    "whileai.grade._trust": ("GOLD_KINDS", "JudgeTrustReport", "format_judge_trust", "gold_words", "judge_trust"),
}
__getattr__, __dir__ = exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - what type checkers see: the table above (tested)
    from whileai.grade._contract import STATUSES as STATUSES
    from whileai.grade._contract import Verdict as Verdict
    from whileai.grade._contract import check_judge as check_judge
    from whileai.grade._contract import error_verdict as error_verdict
    from whileai.grade._contract import judge_name_of as judge_name_of
    from whileai.grade._contract import normalize_judge_result as normalize_judge_result
    from whileai.grade._labels import Labeled as Labeled
    from whileai.grade._labels import LabelReport as LabelReport
    from whileai.grade._labels import attach_labels as attach_labels
    from whileai.grade._perturb import ADDITIVE_PROBES as ADDITIVE_PROBES
    from whileai.grade._perturb import FILLER as FILLER
    from whileai.grade._perturb import PROBES as PROBES
    from whileai.grade._perturb import REPLACEMENT_PROBES as REPLACEMENT_PROBES
    from whileai.grade._perturb import rubric_words as rubric_words
    from whileai.grade._probes import ProbeReport as ProbeReport
    from whileai.grade._probes import judge_probes as judge_probes
    from whileai.grade._probes import resolvable_rate as resolvable_rate
    from whileai.grade._rubric import Criterion as Criterion
    from whileai.grade._rubric import Rubric as Rubric
    from whileai.grade._rubric import RubricJudge as RubricJudge
    from whileai.grade._rubric import rubric_judge as rubric_judge
    from whileai.grade._rubric import tool_facts as tool_facts
    from whileai.grade._run import GradeReport as GradeReport
    from whileai.grade._run import run_judge as run_judge
    from whileai.grade._trust import GOLD_KINDS as GOLD_KINDS
    from whileai.grade._trust import JudgeTrustReport as JudgeTrustReport
    from whileai.grade._trust import format_judge_trust as format_judge_trust
    from whileai.grade._trust import gold_words as gold_words
    from whileai.grade._trust import judge_trust as judge_trust

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
    "check_judge",
    "error_verdict",
]
