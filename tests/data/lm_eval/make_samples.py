"""Run lm-evaluation-harness 0.4.13's own CLI on the two tasks in tasks/, offline.

    cd tests/data/lm_eval && HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 \
        python make_samples.py run --model cycle --tasks wai_mc,wai_gen --include_path tasks \
        --output_path out --log_samples

``cycle`` is lm-eval's ``dummy`` model (random log-likelihoods, seeded by lm-eval) whose
generations take turns through a fixed list, so the ``repeats: 3`` responses of one document
differ. Everything else (requests, filters, metrics, the files) is lm-eval's.
"""

import itertools

from lm_eval.__main__ import cli_evaluate
from lm_eval.api.registry import register_model
from lm_eval.models.dummy import DummyLM

_ANSWERS = itertools.cycle(["lol", "Paris", "4", "lol", "no"])


@register_model("cycle")
class CycleLM(DummyLM):
    def generate_until(self, requests, disable_tqdm: bool = False):
        return [next(_ANSWERS) for _ in requests]


if __name__ == "__main__":
    cli_evaluate()
