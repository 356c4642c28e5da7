"""export_environment: the written package imports, builds its dataset, splits by task, replays tools."""

from __future__ import annotations

import hashlib
import importlib
import json
import subprocess
import sys

import pytest

from whileai import table
from whileai.errors import ArgumentError, InputFileError, TrainingSelectionError
from whileai.exporters import export_environment, load_environment
from whileai.exporters._environment import holdout_bucket
from whileai.measure import task_stats
from whileai.testing import rollout_table

TOOLS = [{"type": "function", "function": {"name": "get_order", "parameters": {"type": "object"}}}]


def judge(row):
    """A module-level judge the environment can import: pass when the reply says 'resolved'."""
    return {"reward": 1.0 if "resolved" in (row.get("final_text") or "") else 0.0}


@pytest.fixture(scope="module")
def rollouts():
    return table.frame(rollout_table(60, 4, seed=11))


def _in_band(df, band=(0.2, 0.8)):
    stats = task_stats(df)
    rate = (stats["c"] / stats["n_graded"]).to_list()
    return {k for k, r in zip(stats["task_key"].to_list(), rate) if band[0] <= r <= band[1]}


def test_package_layout_imports_and_builds_its_dataset(tmp_path, rollouts):
    out = tmp_path / "refund_env"
    report = export_environment(rollouts, out, reward=f"{__name__}:judge", system_prompt="Help.", tools=TOOLS,
                                max_turns=6, description="Refunds.")
    assert report["name"] == "refund_env"
    assert sorted(report["files"]) == ["README.md", "pyproject.toml", "refund_env/__init__.py", "refund_env/_v1.py",
                                       "refund_env/data/holdout.jsonl", "refund_env/data/train.jsonl",
                                       "refund_env/spec.json"]
    for rel in report["files"]:
        assert (out / rel).exists()
    spec = json.loads((out / "refund_env" / "spec.json").read_text())
    assert spec["tools"] == TOOLS and spec["max_turns"] == 6 and spec["reward"] == f"{__name__}:judge"
    # the band kept exactly the tasks whose pass rate is inside it (independent count)
    keep = _in_band(rollouts)
    assert report["train"] + report["holdout"] == len(keep)
    assert report["band_dropped"] == 60 - len(keep)
    env = load_environment(out)
    # a datasets.Dataset when datasets is installed, else a list of dicts: read both the same way
    train = [json.loads(r["info"]) if isinstance(r["info"], str) else r["info"] for r in env.dataset]
    hold = [json.loads(r["info"]) if isinstance(r["info"], str) else r["info"] for r in env.eval_dataset]
    train_keys, hold_keys = {i["task_key"] for i in train}, {i["task_key"] for i in hold}
    assert train_keys | hold_keys == keep and not train_keys & hold_keys
    assert len(train) == len(train_keys) == report["train"]  # one row per task
    # the split is sha256(task_key) < share, the rule whileai.store uses
    for key in train_keys | hold_keys:
        bucket = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) / 16**8
        assert (key in hold_keys) == (bucket < 0.2)
    assert holdout_bucket(["a"]) == [int(hashlib.sha256(b"a").hexdigest()[:8], 16) / 16**8]
    first = env.dataset[0]
    assert first["prompt"][0] == {"role": "system", "content": "Help."}
    assert first["prompt"][1]["role"] == "user"
    # the same export again gives the same split
    again = export_environment(rollouts, tmp_path / "again", reward=f"{__name__}:judge", tools=TOOLS)
    assert (again["train"], again["holdout"]) == (report["train"], report["holdout"])


def test_split_agrees_with_store_split(rollouts):
    store = pytest.importorskip("whileai.store")
    split = getattr(store, "split", None)
    if split is None:
        pytest.skip("whileai.store.split not available")
    result = split(rollouts)
    hold = getattr(result, "holdout", None)
    if hold is None:
        pytest.skip("store.split returns a shape this test does not know")
    hold_df = hold if hasattr(hold, "columns") else table.frame(hold)
    store_hold = set(hold_df["task_key"].to_list())
    keys = rollouts["task_key"].unique().to_list()
    mine = {k for k, b in zip(keys, holdout_bucket(keys)) if b < 0.2}
    assert mine == store_hold


def test_tools_replay_and_reward(tmp_path, rollouts):
    out = tmp_path / "env"
    export_environment(rollouts, out, reward=judge, tools=TOOLS)
    env = load_environment(out)
    row = env.dataset[0]
    info = json.loads(row["info"]) if isinstance(row["info"], str) else row["info"]
    recorded = info["tool_results"]
    if recorded:
        item = recorded[0]
        assert env.call_tool(item["name"], item["arguments"], row["info"]) == item["result"]
        assert env.call_tool(item["name"], json.dumps(item["arguments"]), info) == item["result"]
    assert "no recorded result" in env.call_tool("get_order", {"order_id": "nope"}, info)
    assert env.score([{"role": "assistant", "content": "I resolved it."}], prompt=row["prompt"], info=row["info"]) == 1.0
    assert env.score("could not finish", prompt=row["prompt"], info=info) == 0.0


def test_module_imports_in_a_fresh_process(tmp_path, rollouts):
    out = tmp_path / "fresh_env"
    export_environment(rollouts, out, tools=TOOLS)
    code = ("import fresh_env; env = fresh_env.load_environment(); "
            "print(len(env.dataset) + len(env.eval_dataset))")
    run = subprocess.run([sys.executable, "-c", code], cwd=out, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert int(run.stdout.strip().splitlines()[-1]) > 0


def test_no_reward_warns_and_scoring_says_so(tmp_path, rollouts):
    report = export_environment(rollouts, tmp_path / "e", tools=TOOLS)
    assert report["reward"] is None and any("no reward" in w for w in report.warnings)
    env = load_environment(tmp_path / "e")
    with pytest.raises(RuntimeError, match="without a reward"):
        env.score([{"role": "assistant", "content": "x"}], info=env.dataset[0]["info"])


def test_bad_input(tmp_path, rollouts):
    with pytest.raises(ArgumentError, match="importable"):
        export_environment(rollouts, tmp_path / "a", reward=lambda row: 1.0)
    with pytest.raises(ArgumentError, match="module:function"):
        export_environment(rollouts, tmp_path / "a", reward="no_colon")
    with pytest.raises(ArgumentError, match="name must be"):
        export_environment(rollouts, tmp_path / "a", name="Bad-Name")
    with pytest.raises(ArgumentError, match="holdout"):
        export_environment(rollouts, tmp_path / "a", holdout=1.5)
    with pytest.raises(ArgumentError, match="band"):
        export_environment(rollouts, tmp_path / "a", band=(0.9, 0.1))
    with pytest.raises(TrainingSelectionError, match="band must leave"):
        export_environment(rollouts, tmp_path / "a", band=(0.3, 0.3))  # k=4: rates are quarters
    full = tmp_path / "full"
    full.mkdir()
    (full / "x.txt").write_text("x")
    with pytest.raises(InputFileError, match="already exists"):
        export_environment(rollouts, full)
    with pytest.raises(InputFileError, match="does not exist"):
        export_environment(rollouts, tmp_path / "no" / "env")
    leftovers = sorted(p.name for p in tmp_path.iterdir())
    assert leftovers == ["full"]


def test_with_verifiers_installed(tmp_path, rollouts):
    vf = pytest.importorskip("verifiers")
    if not (hasattr(vf, "MultiTurnEnv") and hasattr(vf, "Rubric")):
        pytest.skip("this verifiers has no classic MultiTurnEnv/Rubric API; load_environment returns the plain env")
    export_environment(rollouts, tmp_path / "vf_env", reward=f"{__name__}:judge", tools=TOOLS)
    env = load_environment(tmp_path / "vf_env")
    assert isinstance(env, vf.MultiTurnEnv)
    assert len(env.dataset) > 0


def test_pyproject_pins_the_tested_verifiers_range_and_the_v1_classes_are_named(tmp_path, rollouts):
    from whileai.defaults import ENV_VERIFIERS_RANGE

    export_environment(rollouts, tmp_path / "refund_env", tools=TOOLS)
    pyproject = (tmp_path / "refund_env" / "pyproject.toml").read_text()
    assert f'"verifiers{ENV_VERIFIERS_RANGE}"' in pyproject and ENV_VERIFIERS_RANGE == ">=0.3.1,<0.5"
    v1 = (tmp_path / "refund_env" / "refund_env" / "_v1.py").read_text()
    assert "class RefundEnvTaskset(vf.Taskset[" in v1 and "oai_tools" not in v1
    init = (tmp_path / "refund_env" / "refund_env" / "__init__.py").read_text()
    assert "tool_defs=" in init and "oai_tools" not in init
    compile(v1, "_v1.py", "exec")


def test_live_tools_run_and_unimportable_ones_replay_with_a_warning(tmp_path, rollouts):
    import json as _json

    def local_tool(order_id: str) -> str:
        """A tool defined inside a function: not importable by the trainer."""
        return order_id

    report = export_environment(rollouts, tmp_path / "live_env", tools=[get_order, local_tool])
    spec = _json.loads((tmp_path / "live_env" / "live_env" / "spec.json").read_text())
    assert spec["tool_refs"] == {"get_order": f"{__name__}:get_order"}
    assert any("local_tool" in w and "replays" in w for w in report.warnings)
    env = load_environment(tmp_path / "live_env")
    assert _json.loads(env.call_tool("get_order", '{"order_id": "A-7"}', {})) == {"order_id": "A-7", "live": True}
    assert "raised ValueError" in env.call_tool("get_order", {"order_id": ""}, {})


def get_order(order_id: str) -> dict:
    """Look up an order (a live tool the environment imports)."""
    if not order_id:
        raise ValueError("empty id")
    return {"order_id": order_id, "live": True}


def test_module_has_no_whileai_import(tmp_path, rollouts):
    export_environment(rollouts, tmp_path / "plain_env", tools=TOOLS)
    text = (tmp_path / "plain_env" / "plain_env" / "__init__.py").read_text()
    assert "whileai" not in [line.split()[1].split(".")[0] for line in text.splitlines()
                             if line.startswith(("import ", "from "))]
    importlib.invalidate_caches()
