"""Grade: a reward per rollout under one contract, and the checks that say whether to believe it.

``run_judge`` (what ``data.grade(judge=...)`` calls) runs any judge or verifier over the rows and
writes reward, judge_status, reason, markers, judge_meta and lineage back as columns.
``attach_labels`` stamps people's (or a program's) 0/1 labels; ``judge_trust`` measures the judge
against them (agreement with a Wilson interval, Cohen's kappa, halves, length bias, consistency)
and ``judge_probes`` tries the reward hacks a policy finds first. ``Rubric``/``Criterion`` and
``rubric_judge`` make a model judge that checks criteria one by one.
"""

from whileai._lazy import attach_stub

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
