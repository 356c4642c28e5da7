"""Hugging Face datasets saved to disk (tests/data/hf/make_saved.py, datasets 5.2.0): folders, DatasetDicts, .arrow files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from whileai import pass_at, table
from whileai.errors import InputFileError, SchemaError

HF = Path(__file__).parent.parent / "data" / "hf"
COUNTS = json.loads((HF / "counts.json").read_text())


def test_a_save_to_disk_folder_reads_as_rows():
    df = table.frame(HF / "saved")
    assert df.height == sum(COUNTS["num_rows"].values()) == 6
    assert df["reward"].mean() == COUNTS["mean_reward"]  # datasets' own mean of the column
    assert sorted(df["task_key"].unique()) == ["order-0", "order-1", "order-2"]
    assert df.sort("task_key", "rollout_index")["messages"][1][1]["content"] == "It shipped."
    assert pass_at(HF / "saved").pass_at_1 == 0.5


def test_one_arrow_file_reads_as_the_same_rows():
    assert table.frame(HF / "saved" / "data-00000-of-00001.arrow").equals(table.frame(HF / "saved"))


def test_a_dataset_dict_stacks_its_splits_with_a_split_column():
    df = table.frame(HF / "dict")
    assert {k: df.filter(df["split"] == k).height for k in ("train", "test")} == COUNTS["num_rows"]
    one = table.frame(HF / "dict" / "test")  # one split's folder is a saved Dataset
    assert one.height == COUNTS["num_rows"]["test"] and "split" not in one.columns


def test_a_folder_holding_saved_datasets_skips_their_metadata(tmp_path):
    shutil.copytree(HF / "saved", tmp_path / "logs" / "saved")
    df = table.frame(tmp_path / "logs")
    assert df.height == 6  # the .arrow file read; state.json and dataset_info.json are not rows


def test_errors_say_what_the_file_is_and_what_to_pass(tmp_path):
    bad = tmp_path / "rows.arrow"
    bad.write_text('{"scenario_id": "t"}\n')
    with pytest.raises(SchemaError, match=r"must be an Arrow IPC stream or file .*got one that starts with b'\{\"scenar"):
        table.frame(bad)
    broken = tmp_path / "saved"
    shutil.copytree(HF / "saved", broken)
    (broken / "data-00000-of-00001.arrow").unlink()
    with pytest.raises(InputFileError, match="must hold the Arrow files its state.json lists"):
        table.frame(broken)
    splits = tmp_path / "dict"
    shutil.copytree(HF / "dict", splits)
    shutil.rmtree(splits / "test")
    with pytest.raises(InputFileError, match="got none for 'test'"):
        table.frame(splits)
