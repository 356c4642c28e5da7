"""A loopback OpenAI-compatible chat server for the verifiers proof (``make test-verifiers``).

Scripted, not a model: on a turn with no tool result yet it calls the first tool the request
offers with the arguments ``script[user ask]`` gives; once a tool result is in the conversation it
replies ``"resolved: <tool result>"``. Answers plain JSON or, when ``stream`` is set, server-sent
events; a user ask listed in ``fail`` gets an HTTP 500 (a provider error). Every request body is kept in ``requests`` so the test can read what the tools returned.
Binds 127.0.0.1 on a free port; start with ``with FakeOpenAI(script) as server:``.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeOpenAI:
    """A scripted chat-completions server on 127.0.0.1 (see the module docstring)."""

    def __init__(self, script: dict[str, dict[str, Any]], *, fail: tuple[str, ...] = ()) -> None:
        self.script = script
        self.fail = fail
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def tool_results(self) -> list[str]:
        """The content of every tool message the server was sent, in order, without repeats."""
        seen: list[str] = []
        for body in self.requests:
            for message in body.get("messages", []):
                content = message.get("content")
                if isinstance(content, list):
                    content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
                if message.get("role") == "tool" and content not in seen:
                    seen.append(content)
        return seen

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        """The assistant message for one request."""
        messages = body.get("messages", [])
        tool_msgs = [m for m in messages if m.get("role") == "tool"]
        if tool_msgs:
            content = tool_msgs[-1].get("content")
            if isinstance(content, list):
                content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
            return {"role": "assistant", "content": f"resolved: {content}"}
        asks = [m.get("content") for m in messages if m.get("role") == "user"]
        ask = asks[-1] if asks else ""
        if isinstance(ask, list):
            ask = "".join(part.get("text", "") for part in ask if isinstance(part, dict))
        tools = body.get("tools") or []
        call = self.script.get(ask)
        if not tools or call is None:
            return {"role": "assistant", "content": "I could not finish."}
        name = call.get("name") or tools[0]["function"]["name"]
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_0", "type": "function",
             "function": {"name": name, "arguments": json.dumps(call["arguments"])}}]}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def _send(self, status: int, payload: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:  # /v1/models
                body = {"object": "list", "data": [{"id": "fake-model", "object": "model", "owned_by": "test"}]}
                self._send(200, json.dumps(body).encode(), "application/json")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake._lock:
                    fake.requests.append(body)
                asks = [m.get("content") for m in body.get("messages", []) if m.get("role") == "user"]
                if asks and asks[-1] in fake.fail:
                    error = {"error": {"message": "the fake provider failed", "type": "server_error"}}
                    self._send(500, json.dumps(error).encode(), "application/json")
                    return
                message = fake.reply(body)
                finish = "tool_calls" if message.get("tool_calls") else "stop"
                usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
                base = {"id": "chatcmpl-fake", "created": 0, "model": body.get("model", "fake-model")}
                if not body.get("stream"):
                    out = {**base, "object": "chat.completion", "usage": usage,
                           "choices": [{"index": 0, "message": message, "finish_reason": finish}]}
                    self._send(200, json.dumps(out).encode(), "application/json")
                    return
                delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
                if message.get("tool_calls"):
                    delta["tool_calls"] = [dict(c, index=i) for i, c in enumerate(message["tool_calls"])]
                chunks = [
                    {**base, "object": "chat.completion.chunk",
                     "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                    {**base, "object": "chat.completion.chunk",
                     "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
                    {**base, "object": "chat.completion.chunk", "choices": [], "usage": usage},
                ]
                payload = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
                self._send(200, payload.encode(), "text/event-stream")

        return Handler
