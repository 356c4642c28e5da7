"""SimulationReport.lost and .egress are typed (LostRollout, Egress) and dump the JSON the dicts did (issue 41).

``tests/data/blocks_pin/simulation.json`` holds, per scenario below, the two fields as
``model_dump_json()`` and ``to_json()`` wrote them before they were typed (pinned by running these
scenarios on that code): rollouts lost to a raising agent and to an invalid reply over one run and
over two (``eval_run`` set), none lost, and the egress of three endpoints (one that sent nothing)
here and of the agent's workers over Ray with a pinned writer left out.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from whileai import simulate
from whileai.simulation import tool
from whileai.simulation._report import Egress, LostRollout, SimulationReport
from whileai.simulation._reporting import _egress

PINNED = json.loads((Path(__file__).parents[1] / "data" / "blocks_pin" / "simulation.json").read_text())


@tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""


def _flaky_agent():
    calls = {"n": 0}

    def flaky(messages, tools):
        calls["n"] += 1
        n = calls["n"]
        if n % 5 == 0:
            raise RuntimeError("model crashed")
        if n % 7 == 0:
            return {"text": "not a message"}
        return "Fine."

    return flaky


class _Endpoint:
    """What ``_egress`` reads of an endpoint: ``sent()``."""

    def __init__(self, host, model, provider, requests, tokens_in, tokens_out):
        self.counts = {"host": host, "base_url": f"http://{host}/v1", "model": model, "provider": provider,
                       "requests": requests, "input_tokens": tokens_in, "output_tokens": tokens_out}

    def sent(self):
        return dict(self.counts)


def _scenario(name: str) -> SimulationReport:
    def run(**kw):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return simulate(_flaky_agent(), tools=[get_order], simulator=False, concurrency=1, **kw).report

    agent, writer = _Endpoint("127.0.0.1:9", "m1", None, 5, 50, 20), _Endpoint("api.example.com", "w1", "openai", 2, 10, 4)
    if name == "lost_one_run":
        return run(budget=40, repeats=4, seed=1)
    if name == "lost_two_runs":
        return run(budget=16, repeats=2, runs=2, seed=2)
    if name == "nothing_lost":
        return run(budget=4, repeats=2, seed=3)
    report = SimulationReport(rows=3)
    if name == "egress_local":
        user = _Endpoint("h:1", "u", "local", 0, 0, 0)
        report.egress = _egress([("agent", agent), ("writer", writer), ("user", user)],
                                {id(agent): {"requests": 1, "input_tokens": 5, "output_tokens": 2}}, writer="template")
    else:
        assert name == "egress_ray_pinned"
        report.egress = _egress([("agent", agent), ("writer", writer)], {}, writer="pinned",
                                workers={"agent": {"requests": 3, "input_tokens": 30, "output_tokens": 9}})
    return report


@pytest.mark.parametrize("name", sorted(PINNED))
def test_lost_and_egress_dump_what_they_did_and_load_back(name):
    report = _scenario(name)
    assert all(isinstance(x, LostRollout) for x in report.lost) and all(isinstance(e, Egress) for e in report.egress)
    dumped, plain = json.loads(report.model_dump_json()), json.loads(report.to_json())
    for field in ("lost", "egress"):
        pinned = PINNED[name][field]
        assert json.dumps(dumped[field]) == pinned["json"] and json.dumps(plain[field]) == pinned["to_json"]
        back = SimulationReport.model_validate({"rows": 3, field: json.loads(pinned["json"])})  # a stored report
        assert json.dumps(json.loads(back.model_dump_json())[field]) == pinned["json"]


def test_the_entries_read_as_the_dicts_did():
    report = _scenario("lost_two_runs")
    first = report.lost[0]
    assert first["reason"] == first.reason and first.get("error") == first.error and first.eval_run in (0, 1)
    assert {x["reason"] for x in report["lost"]} == {"agent_error", "invalid_reply"}
    egress = _scenario("egress_local").egress
    assert [e["role"] for e in egress] == ["agent", "writer", "user"] and egress[0].requests == 4
    assert egress[2].fields_sent == [] and "sent to 127.0.0.1:9 (agent, m1): 4 requests" in _scenario("egress_local").render()
    assert [e.role for e in _scenario("egress_ray_pinned").egress] == ["agent"]
