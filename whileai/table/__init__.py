"""The rollout table: schema, readers, writers, task identity and derived columns.

Other packages import only the names here and the public modules ``derive``, ``normalize``
(message and JSON normalisation), ``schema`` and ``raydata`` (the Ray engine's shared pieces,
``docs/scale.md``); the ``_`` modules are this package's own.
"""

from whileai._lazy import attach_stub

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
