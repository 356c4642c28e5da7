"""wai.Endpoint against a tiny OpenAI-wire server this test starts on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import whileai as wai
from whileai import simulate
from whileai.errors import ArgumentError, EndpointError
from whileai.simulation import Endpoint, tool

KEY = "sk-test-very-secret-123"


@tool
def get_order(order_id: str) -> dict:
    """Look up an order by id."""


class FakeServer:
    """Scripted chat-completions replies: a tool call on the first turn, text after a tool result."""

    def __init__(self):
        self.requests: list[dict] = []
        self.fail: list[tuple[int, dict]] = []  # (status, headers) for the next requests, in order
        self.delay = 0.0
        self.inflight = 0
        self.max_inflight = 0
        self.lock = threading.Lock()
        self.reject = None  # a substring of the prompt that gets a 400

        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's spelling
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                    server.inflight += 1
                    server.max_inflight = max(server.max_inflight, server.inflight)
                    failure = server.fail.pop(0) if server.fail else None
                try:
                    time.sleep(server.delay)
                    if failure is not None:
                        self._send(failure[0], {"error": {"message": "try later"}}, failure[1])
                        return
                    user = next((m["content"] for m in body["messages"] if m["role"] == "user"), "")
                    if server.reject and server.reject in user:
                        self._send(400, {"error": {"message": "bad request"}}, {})
                        return
                    self._send(200, server.reply(body), {})
                finally:
                    with server.lock:
                        server.inflight -= 1

            def _send(self, status, payload, headers):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def reply(self, body):
        messages = body["messages"]
        if messages[0]["role"] == "system" and messages[0]["content"].startswith("You write the first message"):
            draft = messages[-1]["content"].split("A draft to rewrite in your own words: ")[-1]
            return _completion({"role": "assistant", "content": "Model-written: " + draft})
        last = messages[-1]
        if last["role"] == "tool":
            return _completion({"role": "assistant", "content": f"Checked: {last['content'][:40]}"})
        user = next((m["content"] for m in messages if m["role"] == "user"), "")
        found = re.search(r"[A-Z]{3}-\d+", user)
        if body.get("tools") and found:
            return _completion({"role": "assistant", "content": None, "tool_calls": [{
                "id": "call_1", "type": "function",
                "function": {"name": body["tools"][0]["function"]["name"],
                             "arguments": json.dumps({"order_id": found.group(0)})}}]}, finish="tool_calls")
        return _completion({"role": "assistant", "content": "Which order do you mean?"})

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def _completion(message, finish="stop"):
    return {"id": "x", "object": "chat.completion", "model": "fake",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16}}


@pytest.fixture()
def server():
    s = FakeServer()
    yield s
    s.close()


def endpoint(server, **kw):
    kw.setdefault("api_key", KEY)
    kw.setdefault("backoff_s", 0.001)
    return Endpoint("fake-model", base_url=server.base_url, **kw)


def test_chat_sends_the_openai_request_and_returns_the_message(server):
    ep = endpoint(server, temperature=0.2, params={"top_p": 0.9})
    msg = ep.chat([{"role": "user", "content": "Where is ORD-1234?"}], tools=[get_order], max_tokens=50)
    assert msg["tool_calls"][0]["function"]["name"] == "get_order"
    sent = server.requests[0]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["headers"]["Authorization"] == f"Bearer {KEY}"
    body = sent["body"]
    assert body["model"] == "fake-model" and body["temperature"] == 0.2 and body["top_p"] == 0.9
    assert body["max_tokens"] == 50 and body["tools"] == [get_order.schema]
    assert "finish_reason" not in msg and "usage" not in msg
    ep.close()


def test_retries_with_backoff_on_429_and_5xx_then_succeeds(server):
    server.fail = [(429, {"Retry-After": "0"}), (503, {}), (500, {})]
    msg = endpoint(server, max_retries=3).chat([{"role": "user", "content": "hello"}])
    assert msg["content"] == "Which order do you mean?"
    assert len(server.requests) == 4


def test_gives_up_after_max_retries_and_refuses_4xx_at_once(server):
    server.fail = [(500, {})] * 3
    with pytest.raises(EndpointError, match="answered 500 after 3 tries"):
        endpoint(server, max_retries=2).chat([{"role": "user", "content": "x"}])
    server.requests.clear()
    server.fail = [(401, {})]
    with pytest.raises(EndpointError, match="answered 401") as info:
        endpoint(server, max_retries=5).chat([{"role": "user", "content": "x"}])
    assert len(server.requests) == 1 and info.value.status == 401
    assert KEY not in str(info.value)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_server_is_an_endpoint_error():
    ep = Endpoint("m", base_url=f"http://127.0.0.1:{_closed_port()}/v1", max_retries=1, backoff_s=0.001, timeout=2)
    with pytest.raises(EndpointError, match="refused the connection") as info:
        ep.chat([{"role": "user", "content": "x"}])
    assert info.value.reason == "refused"


def test_a_server_that_is_not_running_stops_simulate_at_once(monkeypatch):
    """A refused connection before any answer is fatal, like a 401: one short retry, not the whole backoff."""
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    waits: list[float] = []
    real_sleep = asyncio.sleep

    async def counted(delay, *args, **kwargs):
        waits.append(delay)
        return await real_sleep(0)

    monkeypatch.setattr(asyncio, "sleep", counted)
    with pytest.raises(EndpointError, match=re.escape(url) + r" must be running.*Start the server") as info:
        simulate(Endpoint("m", base_url=url), tools=[get_order], repeats=1, budget=8, concurrency=2)
    assert info.value.reason == "refused" and info.value.url == url
    assert sum(waits) <= 2 * wai.defaults.ENDPOINT_BACKOFF_S  # one retry per request in flight, not 0.5+1+2+4 s


def test_a_server_that_answered_once_gets_the_usual_retries(server):
    ep = endpoint(server, max_retries=3)
    ep.chat([{"role": "user", "content": "x"}])
    server.close()
    ep.close()
    with pytest.raises(EndpointError, match="could not be reached.*4 times"):
        ep.chat([{"role": "user", "content": "x"}])


def test_the_key_never_shows(server, monkeypatch, caplog, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    ep = Endpoint("fake-model", base_url=server.base_url, backoff_s=0.001)
    assert ep.key_source == "OPENAI_API_KEY"
    shown = [repr(ep), str(ep), repr(vars(ep))]
    assert all(KEY not in s for s in shown) and "OPENAI_API_KEY" in repr(ep)
    server.fail = [(429, {}), (500, {})]
    with caplog.at_level(logging.DEBUG, logger="whileai"):
        data = simulate(ep, tools=[get_order], repeats=2, budget=8, concurrency=2, output=tmp_path / "rows.jsonl")
    assert server.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"
    assert "retrying" in caplog.text and KEY not in caplog.text
    assert KEY not in (tmp_path / "rows.jsonl").read_text()
    assert KEY not in data.df.write_json() and KEY not in str(data.report) and KEY not in repr(data.meta)
    no_key = Endpoint("m", base_url=server.base_url, api_key_env="WAI_TEST_NO_SUCH_VAR")
    assert no_key.key_source == "none" and "key=none" in repr(no_key)
    no_key.chat([{"role": "user", "content": "x"}])
    assert "Authorization" not in server.requests[-1]["headers"]


def test_simulate_with_an_endpoint_agent_runs_concurrently(server):
    server.delay = 0.03
    data = simulate(endpoint(server), tools=[get_order], system_prompt="Help with orders.", repeats=2, budget=24,
                    concurrency=4, fault_rate=0.0)
    assert len(data) == 24 and data.report["rollouts_lost"] == 0
    assert 2 <= server.max_inflight <= 4
    assert set(data.df["model_version"]) == {"fake-model"}
    assert data.df["policy_version"][0].startswith("fake-model@")
    rows = data.rows()
    called = [r for r in rows if any(m.get("tool_calls") for m in r["messages"])]
    assert called and all(r["messages"][-1]["content"].startswith("Checked:") for r in called)
    first = server.requests[0]["body"]["messages"]
    assert first[0] == {"role": "system", "content": "Help with orders."}
    assert "usage" in data.df.columns and data.df["usage"].struct.field("input_tokens").max() >= 11


def test_failed_requests_are_lost_rollouts_and_the_run_goes_on(server):
    server.reject = "ORD-"  # prompts with an id get a 400
    data = simulate(endpoint(server, max_retries=0), tools=[get_order], repeats=2, budget=40, concurrency=3)
    lost = data.report["rollouts_lost_by"]["endpoint_error"]
    assert lost > 0 and len(data) == 40 - lost and data.report["rollouts_lost"] == lost
    assert all("answered 400" in x["error"] for x in data.report["lost"])
    assert "never became rows" in " ".join(data.warnings)


def test_achat_in_a_user_event_loop(server):
    ep = endpoint(server, concurrency=2)

    async def main():
        replies = await asyncio.gather(*(ep.achat([{"role": "user", "content": f"q{i}"}]) for i in range(5)))
        await ep.aclose()
        return replies

    replies = asyncio.run(main())
    assert [r["content"] for r in replies] == ["Which order do you mean?"] * 5
    assert server.max_inflight <= 2


def test_simulate_inside_a_running_loop(server):
    async def main():
        return simulate(endpoint(server), tools=[get_order], repeats=1, budget=3)

    assert len(asyncio.run(main())) == 3


def test_a_model_writes_the_situations_from_the_same_cells(server):
    writer = endpoint(server)
    base = simulate(wai.seeded_agent([get_order]), tools=[get_order], repeats=2, budget=16)
    data = simulate(wai.seeded_agent([get_order]), tools=[get_order], repeats=2, budget=16, simulator=writer)
    assert data.df["prompt"].str.starts_with("Model-written: ").all()
    assert data.df["scenario_id"].to_list() == base.df["scenario_id"].to_list()
    assert data.report["writer"] == "fake-model" and data.report["writer_errors"] == 0
    assert set(data.df["lineage"].struct.field("writer")) == {"fake-model"}


def test_endpoint_arguments_are_checked():
    with pytest.raises(ArgumentError, match="model must be a non-empty model name"):
        Endpoint("")
    with pytest.raises(ArgumentError, match="base_url must be an http"):
        Endpoint("m", base_url="localhost:8000")
    with pytest.raises(ArgumentError, match="concurrency must be an integer >= 1"):
        Endpoint("m", base_url="http://x/v1", concurrency=0)
    with pytest.raises(ArgumentError, match="timeout must be a positive number"):
        Endpoint("m", base_url="http://x/v1", timeout=0)
    with pytest.raises(ArgumentError, match="simulator must be False"):
        simulate(lambda m, t: "x", simulator=42)


def test_an_endpoint_pickles_as_its_settings_and_reads_its_key_again(monkeypatch):
    """What the Ray engine ships: settings only; the receiving process reads the key from the same variable."""
    import pickle

    monkeypatch.setenv("WAI_PICKLE_KEY", "sk-pickle-0123456789")
    ep = Endpoint("m", base_url="http://127.0.0.1:9/v1", api_key_env="WAI_PICKLE_KEY", temperature=0.3,
                  concurrency=3, params={"top_p": 0.5})
    blob = pickle.dumps(ep)
    assert b"sk-pickle" not in blob
    monkeypatch.setenv("WAI_PICKLE_KEY", "sk-other-9876543210")
    back = pickle.loads(blob)
    assert back.settings() == ep.settings() and back.concurrency == 3 and back.key_source == "WAI_PICKLE_KEY"
    assert back._request_headers()["Authorization"] == "Bearer sk-other-9876543210"
    assert back.sent()["requests"] == 0
    given = pickle.loads(pickle.dumps(Endpoint("m", base_url="http://127.0.0.1:9/v1", api_key="sk-given-0123456789")))
    assert "Authorization" not in given._request_headers()  # a key given in code never travels
