"""``wai.train.tracked_callback`` driving a user's own TRL SFTTrainer on a tiny local model (CPU, no download).

Skipped unless the train extra is installed (``make test-train``).
"""

from __future__ import annotations

import polars as pl
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (make test-train installs the CPU wheel)")
trl = pytest.importorskip("trl", reason="the train extra is not installed: pip install 'whileai[train]'")

import whileai as wai  # noqa: E402
import whileai.platform as wp  # noqa: E402
from whileai.defaults import HOLDOUT_BEHAVIOR  # noqa: E402
from whileai.errors import ArgumentError  # noqa: E402
from whileai.exporters import trl_dataset  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore")


def _judge(row):
    return {"reward": float("resolved" in row["final_text"])}


def test_callback_logs_finishes_and_posts_the_held_out_score(tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    rows = wai.train.tiny_rollouts(6, 4, seed=1)
    holdout = wai.train.tiny_rollouts(3, 4, seed=2, task_prefix="ho-")
    path = wai.train.build_tiny_model(tmp_path / "model", [*rows.to_dicts(), *holdout.to_dicts()])
    tok = AutoTokenizer.from_pretrained(str(path))
    model = AutoModelForCausalLM.from_pretrained(str(path))
    tracked = wp.track({"name": "agent"}, store=tmp_path / "s.duckdb")
    run = tracked.run("sft-own-trainer")
    callback = wai.train.tracked_callback(run, holdout=holdout, judge=_judge, max_new_tokens=8)
    args = SFTConfig(output_dir=str(tmp_path / "out"), report_to=[], learning_rate=5e-3, use_cpu=True, logging_steps=1,
                     save_strategy="no", seed=0, per_device_train_batch_size=4, num_train_epochs=2,
                     completion_only_loss=True, disable_tqdm=True)
    train = trl_dataset(rows.filter(pl.col("reward") >= 0.5), unroll=True)
    SFTTrainer(model=model, args=args, processing_class=tok, train_dataset=train, callbacks=[callback]).train()
    record = tracked.open(run.id).record
    assert record.status == "done" and record.hours is not None and record.n_points > 0
    points = run.points()
    assert all(p["loss"] is not None for p in points if "train_runtime" not in p)
    assert any(p.get("lr") is not None for p in points)
    holdout_block = record.summary["holdout"]
    assert set(holdout_block) == {"metric", "before", "after", "delta", "ci95", "verdict"}
    scores = run.scores()
    assert [s.behavior for s in scores] == [HOLDOUT_BEHAVIOR]
    assert scores[0].value == pytest.approx(100 * holdout_block["after"]["pass_rate"])
    assert "nothing scored" not in str(tracked.brief()).lower()


def test_callback_arguments_are_checked():
    with pytest.raises(ArgumentError, match="run must be a tracked run with log\\(\\) and finish\\(\\), got str"):
        wai.train.tracked_callback("run")

    class Run:
        def log(self, **kw):
            pass

        def finish(self, **kw):
            pass

    with pytest.raises(ArgumentError, match="holdout and judge must be given together"):
        wai.train.tracked_callback(Run(), judge=_judge)
