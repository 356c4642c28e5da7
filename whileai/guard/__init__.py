"""Guard: the checks between a run and training on it.

The within-ask reward-hack scan, decontamination against eval sets, trajectory flags, argument
grounding, style and refusal markers, privileged-context leaks, and stage and spec lineage.
"""

from whileai._lazy import attach_stub

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
