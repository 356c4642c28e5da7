"""``simulate(..., engine="ray")`` against the local engine: the same tasks, the same rows up to order.

Runs under ``make test-ray`` (a local Ray with 2 CPUs, no other address); skips where the ``ray``
extra is not installed. The endpoint test starts a fake OpenAI-compatible server on 127.0.0.1 (a
free port) inside the test and stops it there.
"""

from __future__ import annotations

import json
import os
import threading

import polars as pl
import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install 'whileai[ray]'; make test-ray)")
pytest.importorskip("ray.data", reason="ray[data] is not installed (pip install 'whileai[ray]')")

import whileai as wai  # noqa: E402
from tests.engines.conftest import RAY_TEST_KEY, RAY_TEST_KEY_ENV  # noqa: E402
from tests.simulation._fake_endpoint import FakeEndpoint  # noqa: E402
from whileai.errors import ArgumentError, EndpointError  # noqa: E402
from whileai.simulation import Endpoint, tool  # noqa: E402
from whileai.simulation._ray import plan_parts  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

KEY_ENV, KEY = RAY_TEST_KEY_ENV, RAY_TEST_KEY  # set by the session fixture before ray.init
POLICY = "Help customers with orders. Never refund more than $100 without a manager."


@tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""


@tool
def refund_order(order_id: str, amount: float) -> dict:
    """Refund part of an order."""


TOOLS = [get_order, refund_order]


def _read_parts(folder) -> pl.DataFrame:
    """The workers' part files in name order, as one frame (what a reader of the folder gets)."""
    files = sorted(p for p in os.listdir(folder) if p.endswith(".parquet"))
    return pl.concat([pl.read_parquet(os.path.join(folder, f)) for f in files], how="vertical")


def _same_rows(local: pl.DataFrame, far: pl.DataFrame) -> None:
    """Every column the local run has, equal row by row once both are sorted by rollout_id."""
    assert local.height == far.height
    a, b = local.sort("rollout_id"), far.sort("rollout_id")
    for col in local.columns:
        assert a[col].to_list() == b[col].to_list(), col
    if "usage" not in local.columns:  # the Ray parts always carry usage (one schema for every part)
        assert b["usage"].null_count() == b.height


def _same_report(local, far) -> None:
    mine, theirs = local.report.to_dict(), far.report.to_dict()
    for key in ("rows", "tasks", "k", "runs", "run_id", "pairwise", "tier_mix", "faults_met", "fault_kinds",
                "seeded_rows", "seeded_by_kind", "truncated", "rollouts_requested", "rollouts_completed",
                "rollouts_lost", "rollouts_lost_by", "user_turns", "unknown_tool_calls", "stopped_because",
                "asks_oversampled", "asks_never_mixed", "rollouts_oversampled"):
        assert mine[key] == theirs[key], key


@pytest.mark.parametrize("options", [
    {"repeats": 4, "budget": 160},
    {"repeats": 2, "budget": 48, "runs": 2, "user_simulator": "template", "concurrency": 1},
], ids=["fixed", "runs-and-user"])
def test_the_same_rows_as_the_local_engine(local_ray, tmp_path, options):
    agent = wai.seeded_agent(TOOLS, seed=3)
    common = dict(tools=TOOLS, system_prompt=POLICY, seed=11, progress=False, **options)
    local = wai.simulate(agent, **common)
    out = tmp_path / "rows"
    far = wai.simulate(agent, engine="ray", num_workers=2, output=out, **common)
    assert far.path == str(out) and far.meta["engine"] == "ray"
    assert far.report.engine == "ray" and far.report.num_workers == 2
    rows = _read_parts(out)
    _same_rows(local.df, rows)
    assert rows["rollout_id"].to_list() == local.df["rollout_id"].to_list()  # parts in task order: the local order
    assert local.df["scenario_id"].unique().sort().to_list() == rows["scenario_id"].unique().sort().to_list()
    _same_report(local, far)
    assert ray.data.read_parquet(str(out)).count() == local.df.height
    assert not [p for p in os.listdir(tmp_path) if p != "rows"]  # no temporary folder left beside it


def test_dynamic_sampling_runs_split_by_ask(local_ray, tmp_path):
    """Each ask's oversampling reads only its own rows, so the workers decide it where the rows are."""
    def graded(df: pl.DataFrame) -> pl.DataFrame:
        return df.with_columns((~pl.col("seeded")).cast(pl.Float64).alias("reward"))

    common = dict(tools=TOOLS, system_prompt=POLICY, seed=4, repeats=2, budget=40, repeat_policy="dynamic",
                  max_rollouts=6, progress=False)
    agent = wai.seeded_agent(TOOLS, seed=1, rate=0.5)
    local = wai.simulate(agent, score_rows=graded, **common)
    far = wai.simulate(agent, score_rows=graded, engine="ray", num_workers=2, output=tmp_path / "dyn", **common)
    assert local.report.rollouts_oversampled > 0
    assert local.report.stopped_because == "budget"
    _same_rows(local.df, _read_parts(tmp_path / "dyn"))
    _same_report(local, far)


def test_progress_moves_as_parts_finish(local_ray, tmp_path):
    seen: list[tuple[int, int]] = []
    far = wai.simulate(wai.seeded_agent(TOOLS), tools=TOOLS, repeats=2, budget=64, engine="ray", num_workers=2,
                       output=tmp_path / "p", progress=lambda done, total, info: seen.append((done, total)))
    assert far.report.rows == 64
    assert len(seen) == len(plan_parts(list(range(32)), [None], 2, 2)) == 8
    assert seen[-1] == (64, 64) and [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_parts_are_whole_tasks_in_order():
    parts = plan_parts(["a", "b", "c", "d", "e"], [1, 2], 3, 1)
    flat = [(item[2], item[0], item[1]) for part in parts for item in part]
    assert flat == [(run, t, i) for run in (1, 2) for t in "abcde" for i in range(3)]
    assert all(len({(it[2], it[0]) for it in part}) * 3 == len(part) for part in parts)
    assert len(parts) == 4


class Fake(FakeEndpoint):
    """A scripted OpenAI-compatible agent on 127.0.0.1: calls get_order with the id, then answers."""

    def reply(self, body):
        messages = body["messages"]
        if body["model"] == "user":  # the simulated user: gives the id when asked for it, else is done
            known = [w.strip(".,?!") for w in messages[0]["content"].split() if w.strip(".,?!").startswith("ORD-")]
            asked = len(messages) > 1 and str(messages[-1]["content"]).rstrip().endswith("?")
            message = {"role": "assistant", "content": f"It's {known[0]}." if asked and known else "DONE"}
        elif messages[-1]["role"] == "tool":
            message = {"role": "assistant", "content": "Checked: " + messages[-1]["content"][:30]}
        else:
            said = " ".join(m["content"] or "" for m in messages if m["role"] == "user")
            words = [w.strip(".,?!") for w in said.split() if w.strip(".,?!").startswith("ORD-")]
            message = ({"role": "assistant", "content": None, "tool_calls": [{
                "id": "call_1", "type": "function",
                "function": {"name": "get_order", "arguments": json.dumps({"order_id": words[0]})}}]}
                if words else {"role": "assistant", "content": "Which order do you mean?"})
        return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}}


@pytest.fixture
def fake():
    server = Fake()
    yield server
    server.close()


def test_an_endpoint_is_rebuilt_in_each_worker_with_its_key_from_the_environment(local_ray, fake, tmp_path):
    common = dict(tools=[get_order], system_prompt="Help customers with orders.", repeats=2, budget=24, seed=5,
                  fault_rate=0.0, progress=False, concurrency=4)
    agent = Endpoint("agent", base_url=fake.url, api_key_env=KEY_ENV)
    common["user_simulator"] = Endpoint("user", base_url=fake.url, api_key_env=KEY_ENV)
    local = wai.simulate(agent, **common)
    local_requests = len(fake.log)
    far = wai.simulate(agent, engine="ray", num_workers=2, output=tmp_path / "ep", **common)
    worker_log = fake.log[local_requests:]
    assert worker_log and all(r["auth"] == f"Bearer {KEY}" for r in worker_log)  # the key came from the worker's env
    _same_rows(local.df, _read_parts(tmp_path / "ep"))
    egress = far.report.egress
    assert [e["role"] for e in egress] == ["agent", "user"]
    assert sum(e["requests"] for e in egress) == len(worker_log) == local_requests
    assert egress[1]["requests"] == sum(1 for r in worker_log if r["body"]["model"] == "user") > 0
    assert egress[0]["input_tokens"] == 7 * egress[0]["requests"]
    assert far.report.user_turns == local.report.user_turns
    assert KEY not in str(far.report) and KEY not in json.dumps(far.report.to_dict(), default=str)


def test_a_denied_endpoint_stops_the_run_and_leaves_no_folder(local_ray, fake, tmp_path):
    agent = Endpoint("agent", base_url=fake.url.replace("/v1", "/denied/v1"), api_key_env=KEY_ENV, max_retries=0)
    with pytest.raises(EndpointError, match="401"):
        wai.simulate(agent, tools=[get_order], repeats=2, budget=16, engine="ray", num_workers=2,
                     output=tmp_path / "no", progress=False)
    assert not (tmp_path / "no").exists() and not list(tmp_path.iterdir())


def test_a_key_given_in_code_is_refused(local_ray, fake, tmp_path):
    with pytest.raises(ArgumentError, match="key must come from an environment variable with engine='ray'"):
        wai.simulate(Endpoint("agent", base_url=fake.url, api_key=KEY), tools=[get_order], budget=16, repeats=2,
                     engine="ray", output=tmp_path / "k")


class _Locked:
    """An agent holding a lock: it cannot be pickled."""

    def __init__(self):
        self.lock = threading.Lock()

    def __call__(self, messages, tools):
        return "Done."


def test_an_agent_that_cannot_be_pickled_is_refused_with_the_fix(local_ray, tmp_path):
    with pytest.raises(ArgumentError, match=r"agent must be picklable to run on Ray workers .*engine='local'"):
        wai.simulate(_Locked(), tools=[get_order], budget=16, repeats=2, engine="ray", output=tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_bad_arguments(local_ray, tmp_path):
    agent = wai.seeded_agent([get_order])
    with pytest.raises(ArgumentError, match="output must be a folder path for the rows the Ray workers write, got None"):
        wai.simulate(agent, tools=[get_order], budget=16, repeats=2, engine="ray")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x.txt").write_text("x")
    with pytest.raises(ArgumentError, match="output must be a new or empty folder"):
        wai.simulate(agent, tools=[get_order], budget=16, repeats=2, engine="ray", output=tmp_path / "full")
    with pytest.raises(ArgumentError, match="output must be in a folder that exists"):
        wai.simulate(agent, tools=[get_order], budget=16, repeats=2, engine="ray", output=tmp_path / "a" / "b")
    with pytest.raises(ArgumentError, match="output must be a folder for engine='ray'"):
        wai.simulate(agent, tools=[get_order], budget=16, repeats=2, engine="ray", output=tmp_path / "full" / "x.txt")
    with pytest.raises(ArgumentError, match="num_workers must come with engine='ray'"):
        wai.simulate(agent, tools=[get_order], budget=16, repeats=2, num_workers=2)
    with pytest.raises(ArgumentError, match="num_workers must be"):
        wai.simulate(agent, tools=[get_order], budget=16, repeats=2, engine="ray", num_workers=0,
                     output=tmp_path / "z")
    with pytest.raises(ArgumentError, match="engine must be one of"):
        wai.simulate(agent, tools=[get_order], budget=16, repeats=2, engine="spark")


def test_lost_rollouts_are_counted_and_written_apart(local_ray, tmp_path):
    from whileai.simulation import current_rollout

    seeded = wai.seeded_agent([get_order])

    def flaky(messages, tools):
        if current_rollout().rollout_index == 1:
            raise RuntimeError("flaky agent")
        return seeded(messages, tools)

    common = dict(tools=[get_order], repeats=2, budget=48, seed=2, progress=False)
    local = wai.simulate(flaky, **common)
    far = wai.simulate(flaky, engine="ray", num_workers=2, output=tmp_path / "l", **common)
    assert local.report.rollouts_lost == far.report.rollouts_lost == 24
    assert far.report.lost == local.report.lost
    _same_rows(local.df, _read_parts(tmp_path / "l"))
    _same_rows(local.lost, _read_parts(tmp_path / "l" / "_lost"))
    assert ray.data.read_parquet(str(tmp_path / "l")).count() == 24  # readers skip _lost
