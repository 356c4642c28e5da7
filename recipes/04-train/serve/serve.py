"""Serve the trained adapter and close the loop: simulate against it, grade with the same judge, read the delta.

The adapter from sft.py / grpo.py loads in any OpenAI-compatible server you already run; whileai
does not host models. With vLLM:

    vllm serve Qwen/Qwen2.5-0.5B-Instruct --enable-lora --lora-modules trained=./runs/sft/adapter --port 8000

(SGLang: ``--lora-paths trained=./runs/sft/adapter``; llama.cpp's server: convert the adapter to
GGUF and pass ``--lora``.) Then ``wai.Endpoint("trained", base_url="http://127.0.0.1:8000/v1")`` is
the trained model as an agent, and ``"base"`` (the base model name the server also serves) is the
before arm: both run on the same pinned tasks, graded by the same judge, and ``delta_report``
says whether the served model is better.

Run:
    python recipes/04-train/serve/serve.py --fake        # offline: a loopback fake server plays both models
    python recipes/04-train/serve/serve.py --base-url http://127.0.0.1:8000/v1 --base Qwen/Qwen2.5-0.5B-Instruct
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import threading
import time
from typing import Any

import whileai as wai

ORDER = re.compile(r"ORD-\d+")


@wai.tool
def get_order(order_id: str) -> dict:  # type: ignore[empty-body]
    """Look up an order by id."""


def judge(row: dict[str, Any]) -> dict[str, Any]:
    """Pass when the agent looked the order up and reported it (the same judge the training used)."""
    called = any(m.get("role") == "tool" for m in row.get("messages") or [])
    return {"reward": float(called and bool(row.get("final_text"))), "markers": {"tool_used": float(called)}}


# --- the offline stand-in for a server you run: two scripted "models" on one loopback port ---------


def _reply(body: dict[str, Any]) -> dict[str, Any]:
    messages, model = body["messages"], body["model"]
    said = " ".join(m.get("content") or "" for m in messages if m["role"] == "user")
    found = ORDER.search(said)
    if messages[-1]["role"] == "tool":
        message = {"role": "assistant", "content": "Here is what I found: " + messages[-1]["content"][:60]}
    elif found and body.get("tools") and body.get("seed", 0) % 10 < (9 if model == "trained" else 4):
        # a sample per rollout seed: the trained model looks the order up 9 times in 10, the base model 4 in 10
        message = {"role": "assistant", "content": None, "tool_calls": [{
            "id": "call_1", "type": "function",
            "function": {"name": "get_order", "arguments": json.dumps({"order_id": found.group(0)})}}]}
    elif found:
        message = {"role": "assistant", "content": "Your order is probably fine."}
    else:
        message = {"role": "assistant", "content": "Which order do you mean?"}
    return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 12}}


async def _app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body = b""
    while True:
        event = await receive()
        body += event.get("body", b"")
        if not event.get("more_body"):
            break
    data = json.dumps(_reply(json.loads(body))).encode()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": data})


def fake_server() -> tuple[str, Any]:
    """Start the stand-in on a free 127.0.0.1 port; return its /v1 URL and a function that stops it."""
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(_app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + 10
    while not server.started and time.time() < deadline:
        time.sleep(0.02)

    def stop() -> None:
        server.should_exit = True
        thread.join(timeout=5)

    return f"http://127.0.0.1:{port}/v1", stop


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fake", action="store_true", help="a loopback fake server plays both models (offline)")
    parser.add_argument("--base-url", default="http://127.0.0.1:8000/v1", help="your OpenAI-compatible server")
    parser.add_argument("--base", default="base", help="the base model's name on that server (the before arm)")
    parser.add_argument("--trained", default="trained", help="the adapter's name on that server (--lora-modules)")
    parser.add_argument("--budget", type=int, default=96)
    args = parser.parse_args(argv)
    stop = None
    base_url = args.base_url
    if args.fake:
        base_url, stop = fake_server()
    try:
        def arm(name: str, tasks: Any = None) -> Any:
            agent = wai.Endpoint(name, base_url=base_url, api_key="none", max_retries=1)
            return wai.simulate(model=agent, tools=[get_order], system_prompt="Help customers with their orders.",
                                mode="eval", repeats=4, budget=args.budget, tasks=tasks, seed=7,
                                user_simulator="template", temperature=0.7)

        before = arm(args.base)
        after = arm(args.trained, tasks=before)  # the same pinned tasks, faults and world
        scored_before, scored_after = before.grade(judge=judge), after.grade(judge=judge)
        print("before:", scored_before.pass_at)
        print("after: ", scored_after.pass_at)
        report = wai.delta_report(scored_before.df, scored_after.df, target="pass_at_1")
        print(wai.format_delta_report(report))
        for entry in after.report.egress:
            print(f"sent to {entry.host}: {entry.requests} requests, {entry.input_tokens} tokens in")
        return {"before": scored_before, "after": scored_after, "delta": report}
    finally:
        if stop is not None:
            stop()


if __name__ == "__main__":
    main()
