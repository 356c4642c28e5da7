"""Simulate for real agents: models named as strings, a simulated user, settings on rows, egress, fail-fast.

Against a loopback fake OpenAI-compatible server this test starts on 127.0.0.1: it scripts a
tool-calling agent that asks one clarifying question when the order id is missing, a user
simulator that answers it, and a writer; it logs every request it gets.
"""

from __future__ import annotations

import json
import re

import polars as pl
import pytest

import whileai as wai
from tests.simulation._fake_endpoint import FakeEndpoint
from whileai.defaults import MODEL_PROVIDERS
from whileai.errors import ArgumentError, EndpointError
from whileai.simulation import Endpoint, tool
from whileai.simulation._endpoint import resolve_model

KEY = "sk-fake-key-0123456789"
ORDER = re.compile(r"ORD-\d+")


@tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""


def _completion(message, finish="stop"):
    return {"choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16}}


class Fake(FakeEndpoint):
    """Scripted models by name: ``agent`` (asks for a missing id, then calls the tool), ``user``, ``writer``."""

    def reply(self, body):
        messages, model = body["messages"], body["model"]
        if model == "writer":
            return _completion({"role": "assistant", "content": "The same prompt every time."})
        if model == "user":
            known = ORDER.search(messages[0]["content"])
            last = messages[-1]["content"] if len(messages) > 1 else ""
            if last.rstrip().endswith("?") and known:
                return _completion({"role": "assistant", "content": f"It's {known.group(0)}."})
            return _completion({"role": "assistant", "content": "DONE"})
        if messages[-1]["role"] == "tool":
            return _completion({"role": "assistant", "content": "Checked: " + messages[-1]["content"][:30]})
        said = " ".join(m["content"] or "" for m in messages if m["role"] == "user")
        found = ORDER.search(said)
        if found and body.get("tools"):
            return _completion({"role": "assistant", "content": None, "tool_calls": [{
                "id": "call_1", "type": "function",
                "function": {"name": "get_order", "arguments": json.dumps({"order_id": found.group(0)})}}]},
                finish="tool_calls")
        return _completion({"role": "assistant", "content": "Which order do you mean?"})

    def by_model(self, name):
        return [r for r in self.log if r["body"]["model"] == name]


@pytest.fixture
def fake():
    server = Fake()
    yield server
    server.close()


def _run(fake, **options):
    options.setdefault("model", Endpoint("agent", base_url=fake.url, api_key=KEY))
    return wai.simulate(tools=[get_order], system_prompt="Help customers with orders.", repeats=2, budget=32,
                        fault_rate=0.0, seed=5, **options)


def _user_turns(row):
    return sum(1 for m in row["messages"] if m["role"] == "user")


def test_clarify_then_act_has_two_user_turns_and_passes(fake):
    data = _run(fake, user_simulator=Endpoint("user", base_url=fake.url))
    rows = data.rows()
    missing = [r for r in rows if not ORDER.search(r["prompt"])]
    given = [r for r in rows if ORDER.search(r["prompt"])]
    assert missing and given  # the grid has vague asks that leave the id out
    for row in missing:
        assert _user_turns(row) == 2, row["messages"]
        assert row["messages"][2]["content"] == "Which order do you mean?"
        assert any(m["role"] == "tool" for m in row["messages"]) and row["final_text"].startswith("Checked")
    assert all(_user_turns(r) == 1 for r in given)  # an answer, not a question: the user is satisfied
    assert data.report.user_turns == len(missing) and data.report.user_simulator == "user"
    assert data.df["lineage"].struct.field("user_model").unique().to_list() == ["user"]
    scored = data.grade(judge=lambda row: float(str(row.get("final_text") or "").startswith("Checked")))
    assert scored.pass_at.pass_at_1 == 1.0
    # the user simulator never saw the grader's reference (the privileged answer key)
    for request in fake.by_model("user"):
        system = request["body"]["messages"][0]["content"]
        assert "say so" not in system and "do not act" not in system and "claim" not in system


def test_without_a_user_simulator_the_question_ends_the_rollout(fake):
    rows = _run(fake).rows()
    missing = [r for r in rows if not ORDER.search(r["prompt"])]
    assert missing and all(_user_turns(r) == 1 and r["final_text"] == "Which order do you mean?" for r in missing)


def test_template_user_answers_offline_from_the_situation():
    def agent(messages, tools):
        if messages[-1]["role"] == "tool":
            return "Done: " + messages[-1]["content"][:20]
        said = " ".join(m["content"] for m in messages if m["role"] == "user")
        found = ORDER.search(said)
        if found:
            return {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "function": {"name": "get_order", "arguments": {"order_id": found.group(0)}}}]}
        return "Could you tell me the order id?"

    data = wai.simulate(agent, tools=[get_order], system_prompt="Help.", repeats=2, budget=32, seed=5,
                        user_simulator="template", offline=True)
    rows = data.rows()
    missing = [r for r in rows if not ORDER.search(r["prompt"])]
    assert missing and all(_user_turns(r) == 2 and r["final_text"].startswith("Done") for r in missing)
    assert data.report.offline and data.report.egress == []
    capped = wai.simulate(agent, tools=[get_order], system_prompt="Help.", repeats=2, budget=32, seed=5,
                          user_simulator="template", max_user_turns=0)
    assert all(_user_turns(r) == 1 for r in capped.rows())


def test_generation_settings_and_usage_land_on_rows_and_requests(fake):
    data = _run(fake, temperature=0.3, top_p=0.9, max_tokens=64)
    lineage = data.df["lineage"].struct
    assert lineage.field("temperature").unique().to_list() == [0.3]
    assert lineage.field("top_p").unique().to_list() == [0.9]
    assert lineage.field("max_tokens").unique().to_list() == [64]
    assert lineage.field("base_url").unique().to_list() == [fake.url]
    assert data.df["usage"].struct.field("input_tokens").min() >= 11
    assert data.report.generation["temperature"] == 0.3 and "key" not in json.dumps(data.report.to_dict()["generation"]).lower()
    bodies = [r["body"] for r in fake.by_model("agent")]
    assert all(b["temperature"] == 0.3 and b["top_p"] == 0.9 and b["max_tokens"] == 64 for b in bodies)
    seeds = {b["seed"] for b in bodies}
    assert len(seeds) > 1  # each rollout samples with its own seed
    config = wai.pass_at(data.grade(judge=lambda r: 1.0).df).config
    assert config["temperature"] == "0.3" and config["base_url"] == fake.url
    hotter = _run(fake, temperature=1.0).grade(judge=lambda r: 1.0)
    report = wai.delta_report(data.grade(judge=lambda r: 1.0).df, hotter.df)
    assert any("temperature differs" in w for w in report.warnings)
    assert KEY not in data.df.write_ndjson() and KEY not in json.dumps(data.report.to_dict())


def test_egress_counts_equal_the_server_log(fake):
    data = _run(fake, user_simulator=Endpoint("user", base_url=fake.url))
    egress = {e["role"]: e for e in data.report()["egress"]}
    assert egress["agent"]["requests"] == len(fake.by_model("agent"))
    assert egress["user"]["requests"] == len(fake.by_model("user"))
    assert egress["agent"]["input_tokens"] == 11 * len(fake.by_model("agent"))
    assert egress["agent"]["output_tokens"] == 5 * len(fake.by_model("agent"))
    assert egress["agent"]["host"] == fake.url.split("/")[2]
    assert "messages" in egress["agent"]["fields_sent"] and "tools" in egress["agent"]["fields_sent"]


def test_a_401_fails_fast_naming_model_and_url_not_the_key(fake):
    denied = fake.url.replace("/v1", "/denied/v1")
    with pytest.raises(EndpointError, match="answered 401") as info:
        _run(fake, model=Endpoint("agent", base_url=denied, api_key=KEY, max_retries=0))
    message = str(info.value)
    assert "'agent'" in message and denied in message and KEY not in message
    assert len(fake.log) <= 16  # the first batch at most, not the whole budget


def test_offline_refuses_any_network_call(fake):
    with pytest.raises(ArgumentError, match="offline must make no network call"):
        _run(fake, offline=True)
    assert fake.log == []
    endpoint = Endpoint("agent", base_url=fake.url)

    def sneaky(messages, tools):  # an agent that calls a model from inside
        return endpoint.chat(messages)

    with pytest.raises(EndpointError, match="offline=True must make no network call"):
        wai.simulate(sneaky, tools=[get_order], system_prompt="Help.", budget=4, repeats=2, offline=True)
    assert fake.log == []


def test_model_writer_by_name_dedupes_and_keeps_task_ids(fake, monkeypatch):
    writer = Endpoint("writer", base_url=fake.url)
    base = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help.", repeats=2, budget=16)
    data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="Help.", repeats=2, budget=16,
                        simulator=writer)
    prompts = data.df.unique("scenario_id").sort("scenario_id")
    assert prompts["prompt"].n_unique() == prompts.height  # a repeated written prompt fell back to the template
    assert "The same prompt every time." in prompts["prompt"].to_list()
    assert any("repeat an earlier one" in w for w in data.warnings)
    assert sorted(base.df["scenario_id"].unique()) == sorted(data.df["scenario_id"].unique())


def test_dynamic_sampling_oversamples_unanimous_asks_until_mixed():
    def agent(messages, tools):
        ctx = wai.simulation.current_rollout()
        # tasks of the first half pass from the third rollout on; the rest never pass
        index = int(ctx.situation.scenario_id[-1], 16) % 2
        return "ok" if index == 0 and ctx.rollout_index >= 2 else "no"

    judge = lambda row: float(row["final_text"] == "ok")  # noqa: E731
    data = wai.simulate(agent, tools=[get_order], system_prompt="Help.", repeats=2, budget=32, seed=1,
                        repeat_policy="dynamic", grader=judge, max_rollouts=6)
    r = data.report
    per_task = data.df.group_by("scenario_id").agg(pl.len().alias("n"), pl.col("reward").sum().alias("p"))
    passing = per_task.filter(pl.col("p") > 0)
    never = per_task.filter(pl.col("p") == 0)
    assert passing.height and never.height
    assert passing["n"].to_list() == [4] * passing.height  # 2 all-fail, then 2 more: mixed
    assert never["n"].to_list() == [6] * never.height  # all-fail up to the cap
    assert r.asks_oversampled == per_task.height and r.asks_never_mixed == never.height
    assert r.rollouts_oversampled == data.df.height - 2 * per_task.height
    assert data.df["reward"].null_count() == 0  # the rows come back graded
    with pytest.raises(ArgumentError, match="grader must be given with repeat_policy='dynamic'"):
        wai.simulate(agent, tools=[get_order], budget=8, repeats=2, repeat_policy="dynamic")


@pytest.mark.parametrize("provider", sorted(MODEL_PROVIDERS))
def test_every_provider_resolves_to_the_request_it_would_send(provider):
    url, key_env, _ = MODEL_PROVIDERS[provider]
    ep = Endpoint(f"{provider}/some-model", api_key="k-123")
    assert ep._url == f"{url}/chat/completions" and ep.provider == provider
    assert ep._request_headers()["Authorization"] == "Bearer k-123"
    assert ep._payload([{"role": "user", "content": "hi"}], None, {})["model"] == "some-model"
    assert resolve_model(f"{provider}/some-model").key_env == key_env


def test_a_missing_key_names_the_variable(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(EndpointError, match=r"ANTHROPIC_API_KEY must be set .*export ANTHROPIC_API_KEY"):
        Endpoint("anthropic/claude-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "a-key")
    assert Endpoint("anthropic/claude-test").key_source == "ANTHROPIC_API_KEY"
    assert Endpoint("ollama/llama3").key_source == "none"  # local servers need no key
    assert Endpoint("ollama/llama3", base_url="http://127.0.0.1:9999/v1").model == "llama3"
    assert resolve_model("Qwen/Qwen3-4B", base_url="http://127.0.0.1:8000/v1").model == "Qwen/Qwen3-4B"
    with pytest.raises(ArgumentError, match="must name a model after the provider"):
        Endpoint("openai/")
    with pytest.raises(ArgumentError, match="agent must be given"):
        wai.simulate(tools=[get_order])
