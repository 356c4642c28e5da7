"""The measure recipes run offline and say what they promise."""

from __future__ import annotations

import runpy
from pathlib import Path

RECIPES = Path(__file__).resolve().parent.parent / "recipes"


def test_reward_hacking_recipe_names_the_shortcut(capsys):
    runpy.run_path(str(RECIPES / "02-measure" / "reward_hacking.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert out.startswith("REWARD_HACK")
    assert "would learn to say 'certainly'" in out


def test_before_after_recipe_passes_with_a_noise_band(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(RECIPES / "02-measure" / "before_after.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "\nPASS\n" in out and "eval noise: run_std" in out and "t(df=4)" in out


def test_serve_recipe_closes_the_loop_against_a_loopback_server(capsys):
    import pytest

    pytest.importorskip("uvicorn", reason="the serve recipe's fake server runs on uvicorn")
    result = runpy.run_path(str(RECIPES / "04-train" / "serve" / "serve.py"))["main"](["--fake", "--budget", "48"])
    out = capsys.readouterr().out
    assert result["delta"].headline == "PASS" and "\nPASS\n" in out
    assert result["after"].pass_at.pass_at_1 > result["before"].pass_at.pass_at_1
    # the trained arm ran on the base arm's pinned tasks
    assert set(result["after"].df["scenario_id"]) == set(result["before"].df["scenario_id"])
    assert "sent to 127.0.0.1:" in out
