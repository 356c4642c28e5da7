"""A gzip-compressed file another tool wrote reads exactly as the plain file: shape, full and projected reads."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from whileai import table
from whileai.errors import SchemaError
from whileai.table import _formats

DATA = Path(__file__).parent.parent / "data"
LM_SAMPLES = DATA / "lm_eval" / "run" / "samples_wai_gen_2026-12-01T09-59-46.328421.jsonl"


def _gzip(plain: Path) -> Path:
    target = plain.with_name(plain.name + ".gz")
    with open(plain, "rb") as src, gzip.open(target, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return target


def _without_log(df: pl.DataFrame) -> pl.DataFrame:
    """The frame with ``lineage.log`` (the path read, which names the .gz) left out."""
    lineage = df.schema.get("lineage")
    if isinstance(lineage, pl.Struct) and "log" in {f.name for f in lineage.fields}:
        kept = [pl.col("lineage").struct.field(f.name) for f in lineage.fields if f.name != "log"]
        df = df.with_columns(pl.struct(kept).alias("lineage"))
    return df


def _vf_errored_rows() -> list[dict]:
    rows = []
    for ex in range(2):
        for r in range(3):
            err = {"error": "ToolCallError", "error_chain_repr": "x"} if (ex, r) == (1, 2) else None
            rew = 0.0 if err else [1.0, 0.0, 1.0][r]
            rows.append({"example_id": ex, "prompt": [{"role": "user", "content": f"Q{ex}"}],
                         "completion": [{"role": "assistant", "content": "A"}], "reward": rew, "error": err,
                         "metrics": {"correct": rew}, "correct": rew, "is_truncated": False,
                         "tool_defs": [{"name": "calc", "parameters": {"type": "object"}}]})
    return rows


def _write_lines(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _fixture(kind: str, folder: Path) -> Path:
    if kind == "inspect":
        return Path(shutil.copy(DATA / "inspect" / "greetings.json", folder / "greetings.json"))
    if kind == "lm_eval_samples":
        return Path(shutil.copy(LM_SAMPLES, folder / LM_SAMPLES.name))
    if kind == "promptfoo":
        return Path(shutil.copy(DATA / "promptfoo" / "results.json", folder / "results.json"))
    if kind == "openai_evals":
        return Path(shutil.copy(DATA / "openai_evals" / "events.jsonl", folder / "events.jsonl"))
    if kind == "langsmith":
        return Path(shutil.copy(DATA / "langsmith" / "runs.jsonl", folder / "runs.jsonl"))
    if kind == "braintrust":
        return Path(shutil.copy(DATA / "braintrust" / "experiment.jsonl", folder / "experiment.jsonl"))
    if kind == "verifiers":
        return _write_lines(folder / "results.jsonl", _vf_errored_rows())
    assert kind == "document"
    path = folder / "rows.json"
    path.write_text(json.dumps({"rows": [{"task_id": "a", "reward": 1.0}, {"task_id": "b", "reward": 0.0}]}, indent=2))
    return path


KINDS = ["inspect", "lm_eval_samples", "promptfoo", "openai_evals", "langsmith", "braintrust", "verifiers", "document"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_gzipped_file_of_a_known_shape_reads_as_the_plain_file(tmp_path: Path, kind: str) -> None:
    plain = _fixture(kind, tmp_path)
    packed = _gzip(plain)
    assert _formats.sniff(packed) == _formats.sniff(plain) == kind
    assert_frame_equal(_without_log(table.frame(packed)), _without_log(table.frame(plain)))
    projected = table.frame(packed, columns=["reward"])
    assert_frame_equal(_without_log(projected), _without_log(table.frame(plain, columns=["reward"])))
    assert projected["reward"].to_list() == table.frame(plain)["reward"].to_list()


@pytest.mark.parametrize("kind", ["inspect", "verifiers", "lm_eval_samples"])
def test_lineage_names_the_gzipped_file_read(tmp_path: Path, kind: str) -> None:
    packed = _gzip(_fixture(kind, tmp_path))
    logs = table.frame(packed)["lineage"].struct.field("log").unique().to_list()
    assert logs == [str(packed)]


def test_vf_eval_results_jsonl_gz_keeps_the_errored_rollout_ungraded(tmp_path: Path) -> None:
    packed = _gzip(_write_lines(tmp_path / "results.jsonl", _vf_errored_rows()))
    df = table.frame(packed)
    assert df["reward"].to_list() == [1.0, 0.0, 1.0, 1.0, 0.0, None]  # the rollout that raised is not a fail
    assert df["judge_status"][5] == "agent_error"
    assert df["markers"].struct.field("correct").to_list()[:3] == [1.0, 0.0, 1.0]
    assert "correct" not in df.columns and "tool_defs" not in df.columns
    assert json.loads(df["tools"][0])[0]["function"]["name"] == "calc"
    assert table.frame(packed, columns=["reward"])["reward"].to_list() == df["reward"].to_list()


def test_lm_eval_samples_jsonl_gz_takes_its_task_from_the_name(tmp_path: Path) -> None:
    sample = {"doc_id": 0, "doc": {}, "target": "1", "arguments": {"gen_args_0": {"arg_0": "Q", "arg_1": {"until": []}}},
              "resps": [["1"]], "filtered_resps": ["1"], "filter": "none", "metrics": ["exact_match"],
              "exact_match": 1.0}
    path = tmp_path / "samples_gsm8k_2026-12-01T10-00-00.jsonl.gz"
    with gzip.open(path, "wt") as handle:
        handle.write(json.dumps(sample) + "\n")
    df = table.frame(path)
    assert df.select("scenario_id", "reward").rows() == [("gsm8k/0", 1.0)]


def test_inspect_and_promptfoo_json_gz_are_not_line_read(tmp_path: Path) -> None:
    for source in (DATA / "inspect" / "greetings.json", DATA / "promptfoo" / "results.json"):
        packed = tmp_path / (source.parent.name + ".json.gz")
        packed.write_bytes(gzip.compress(source.read_bytes()))
        assert table.frame(packed).height == table.frame(source).height


def test_a_broken_gzipped_inspect_log_names_the_gz_file(tmp_path: Path) -> None:
    log = json.loads((DATA / "inspect" / "greetings.json").read_text())
    log["samples"] = "none"
    packed = tmp_path / "log.json.gz"
    packed.write_bytes(gzip.compress(json.dumps(log, indent=2).encode()))
    with pytest.raises(SchemaError, match="'samples' must be a list") as info:
        table.frame(packed)
    assert str(packed) in str(info.value) and info.value.path == str(packed)
    assert "whileai-gz" not in str(info.value)


def test_a_plain_gzipped_jsonl_still_reads_as_rows(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"task_id": "a", "reward": 1}\n{"task_id": "b", "reward": 0}\n'))
    assert _formats.sniff(path) is None
    assert table.frame(path)["reward"].to_list() == [1.0, 0.0]


def test_a_gzipped_lm_eval_run_folder_reads_as_the_plain_one(tmp_path):
    """results_<date>.json.gz found none of its samples (the date was cut off the .gz name)."""
    import gzip
    import shutil
    from pathlib import Path

    from whileai import table as _table

    plain = Path(__file__).resolve().parents[1] / "data" / "lm_eval" / "run"
    packed = tmp_path / "run"
    packed.mkdir()
    for f in plain.iterdir():
        with open(f, "rb") as src, gzip.open(packed / f"{f.name}.gz", "wb") as dst:
            shutil.copyfileobj(src, dst)
    cols = ["task_key", "rollout_index", "reward", "model_version"]
    want = _table.frame(plain).select(cols).sort("task_key", "rollout_index")
    got = _table.frame(packed).select(cols).sort("task_key", "rollout_index")
    assert got.equals(want) and got.height > 0
