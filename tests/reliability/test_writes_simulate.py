"""simulate(output=...) checks the path before the first rollout and never loses a finished run."""

from __future__ import annotations

import errno
import os

import pytest

import whileai as wai
from whileai.errors import ArgumentError, InputFileError, WaiError
from whileai.table import _write


@wai.tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""
    return {"order_id": order_id}


def _counting_agent():
    seeded = wai.seeded_agent([get_order])
    calls = {"n": 0}

    def agent(messages, tools):
        calls["n"] += 1
        return seeded(messages, tools)

    return agent, calls


@pytest.mark.parametrize(("output", "error", "match"), [
    ("missing/rows.jsonl", InputFileError, "does not exist"),
    ("rows.csv", ArgumentError, r"output must end in \.jsonl"),
    (".", InputFileError, "is a folder"),
])
def test_writes_simulate_checks_output_before_the_first_rollout(tmp_path, monkeypatch, output, error, match):
    monkeypatch.chdir(tmp_path)
    agent, calls = _counting_agent()
    with pytest.raises(error, match=match):
        wai.simulate(agent, tools=[get_order], system_prompt="Help with orders.", repeats=2, budget=4, output=output)
    assert calls["n"] == 0
    assert issubclass(error, WaiError)


def test_writes_simulate_unwritable_folder_refused_first(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("running as root: folder permissions are not enforced")
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o500)
    agent, calls = _counting_agent()
    with pytest.raises(InputFileError, match="not writable"):
        wai.simulate(agent, tools=[get_order], system_prompt="x", repeats=2, budget=4, output=ro / "rows.jsonl")
    assert calls["n"] == 0


def test_writes_simulate_final_write_failure_returns_the_data_with_a_warning(tmp_path, monkeypatch):
    def disk_full(src, dst, *a, **kw):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_write.os, "replace", disk_full)
    agent, _ = _counting_agent()
    target = tmp_path / "rows.jsonl"
    with pytest.warns(RuntimeWarning, match="not written to"):
        data = wai.simulate(agent, tools=[get_order], system_prompt="Help with orders.", repeats=2, budget=4,
                            output=target)
    assert len(data) == 4
    assert any("No space left on device" in w and ".write(path)" in w for w in data.warnings)
    assert not target.exists() and [p.name for p in tmp_path.iterdir()] == []
