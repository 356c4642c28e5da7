"""The inspect_ai log reader: a hand-made log that follows inspect's schema, and real logs
written by inspect_ai itself (offline, with its mockllm model) when the extra is installed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from whileai import table
from whileai.errors import SchemaError
from whileai.table._inspect import read_inspect_log, score_to_reward

FIXTURE = Path(__file__).parent.parent / "data" / "inspect" / "hand_made_log.json"


def test_letter_grades_and_numbers():
    assert [score_to_reward(v) for v in ("C", "I", "P", "N", "c")] == [1.0, 0.0, 0.5, 0.0, 1.0]
    assert [score_to_reward(v) for v in (True, False, 3, 0.25, " 0.5 ")] == [1.0, 0.0, 3.0, 0.25, 0.5]
    assert [score_to_reward(v) for v in ("yes", [1, 0], {"a": 1}, None)] == [None, None, None, None]


def test_hand_made_log_rows():
    df = table.frame(FIXTURE)
    assert df.height == 6
    # a sample of the inspect task is a task, its epochs are the rollouts, in the dataset's sample order
    assert df.select("task_key", "rollout_index").rows() == [
        ("refunds/1", 0), ("refunds/1", 1), ("refunds/2", 0), ("refunds/2", 1), ("refunds/three", 0),
        ("refunds/three", 1)]
    assert df["sample_id"].to_list() == ["1", "1", "2", "2", "three", "three"]
    assert df["reward"].to_list() == [1.0, 0.0, 0.5, 0.0, None, 0.25]
    # the errored sample is the agent's or harness's failure, not the judge's
    assert df["judge_status"].to_list() == ["ok", "ok", "ok", "ok", "agent_error", "ok"]
    assert df["judge_name"].to_list() == ["match"] * 4 + [None, "match"]
    assert df["truncated"].to_list() == [False, False, False, True, False, False]
    assert df["finish_reason"].to_list() == ["stop", "stop", "stop", "length", "error", "stop"]
    assert df["rollout_id"].to_list() == ["u-1-1", "u-1-2", "u-2-1", "u-2-2", "u-3-1", "u-3-2"]
    assert df["model_version"].unique().to_list() == ["openai/gpt-4o-mini"]
    # the other scorer lands on markers
    assert df["markers"].struct.field("politeness").to_list() == [0.8, 0.6, 0.9, 1.0, None, None]
    rows = table.rows(df)
    assert rows[0]["reason"] == "matched 'shipped'"
    assert rows[0]["judge_meta"] == {"answer": "shipped", "value": "C"}
    assert rows[4]["judge_meta"] == {"error": "RuntimeError('model endpoint down')"}
    assert rows[0]["lineage"] == {"source": "inspect_ai", "log": str(FIXTURE), "task": "refunds", "task_version": "0",
                                  "run_id": "R1", "eval_id": "E1"}
    assert rows[2]["metadata"] == {"tier": "boundary"}


def test_hand_made_log_messages_and_tool_calls():
    rows = table.rows(table.frame(FIXTURE))
    first = rows[0]["messages"]
    assert [m["role"] for m in first] == ["user", "assistant", "tool", "assistant"]
    call = first[1]["tool_calls"][0]
    assert call["id"] == "call_1" and call["function"]["name"] == "get_order"
    assert json.loads(call["function"]["arguments"]) == {"order_id": "A-17"}
    assert first[2]["tool_call_id"] == "call_1" and first[2]["name"] == "get_order"
    assert rows[0]["final_text"] == "Order A-17 has shipped."
    assert rows[0]["prompt"] == "Where is order A-17?"
    # reasoning parts are split from the text
    assert rows[1]["messages"][1]["content"] == "I am not sure."
    assert rows[1]["messages"][1]["reasoning_content"] == "The user wants a status."
    # attachment references are resolved, system prompts found
    assert rows[2]["prompt"] == "Please refund order A-17, it arrived broken."
    assert rows[2]["system_prompt"] == "Help customers with orders."
    assert rows[2]["target"] == ["Refund issued", "refunded"]
    assert rows[0]["target"] == ["shipped"]


def test_scorer_can_be_chosen():
    rows = read_inspect_log(FIXTURE, scorer="politeness")
    assert [r["reward"] for r in rows[:4]] == [0.8, 0.6, 0.9, 1.0]
    assert rows[0]["markers"] == {"match": 1.0}


def test_not_an_inspect_log(tmp_path):
    bad = tmp_path / "x.eval"
    bad.write_bytes(b"not a zip")
    with pytest.raises(SchemaError, match="not a readable .eval log"):
        table.frame(bad)
    broken = tmp_path / "log.json"
    broken.write_text('{"version": 2, "eval": {"task": "t"}, "samples": [{"epoch": 1, "input": "hi"}]}')
    with pytest.raises(SchemaError, match="sample 0 has no id"):
        table.frame(broken)


# --------------------------------------------------------------------------------------------
# real logs written by inspect_ai (when it is installed: pip install inspect-ai)
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def inspect_logs(tmp_path_factory):
    pytest.importorskip("inspect_ai")
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.log import write_eval_log
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import tool

    @tool
    def get_order():
        async def execute(order_id: str):
            """Look up an order by id.

            Args:
                order_id: The order id.
            """
            return {"order_id": order_id, "status": "shipped"}

        return execute

    def usage(output):
        # token usage given up front, so mockllm does not fetch a tokenizer (offline)
        output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        return output

    script = []
    for _ in range(3):
        script += [
            ModelOutput.for_tool_call(model="mockllm/model", tool_name="get_order", tool_arguments={"order_id": "A-17"}),
            ModelOutput.from_content(model="mockllm/model", content="Order A-17 has shipped."),
            ModelOutput.from_content(model="mockllm/model", content="Hello there."),
        ]
    task = Task(
        dataset=[Sample(id="where", input="Where is order A-17?", target="shipped"),
                 Sample(id="greet", input="Say hello", target="hello", metadata={"tier": "ordinary"})],
        solver=[use_tools(get_order()), generate()],
        scorer=includes(),
        epochs=3,
    )
    log_dir = tmp_path_factory.mktemp("inspect_logs")
    model = get_model("mockllm/model", custom_outputs=[usage(o) for o in script])
    [log] = inspect_eval(task, model=model, log_dir=str(log_dir), log_format="eval", display="none", max_samples=1)
    assert log.status == "success", log.error
    json_path = log_dir / "same.json"
    write_eval_log(log, str(json_path))
    return Path(log.location), json_path


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("which", [0, 1], ids=["eval", "json"])
def test_real_inspect_log_matches_inspect_reading_it(inspect_logs, which):
    from inspect_ai.log import read_eval_log

    path = inspect_logs[which]
    log = read_eval_log(str(path))
    df = table.frame(path)
    assert df.height == len(log.samples) == 6
    task = log.eval.task
    assert sorted(df["task_key"].unique()) == [f"{task}/greet", f"{task}/where"]
    assert sorted(df.filter(df["task_key"] == f"{task}/where")["rollout_index"]) == [0, 1, 2]
    by_key = {(r["sample_id"], r["rollout_index"]): r for r in table.rows(df)}
    for sample in log.samples:
        row = by_key[(str(sample.id), sample.epoch - 1)]
        assert row["reward"] == {"C": 1.0, "I": 0.0}[sample.scores["includes"].value]
        assert row["judge_name"] == "includes"
        assert [m["role"] for m in row["messages"]] == [m.role for m in sample.messages]
        theirs = [(c.function, c.arguments) for m in sample.messages if m.role == "assistant" for c in m.tool_calls or []]
        ours = [(c["function"]["name"], json.loads(c["function"]["arguments"]))
                for m in row["messages"] if m["role"] == "assistant" for c in m.get("tool_calls", [])]
        assert ours == theirs
        assert row["final_text"] == sample.output.completion
    assert df["reward"].null_count() == 0
