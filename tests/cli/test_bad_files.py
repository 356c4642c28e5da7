"""Files a user really has: missing, broken, empty, partitioned, a folder of logs. Exit 2 with one
line for bad input (never 4, the code for a bug), and every row of a good one."""

from __future__ import annotations

import json

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from whileai import table

ROWS = [{"scenario_id": f"t{i // 3}", "rollout_index": i % 3, "prompt": "same prompt", "final_text": "ok",
         "reward": float(i // 3 == 0)} for i in range(12)]


@pytest.fixture
def files(tmp_path):
    (tmp_path / "corrupt.parquet").write_bytes(b"PAR1garbagegarbage")
    pl.DataFrame(ROWS).head(0).write_parquet(tmp_path / "zero.parquet")
    return tmp_path


@pytest.mark.parametrize("name", ["missing.parquet", "corrupt.parquet", "zero.parquet"])
@pytest.mark.parametrize("command", [["inspect"], ["export", "-o", "{out}"], ["pass-at"], ["hack-scan"]])
def test_a_bad_parquet_file_is_exit_2_and_one_line(wai, files, name, command):
    """inspect on a missing or broken file and export on a broken or empty one exited 4."""
    out = files / "out.jsonl"
    res = wai(command[0], files / name, *[a.format(out=out) for a in command[1:]])
    assert res.code == 2 and res.err.startswith("error: ") and res.err.count("\n") == 1, res.err
    assert not out.exists()


def test_a_hive_partitioned_folder_keeps_its_partition_column(wai, tmp_path):
    """pyarrow's write_to_dataset (Spark, Dask and Ray write the same layout) puts scenario_id in the
    folder names; a list of the files lost it, and the 4 tasks read as 1 of k=12. A folder above the
    data named like a partition is not a column."""
    root = tmp_path / "run=7" / "rows"
    pq.write_to_dataset(pa.Table.from_pylist(ROWS), str(root), partition_cols=["scenario_id"])
    (root / "_SUCCESS").write_text("")
    df = table.frame(root)
    assert "run" not in df.columns and df["task_key"].n_unique() == 4
    assert sorted(df["scenario_id"].unique().to_list()) == ["t0", "t1", "t2", "t3"]
    res = wai("pass-at", root, "--json")
    assert res.code == 0 and json.loads(res.out)["n_tasks"] == 4 and json.loads(res.out)["pass_at_1"] == 0.25
    assert wai("inspect", root).out.startswith(f"{root}: 12 rows, 4 tasks, k=3")


@pytest.mark.parametrize("partitioned", [True, False])
def test_spark_output_folder_skips_checksums_temporary_and_hidden_files(wai, tmp_path, partitioned):
    """Spark writes a .crc checksum beside each part and leaves _temporary/ while a job runs: a
    partitioned folder failed ('different file extensions', exit 2), a plain one read the stray
    rows as rollouts. pyarrow, Spark and Dask skip names that start with '.' or '_'."""
    root = tmp_path / "out"
    if partitioned:
        pq.write_to_dataset(pa.Table.from_pylist(ROWS), str(root), partition_cols=["scenario_id"])
    else:
        root.mkdir()
        pq.write_table(pa.Table.from_pylist(ROWS), root / "part-00000.snappy.parquet")
    for part in list(root.rglob("*.parquet")):
        (part.parent / f".{part.name}.crc").write_bytes(b"crc")
    (root / "_SUCCESS").write_text("")
    stray = [dict(ROWS[0], scenario_id="stray", reward=1.0)]
    for hidden in ("_temporary/0/task_1", ".spark-staging"):
        (root / hidden).mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist(stray), root / hidden / "part-00001.parquet")
    df = table.frame(root)
    assert df.height == 12 and sorted(df["task_key"].unique().to_list()) == ["t0", "t1", "t2", "t3"]
    res = wai("pass-at", root, "--json")
    assert res.code == 0 and json.loads(res.out)["n_tasks"] == 4 and json.loads(res.out)["pass_at_1"] == 0.25, res.err
    assert wai("inspect", root).out.startswith(f"{root}: 12 rows, 4 tasks, k=3")


def test_a_partition_name_above_the_folder_never_overwrites_a_column(wai, tmp_path):
    """Polars reads run=7 above the folder as a column and would overwrite the files' own `run`."""
    root = tmp_path / "run=7" / "rows"
    pq.write_to_dataset(pa.Table.from_pylist([dict(r, run="mine") for r in ROWS]), str(root),
                        partition_cols=["scenario_id"])
    assert set(table.frame(root)["run"].to_list()) == {"mine"}  # nothing but parts: Polars' walk
    (root / "_SUCCESS").write_text("")
    res = wai("pass-at", root)
    assert res.code == 2 and "run=..." in res.err and "_SUCCESS" in res.err


def test_a_folder_of_logs_with_parquet_under_a_hidden_folder_reads_as_logs(wai, tmp_path):
    """A cache of Parquet under a hidden folder made the folder 'Parquet' and its logs unread."""
    folder = tmp_path / "logs"
    (folder / ".cache").mkdir(parents=True)
    table.write(pl.DataFrame(ROWS), folder / "run.jsonl")
    table.write(pl.DataFrame(ROWS[:3]), folder / ".cache" / "x.parquet")
    assert table.frame(folder).height == 12
    assert wai("inspect", folder).out.startswith(f"{folder}: 12 rows, 4 tasks, k=3")


def test_inspect_reads_a_folder_of_logs_as_pass_at_does(wai, tmp_path):
    """'folder holds no .parquet files': inspect took every folder for Parquet (docs/cli.md: wai inspect lm_eval_out/)."""
    folder = tmp_path / "logs"
    folder.mkdir()
    table.write(pl.DataFrame(ROWS[:6]), folder / "a.jsonl")
    table.write(pl.DataFrame(ROWS[6:]), folder / "b.jsonl")
    res = wai("inspect", folder)
    assert res.code == 0 and res.out.startswith(f"{folder}: 12 rows, 4 tasks, k=3"), res.err


@pytest.mark.parametrize("shape", ["jsonl", "parquet", "rows", "keyed parquet"])
def test_trl_standard_prompt_completion_rows_keep_their_completion_as_the_reply(wai, tmp_path, shape):
    """TRL's standard format (text prompt, text completion; vf-eval's completion mode too) lost the
    completion: sft called every row junk and export found no assistant turn."""
    rows = [{"prompt": "2+2=", "completion": "4", "reward": 1.0}, {"prompt": "2+2=", "completion": "5", "reward": 0.0},
            {"prompt": "3+3=", "completion": "6", "reward": 1.0}]
    if shape == "keyed parquet":
        rows = [{"scenario_id": r["prompt"], **r} for r in rows]
    source: object = rows
    if shape != "rows":
        source = tmp_path / ("rows.jsonl" if shape == "jsonl" else "rows.parquet")
        table.write(pl.DataFrame(rows), source)
    df = table.frame(source)
    assert df["final_text"].to_list() == ["4", "5", "6"] and "completion" not in df.columns
    assert df["messages"][0].to_list() == [
        {"role": "user", "content": "2+2=", "name": None, "tool_call_id": None, "tool_calls": [], "extra": None},
        {"role": "assistant", "content": "4", "name": None, "tool_call_id": None, "tool_calls": [], "extra": None}]
    assert table.frame(source, columns=["final_text"])["final_text"].to_list() == ["4", "5", "6"]
    if shape != "rows":
        out = tmp_path / "kept.jsonl"
        res = wai("select", source, "--mode", "sft", "-o", out)
        assert res.code == 0 and [json.loads(x)["final_text"] for x in out.read_text().splitlines()] == ["4", "6"]


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_jsonl_file_with_a_byte_order_mark_reads_as_without(wai, tmp_path, newline):
    """Excel and PowerShell write UTF-8 with a BOM: line 1 'is not valid JSON (Unexpected UTF-8 BOM)'."""
    text = newline.join(json.dumps(r) for r in ROWS) + newline
    plain, marked = tmp_path / "plain.jsonl", tmp_path / "marked.jsonl"
    plain.write_text(text, newline="")
    marked.write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert table.frame(marked).equals(table.frame(plain))
    want = wai("pass-at", plain, "--json").out
    assert wai("pass-at", marked, "--json").out == want
    assert wai("pass-at", "-", "--json", stdin="\ufeff" + text).out == want
    for args in (["export", "-o", tmp_path / "e.jsonl"], ["select", "--mode", "sft", "-o", tmp_path / "s.jsonl"],
                 ["inspect"], ["hack-scan"]):
        res = wai(args[0], marked, *args[1:])
        assert res.code == 0, res.err


@pytest.mark.parametrize("bad", [5.0, float("inf"), -0.5])
@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_a_reward_outside_0_1_is_refused_by_select_and_export_as_by_pass_at(wai, tmp_path, bad, suffix):
    """export wrote reward 5.0 and select said 'reward mean: eligible inf', where pass-at refused the file."""
    rows = [{**r, "reward": bad if i == 3 else r["reward"]} for i, r in enumerate(ROWS)]
    path = tmp_path / f"rows{suffix}"
    table.write(pl.DataFrame(rows), path)
    for args in (["pass-at"], ["export", "-o", tmp_path / "e.jsonl"], ["select", "--mode", "sft", "-o", tmp_path / "s.jsonl"],
                 ["select", "--mode", "rl", "-o", tmp_path / "r.jsonl"]):
        res = wai(args[0], path, *args[1:])
        assert res.code == 2 and res.err.startswith(f"error: reward must be in [0, 1], got {bad!r} on 1 row(s)"), (args, res.err)
    assert not any((tmp_path / name).exists() for name in ("e.jsonl", "s.jsonl", "r.jsonl"))
