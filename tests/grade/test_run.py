"""run_judge / data.grade: the contract applied per row, results written back as columns."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import polars as pl
import pytest

from whileai import run_judge, table
from whileai.data import ScoredData, SimulationData
from whileai.errors import ArgumentError, EmptyInputError, JudgeError
from whileai.grade import attach_labels
from whileai.testing import rollout_table, scripted_judge


def _rows(n=6):
    return [{"scenario_id": f"t{i // 2}", "rollout_index": i % 2, "rollout_id": f"r{i}", "prompt": f"ask {i}",
             "final_text": f"reply {i}", "mode": m} for i, m in enumerate(
        ["num", "dict", "missing", "invalid", "raise", "range", "bool", "score"][:n])]


def _judge(row):
    mode = row["mode"]
    if mode == "num":
        return 1
    if mode == "dict":
        return {"reward": 0.0, "reason": "wrong", "markers": {"polite": 1}, "confidence": 0.7}
    if mode == "missing":
        return {"verdict": "pass"}
    if mode == "invalid":
        return "pass"
    if mode == "raise":
        raise RuntimeError("judge down")
    if mode == "range":
        return 2.0
    if mode == "bool":
        return True
    return {"score": 1}


def test_every_outcome_lands_as_columns():
    rows = _rows(8)
    before = json.dumps(rows, sort_keys=True)
    scored = run_judge(rows, _judge)
    assert json.dumps(rows, sort_keys=True) == before  # the input is not touched
    assert isinstance(scored, ScoredData)
    df = scored.df
    assert df["judge_status"].to_list() == ["ok", "ok", "missing_reward", "invalid_result", "error",
                                            "invalid_result", "ok", "ok"]
    assert df["reward"].to_list() == [1.0, 0.0, None, None, None, None, 1.0, 1.0]  # failures stay null, never 0
    assert df["judge_name"].unique().to_list() == ["_judge"]
    assert df["reason"][1] == "wrong" and "judge down" in df["reason"][4]
    metas = [json.loads(m) for m in df["judge_meta"].to_list()]
    assert metas[1] == {"confidence": 0.7, "trust": None}
    assert metas[2]["returned_keys"] == ["verdict"]
    assert metas[3]["returned_type"] == "str"
    assert metas[4]["error"] == "RuntimeError: judge down"
    assert metas[5]["reward_out_of_range"] == 2.0
    assert df["markers"].struct.field("polite").to_list() == [None, 1.0, None, None, None, None, None, None]
    rep = scored.report
    assert rep.counts == {"ok": 4, "missing_reward": 1, "invalid_result": 2, "error": 1, "timeout": 0}
    assert rep.n_graded == 4 and rep.n_rows == 8
    assert rep["counts"]["error"] == 1
    assert any("failed on 4 of 8 rows" in w for w in rep.warnings)
    assert "missing_reward 1" in str(rep)


def test_lineage_and_names():
    df = table.frame(rollout_table(3, 2, seed=1, eval_run=2))
    scored = run_judge(df, lambda row: 1, version="v7", run_id="score_fixed")
    lineage = scored.df["lineage"].struct.unnest()
    assert set(lineage.columns) >= {"eval_run", "source", "scoring_run_id", "judge", "judge_version"}
    assert lineage["eval_run"].to_list() == [2] * 6  # what was there is kept
    assert lineage["scoring_run_id"].unique().to_list() == ["score_fixed"]
    assert lineage["judge"].unique().to_list() == ["lambda_judge"]
    assert lineage["source"].unique().to_list() == ["grade"]
    assert scored.report.judge_name == "lambda_judge"
    auto = run_judge(df, lambda row: 1).report.scoring_run_id
    assert auto.startswith("score_") and len(auto) == len("score_") + 12
    assert run_judge(df, lambda row: 1, source="eval").df["lineage"].struct.field("source").unique().to_list() == ["eval"]


def test_markers_merge_with_existing():
    df = table.frame([{"scenario_id": "a", "prompt": "p", "markers": {"kept": 1.0, "both": 0.0}},
                      {"scenario_id": "b", "prompt": "q", "markers": {"kept": 0.0, "both": 1.0}}])
    scored = run_judge(df, lambda row: {"reward": 1, "markers": {"both": 0.5, "new": 1.0}} if row["scenario_id"] == "a"
                       else 1)
    m = scored.df["markers"].struct.unnest()
    assert m["kept"].to_list() == [1.0, 0.0]
    assert m["both"].to_list() == [0.5, 1.0]  # the judge's value where it gave one, the old one elsewhere
    assert m["new"].to_list() == [1.0, None]
    assert scored.report.markers == ["both", "new"]


def test_failure_class_and_extra_columns_flow_through():
    rows = [{"scenario_id": "a", "prompt": "p", "category": "billing"}]
    scored = run_judge(rows, lambda row: {"reward": 0, "failure_class": "invented_id"})
    assert scored.df["failure_class"].to_list() == ["invented_id"]
    assert scored.df["category"].to_list() == ["billing"]


def test_judge_sees_wire_rows():
    df = table.frame(rollout_table(4, 2, seed=3))
    seen = []
    run_judge(df, lambda row: seen.append(dict(row)) or 1)
    assert seen == table.rows(df)


def test_fluent_grade_carries_meta():
    df = table.frame(rollout_table(4, 2, seed=2))
    data = SimulationData(df, meta={"system_prompt": "Help.", "mode": "rl"}, warnings=["template writer"])
    scored = data.grade(judge=scripted_judge)
    assert isinstance(scored, ScoredData)
    assert scored.meta == {"system_prompt": "Help.", "mode": "rl"}
    assert "template writer" in scored.warnings
    assert scored.df["reward"].null_count() == 0
    assert data.grade(grader=scripted_judge).df["judge_name"][0] == "scripted_judge"


def test_quickstart_lambda():
    rows = [{"scenario_id": f"s{i}", "prompt": "x", "seeded": bool(i % 3 == 0)} for i in range(9)]
    scored = SimulationData(rows).grade(judge=lambda row: {"reward": int(not row["seeded"])})
    assert scored.df["reward"].to_list() == [0.0, 1.0, 1.0] * 3
    assert scored.report.judge_name == "lambda_judge"


def test_async_judge_runs_under_the_concurrency_limit():
    state = {"now": 0, "max": 0}

    async def judge(row):
        state["now"] += 1
        state["max"] = max(state["max"], state["now"])
        await asyncio.sleep(0.01)
        state["now"] -= 1
        return {"reward": row["rollout_index"] % 2}

    df = table.frame(rollout_table(10, 4, seed=0, messages=False))
    scored = run_judge(df, judge, concurrency=5)
    assert scored.report.mode == "async"
    assert state["max"] == 5
    assert scored.df["reward"].to_list() == [float(i % 2) for i in df["rollout_index"].to_list()]


def test_sync_judge_returning_a_coroutine_is_awaited():
    async def score(row):
        return 1

    scored = run_judge([{"prompt": "a"}, {"prompt": "b"}], lambda row: score(row))
    assert scored.df["reward"].to_list() == [1.0, 1.0]
    assert scored.report.mode == "async"


def test_slow_sync_judge_moves_to_workers():
    lock = threading.Lock()
    state = {"now": 0, "max": 0}

    def judge(row):
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.02)
        with lock:
            state["now"] -= 1
        return row["rollout_index"] / 10

    df = table.frame(rollout_table(10, 4, seed=0, messages=False))
    scored = run_judge(df, judge, concurrency=4)
    assert scored.report.mode == "threads"
    assert 2 <= state["max"] <= 4
    assert scored.df["reward"].to_list() == [i / 10 for i in df["rollout_index"].to_list()]


def test_fast_judge_runs_inline():
    scored = run_judge(table.frame(rollout_table(5, 2, seed=0)), lambda row: 1)
    assert scored.report.mode == "inline"


def test_timeout_marks_the_hung_row_and_goes_on():
    release = threading.Event()

    def judge(row):
        if row["prompt"] == "hang":
            release.wait(5)
        return 1

    rows = [{"prompt": p} for p in ["a", "hang", "b", "c"]]
    t0 = time.monotonic()
    scored = run_judge(rows, judge, timeout=0.3, concurrency=2)
    release.set()
    assert time.monotonic() - t0 < 3
    assert scored.df["judge_status"].to_list() == ["ok", "timeout", "ok", "ok"]
    assert scored.df["reward"].to_list() == [1.0, None, 1.0, 1.0]
    assert scored.report.counts["timeout"] == 1


def test_async_timeout():
    async def judge(row):
        await asyncio.sleep(2 if row["prompt"] == "slow" else 0)
        return 1

    scored = run_judge([{"prompt": "slow"}, {"prompt": "fast"}], judge, timeout=0.1)
    assert scored.df["judge_status"].to_list() == ["timeout", "ok"]


@pytest.mark.parametrize("kwargs,match", [
    ({"trust": "maybe"}, "trust must be one of"),
    ({"source": "train"}, "source must be one of"),
    ({"concurrency": 0}, "concurrency must be an integer"),
    ({"timeout": -1}, "timeout must be a positive"),
    ({"scale": (3, 1)}, "lo < hi"),
])
def test_bad_options(kwargs, match):
    with pytest.raises(ArgumentError, match=match):
        run_judge([{"prompt": "a"}], lambda row: 1, **kwargs)


def test_judge_not_callable():
    with pytest.raises(JudgeError, match="judge must be a callable taking a row dict, got str"):
        run_judge([{"prompt": "a"}], "gpt-4")
    with pytest.raises(JudgeError, match="got None"):
        SimulationData([{"prompt": "a"}]).grade()


def test_empty_input():
    with pytest.raises(EmptyInputError):
        run_judge([], lambda row: 1)


def _labeled(n_tasks=30, flip=0):
    df = table.frame(rollout_table(n_tasks, 4, seed=5, messages=False))
    gold = df["reward"].to_list()
    labels = {rid: (1 - g if i < flip else g) for i, (rid, g) in enumerate(zip(df["rollout_id"].to_list(), gold))}
    labeled, _ = attach_labels(df, labels)
    return labeled


def test_every_grade_ends_with_the_judge_check():
    labeled = _labeled()
    scored = run_judge(labeled, lambda row: row["reward"])  # agrees with the labels exactly
    trust = scored.report.trust
    assert trust["ok"] is True and trust["n_gold"] == labeled.height and trust["agreement"] == 1.0
    stamps = {m for m in scored.df["judge_meta"].to_list()}
    assert len(stamps) == 1 and json.loads(stamps.pop())["trust"] == trust
    assert "judge check: OK" in str(scored.report)


def test_trust_warn_require_off():
    labeled = _labeled()
    bad = lambda row: 1 - row["reward"]  # noqa: E731 - always wrong
    scored = run_judge(labeled, bad)
    assert scored.report.trust["ok"] is False
    assert any("judge check FAIL" in w and "floor" in w for w in scored.report.warnings)
    with pytest.raises(JudgeError, match="trust='require'"):
        run_judge(labeled, bad, trust="require")
    off = run_judge(labeled, bad, trust="off")
    assert off.report.trust is None
    assert off.df["judge_meta"].null_count() == off.df.height
    unlabeled = table.frame(rollout_table(3, 2, seed=1))
    with pytest.raises(JudgeError, match="not measured"):
        run_judge(unlabeled, lambda row: 1, trust="require")
    assert any("not measured" in w for w in run_judge(unlabeled, lambda row: 1).report.warnings)


def test_writes_columns_not_dicts(monkeypatch):
    # The grade must never rebuild the table from row dicts.
    import whileai.table._row_reader as read

    calls = []
    original = read._from_dicts
    monkeypatch.setattr(read, "_from_dicts", lambda *a, **k: calls.append(1) or original(*a, **k))
    run_judge(table.frame(rollout_table(5, 2, seed=0)), lambda row: 1)
    assert calls == []


def test_big_table_keeps_row_order_and_types():
    df = table.frame(rollout_table(500, 4, seed=9, messages=False))
    scored = run_judge(df, lambda row: row["rollout_index"] == 0)
    assert scored.df.height == df.height
    assert scored.df["reward"].to_list() == [1.0 if i == 0 else 0.0 for i in df["rollout_index"].to_list()]
    assert scored.df.schema["reward"] == pl.Float64


def test_bad_labels_do_not_void_the_grade():
    rows = [{"prompt": "a", "gold_reward": 0.5}, {"prompt": "b", "gold_reward": 1.0}]
    scored = run_judge(rows, lambda row: 1)
    assert scored.df["reward"].to_list() == [1.0, 1.0]
    assert any("judge check skipped: gold_reward must be 0 or 1, got 0.5" in w for w in scored.report.warnings)
    calls = []
    with pytest.raises(JudgeError, match="gold_reward must be 0 or 1"):
        run_judge(rows, lambda row: calls.append(1) or 1, trust="require")
    assert calls == []  # require checks the labels before calling the judge


def test_judge_can_be_named():
    from whileai.grade import judge_probes, judge_trust

    rows = [{"prompt": "a", "final_text": "x", "gold_reward": 1.0, "gold_kind": "human"}]
    assert run_judge(rows, judge=lambda row: 1).df["reward"][0] == 1.0
    scored = run_judge(rows, lambda row: 1)
    assert judge_trust(scored, judge=lambda row: 1).judge_name == "lambda_judge"
    assert judge_probes(scored, judge=lambda row: 1, probes=["refusal"]).n == 1
    assert attach_labels(rows, labels={"a": 1}).report.matched == 1
