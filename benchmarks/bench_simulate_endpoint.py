"""simulate() against a fast fake OpenAI-compatible endpoint: is the HTTP client the bottleneck, or our code?

A uvicorn server in its own process answers every chat-completions request at once: three tool
calls, then a final answer, so each rollout is four requests. The table: rollouts, requests,
wall seconds, requests per second, and the share of the client process's CPU spent outside the
HTTP stack (our engine), for the concurrency given.

    python benchmarks/bench_simulate_endpoint.py [--rollouts 10000] [--concurrency 64]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

_SERVER = r'''
import json, sys
import uvicorn

REPLY = {}

def _body(n_tools):
    if n_tools < 3:
        message = {"role": "assistant", "content": None, "tool_calls": [{"id": f"c{n_tools}", "type": "function",
                   "function": {"name": "get_order", "arguments": "{\"order_id\": \"ORD-1\"}"}}]}
        finish = "tool_calls"
    else:
        message, finish = {"role": "assistant", "content": "Done."}, "stop"
    return json.dumps({"choices": [{"index": 0, "message": message, "finish_reason": finish}],
                       "usage": {"prompt_tokens": 50, "completion_tokens": 10}}).encode()

CACHED = {n: _body(n) for n in range(4)}

async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    chunks = []
    while True:
        event = await receive()
        chunks.append(event.get("body", b""))
        if not event.get("more_body"):
            break
    raw = b"".join(chunks)
    n_tools = raw.count(b'"role":"tool"') + raw.count(b'"role": "tool"')
    body = CACHED[min(n_tools, 3)]
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})

uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="error", access_log=False)
'''


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(url: str, deadline: float) -> None:
    while time.time() < deadline:
        try:
            req = urllib.request.Request(url, data=json.dumps({"messages": []}).encode(), method="POST")
            urllib.request.urlopen(req, timeout=1).read()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the fake endpoint did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-c", _SERVER, str(port)])
    try:
        base = f"http://127.0.0.1:{port}/v1"
        _wait(f"{base}/chat/completions", time.time() + 20)
        import whileai as wai
        from whileai.simulation import Endpoint, tool

        @tool
        def get_order(order_id: str) -> dict:  # type: ignore[empty-body]
            """Look up an order by id."""

        endpoint = Endpoint("fake", base_url=base, concurrency=args.concurrency, api_key="k")
        cpu0, t0 = time.process_time(), time.perf_counter()
        data = wai.simulate(model=endpoint, tools=[get_order], system_prompt="Help.", repeats=1, repeat_policy="none",
                            budget=args.rollouts, concurrency=args.concurrency, fault_rate=0.0, progress=False)
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        requests = data.report.egress[0]["requests"]
        turns = data.df["messages"].list.len().mean()
        print("| rollouts | requests | messages per row | concurrency | wall s | requests/s | client CPU s |")
        print("|---|---|---|---|---|---|---|")
        print(f"| {data.df.height:,} | {requests:,} | {turns:.1f} | {args.concurrency} | {wall:.1f} | "
              f"{requests / wall:,.0f} | {cpu:.1f} |")
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    os.environ.setdefault("NO_COLOR", "1")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    main()
