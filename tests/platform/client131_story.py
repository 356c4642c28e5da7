"""whileai 0.131's own tracked-run story, run by 0.131's Python against ``wai server`` (not collected by pytest).

Run as ``<0.131 venv>/bin/python client131_story.py OUT.json`` with ``WHILEAI_PLATFORM_URL`` and
``WHILEAI_API_URL`` naming the server and ``WHILEAI_API_KEY`` a key of its store. It follows the
calls 0.131 documents (its ``whileai.platform`` module docstring and ``whileai.simulations.training``):
``track``, ``behavior``, ``run``, ``log``, ``score`` with rows, ``note``, ``finish`` with a record,
``experiment``, ``figure``, ``live``, ``verdict``, ``brief``, ``evals``; then ``training_run`` with its
``TrainerCallback``; then the hosted calls this server does not have. What each call returned (or
the one line it raised) goes to OUT.json for the test to check against the server's REST answers.
"""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace

import whileai as wai
from whileai.platform import (
    Behavior,
    Data,
    EvalSetup,
    Example,
    Frontier,
    Harness,
    Judge,
    Optimizer,
    PlatformError,
    Provenance,
    RunRecord,
    track,
)


def main(out_path: str) -> None:
    out: dict = {"version": wai.__version__}
    tracked = track("refund-bot", model="Qwen/Qwen3-4B",
                    harness=Harness(instructions="Refund within policy.", tools=["lookup_order", "issue_refund"]),
                    frontier=Frontier(name="big-model", score=81))
    out["agent"] = tracked.record
    tracked.behavior(Behavior(name="refunds", test_version="v2", n=120,
                              judge=Judge(agreement=0.9, human_n=60, length_bias=0.05), noise_floor=2.0,
                              reward_is_judge=False))
    tracked.behavior(Behavior(name="tone", n=120, judge=Judge(agreement=0.85, human_n=40)))
    out["behaviors"] = [b.name for b in tracked.behaviors()]

    base = tracked.run("v0", method="SFT")
    base.score("refunds", 70, ci=3, n=120)
    base.score("tone", 80, ci=3, n=120)
    base.finish(hours=0.1, cost_usd=1.0, say=False)
    tracked.promote("v0")

    run = tracked.run("v1", method="GRPO", targets=["refunds"], trained_on=["refunds-grpo"], flush_every=10)
    for step in range(1, 31):
        run.log(step, reward=0.3 + step / 100, kl=0.01, loss=1.0 / step)
    rows = [Example(prompt=f"ask {i}", reply="done", ok=i % 4 != 0, why="checked the order",
                    tags={"difficulty": "hard" if i % 2 else "easy"}) for i in range(40)]
    run.score("refunds", 82, ci=2.5, n=120, rows=rows)
    run.score("tone", 79, ci=3, n=120)
    run.note("Reward flattened at step 25.")
    run.finish(hours=1.5, gpu="1xH100", cost_usd=6.0, say=False, record=RunRecord(
        data=Data(train="refunds-grpo", n_train=1024, holdout="refunds-test-v2", n_holdout=120),
        optimizer=Optimizer(loss_type="dapo", lr=5e-5, seed=17),
        eval=EvalSetup(metric="pass@1", k=4),
        provenance=Provenance(pins={"trl": "1.13.0"})))
    out["run"] = {"id": run.id, "errors": run.errors, "rows_back": len(run.rows("refunds"))}
    reopened = tracked.open(run.id)
    out["reopened"] = {"step": reopened.step, "scores": sorted(reopened.scores), "status": reopened.status}
    out["runs"] = [{"id": r["id"], "version": r["version"], "status": r["status"]} for r in tracked.runs()]

    out["experiment_before"] = tracked.experiment()
    tracked.experiment(question="Does GRPO on refunds-grpo lift refunds?", measure="pass@1, n=120")
    out["experiment"] = tracked.experiment().question
    tracked.figure("reward-by-step", {"data": [{"type": "scatter", "y": [0.3, 0.4, 0.5]}]}, caption="reward")
    out["figures"] = [f.name for f in tracked.figures()]
    tracked.live("2026-12-01", version="v0", replies=200, flagged=3)

    out["verdict"] = str(tracked.verdict("refunds"))
    out["brief"] = str(tracked.brief("refunds"))
    out["evals"] = [str(e) for e in tracked.evals()]

    # the plain trainer story: training_run, its TrainerCallback driven as a trainer drives it
    trun = wai.platform.training_run("sft-v3", dataset="refunds@2", base_model="Qwen/Qwen3-4B", total_steps=20,
                                     config={"lr": 1e-5}, flush_every=5)
    callback = wai.platform.TrainerCallback(trun)
    state = SimpleNamespace(max_steps=20, global_step=0, log_history=[])
    callback.on_train_begin(state=state)
    for step in range(1, 21):
        state.global_step = step
        callback.on_log(state=state, logs={"loss": 2.0 / step, "learning_rate": 1e-5})
    state.log_history.append({"train_loss": 0.4})
    callback.on_train_end(state=state)
    trun.note(holdout_pass=0.71)
    out["training_run"] = {"id": trun.run_id, "errors": trun.errors, "status": trun.status,
                           "get": wai.platform.get_run(trun.run_id).get("summary")}

    # what this server has no equivalent for: one line each
    gone = {}
    for name, call in (("models", lambda: wai.platform.models()),
                       ("train", lambda: wai.platform.train("refunds@2", method="grpo", steps=10, check="off"))):
        try:
            call()
            gone[name] = None
        except Exception as exc:  # 0.131 raises its PlatformError (two classes, one per module)
            gone[name] = f"{type(exc).__name__}: {exc}"
    out["gone"] = gone
    try:
        tracked.run("v2", method="GRPO").score("Refunds Policy", 50, ci=2, n=120)
        out["bad_score"] = None
    except PlatformError as exc:
        out["bad_score"] = f"{exc.status}: {exc}"

    with open(out_path, "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=1, default=str)


if __name__ == "__main__":
    main(sys.argv[1])
