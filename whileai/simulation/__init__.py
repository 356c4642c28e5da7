"""The simulate step: tools, a covering grid of situations, a world that fails on purpose, agents, endpoints.

Every rollout lands as a row of the rollout table. :func:`simulate` here returns a
:class:`whileai.table.StepResult`; ``wai.simulate`` (the fluent layer, ``whileai.data``) wraps it
as ``SimulationData``.
"""

from whileai._lazy import attach_stub

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
