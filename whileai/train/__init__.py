"""Train on your own GPU (or CPU for a smoke run) through TRL: SFT, DPO, GRPO and a reward model.

``pip install 'whileai[train]'`` (trl, transformers, datasets, peft; install torch's wheel for
your machine first). torch and TRL load only when a training call runs, so ``import whileai``
stays fast; ``require_extra()`` checks for them without loading them. Each call first checks
what the trainer will use (``profile``, ``selection_report``), before it needs torch; GRPO
trains on the eval's judge (``trl_reward``) under a ``HackMonitor``; the held-out delta closes
every run. See docs/train.md.
"""

from whileai.train._callback import tracked_callback
from whileai.train._extra import require_extra
from whileai.train._knobs import check_knobs, paper_value
from whileai.train._monitor import ALARMS, HackMonitor, format_hack_monitor
from whileai.train._profile import SelectionReport, TrainingProfile, profile, selection_report
from whileai.train._result import TrackedRun, TrainResult, cost_line
from whileai.train._reward import TrlReward, trl_reward
from whileai.train._tiny import build_tiny_model, tiny_rollouts
from whileai.train._trainers import dpo, grpo, reward_model, sft

__all__ = [
    "ALARMS",
    "HackMonitor",
    "SelectionReport",
    "TrackedRun",
    "TrainResult",
    "TrainingProfile",
    "TrlReward",
    "build_tiny_model",
    "check_knobs",
    "cost_line",
    "dpo",
    "format_hack_monitor",
    "grpo",
    "paper_value",
    "profile",
    "require_extra",
    "reward_model",
    "selection_report",
    "sft",
    "tiny_rollouts",
    "tracked_callback",
    "trl_reward",
]
