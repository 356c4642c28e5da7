"""TrainResult.holdout is typed (HeldOutRates or HeldOutNumbers) and dumps the JSON the dict did (no torch needed).

The literals below are what the code before the block was typed wrote for the same inputs
(``holdout_delta`` on the fake samples below, ``_pair_block(0.5, 0.75, 8)`` with ``on``, the SFT
loss block), pinned by running it; the legacy ones are what results stored before the held-out
block took one shape hold.
"""

from __future__ import annotations

import json
import warnings

import pytest

import whileai.train._holdout as holdout_module
from whileai.measure import HOLDOUT_KEYS
from whileai.train._result import HeldOutNumbers, HeldOutRates, HeldOutSide, TrainResult
from whileai.train._reward import trl_reward
from whileai.train._trainers import _loss_block, _pair_block

RATES = ('{"metric": "pass_at_1", "before": {"pass_rate": 0.2916666666666667, "n_tasks": 12, "k": 2, "ci95": '
         '[0.14317391097259324, 0.503642067099474]}, "after": {"pass_rate": 0.6666666666666666, "n_tasks": 12, "k": 2, '
         '"ci95": [0.4555258822262469, 0.8270213353160991]}, "delta": 0.375, "ci95": [0.0584358082359846, 0.625], '
         '"verdict": "moved_unreplicated", "judge": "gold", "headline": "PASS (UNREPLICATED: one eval run a side and no '
         'noise floor, so this could be eval noise)", "judge_errors": 0}')
PAIRS = ('{"metric": "pair_accuracy", "before": {"pass_rate": 0.5, "n_tasks": 8, "k": 1, "ci95": [0.21521606221387762, '
         '0.7847839377861223]}, "after": {"pass_rate": 0.75, "n_tasks": 8, "k": 1, "ci95": [0.409275430310169, '
         '0.928520787247891]}, "delta": 0.25, "ci95": null, "verdict": null, "on": "holdout"}')
LOSS = '{"metric": "loss", "before": 2.5, "after": 1.25, "delta": -1.25, "lower_is_better": true, "n": 6}'
# what an earlier version stored: pass@1 and pair accuracy as bare numbers
LEGACY_RATES = ('{"metric": "pass_at_1", "judge": "gold", "n_tasks": 12, "k": 4, "before": 0.25, "after": 0.5, '
                '"delta": 0.25, "ci95": [0.05, 0.45], "verdict": "moved", "headline": "PASS", "judge_errors": 1}')
LEGACY_PAIRS = '{"metric": "pair_accuracy", "before": 0.5, "after": 0.75, "delta": 0.25, "n_pairs": 8, "on": "train"}'


def _judge(row):
    return {"reward": float("fix" in row["final_text"])}


def _samples(texts):
    return [{"scenario_id": f"t{i}", "rollout_index": j, "prompt": "hi", "final_text": texts[(i * 2 + j) % len(texts)],
             "n_tokens": 3, "messages": []} for i in range(12) for j in range(2)]


def _rates(monkeypatch) -> HeldOutRates:
    before = holdout_module.grade_rows(trl_reward(_judge, name="gold"), _samples(["no", "fix it", "no", "no", "fix", "no", "no"]))
    monkeypatch.setattr(holdout_module, "sample_rows", lambda *a, **k: _samples(["fix", "fix it", "nope"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return holdout_module.holdout_delta(None, trl_reward(_judge, name="gold"), before, None, None, seed=0,
                                            max_new_tokens=4, run=None)


def _dumped(held) -> str:
    """The block as TrainResult.to_json and model_dump_json write it, in json.dumps's spacing."""
    result = TrainResult(method="sft", holdout=held)
    via_dump = json.loads(result.model_dump_json())["holdout"]
    assert json.dumps(via_dump) == json.dumps(json.loads(result.to_json())["holdout"])
    return json.dumps(via_dump)


def test_each_producer_dumps_what_the_dict_was(monkeypatch):
    rates = _rates(monkeypatch)
    pairs = _pair_block(0.5, 0.75, 8, on="holdout")
    loss = _loss_block(2.5, 1.25, 6)
    assert isinstance(rates, HeldOutRates) and isinstance(rates.after, HeldOutSide)
    assert isinstance(pairs, HeldOutRates) and isinstance(loss, HeldOutNumbers)
    for held, old in ((rates, RATES), (pairs, PAIRS), (loss, LOSS)):
        assert _dumped(held) == old  # same keys, same order, same values
        assert held == json.loads(old)  # still compares equal to the dict it replaced


@pytest.mark.parametrize("stored", [RATES, PAIRS, LOSS, LEGACY_RATES, LEGACY_PAIRS])
def test_a_stored_result_loads_and_dumps_the_same_json(stored):
    text = TrainResult(method="rm").model_dump_json().replace('"holdout":null', f'"holdout":{json.dumps(json.loads(stored), separators=(",", ":"))}')
    back = TrainResult.model_validate_json(text)
    assert back.model_dump_json() == text
    assert isinstance(back.holdout, HeldOutRates if '"before": {' in stored else HeldOutNumbers)


def test_old_reads_still_read_and_the_summary_keeps_its_shape(monkeypatch):
    rates = _rates(monkeypatch)
    assert rates["after"]["pass_rate"] == rates.after.pass_rate and rates.get("verdict") == "moved_unreplicated"
    assert "on" not in rates and _pair_block(0.5, 0.75, 8, on="train")["on"] == "train"
    # the run summary's holdout: what the trainers and the callback wrote from the dict ({k: block.get(k) ...})
    for held, old in ((rates, RATES), (_loss_block(2.5, 1.25, 6), LOSS)):
        was = json.loads(old)
        assert json.dumps(holdout_module.summary_holdout(held)) == json.dumps({k: was.get(k) for k in HOLDOUT_KEYS})
    text = TrainResult(method="sft", holdout=rates).render()
    assert "held-out pass_at_1: 0.292 -> 0.667, moved_unreplicated" in text
    assert "held-out loss: 2.500 -> 1.250" in TrainResult(method="sft", holdout=_loss_block(2.5, 1.25, 6)).render()
    assert "held-out pass_at_1: 0.250 -> 0.500, moved" in TrainResult.model_validate({"holdout": json.loads(LEGACY_RATES)}).render()


def test_the_reward_models_typed_block_posts_its_after_side():
    posted = []

    class Run:
        def score(self, behavior, value, **kw):
            posted.append((behavior, value, kw))

    block = _pair_block(0.5, 0.75, 8, on="holdout")
    holdout_module.post_holdout(Run(), None, None, block, behavior="holdout_pair_accuracy")
    ((behavior, value, kw),) = posted
    lo, hi = block.after.ci95
    assert behavior == "holdout_pair_accuracy" and value == 0.75 and kw["n"] == 8 and kw["fraction"] is True
    assert kw["ci"] == pytest.approx(max(0.75 - lo, hi - 0.75))
