"""push_to_hub against a fake Hugging Face Hub on loopback (whileai.testing.fake_hf_hub).

The real ``huggingface_hub`` client does the HTTP: create_repo, preupload, one commit, a tag; the
files are then read back through ``hf_hub_download`` at the tag. Never the real network. Skipped
where ``huggingface_hub`` is not installed (``pip install 'whileai[hf]'``); the missing-extra
error is tested in test_push_to_hub_extra.py, which runs either way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import polars as pl
import pytest

from whileai.errors import ArgumentError, EndpointError
from whileai.exporters import push_to_hub
from whileai.table import content_hash, frame
from whileai.testing import fake_hf_hub, rollout_table

hf = pytest.importorskip("huggingface_hub", reason="huggingface_hub is not installed: pip install 'whileai[hf]'")


@pytest.fixture
def hub(monkeypatch, tmp_path):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # no saved login, a fresh cache
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    with fake_hf_hub() as running:
        yield running


def test_push_writes_parquet_card_and_manifest_in_one_commit_pinned_by_a_tag(hub, tmp_path):
    train, test = rollout_table(6, 3, seed=1), rollout_table(4, 2, seed=2)
    push = push_to_hub({"train": train, "test": test}, "me/orders", token="hf_fake", endpoint=hub.url)

    repo = hub.repos["me/orders"]
    assert repo.private is True
    assert len(repo.summaries) == 1  # every file in one commit
    assert push.revision.startswith("zp-ds_") and push.revision in repo.tags
    assert repo.refs[push.revision] == push.commit == repo.refs["main"]
    files = repo.files(push.revision)
    assert sorted(files) == ["README.md", "data/test.parquet", "data/train.parquet", "whileai.json"]

    # read back as a consumer would: hf_hub_download at the tag
    local = hf.hf_hub_download("me/orders", "whileai.json", repo_type="dataset", revision=push.revision,
                               endpoint=hub.url, token="hf_fake", cache_dir=tmp_path / "cache")
    manifest = json.loads(open(local, encoding="utf-8").read())
    assert manifest["revision"] == push.revision
    for name, rows in (("train", train), ("test", test)):
        digest = content_hash(frame(rows))
        assert manifest["splits"][name]["content_hash"] == digest
        assert manifest["splits"][name]["dataset_id"] == "ds_" + digest.split(":", 1)[-1][:12]
        assert manifest["splits"][name]["n_rows"] == rows.height
        assert manifest["splits"][name]["n_tasks"] == frame(rows)["task_key"].n_unique()
        parquet = hf.hf_hub_download("me/orders", f"data/{name}.parquet", repo_type="dataset",
                                     revision=push.revision, endpoint=hub.url, token="hf_fake",
                                     cache_dir=tmp_path / "cache")
        written = pl.read_parquet(parquet)
        assert written.height == rows.height and {"messages", "loss_mask", "reward", "group_id"} <= set(written.columns)

    card = files["README.md"].decode()
    assert card.startswith("---\nconfigs:\n- config_name: default\n  data_files:\n"
                           "  - split: train\n    path: data/train.parquet\n"
                           "  - split: test\n    path: data/test.parquet\n")
    assert f"| train | {train.height:,} | 6 |" in card and f"| test | {test.height:,} | 4 |" in card
    assert f'revision="{push.revision}"' in card and "## Lineage" in card


def test_the_same_rows_pushed_again_keep_their_revision_and_new_rows_get_a_new_one(hub):
    rows = rollout_table(3, 2, seed=3)
    first = push_to_hub(rows, "me/r", token="t", endpoint=hub.url, private=False)
    again = push_to_hub(rows, "me/r", token="t", endpoint=hub.url)
    other = push_to_hub(rollout_table(3, 2, seed=4), "me/r", token="t", endpoint=hub.url, split="test")
    repo = hub.repos["me/r"]
    assert repo.private is False
    assert again.revision == first.revision and repo.refs[first.revision] == first.commit
    assert other.revision != first.revision and sorted(repo.tags) == sorted({first.revision, other.revision})
    assert "data/test.parquet" in repo.files(other.revision) and "data/test.parquet" not in repo.files(first.revision)


def test_no_token_bad_names_and_hub_refusals_are_wai_errors(hub, monkeypatch):
    with pytest.raises(ArgumentError, match="HF_TOKEN"):
        push_to_hub(rollout_table(2, 2), "me/r", endpoint=hub.url)
    monkeypatch.setenv("HF_TOKEN", "from-env")
    assert push_to_hub(rollout_table(2, 2), "me/env", endpoint=hub.url).repo_id == "me/env"  # HF_TOKEN is read
    with pytest.raises(ArgumentError, match="repo_id must be 'namespace/name', got 'orders'"):
        push_to_hub(rollout_table(2, 2), "orders", endpoint=hub.url)
    with pytest.raises(ArgumentError, match="split must be"):
        push_to_hub(rollout_table(2, 2), "me/r", split="a b", endpoint=hub.url)
    # the fake hub refuses a token starting "bad" (401): the message names the repo and the fix
    with pytest.raises(EndpointError, match=r"'me/denied'.*401.*HF_TOKEN"):
        push_to_hub(rollout_table(2, 2), "me/denied", token="bad-token", endpoint=hub.url)
    assert "me/denied" not in hub.repos


def test_a_scored_selection_pushes_with_its_run_lineage_on_the_card(hub):
    import whileai as wai

    @wai.tool
    def get_order(order_id: str) -> dict:
        """Look up an order by id."""
        return {"order_id": order_id}

    data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help.", simulator=False,
                        repeats=2, budget=8)
    rows = data.grade(judge=lambda row: {"reward": int(not row["seeded"])}).select(mode="sft")
    push = rows.push_to_hub("me/sel", token="t", endpoint=hub.url, format="trl")
    card = hub.repos["me/sel"].files(push.revision)["README.md"].decode()
    run_id = rows.meta["run_id"]
    assert f"- train.run_id: `{run_id}`" in card and "- train.mode: `sft`" in card
    assert "- train.judge: `lambda_judge`" in card and "- train.scoring_run_id: `score_" in card
    assert "(format `trl`)" in card


def test_the_fake_hub_branches_from_a_tag_as_the_hub_does(hub):
    push = push_to_hub(rollout_table(2, 2), "me/b", token="t", endpoint=hub.url)
    api = hf.HfApi(endpoint=hub.url, token="t")
    api.create_branch("me/b", branch="keep", revision=push.revision, repo_type="dataset")
    assert hub.repos["me/b"].refs["keep"] == push.commit


def test_load_dataset_reads_each_split_at_the_pinned_revision(hub, tmp_path):
    pytest.importorskip("datasets", reason="datasets is not installed: pip install 'whileai[trl]'")
    train, test = rollout_table(3, 2, seed=5), rollout_table(2, 3, seed=6)
    push = push_to_hub({"train": train, "test": test}, "me/ld", token="t", endpoint=hub.url)
    push_to_hub(rollout_table(4, 4, seed=7), "me/ld", token="t", endpoint=hub.url)  # main moves on; the tag does not
    code = ("from datasets import load_dataset\n"
            f"for split in ('train', 'test'):\n"
            f"    d = load_dataset('me/ld', split=split, revision='{push.revision}', token='t')\n"
            "    print(split, d.num_rows, 'loss_mask' in d.column_names)\n")
    # the endpoint is read when huggingface_hub is imported: a fresh interpreter with HF_ENDPOINT set
    env = dict(os.environ, HF_ENDPOINT=hub.url, HF_HOME=str(tmp_path / "hf"), HF_HUB_DISABLE_TELEMETRY="1",
               HF_DATASETS_CACHE=str(tmp_path / "ds"))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split("\n")[:2] == [f"train {train.height} True", f"test {test.height} True"]
