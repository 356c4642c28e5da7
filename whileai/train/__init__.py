"""Train on your own GPU (or CPU for a smoke run) through TRL: SFT, DPO, GRPO and a reward model.

``pip install 'whileai[train]'`` (trl, transformers, datasets, peft; install torch's wheel for
your machine first). torch and TRL load only when a training call runs, so ``import whileai``
stays fast; ``require_extra()`` checks for them without loading them. Each call first checks
what the trainer will use (``profile``, ``selection_report``), before it needs torch; GRPO
trains on the eval's judge (``trl_reward``) under a ``HackMonitor``; the held-out delta closes
every run. See docs/train.md.
"""

from whileai._lazy import attach_stub

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
