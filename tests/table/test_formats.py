"""Files other tools wrote, read by ``frame``: each reader on a file the real tool wrote
(tests/data/<tool>/README.md says how each was made), plus hand-made edge cases."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from whileai import table
from whileai.errors import InputFileError, SchemaError
from whileai.measure import pass_at

DATA = Path(__file__).parent.parent / "data"
ORDERS = DATA / "inspect" / "orders.eval"
GREETINGS = DATA / "inspect" / "greetings.json"
LM_RUN = DATA / "lm_eval" / "run"


def by(df: pl.DataFrame, *cols: str) -> list[tuple]:
    return df.sort("task_key", "rollout_index").select(*cols).rows()


# --------------------------------------------------------------------------------------------
# inspect_ai 0.3.285 (tests/data/inspect/make_logs.py)
# --------------------------------------------------------------------------------------------


def test_two_inspect_tasks_with_the_same_sample_ids_stay_six_tasks(tmp_path):
    df = table.frame([ORDERS, GREETINGS])
    assert df.height == 12
    assert sorted(df["task_key"].unique()) == [f"{t}/{i}" for t in ("greetings", "orders") for i in (1, 2, 3)]
    assert sorted(df["sample_id"].unique()) == ["1", "2", "3"]
    # a folder of logs and several FILE arguments read the same table
    folder = tmp_path / "logs"
    folder.mkdir()
    for log in (ORDERS, GREETINGS):
        (folder / log.name).write_bytes(log.read_bytes())
    (folder / "logs.json").write_text("{}")  # inspect's listing of a log folder is not a log
    same = table.frame(folder)
    assert by(same, "task_key", "rollout_index", "reward") == by(df, "task_key", "rollout_index", "reward")


def test_an_inspect_eval_set_folder_skips_its_manifests():
    """A real ``inspect eval-set`` folder (tests/data/inspect/make_eval_set.py): eval-set.json and logs.json beside the logs.

    inspect's own reader (eval_set_counts.json) counts 6 samples in each of two logs of 3-sample
    datasets; the manifests were read as 2 more rows and 2 more tasks before they were skipped.
    """
    folder = DATA / "inspect" / "eval_set"
    counts = json.loads((DATA / "inspect" / "eval_set_counts.json").read_text())
    assert {"eval-set.json", "logs.json"} <= set(counts["files"])
    df = table.frame(folder)
    assert df.height == sum(log["samples"] for log in counts["logs"].values()) == 12
    assert df["task_key"].n_unique() == sum(log["dataset"] for log in counts["logs"].values()) == 6
    assert sorted(df["task_key"].unique()) == [f"{t}/{i}" for t in ("alpha", "beta") for i in (1, 2, 3)]


def test_inspect_dict_scores_become_markers_and_the_headline_key_the_reward():
    df = table.frame(ORDERS)
    # the log's headline score is the dict scorer's first key (results.scores[0]: rubric / correct)
    assert df["judge_name"].unique().to_list() == ["rubric.correct"]
    assert {f.name for f in df.schema["markers"].fields} == {"rubric.polite", "includes"}
    rows = {(r["sample_id"], r["rollout_index"]): r for r in table.rows(df)}
    assert rows[("1", 0)]["reward"] == 1.0 and rows[("1", 0)]["markers"] == {"rubric.polite": 1.0, "includes": 1.0}
    assert rows[("2", 0)]["markers"]["rubric.polite"] == 0.0
    # the grader's explanation is kept, the other scorers' too
    assert rows[("1", 0)]["reason"] == "looked for ['shipped'] in 'Order A-17 has shipped, thank you.'"
    assert rows[("1", 0)]["judge_meta"]["explanations"]["includes"] == "Order A-17 has shipped, thank you."


@pytest.mark.parametrize(("scorer", "name", "rewards"), [
    ("includes", "includes", [1.0] * 6),
    ("rubric.polite", "rubric.polite", [1.0, 1.0, 0.0, 0.0, 1.0, 1.0]),
])
def test_inspect_scorer_chooses_the_reward(scorer, name, rewards):
    df = table.frame(ORDERS, scorer=scorer)
    assert df["judge_name"].unique().to_list() == [name]
    assert df.sort("task_key", "rollout_index")["reward"].to_list() == rewards
    assert name not in {f.name for f in df.schema["markers"].fields}


def test_inspect_unknown_scorer_is_refused():
    with pytest.raises(SchemaError, match=r"scorer must be one of the log's scorers \['includes', 'rubric\.correct', 'rubric\.polite'\]"):
        table.frame(ORDERS, scorer="politeness")


def test_inspect_tool_error_text_and_tool_definitions():
    rows = {(r["sample_id"], r["rollout_index"]): r for r in table.rows(table.frame(ORDERS))}
    tool = [m for m in rows[("2", 0)]["messages"] if m["role"] == "tool"][0]
    assert tool["content"] == "Error: order B-0 is not in the system"
    assert tool["error"]["message"] == "order B-0 is not in the system"
    ok = [m for m in rows[("1", 0)]["messages"] if m["role"] == "tool"][0]
    assert "shipped" in ok["content"] and "error" not in ok
    [spec] = rows[("1", 0)]["tools"]
    assert spec["type"] == "function" and spec["function"]["name"] == "get_order"
    assert spec["function"]["parameters"]["required"] == ["order_id"]
    assert spec["function"]["description"] == "Look up an order by id."


def test_inspect_sample_error_is_an_agent_error_not_a_judge_failure():
    df = table.frame(GREETINGS)
    bad = df.filter(pl.col("sample_id") == "3")
    assert bad["judge_status"].to_list() == ["agent_error", "agent_error"]
    assert bad["finish_reason"].to_list() == ["error", "error"]
    assert table.rows(bad)[0]["judge_meta"]["error"] == "RuntimeError('the harness lost the sandbox')"
    report = pass_at(df)
    text = " ".join(report.warnings)
    assert "2 row(s) ended in an agent or harness error" in text
    assert "Re-run the judge" not in text


def test_the_judge_failure_warning_stays_for_judge_failures():
    rows = [{"scenario_id": f"t{i}", "prompt": "q", "reward": None if i == 0 else 1.0,
             "judge_status": "error" if i == 0 else "ok"} for i in range(6)]
    text = " ".join(pass_at(rows).warnings)
    assert "the judge failed on 1 row(s)" in text and "agent or harness" not in text


# --------------------------------------------------------------------------------------------
# lm-evaluation-harness 0.4.13 (tests/data/lm_eval/make_samples.py)
# --------------------------------------------------------------------------------------------


def test_lm_eval_run_folder():
    df = table.frame(LM_RUN)
    assert df.height == 16  # 4 multiple-choice docs + 4 generation docs x repeats: 3
    assert sorted(df["task_key"].unique()) == [f"{t}/{d}" for t in ("wai_gen", "wai_mc") for d in range(4)]
    assert df["model_version"].unique().to_list() == ["cycle"]
    samples = [json.loads(line) for line in next(LM_RUN.glob("samples_wai_gen_*.jsonl")).read_text().splitlines()]
    gen = df.filter(pl.col("lineage").struct.field("task") == "wai_gen").sort("task_id", "rollout_index")
    for doc in samples:
        mine = gen.filter(pl.col("task_id") == str(doc["doc_id"]))
        assert mine["final_text"].to_list() == doc["resps"][0]  # each repeat is a rollout
        # each repeat scored on its own with exact_match (no options in the task config: plain equality)
        assert mine["reward"].to_list() == [float(r == doc["target"]) for r in doc["resps"][0]]
        assert mine["reward"][0] == doc["exact_match"]  # the response lm-eval scored: lm-eval's own score
    mc = [json.loads(line) for line in next(LM_RUN.glob("samples_wai_mc_*.jsonl")).read_text().splitlines()]
    mine = df.filter(pl.col("lineage").struct.field("task") == "wai_mc").sort("task_id")
    assert mine["reward"].to_list() == [d["acc"] for d in mc]
    assert mine["markers"].struct.field("acc_norm").to_list() == [d["acc_norm"] for d in mc]
    # the reply is the choice with the highest log-likelihood
    for doc, reply in zip(mc, mine["final_text"].to_list()):
        lls = [float(r[0][0]) for r in doc["resps"]]
        assert reply == doc["doc"]["choices"][lls.index(max(lls))]


def test_lm_eval_repeats_give_pass_at_k_from_every_repeat():
    """lm-eval's own exact_match,none (0.25, the first response per doc) beside pass@1/pass@3/pass^3 of all repeats."""
    results = json.loads(next(LM_RUN.glob("results_*.json")).read_text())
    gen = table.frame(LM_RUN).filter(pl.col("lineage").struct.field("task") == "wai_gen")
    first = gen.filter(pl.col("rollout_index") == 0)["reward"].mean()
    assert first == results["results"]["wai_gen"]["exact_match,none"] == 0.25
    report = pass_at(gen, k=3)
    # by enumeration over the 4 docs' 3 responses: passes 1, 0, 1, 1
    assert report.pass_at_1 == pytest.approx(3 / 12)
    assert report.pass_at_k == pytest.approx(3 / 4) and report.pass_pow_k == 0.0


def _lm_gen_copy(tmp_path: Path, edit: Any) -> Path:
    """The wai_gen samples file (with its results file) under tmp_path, each line passed through ``edit``."""
    folder = tmp_path / "run"
    folder.mkdir()
    source = next(LM_RUN.glob("samples_wai_gen_*.jsonl"))
    lines = [edit(json.loads(line)) for line in source.read_text().splitlines()]
    (folder / source.name).write_text("".join(json.dumps(x) + "\n" for x in lines if x is not None))
    return folder / source.name


def test_lm_eval_repeats_under_another_filter_are_one_score_per_document(tmp_path):
    """A filter that changes what is scored (here a majority vote): one rollout per doc, said plainly."""
    path = _lm_gen_copy(tmp_path, lambda d: {**d, "filter": "maj@3"})
    with pytest.warns(UserWarning, match=r"one score per document.*pass@k and pass\^k for k > 1 cannot be read"):
        df = table.frame(path)
    assert df.height == 4 and df["rollout_index"].to_list() == [0] * 4
    assert df["final_text"].to_list() == ["lol", "lol", "Paris", "no"]  # the filtered (scored) responses
    with pytest.warns(UserWarning, match="one score per document"):
        report = pass_at(path, k=3)
    assert math.isnan(report.pass_at_k) and "more than any task's graded rollouts (the most is 1)" in report.warnings[0]


def test_lm_eval_exact_match_options_come_from_the_run_config(tmp_path):
    """ignore_case from metric_list: 'LOL' passes against 'lol' as lm-eval scored it; the first repeat checks it."""
    path = _lm_gen_copy(tmp_path, lambda d: {**d, "resps": [[r.upper() for r in d["resps"][0]]],
                                             "filtered_resps": [d["filtered_resps"][0].upper()]})
    results = json.loads(next(LM_RUN.glob("results_*.json")).read_text())
    results["configs"]["wai_gen"]["metric_list"] = [{"metric": "exact_match", "ignore_case": True}]
    (path.parent / next(LM_RUN.glob("results_*.json")).name).write_text(json.dumps(results))
    df = table.frame(path).sort("task_id", "rollout_index")
    assert df["reward"].to_list() == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0]
    # without the option the recomputed first score (0.0 for 'LOL') disagrees with lm-eval's 1.0: refused per repeat
    (path.parent / next(LM_RUN.glob("results_*.json")).name).unlink()
    with pytest.warns(UserWarning, match="one score per document"):
        assert table.frame(path).height == 4


def test_lm_eval_a_doc_id_listed_twice_is_refused(tmp_path):
    path = _lm_gen_copy(tmp_path, lambda d: d)
    path.write_text(path.read_text() + path.read_text().splitlines()[1] + "\n")
    with pytest.raises(SchemaError, match="lists doc_id 1 more than once under filter 'none'"):
        table.frame(path)


def test_lm_eval_results_file_and_samples_file_alone(tmp_path):
    results = next(LM_RUN.glob("results_*.json"))
    assert table.frame(results).height == 16
    one = table.frame(next(LM_RUN.glob("samples_wai_mc_*.jsonl")))
    assert one.height == 4 and one["model_version"].null_count() == 4
    # scorer= and mapping= reach the other metric
    assert table.frame(LM_RUN, scorer="acc_norm").filter(pl.col("judge_name") == "acc_norm").height == 4
    alone = tmp_path / results.name
    alone.write_bytes(results.read_bytes())
    with pytest.raises(SchemaError, match="holds lm-eval aggregates only"):
        table.frame(alone)


def test_a_renamed_lm_eval_samples_file_takes_its_stem_as_the_task(tmp_path):
    """It was refused ('must be named samples_<task>_<date>.jsonl'); the rows are the same, keyed by the stem."""
    original = next(LM_RUN.glob("samples_wai_mc_*.jsonl"))
    renamed = tmp_path / "mine.jsonl"
    renamed.write_bytes(original.read_bytes())
    got, want = table.frame(renamed), table.frame(original)
    assert got["reward"].to_list() == want["reward"].to_list()
    assert got["scenario_id"].to_list() == [s.replace("wai_mc/", "mine/", 1) for s in want["scenario_id"].to_list()]


# --------------------------------------------------------------------------------------------
# promptfoo 0.121.20, openai/evals 3.0.1, LangSmith, Braintrust, verifiers 0.1.14
# --------------------------------------------------------------------------------------------


def test_promptfoo_results_json():
    path = DATA / "promptfoo" / "results.json"
    df = table.frame(path)
    raw = json.loads(path.read_text())["results"]["results"]
    assert df.height == len(raw) == 6
    assert by(df, "task_key", "rollout_index", "reward") == [
        ("arithmetic", 0, 0.0), ("arithmetic", 1, 0.0), ("capital", 0, 1.0), ("capital", 1, 1.0),
        ("refusal", 0, 1.0), ("refusal", 1, 1.0)]
    assert df["model_version"].unique().to_list() == ["echo"]
    assert df.filter(pl.col("task_key") == "capital")["markers"].struct.field("brevity").to_list() == [1.0, 1.0]
    assert df.filter(pl.col("task_key") == "arithmetic")["reason"][0] == raw[2]["gradingResult"]["reason"]
    assert df["final_text"][0] == raw[0]["response"]["output"]


def test_openai_evals_event_log():
    df = table.frame(DATA / "openai_evals" / "events.jsonl")
    assert by(df, "task_key", "reward", "final_text") == [
        ("arithmetic.dev.0", 1.0, "4"), ("arithmetic.dev.1", 0.0, "6"), ("arithmetic.dev.2", 1.0, "3")]
    assert df["system_prompt"].unique().to_list() == ["Answer with the number only."]
    assert df["judge_name"].unique().to_list() == ["match"]
    assert df["model_version"].unique().to_list() == ["dummy"]  # the sampling events' model


def test_langsmith_runs():
    df = table.frame(DATA / "langsmith" / "runs.jsonl")
    assert df.height == 4  # root runs only; the LLM child runs are not rollouts
    assert df["task_key"].n_unique() == 2 and sorted(df["rollout_index"].to_list()) == [0, 0, 1, 1]
    assert df["judge_name"].drop_nulls().unique().to_list() == ["correctness"]
    assert by(df, "reward") == [(1.0,), (0.0,), (1.0,), (None,)]
    errored = df.filter(pl.col("finish_reason") == "error")
    assert errored["judge_status"].to_list() == ["agent_error"]
    assert df["model_version"].unique().to_list() == ["gpt-4o-mini"]
    assert table.frame(DATA / "langsmith" / "runs.jsonl", scorer="polite")["reward"].drop_nulls().to_list() == [
        0.0, 0.0, 0.0]


def test_braintrust_experiment_scores():
    df = table.frame(DATA / "braintrust" / "experiment.jsonl")
    assert by(df, "task_key", "rollout_index", "reward", "judge_status") == [
        ("rec-1", 0, 1.0, "ok"), ("rec-1", 1, 1.0, "ok"), ("rec-2", 0, 0.0, "ok"), ("rec-2", 1, 0.0, "ok"),
        ("rec-3", 0, None, "agent_error"), ("rec-3", 1, None, "agent_error")]
    assert df["markers"].struct.field("polite").to_list()[:4] == [0.0, 0.0, 0.0, 0.0]
    assert table.frame(DATA / "braintrust" / "experiment.jsonl", scorer="polite")["judge_name"][0] == "polite"


def test_braintrust_json_array_and_child_spans(tmp_path):
    events = [{"id": "a", "span_id": "s1", "root_span_id": "s1", "span_parents": [], "input": {"question": "hi"},
               "output": "hello", "scores": {"helpful": 0.5}},
              {"id": "b", "span_id": "s2", "root_span_id": "s1", "span_parents": ["s1"], "input": "llm call",
               "output": "x", "scores": {}}]
    path = tmp_path / "export.json"
    path.write_text(json.dumps(events, indent=2))
    df = table.frame(path)
    assert df.select("prompt", "final_text", "reward").rows() == [("hi", "hello", 0.5)]


def test_verifiers_results_tool_calls_and_task_key():
    df = table.frame(DATA / "verifiers" / "results.jsonl")
    assert sorted(df["task_key"].unique()) == ["s-refund-17", "s-status-4"]  # info.task_key, not example_id
    row = table.rows(df)[0]
    call = row["messages"][2]["tool_calls"][0]
    assert call["function"]["name"] == "get_order"  # not the whole JSON text
    assert json.loads(call["function"]["arguments"]) == {"order_id": "A-17"}
    assert row["messages"][3]["tool_call_id"] == call["id"]
    assert row["markers"] == {"score": 1.0, "num_turns": 2.0}
    assert row["tools"][0]["function"]["name"] == "get_order"
    assert df["reward"].to_list() == [1.0, 0.0, 1.0, 0.0]


def test_verifiers_rows_without_info_key_on_example_id(tmp_path):
    rows = [{"example_id": i // 2, "task": "math", "prompt": [{"role": "user", "content": f"q{i // 2}"}],
             "completion": [{"role": "assistant", "content": "4"}], "reward": 1.0, "info": {}} for i in range(4)]
    rows[3]["error"] = {"error": "TimeoutError"}
    rows[3]["reward"] = 0.0
    path = tmp_path / "results.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    df = table.frame(path)
    assert by(df, "task_key", "rollout_index", "reward", "judge_status") == [
        ("math/0", 0, 1.0, "ok"), ("math/0", 1, 1.0, "ok"), ("math/1", 0, 1.0, "ok"),
        ("math/1", 1, None, "agent_error")]


# --------------------------------------------------------------------------------------------
# plain JSON documents, mapping=, pandas, lists of paths
# --------------------------------------------------------------------------------------------


def test_plain_json_documents_never_hit_the_line_reader(tmp_path):
    pretty = tmp_path / "rows.json"
    pretty.write_text(json.dumps({"rows": [{"scenario_id": "a", "prompt": "q", "reward": 1}]}, indent=2))
    assert table.frame(pretty).select("task_key", "reward").rows() == [("a", 1.0)]
    unknown = tmp_path / "config.json"
    unknown.write_text(json.dumps({"name": "x", "threshold": 0.5}, indent=2))
    with pytest.raises(SchemaError, match="is one JSON object .* not rows in a shape whileai knows") as info:
        table.frame(unknown)
    assert "line 1 is not valid JSON" not in str(info.value)
    # a broken JSONL file still names its line
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"scenario_id": "a", "prompt": "q"}\n{nope\n')
    with pytest.raises(SchemaError, match="line 2 is not valid JSON"):
        table.frame(broken)


def test_mapping_names_the_source_columns(tmp_path):
    rows = [{"doc_id": d, "question": f"q{d}", "acc": a, "polite_score": 0.5} for d, a in ((1, 1), (1, 0), (2, True))]
    df = table.frame(rows, mapping={"task": "doc_id", "reward": "acc", "prompt": "question",
                                    "markers.polite": "polite_score"})
    assert df.select("task_key", "reward", "prompt", "judge_name").rows() == [
        ("1", 1.0, "q1", "acc"), ("1", 0.0, "q1", "acc"), ("2", 1.0, "q2", "acc")]
    assert df["markers"].struct.field("polite").to_list() == [0.5, 0.5, 0.5]
    nested = table.frame([{"id": "t", "prompt": "q", "scores": {"acc": 1}}], mapping={"task": "id",
                                                                                    "reward": "scores.acc"})
    assert nested["reward"].to_list() == [1.0]
    with pytest.raises(SchemaError, match="mapping key must be a table column, 'task' or 'markers.<name>', got 'score_x'"):
        table.frame(rows, mapping={"score_x": "acc"})
    with pytest.raises(SchemaError, match="mapping source 'nope' must be a column of the source"):
        table.frame(rows, mapping={"task": "nope"})
    with pytest.raises(SchemaError, match="field of 'scores'"):
        table.frame([{"id": "t", "prompt": "q", "scores": {"acc": 1}}], mapping={"reward": "scores.f1"})


def test_scorer_on_a_plain_table_picks_a_marker():
    rows = [{"scenario_id": "t", "prompt": "q", "reward": 1.0, "markers": {"safe": 0.0}}]
    df = table.frame(rows, scorer="safe")
    assert df.select("reward", "judge_name", "judge_status").rows() == [(0.0, "safe", "ok")]
    with pytest.raises(SchemaError, match=r"scorer must be one of the scores it holds \(safe\), got 'f1'"):
        table.frame(rows, scorer="f1")


class _FakePandasFrame:
    """Stands in for a pandas DataFrame whose object columns Arrow cannot type (pandas may be absent)."""

    def __init__(self, records):
        self.records = records

    def to_dict(self, orient):
        assert orient == "records"
        return self.records


_FakePandasFrame.__module__ = "pandas.core.frame"
_FakePandasFrame.__name__ = "DataFrame"


def test_pandas_frames_are_told_by_module_and_read_by_rows():
    fake = _FakePandasFrame([{"scenario_id": "t", "messages": [{"role": "user", "content": "hi"}], "reward": 1}])
    df = table.frame(fake)
    assert df.select("task_key", "prompt", "reward").rows() == [("t", "hi", 1.0)]


def test_real_pandas_frame():
    pd = pytest.importorskip("pandas", reason="pandas is optional; frame reads a DataFrame when given one")
    df = table.frame(pd.DataFrame({"doc_id": [1, 2], "question": ["a", "b"], "acc": [1.0, 0.0]}),
                     mapping={"task": "doc_id", "reward": "acc", "prompt": "question"})
    assert df.select("task_key", "reward").rows() == [("1", 1.0), ("2", 0.0)]


def test_reading_rows_never_imports_pandas():
    import importlib.util

    if importlib.util.find_spec("pandas") is not None:  # an extra (ray, datasets) installed it: pyarrow imports it itself
        pytest.skip("pandas is installed here, so pyarrow may import it on its own; make test checks this before the extras")
    code = ("import sys; from whileai import table; "
            f"table.frame([{str(ORDERS)!r}, {str(GREETINGS)!r}]); table.frame({str(LM_RUN)!r}); "
            "print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "False"


def test_a_folder_with_nothing_to_read(tmp_path):
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(InputFileError, match="must hold .parquet, .jsonl, .json, .eval or .arrow files, got none"):
        table.frame(tmp_path)


def test_promptfoo_reward_is_pass_fail_and_errors_are_counted_apart():
    """promptfoo's own counts (3 passed, 6 failed, 3 errors) beside ours; a FAILED test scoring 0.5 is a fail."""
    path = DATA / "promptfoo" / "pass_fail" / "results.json"
    stats = json.loads(path.read_text())["results"]["stats"]
    df = table.frame(path)
    graded = df.filter(pl.col("reward").is_not_null())
    assert (graded["reward"] == 1.0).sum() == stats["successes"] == 3
    assert (graded["reward"] == 0.0).sum() == stats["failures"] == 6
    assert (df["judge_status"] == "agent_error").sum() == stats["errors"] == 3
    half = df.filter(pl.col("task_key") == "half")
    assert half["reward"].to_list() == [0.0] * 3 and half["markers"].struct.field("score").to_list() == [0.5] * 3
    report = pass_at(path, k=3)
    # by enumeration over the graded tests: capital 3/3, half 0/3, arithmetic 0/3 (overloaded has no graded run)
    assert report.pass_at_1 == pytest.approx(stats["successes"] / (stats["successes"] + stats["failures"]))
    assert report.pass_pow_k == pytest.approx(1 / 3) and report.pass_at_k == pytest.approx(1 / 3)
    assert any("3 row(s) ended in an agent or harness error" in w for w in report.warnings)
