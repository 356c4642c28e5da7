"""vf-eval runs of several environments read from one folder stay apart (example ids restart per env)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from whileai import table
from whileai.measure import pass_at


def by(df: pl.DataFrame, *cols: str) -> list[tuple]:
    return df.sort("task_key", "rollout_index").select(*cols).rows()


def _run(root: Path, env: str, prefix: str, *, metadata: dict | None, task: str | None = None,
         model: str = "gpt-4.1-mini") -> Path:
    """One ``vf-eval -s`` run: ``outputs/evals/<env>--<model>/<run id>/results.jsonl`` (+ metadata.json).

    Rows as ``verifiers.utils.save_utils.state_to_output`` writes them: no ``task`` field (unless given);
    two examples, two rollouts each, example 0 passes and example 1 fails.
    """
    run = root / "outputs" / "evals" / f"{env}--{model.replace('/', '--')}" / "a1b2c3d4"
    run.mkdir(parents=True)
    rows = []
    for example in (0, 1):
        for _ in range(2):
            row = {"example_id": example, "prompt": [{"role": "user", "content": f"{prefix} {example}"}],
                   "completion": [{"role": "assistant", "content": "x"}], "reward": float(example == 0),
                   "error": None, "metrics": {"correct": float(example == 0)}, "is_truncated": False}
            if task is not None:
                row["task"] = task
            rows.append(row)
    (run / "results.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    if metadata is not None:
        (run / "metadata.json").write_text(json.dumps(metadata))
    return run


def test_two_environments_in_one_folder_stay_apart(tmp_path):
    for env, prefix in (("wiki-search", "Question"), ("math-python", "Math")):
        _run(tmp_path, env, prefix, metadata={"env_id": env, "model": "gpt-4.1-mini", "num_examples": 2,
                                              "rollouts_per_example": 2})
    df = table.frame(tmp_path / "outputs" / "evals")
    assert by(df, "task_key", "rollout_index", "prompt") == [
        ("math-python/0", 0, "Math 0"), ("math-python/0", 1, "Math 0"),
        ("math-python/1", 0, "Math 1"), ("math-python/1", 1, "Math 1"),
        ("wiki-search/0", 0, "Question 0"), ("wiki-search/0", 1, "Question 0"),
        ("wiki-search/1", 0, "Question 1"), ("wiki-search/1", 1, "Question 1")]
    assert pass_at(df, k=2).n_tasks == 4
    assert df["model_version"].unique().to_list() == ["gpt-4.1-mini"]


def test_env_from_the_folder_name_without_metadata(tmp_path):
    _run(tmp_path, "wiki-search", "Question", metadata=None, model="openai/gpt-4.1-mini")
    _run(tmp_path, "math-python", "Math", metadata=None, model="openai/gpt-4.1-mini")
    df = table.frame(tmp_path / "outputs")
    assert sorted(df["task_key"].unique()) == ["math-python/0", "math-python/1", "wiki-search/0", "wiki-search/1"]
    assert "model_version" not in df.columns  # no metadata.json: the model is not guessed from the folder


def test_older_metadata_env_key_and_a_row_model_wins(tmp_path):
    """verifiers 0.1.x wrote ``env`` (not ``env_id``); a row that names its model keeps it."""
    run = _run(tmp_path, "gsm8k", "q", metadata={"env": "gsm8k", "model": "m-meta"}, task="gsm8k")
    lines = (run / "results.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["model_version"] = "m-row"
    (run / "results.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    df = table.frame(run / "results.jsonl")
    assert by(df, "task_key", "rollout_index", "model_version") == [
        ("gsm8k/0", 0, "m-row"), ("gsm8k/0", 1, "m-meta"), ("gsm8k/1", 0, "m-meta"), ("gsm8k/1", 1, "m-meta")]


def test_an_env_group_task_is_kept_beside_the_env(tmp_path):
    """An EnvGroup's rows name their member env in ``task``; verifiers' ``"default"`` adds nothing."""
    _run(tmp_path, "mix", "a", metadata={"env_id": "mix"}, task="math")
    assert sorted(table.frame(tmp_path / "outputs")["task_key"].unique()) == ["mix/math/0", "mix/math/1"]
    other = tmp_path / "other"
    _run(other, "wiki", "a", metadata={"env_id": "wiki"}, task="default")
    assert sorted(table.frame(other / "outputs")["task_key"].unique()) == ["wiki/0", "wiki/1"]


def test_a_lone_results_file_keeps_its_task_ids(tmp_path):
    """No metadata.json and no <env>--<model> folder: the key is the row's task, else the bare example id."""
    rows = [{"example_id": i // 2, "prompt": "q", "completion": "a", "reward": 1.0} for i in range(4)]
    path = tmp_path / "results.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert sorted(table.frame(path)["task_key"].unique()) == ["0", "1"]
    (tmp_path / "metadata.json").write_text("{not json")  # a damaged sidecar is not an env
    assert sorted(table.frame(path)["task_key"].unique()) == ["0", "1"]
