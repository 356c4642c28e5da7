"""Readers of other tools' files on shapes the fixtures in tests/data do not cover: openai/evals
model-graded logs, promptfoo test cases sharing a description, LangChain-serialised messages in
LangSmith runs, and vf-eval output folders."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from whileai import table


def by(df: pl.DataFrame, *cols: str) -> list[tuple]:
    return df.sort("task_key", "rollout_index").select(*cols).rows()


# --------------------------------------------------------------------------------------------
# openai/evals: a model-graded eval records the grader's sampling after the agent's
# --------------------------------------------------------------------------------------------


def _modelgraded_log(path: Path) -> Path:
    run = "240101000000ABCDEFGH"
    lines: list[dict] = [{"spec": {"completion_fns": ["gpt-3.5-turbo"], "eval_name": "joke-fruits.dev.v0",
                                   "run_config": {"eval_spec": {
                                       "cls": "evals.elsuite.modelgraded.classify:ModelBasedClassify"}},
                                   "run_id": run}}]
    event = 0
    for i, choice in enumerate(["N", "Y"]):
        sample = f"joke-fruits.dev.{i}"
        grader_prompt = ("Is the following funny?\n\n[BEGIN DATA]\n***\n[Joke]: joke " + str(i)
                         + "\n***\n[END DATA]\n\nAnswer using one of Y or N. Answer:")
        for kind, data in [
            ("sampling", {"prompt": [{"role": "user", "content": "tell a joke"}], "sampled": [f"joke {i}"],
                          "model": "gpt-3.5-turbo-0613"}),
            ("sampling", {"prompt": [{"role": "user", "content": grader_prompt}], "sampled": [choice],
                          "model": "gpt-4-0613"}),
            ("metrics", {"choice": choice, "score": 1.0 if choice == "Y" else 0.0}),
        ]:
            lines.append({"run_id": run, "event_id": event, "sample_id": sample, "type": kind, "data": data})
            event += 1
    lines.append({"final_report": {"counts/N": 1, "counts/Y": 1, "score": 0.5}, "run_id": run})
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def test_openai_evals_modelgraded_keeps_the_agents_conversation_not_the_graders(tmp_path):
    df = table.frame(_modelgraded_log(tmp_path / "events.jsonl"))
    assert by(df, "task_key", "final_text", "reward", "model_version") == [
        ("joke-fruits.dev.0", "joke 0", 0.0, "gpt-3.5-turbo-0613"),
        ("joke-fruits.dev.1", "joke 1", 1.0, "gpt-3.5-turbo-0613")]
    row = table.rows(df.sort("task_key"))[0]
    assert [(m["role"], m["content"]) for m in row["messages"]] == [("user", "tell a joke"), ("assistant", "joke 0")]
    # the grader's reply is the reason, its model the judge's
    assert (row["reason"], row["judge_meta"]) == ("N", {"grader_model": "gpt-4-0613"})


# --------------------------------------------------------------------------------------------
# promptfoo: test cases that share a description stay apart
# --------------------------------------------------------------------------------------------


def _promptfoo_results(path: Path, *, repeat: bool) -> Path:
    """Four "Basic test" cases run twice: by two providers (one testIdx each) or by --repeat 2 (a testIdx per copy)."""
    results = []
    for copy in range(2):
        for test in range(4):
            provider = "echo" if repeat else ["openai:gpt-4o-mini", "openai:gpt-4o"][copy]
            variables = {"city": ["Paris", "Rome", "Oslo", "Lima"][test]}
            results.append({
                "id": f"r-{copy}-{test}", "testIdx": test + 4 * copy if repeat else test, "promptIdx": 0,
                "promptId": "p1", "prompt": {"raw": f"Where is {variables['city']}?", "label": "Where is {{city}}?"},
                "provider": {"id": provider, "label": ""}, "vars": variables,
                "testCase": {"description": "Basic test", "vars": variables,
                             "assert": [{"type": "icontains", "value": variables["city"]}]},
                "response": {"output": f"{variables['city']} is a city."}, "score": 1, "success": True,
                "namedScores": {}, "gradingResult": {"pass": True, "score": 1, "reason": "All assertions passed"},
                "failureReason": 0})
    path.write_text(json.dumps({"evalId": "eval-abc-2024-01-01T00:00:00", "results": {
        "version": 3, "timestamp": "2024-01-01T00:00:00.000Z", "prompts": [], "results": results,
        "stats": {"successes": 8, "failures": 0, "errors": 0}}, "config": {}}, indent=2))
    return path


def test_promptfoo_tests_sharing_a_description_are_separate_tasks(tmp_path):
    for repeat in (False, True):
        df = table.frame(_promptfoo_results(tmp_path / f"results-{repeat}.json", repeat=repeat))
        assert df["task_key"].n_unique() == 4
        assert all(key.startswith("Basic test/t-") for key in df["task_key"])
        counts = df.group_by("task_key").agg(pl.col("rollout_index").sort(), pl.col("prompt").n_unique())
        assert counts["rollout_index"].to_list() == [[0, 1]] * 4
        assert counts["prompt"].to_list() == [1] * 4  # each task holds one test's two runs
    # both files name each test the same way, so their runs line up task by task
    assert set(table.frame(tmp_path / "results-False.json")["task_key"]) == set(
        table.frame(tmp_path / "results-True.json")["task_key"])


# --------------------------------------------------------------------------------------------
# LangSmith: messages serialised the LangChain way (LangGraph agents)
# --------------------------------------------------------------------------------------------


def _run(run_id: str, inputs: dict, outputs: dict) -> dict:
    return {"id": run_id, "name": "LangGraph", "run_type": "chain", "start_time": f"2024-01-01T00:00:0{run_id[-1]}",
            "inputs": inputs, "outputs": outputs, "error": None, "parent_run_id": None, "trace_id": run_id,
            "reference_example_id": "ex-1", "feedback_stats": {"correctness": {"n": 1, "avg": 1.0}},
            "extra": {"metadata": {"ls_model_name": "gpt-4o-mini"}}}


def _constructor(cls: str, **kwargs) -> dict:
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", cls], "kwargs": kwargs}


def test_langsmith_langchain_messages_become_the_conversation(tmp_path):
    human = {"content": "where is order A-17?", "additional_kwargs": {}, "response_metadata": {}, "type": "human",
             "name": None, "id": "m1", "example": False}
    call = {"content": "", "type": "ai", "id": "m2", "additional_kwargs": {}, "response_metadata": {},
            "tool_calls": [{"name": "get_order", "args": {"order_id": "A-17"}, "id": "call_1", "type": "tool_call"}],
            "invalid_tool_calls": []}
    result = {"content": "shipped", "type": "tool", "name": "get_order", "id": "m3", "tool_call_id": "call_1",
              "status": "success"}
    answer = {"content": "Order A-17 has shipped.", "type": "ai", "id": "m4", "tool_calls": [],
              "invalid_tool_calls": []}
    plain = _run("run-1", {"messages": [human]}, {"messages": [human, call, result, answer]})
    nested = _run("run-2", {"messages": [_constructor("HumanMessage", content="where is order A-17?", type="human")]},
                  {"messages": [
                      _constructor("HumanMessage", content="where is order A-17?", type="human"),
                      _constructor("AIMessage", content="", type="ai", tool_calls=call["tool_calls"]),
                      _constructor("ToolMessage", content="shipped", type="tool", name="get_order",
                                   tool_call_id="call_1"),
                      _constructor("AIMessage", content=[{"type": "text", "text": "Order A-17 has shipped."}],
                                   type="ai")]})
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (plain, nested)) + "\n")
    df = table.frame(path)
    assert by(df, "task_key", "rollout_index", "prompt", "final_text") == [
        ("ex-1", 0, "where is order A-17?", "Order A-17 has shipped."),
        ("ex-1", 1, "where is order A-17?", "Order A-17 has shipped.")]
    for row in table.rows(df):
        messages = row["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
        tool_call = messages[1]["tool_calls"][0]
        assert (tool_call["id"], tool_call["function"]["name"]) == ("call_1", "get_order")
        assert json.loads(tool_call["function"]["arguments"]) == {"order_id": "A-17"}
        assert (messages[2]["tool_call_id"], messages[2]["content"]) == ("call_1", "shipped")


# --------------------------------------------------------------------------------------------
# folders: vf-eval's metadata.json and hidden folders hold no rollouts
# --------------------------------------------------------------------------------------------


def _vf_eval_run(root: Path) -> Path:
    """What ``vf-eval -s`` writes: outputs/evals/<env>--<model>/<run id>/{results.jsonl, metadata.json}."""
    run = root / "outputs" / "evals" / "gsm8k--gpt-4.1-mini" / "a1b2c3d4"
    run.mkdir(parents=True)
    rows = [{"example_id": i // 2, "task": "gsm8k", "prompt": [{"role": "user", "content": f"q{i // 2}"}],
             "completion": [{"role": "assistant", "content": "4"}], "reward": 1.0, "info": {}} for i in range(4)]
    (run / "results.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return run


def test_vf_eval_output_folder_skips_its_metadata_json(tmp_path):
    run = _vf_eval_run(tmp_path)
    (run / "metadata.json").write_text(json.dumps({
        "env": "gsm8k", "model": "gpt-4.1-mini", "num_examples": 2, "rollouts_per_example": 2,
        "sampling_args": {"max_tokens": None}, "date": "2025-01-01", "time_ms": 1234.5, "avg_reward": 1.0,
        "avg_metrics": {"correct_answer_reward_func": 1.0}}, indent=2))
    df = table.frame(tmp_path / "outputs")
    assert by(df, "task_key", "rollout_index", "reward") == [
        ("gsm8k/0", 0, 1.0), ("gsm8k/0", 1, 1.0), ("gsm8k/1", 0, 1.0), ("gsm8k/1", 1, 1.0)]


def test_a_folder_skips_files_under_hidden_folders(tmp_path):
    _vf_eval_run(tmp_path)
    buffer = tmp_path / "outputs" / ".buffer" / "2025-01-01T00-00-00_task_abc"  # inspect_ai's sample buffer
    buffer.mkdir(parents=True)
    (buffer / "manifest.json").write_text(json.dumps({"metrics": [], "samples": []}, indent=2))
    assert table.frame(tmp_path / "outputs").height == 4
    # the folder named may itself sit under a hidden folder: only the parts below it count
    hidden = tmp_path / ".runs"
    _vf_eval_run(hidden)
    assert table.frame(hidden / "outputs").height == 4


def test_a_pandas_frame_keyed_by_its_index_keeps_the_key():
    """set_index('scenario_id') dropped the key in memory (2 tasks read as 1), where df.to_parquet() keeps it."""
    pd = pytest.importorskip("pandas", reason="pandas is not installed")
    import whileai as wai

    df = pd.DataFrame({"scenario_id": ["a", "a", "b", "b"], "prompt": ["same"] * 4,
                       "reward": [1.0, 1.0, 0.0, 0.0]}).set_index("scenario_id")
    assert wai.pass_at(df, k=2).n_tasks == 2
    assert table.frame(df)["scenario_id"].to_list() == ["a", "a", "b", "b"]
    plain = pd.DataFrame({"scenario_id": ["a", "b"], "reward": [1.0, 0.0]})  # a default RangeIndex stays out
    assert "index" not in table.frame(plain).columns and table.frame(plain).width == 3


def _lm_sample(doc_id, value, **extra):
    return {"doc_id": doc_id, "doc": {"question": f"Q{doc_id}"}, "target": "4",
            "arguments": {"gen_args_0": {"arg_0": f"Question: Q{doc_id}\nAnswer:", "arg_1": {"until": ["Question:"]}}},
            "resps": [["The answer is 4."]], "filtered_resps": ["4"], "exact_match": value, **extra}


def test_lm_eval_0_4_0_samples_and_a_renamed_samples_file_are_read(tmp_path):
    """lm-eval 0.4.0-0.4.2 wrote --log_samples as one pretty-printed JSON array named
    <model args>_<task>.jsonl, with no 'metrics' list ('got no rows'); a renamed samples file was
    refused ('must be named samples_<task>_<date>.jsonl, got that name')."""
    old = tmp_path / "pretrained__gpt2_gsm8k.jsonl"
    old.write_text(json.dumps([_lm_sample(i, float(i % 2)) for i in range(4)], indent=2))
    df = table.frame(old)
    assert df["reward"].to_list() == [0.0, 1.0, 0.0, 1.0] and df["judge_name"].unique().to_list() == ["exact_match"]
    assert df["scenario_id"].to_list() == [f"pretrained__gpt2_gsm8k/{i}" for i in range(4)]
    assert df["prompt"][0] == "Question: Q0\nAnswer:"
    new = [_lm_sample(i, float(i % 2), metrics=["exact_match"], filter="strict-match") for i in range(4)]
    named = tmp_path / "samples_gsm8k_2024-06-28T11-20-33.520918.jsonl"
    named.write_text("".join(json.dumps(r) + "\n" for r in new))
    renamed = tmp_path / "gsm8k_samples.jsonl"
    renamed.write_text(named.read_text())
    assert table.frame(renamed)["reward"].to_list() == table.frame(named)["reward"].to_list() == [0.0, 1.0, 0.0, 1.0]
    assert table.frame(named)["scenario_id"][0] == "gsm8k/0" and table.frame(renamed)["scenario_id"][0] == "gsm8k_samples/0"
