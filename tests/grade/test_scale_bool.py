"""A boolean verdict is a pass or a fail whatever ``scale=`` says: scale maps ratings only."""

from __future__ import annotations

import numpy as np
import pytest

import whileai as wai
from whileai.grade._contract import normalize_judge_result

ROWS = [{"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]}]


@pytest.mark.parametrize("raw,reward", [(True, 1.0), (False, 0.0), (np.bool_(True), 1.0), (np.bool_(False), 0.0),
                                        ({"reward": True}, 1.0), ({"reward": False, "reason": "no"}, 0.0),
                                        ({"score": True}, 1.0)])
def test_a_bool_is_one_or_zero_under_a_scale(raw, reward):
    v = normalize_judge_result(raw, scale=(1, 5))
    assert v.status == "ok" and v.reward == reward and isinstance(v.reward, float)


def test_ratings_are_still_mapped_under_a_scale():
    assert normalize_judge_result(5, scale=(1, 5)).reward == 1.0
    assert normalize_judge_result(1, scale=(1, 5)).reward == 0.0
    assert normalize_judge_result(3.0, scale=(1, 5)).reward == 0.5
    assert normalize_judge_result(0, scale=(1, 5)).status == "invalid_result"


@pytest.mark.parametrize("verdict,reward", [(True, 1.0), (False, 0.0)])
def test_run_judge_with_a_scale_reads_a_bool_as_pass_or_fail(verdict, reward):
    scored = wai.run_judge(ROWS, lambda row: verdict, scale=(1, 5))
    assert scored.df["judge_status"].to_list() == ["ok"]
    assert scored.df["reward"].to_list() == [reward]
