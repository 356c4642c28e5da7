"""``wai.reward_model(result)``: a trained reward model as a judge (the training call is ``wai.train.reward_model``)."""

from __future__ import annotations

from typing import Any

from whileai.train._rm import RewardModelJudge, as_judge

__all__ = ["RewardModelJudge", "reward_model"]


def reward_model(result: Any, /, *, threshold: float | None = None) -> RewardModelJudge:
    """The reward model a ``wai.train.reward_model`` run trained, as a judge under the judge contract.

    It returns ``{"reward": 1.0 or 0.0, "rm_score": raw}``: the reward is 1 when sigmoid(score)
    reaches the run's threshold, and the raw Bradley-Terry score lands in ``judge_meta`` (Ouyang
    et al. 2022, InstructGPT, arXiv:2203.02155, section 3.5), so it goes wherever a judge goes
    (``grade``, ``trl_reward``, a ``HackMonitor``'s gold).

    Args:
        result: The :class:`~whileai.train.TrainResult` of a reward-model run (or its dict).
        threshold: Overrides the run's threshold on sigmoid(score).

    Returns:
        A :class:`RewardModelJudge` (loads the model on first call).

    Raises:
        ArgumentError: ``result`` is not a reward-model run.
    """
    return as_judge(result, threshold=threshold)
