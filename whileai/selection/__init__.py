"""The select step: keep the rows that carry training signal.

RL selection (the difficulty band, unanimous and duplicate drops, round-robin groups), SFT
rejection sampling, preference pairs, a curriculum, the publish gate and the calibration stamp.
The selectors here return a :class:`whileai.table.StepResult`; ``wai.select(rows, mode=...)``,
``wai.select_for_rl`` and the rest (the fluent layer, ``whileai.data``) wrap it as a
``Selection``.
"""

from whileai._lazy import attach_stub

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
