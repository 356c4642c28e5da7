"""The judge contract: every return shape maps to the status table of whileai 0.131 section 2.2."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from whileai.errors import ArgumentError, JudgeError
from whileai.grade._contract import (
    check_judge,
    check_scale,
    error_verdict,
    judge_name_of,
    normalize_judge_result,
    timeout_verdict,
)


@pytest.mark.parametrize("raw,reward", [(0, 0.0), (1, 1.0), (True, 1.0), (False, 0.0), (0.25, 0.25),
                                        (np.float64(0.5), 0.5), (np.int64(1), 1.0), (np.bool_(True), 1.0),
                                        ({"reward": 1}, 1.0), ({"score": 1}, 1.0), ({"reward": True}, 1.0),
                                        ({"reward": 0.75, "reason": "ok"}, 0.75)])
def test_ok_returns(raw, reward):
    v = normalize_judge_result(raw)
    assert v.status == "ok" and v.reward == reward and isinstance(v.reward, float)


def test_dict_extras_markers_reason_failure_class():
    v = normalize_judge_result({"reward": 0, "reason": "wrong id", "markers": {"honest": 1, "grounded": None},
                                "failure_class": "invented_id", "confidence": 0.9,
                                "judge_meta": {"model": "m", "confidence": 0.8}})
    assert v.status == "ok" and v.reward == 0.0
    assert v.reason == "wrong id"
    assert v.markers == {"honest": 1.0, "grounded": None}
    assert v.failure_class == "invented_id"
    assert v.meta == {"confidence": 0.8, "model": "m"}  # nested judge_meta flattened, inner wins


def test_missing_reward():
    v = normalize_judge_result({"foo": 1})
    assert v.status == "missing_reward" and v.reward is None
    assert v.meta == {"foo": 1, "returned_keys": ["foo"]}
    assert normalize_judge_result({"reward": None, "reason": ""}).status == "missing_reward"


@pytest.mark.parametrize("raw,meta", [("abc", {"returned_type": "str"}), ("1", {"returned_type": "str"}),
                                      (None, {"returned_type": "NoneType"}), ([1], {"returned_type": "list"})])
def test_invalid_types(raw, meta):
    v = normalize_judge_result(raw)
    assert v.status == "invalid_result" and v.reward is None and v.meta == meta and v.reason


@pytest.mark.parametrize("raw", [2.0, -1, math.nan, math.inf])
def test_out_of_range(raw):
    v = normalize_judge_result(raw)
    assert v.status == "invalid_result" and v.reward is None
    assert "reward_out_of_range" in v.meta
    if not math.isnan(raw):
        assert v.meta["reward_out_of_range"] == raw


def test_bad_reward_type_and_markers():
    v = normalize_judge_result({"reward": "yes"})
    assert v.status == "invalid_result" and v.meta == {"reward_type": "str"}
    v = normalize_judge_result({"reward": 1, "markers": {"x": "high"}})
    assert v.status == "invalid_result" and v.reward is None and "markers_invalid" in v.meta
    v = normalize_judge_result({"reward": 1, "markers": [1, 2]})
    assert v.status == "invalid_result"


def test_scale():
    v = normalize_judge_result(4, scale=(1, 5))
    assert v.status == "ok" and v.reward == 0.75 and v.meta == {"rating": 4.0, "scale": [1.0, 5.0]}
    assert normalize_judge_result(5, scale=(1, 5)).reward == 1.0
    v = normalize_judge_result({"reward": 7}, scale=(1, 5))
    assert v.status == "invalid_result" and v.meta["reward_out_of_range"] == 7.0
    assert check_scale((1, 5)) == (1.0, 5.0)
    with pytest.raises(ArgumentError, match="lo < hi"):
        check_scale((5, 5))
    with pytest.raises(ArgumentError, match="pair"):
        check_scale("x")


def test_error_and_timeout_verdicts():
    v = error_verdict(RuntimeError("judge down"))
    assert v.status == "error" and v.reward is None and v.meta == {"error": "RuntimeError: judge down"}
    assert "judge down" in v.reason
    v = timeout_verdict(2.5)
    assert v.status == "timeout" and v.meta == {"timeout_s": 2.5}


def test_judge_names():
    def exact(row):
        return 1

    class Check:
        def __call__(self, row):
            return 1

    class Named:
        name = "mine"

        def __call__(self, row):
            return 1

    assert judge_name_of(lambda row: 1) == "lambda_judge"
    assert judge_name_of(exact) == "exact"
    assert judge_name_of(Check()) == "Check"
    assert judge_name_of(Named()) == "mine"
    assert judge_name_of(functools.partial(exact)) == "exact"
    assert judge_name_of(exact, "given") == "given"


@pytest.mark.parametrize("bad", [None, 3, "lambda row: 1", {"reward": 1}])
def test_not_callable(bad):
    with pytest.raises(JudgeError, match="judge must be a callable"):
        check_judge(bad)
