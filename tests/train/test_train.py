"""whileai.train on a tiny local model (CPU, no download): every recipe's --tiny run, masks, judge calls, the run record.

Skipped unless the train extra is installed (``make test-train``).
"""

from __future__ import annotations

import math
import runpy
import sys
from pathlib import Path

import polars as pl
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (make test-train installs the CPU wheel)")
trl = pytest.importorskip("trl", reason="the train extra is not installed: pip install 'whileai[train]'")
pytest.importorskip("peft", reason="the train extra is not installed: pip install 'whileai[train]'")

import whileai as wai  # noqa: E402
from whileai.exporters import training_rows, trl_dataset  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore")
RECIPES = Path(__file__).resolve().parents[2] / "recipes" / "04-train"


def _recipe(monkeypatch, capsys, path, *argv):
    monkeypatch.setattr(sys, "argv", [str(path), *argv])
    ns = runpy.run_path(str(RECIPES / path), run_name="__main__")
    return ns, capsys.readouterr().out


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One ``wai server`` on 127.0.0.1 for the recipes' --server runs, with an API key (stopped at the end)."""
    from tests.platform.conftest import Server
    from whileai.platform import create_key

    folder = tmp_path_factory.mktemp("server")
    key = create_key("trainer", store=folder / "s.duckdb")
    started = Server(folder / "s.duckdb", folder / "server.log")
    yield started, key.key
    started.stop()


def _tracked(monkeypatch, capsys, server, path, agent, *argv):
    """A recipe run with --server/--agent/--key, and what the server then holds about the run (over REST)."""
    import httpx

    url, key = server[0].url, server[1]
    monkeypatch.delenv("WHILEAI_API_KEY", raising=False)
    monkeypatch.delenv("WHILEAI_BASE_URL", raising=False)
    ns, out = _recipe(monkeypatch, capsys, path, *argv, "--server", url, "--agent", agent, "--key", key)
    c = httpx.Client(base_url=url, headers={"X-Api-Key": key}, timeout=10)
    (run,) = c.get("/runs", params={"agent": agent}).json()
    points = c.get(f"/runs/{run['id']}/points").json()
    scores = {s["behavior"]: s for s in c.get(f"/runs/{run['id']}/scores").json()}
    return ns, out, run, points, scores


class FakeRun:
    """An in-memory tracked run: what whileai.platform's run records."""

    def __init__(self):
        self.points, self.deltas, self.finished = [], [], None

    def log(self, *, step, loss=None, lr=None, **metrics):
        self.points.append({"step": step, "loss": loss, "lr": lr, **metrics})

    def delta(self, before, after, **kw):
        self.deltas.append(wai.delta_report(before, after))
        return self.deltas[-1]

    def finish(self, *, status, hours=None, cost_usd=None, summary=None, adapter=None):
        self.finished = {"status": status, "hours": hours, "cost_usd": cost_usd, "summary": summary, "adapter": adapter}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    rows = wai.train.tiny_rollouts(6, 4, seed=1)
    holdout = wai.train.tiny_rollouts(3, 4, seed=2, task_prefix="ho-")
    path = wai.train.build_tiny_model(tmp_path_factory.mktemp("m") / "model", [*rows.to_dicts(), *holdout.to_dicts()])
    return rows, holdout, path


def _judge(row):
    return {"reward": float("resolved" in row["final_text"])}


def test_sft_loss_falls_and_the_run_has_the_curve_the_delta_and_the_cost(tiny, tmp_path):
    rows, holdout, path = tiny
    run = FakeRun()
    result = wai.train.sft(rows.filter(pl.col("reward") >= 0.5), path, holdout=holdout, judge=_judge, epochs=6,
                           learning_rate=5e-3, batch_size=4, output=tmp_path / "o", run=run, max_new_tokens=8)
    losses = [p["loss"] for p in result.curve]
    assert losses and all(math.isfinite(x) for x in losses)
    third = max(len(losses) // 3, 1)
    assert sum(losses[-third:]) / third < sum(losses[:third]) / third  # decreasing over the steps
    assert [p["loss"] for p in run.points if p["loss"] is not None] == losses
    assert len(run.deltas) == 1 and result.holdout["verdict"] == run.deltas[0].target_verdict
    assert run.finished["status"] == "done" and run.finished["adapter"] == result.adapter
    assert run.finished["cost_usd"] is None and "GPU rate unknown" in run.finished["summary"]["cost_basis"]
    assert Path(result.adapter, "adapter_config.json").exists()  # LoRA by default


def test_sft_refuses_failing_rows_unless_warned(tiny, tmp_path):
    rows, _, path = tiny
    with pytest.raises(wai.TrainingSelectionError, match="check='warn'"):
        wai.train.sft(rows, path, output=tmp_path / "o")


def test_trained_tokens_are_exactly_the_agent_turns(tiny, tmp_path):
    from transformers import AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    rows, _, path = tiny
    tok = AutoTokenizer.from_pretrained(path)
    data = trl_dataset(rows)
    args = SFTConfig(output_dir=str(tmp_path), report_to=[], max_steps=1, use_cpu=True, assistant_only_loss=True)
    trainer = SFTTrainer(model=path, args=args, processing_class=tok, train_dataset=data)
    for ex, row in zip(trainer.train_dataset, training_rows(rows, format="trl")):
        mask = ex.get("assistant_masks") or [int(label != -100) for label in ex["labels"]]
        trained = [t for t, m in zip(ex["input_ids"], mask) if m]
        expected = tok.apply_chat_template([m for m in row["messages"]], tokenize=False)
        agent = "".join(seg.split("<|end|>")[0] + "<|end|>" for seg in expected.split("<|assistant|>")[1:])
        assert tok.decode(trained) == tok.decode(tok(agent, add_special_tokens=False)["input_ids"])


def test_dpo_prompt_is_masked(tiny):
    from transformers import AutoTokenizer
    from trl.data_utils import maybe_apply_chat_template

    rows, _, path = tiny
    tok = AutoTokenizer.from_pretrained(path)
    pairs = wai.build_preference_pairs(rows).df
    for ex in trl_dataset(pairs, kind="preference"):
        out = maybe_apply_chat_template(ex, tok)
        # DPO scores only the completion tokens: the shared conversation is all in the prompt
        assert out["prompt"].endswith("<|assistant|>") and "<|user|>" not in out["chosen"] + out["rejected"]
        assert out["chosen"] != out["rejected"]


def _held_out_score(scores, behavior, block):
    """The score the run posted on its held-out behavior is the result's after side, in points."""
    after = block["after"]
    assert scores[behavior]["value"] == pytest.approx(100 * after["pass_rate"], abs=0.051)
    assert scores[behavior]["n"] == after["n_tasks"]


def test_sft_recipe_tiny_reports_to_a_server(monkeypatch, capsys, server):
    ns, out, run, points, scores = _tracked(monkeypatch, capsys, server, "sft/sft.py", "sft-agent", "--tiny")
    assert "REFUSED sft" in out and "SFT done" in out and "held-out pass_at_1" in out
    result = ns["result"]
    assert (run["version"], run["status"], run["record"]["method"], run["adapter"]) == ("sft", "done", "sft",
                                                                                      result.adapter)
    assert [p["loss"] for p in points if p["loss"] is not None] == [p["loss"] for p in result.curve]
    assert all(p["lr"] is not None for p in points if p["loss"] is not None)  # the learning rate, each line
    _held_out_score(scores, "holdout", result.holdout)
    assert run["summary"]["holdout"]["after"]["pass_rate"] == result.holdout["after"]["pass_rate"]


def test_dpo_recipe_tiny_reports_to_a_server(monkeypatch, capsys, server):
    ns, out, run, points, scores = _tracked(monkeypatch, capsys, server, "dpo/dpo.py", "dpo-agent", "--tiny",
                                            "--version", "dpo-pairs")
    losses = [p["loss"] for p in ns["result"].curve]
    assert "DPO done" in out and all(math.isfinite(x) for x in losses) and losses[-1] < losses[0]
    assert (run["version"], run["status"]) == ("dpo-pairs", "done")
    assert [p["loss"] for p in points if p["loss"] is not None] == losses
    assert any("rewards/chosen" in p for p in points)  # DPO's reward columns, logged with the loss
    _held_out_score(scores, "holdout", ns["result"].holdout)


def test_reward_model_recipe_tiny_and_its_judge(monkeypatch, capsys, server):
    ns, out, run, points, scores = _tracked(monkeypatch, capsys, server, "reward-model/reward_model.py",
                                            "rm-agent", "--tiny")
    result = ns["result"]
    assert result.method == "rm" and result.holdout["metric"] == "pair_accuracy"
    verdict = ns["judge"](ns["graded"][0])
    assert verdict["reward"] in (0.0, 1.0) and math.isfinite(verdict["rm_score"])
    assert run["status"] == "done" and [p["loss"] for p in points if p["loss"] is not None] == \
        [p["loss"] for p in result.curve]
    _held_out_score(scores, "holdout_pair_accuracy", result.holdout)


def test_grpo_recipe_monitor_catches_the_planted_hack(monkeypatch, capsys, server):
    ns, out, run, points, scores = _tracked(monkeypatch, capsys, server, "grpo/grpo.py", "grpo-agent", "--tiny")
    result = ns["result"]
    assert result.status == "stopped" and "contains:certainly" in result.stop_reason
    assert [a["name"] for a in result.monitor["alarms"]].count("feature") == 1
    assert result.reward["n_calls"] > 0 and result.reward["judge"] == "pays_a_phrase"  # the judge was called
    assert "! feature at step" in out and "(stopped training)" in out
    assert run["status"] == "stopped" and "contains:certainly" in run["summary"]["stop_reason"]
    assert any(k.startswith("rewards/") or k == "reward" for p in points for k in p)  # GRPO's rewards
    assert any("gold_reward" in p for p in points)  # the monitor's points on the same run
    assert "feature" in (run["notes"] or "")  # the monitor's alarm in the run's notes
    _held_out_score(scores, "holdout", result.holdout)


def test_recipe_server_needs_an_agent(monkeypatch, capsys):
    with pytest.raises(SystemExit) as info:
        _recipe(monkeypatch, capsys, "sft/sft.py", "--tiny", "--server", "http://127.0.0.1:9")
    assert info.value.code == 2 and "--server needs --agent" in capsys.readouterr().err


def test_grpo_recipe_clean_judge_raises_no_feature_alarm(monkeypatch, capsys):
    ns, out = _recipe(monkeypatch, capsys, "grpo/grpo.py", "--tiny", "--judge", "clean", "--steps", "8")
    result = ns["result"]
    assert "feature" not in [a["name"] for a in result.monitor["alarms"]]
    assert result.status == "done" and result.reward["judge"] == "clean"
    assert result.monitor["points"] and all("gold_reward" in p for p in result.monitor["points"])
