"""An RL selection's failing rows are its signal: export no longer tells the README loop to keep
only passes (the SFT-target warning), which would leave all-pass groups with zero advantage."""

from __future__ import annotations

import whileai as wai
from whileai.testing import rollout_table


def test_an_rl_selection_exports_without_the_sft_target_warning(tmp_path):
    rows = wai.select(rollout_table(40, 4, seed=3), mode="rl")
    assert rows.df["reward"].min() < 0.5
    report = rows.export(tmp_path / "train.jsonl")
    assert not any("SFT targets" in w for w in report.warnings)


def test_plain_rollouts_with_failures_keep_the_warning(tmp_path):
    report = wai.export(rollout_table(10, 4, seed=3), tmp_path / "train.jsonl")
    assert any("SFT targets" in w for w in report.warnings)
