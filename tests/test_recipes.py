"""The measure recipes run offline and say what they promise."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

RECIPES = Path(__file__).resolve().parent.parent / "recipes"


def test_reward_hacking_recipe_names_the_shortcut(capsys):
    runpy.run_path(str(RECIPES / "02-measure" / "reward-hacking" / "reward_hacking.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert out.startswith("REWARD_HACK")
    assert "would learn to say 'certainly'" in out


def test_before_after_recipe_passes_with_a_noise_band(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(RECIPES / "02-measure" / "before-after" / "before_after.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "\nPASS\n" in out and "eval noise: run_std" in out and "t(df=4)" in out


def test_report_run_recipe_against_the_store_and_a_server(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    runpy.run_path(str(RECIPES / "04-train" / "report-run" / "report_run.py"), run_name="__main__")
    out = capsys.readouterr().out
    store_part, server_part = out.split("== against wai server ==")
    for part in (store_part, server_part):
        assert "## What happened" in part
        assert re.search(r"refunds: base 62\.3 \(±\d\.\d\), sft-v1 73\.3 \(±\d\.\d\) \(points\)\.", part)
        assert "\nsft-v1 beats base on refunds by +11.0 points" in part and "noise floor " in part
    assert "480 graded rows behind sft-v1's score" in server_part
    import duckdb

    for name in ("report-run.duckdb", "server.duckdb"):
        con = duckdb.connect(str(tmp_path / name), read_only=True)
        assert con.execute("SELECT count(*) FROM tracked_runs").fetchall()[0][0] == 2
        con.close()


def test_serve_recipe_closes_the_loop_against_a_loopback_server(capsys):
    import pytest

    pytest.importorskip("uvicorn", reason="the serve recipe's fake server runs on uvicorn")
    result = runpy.run_path(str(RECIPES / "04-train" / "serve" / "serve.py"))["main"](["--fake", "--budget", "48"])
    out = capsys.readouterr().out
    assert result["delta"].headline.startswith("PASS") and f"\n{result['delta'].headline}\n" in out
    assert result["after"].pass_at.pass_at_1 > result["before"].pass_at.pass_at_1
    # the trained arm ran on the base arm's pinned tasks
    assert set(result["after"].df["scenario_id"]) == set(result["before"].df["scenario_id"])
    assert "sent to 127.0.0.1:" in out
