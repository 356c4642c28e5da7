"""whileai 0.131's real client, in its own venv, against ``wai server`` on 127.0.0.1 (``make test-client131``).

The venv's Python is ``$WAI_CLIENT131_PYTHON``, else ``.venv-wai131/bin/python`` (what the make target
installs); without either the test skips and says how to get one. ``client131_story.py`` runs 0.131's
documented calls and writes what each returned; the test reads the same records back over our REST
routes.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import httpx
import pytest

import whileai.platform as wp

ROOT = Path(__file__).resolve().parents[2]
STORY = Path(__file__).with_name("client131_story.py")
STORY_TIMEOUT_S = 300


def _python131() -> str:
    path = os.environ.get("WAI_CLIENT131_PYTHON") or str(ROOT / ".venv-wai131" / "bin" / "python")
    if not Path(path).is_file():
        pytest.skip(f"whileai 0.131's venv is absent ({path}); run `make test-client131`, or set "
                    "WAI_CLIENT131_PYTHON to a Python with whileai==0.131 installed")
    probe = subprocess.run([path, "-I", "-c", "import whileai; print(whileai.__version__)"], capture_output=True, text=True,
                           timeout=120)
    if probe.returncode != 0 or probe.stdout.strip() != "0.131":
        pytest.skip(f"{path} does not import whileai 0.131 (got {probe.stdout.strip() or probe.stderr[-200:]!r}); "
                    "run `make test-client131`")
    return path


def test_0131_client_story_runs_on_our_server(tmp_path, start_server):
    python = _python131()
    store = tmp_path / "s.duckdb"
    key = wp.create_key("alice", store=store)
    server = start_server(store)
    out = tmp_path / "out.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHILEAI_")}
    env.update(HOME=str(tmp_path / "home131"), WHILEAI_PLATFORM_URL=server.url, WHILEAI_API_URL=server.url,
               WHILEAI_API_KEY=key.key)
    done = subprocess.run([python, "-I", str(STORY), str(out)], env=env, capture_output=True, text=True,
                          timeout=STORY_TIMEOUT_S, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(out.read_text())
    assert got["version"] == "0.131"

    c = httpx.Client(base_url=server.url, headers={"X-Api-Key": key.key}, timeout=10)
    agent = c.get("/agents/refund-bot").json()
    assert (agent["model"], agent["tools"], agent["served"]) == ("Qwen/Qwen3-4B", ["lookup_order", "issue_refund"],
                                                                 "v0")
    assert got["behaviors"] == ["refunds", "tone"]
    assert c.get("/agents/refund-bot/behaviors").json()["refunds"]["agreement"] == 0.9
    run_id = got["run"]["id"]
    assert got["run"]["errors"] == 0 and got["run"]["rows_back"] == 40
    run = c.get(f"/runs/{run_id}").json()
    assert (run["status"], run["hours"], run["cost_usd"], run["n_points"], run["notes"]) == \
        ("done", 1.5, 6.0, 30, "Reward flattened at step 25.")
    assert run["record"]["optimizer"]["loss_type"] == "dapo" and run["record"]["data"]["n_train"] == 1024
    assert run["record"]["method"] == "GRPO"
    points = c.get(f"/runs/{run_id}/points").json()
    assert [p["step"] for p in points] == list(range(1, 31)) and points[-1]["reward"] == pytest.approx(0.6)
    scores = {s["behavior"]: s for s in c.get(f"/runs/{run_id}/scores").json()}
    assert (scores["refunds"]["value"], scores["refunds"]["ci"], scores["refunds"]["n_rows"]) == (82, 2.5, 40)
    assert got["reopened"] == {"step": 30, "scores": ["refunds", "tone"], "status": "done"}
    assert [r["version"] for r in got["runs"]] == ["v0", "v1"]
    assert got["experiment_before"] is None and got["experiment"].startswith("Does GRPO")
    assert got["figures"] == ["reward-by-step"]
    verdict = c.get("/agents/refund-bot/verdict", params={"behavior": "refunds"}).json()
    assert (verdict["candidate"], verdict["served"], verdict["delta"]) == ("v1", "v0", 12.0)
    assert got["verdict"].startswith("refunds: v1 beats v0 by 12")  # 0.131's own line, from our records
    assert "v1 highest at 82" in got["brief"] and len(got["evals"]) == 2

    trained = got["training_run"]
    assert trained["errors"] == 0 and trained["status"] == "done"
    assert trained["get"] == {"train_loss": 0.4, "holdout_pass": 0.71}
    trun = c.get(f"/runs/{trained['id']}").json()
    assert (trun["total_steps"], trun["n_points"], trun["dataset_id"]) == (20, 20, "refunds@2")
    assert "ts" not in c.get(f"/runs/{trained['id']}/points").json()[0]

    for name, equivalent in (("models", "recipes/04-train/serve"), ("train", "wai.train")):
        line = got["gone"][name]
        assert line is not None and "410" in line and equivalent in line and "\n" not in line, line
    assert got["bad_score"].startswith("422") and "Refunds Policy" in got["bad_score"]
