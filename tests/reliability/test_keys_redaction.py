"""Keys never leak: not through vars() or repr, error bodies, a cut error body, or a model's reply."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import whileai as wai
from whileai.errors import EndpointError

KEY = "sk-live-4f9c2a7e1b8d6f3a0c5e"
AZURE = "az-0123456789abcdef0123456789abcdef"
TOKEN = "tok-9a8b7c6d5e4f3a2b1c0d"


class _Echo:
    """A chat-completions server on 127.0.0.1 that echoes the request headers back, as an error or a reply."""

    def __init__(self, status: int = 401, pad: int = 0, in_reply: bool = False, only: str | None = None):
        echo = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's spelling
                self.rfile.read(int(self.headers["Content-Length"]))
                seen = (self.headers.get(echo.only, "") if echo.only else
                        " ".join(f"{k}: {v}" for k, v in self.headers.items()))
                if echo.in_reply:
                    body = json.dumps({"choices": [{"message": {
                        "role": "assistant", "content": f"I was called with {seen}",
                        "tool_calls": [{"id": "c1", "type": "function", "function": {
                            "name": "log", "arguments": json.dumps({"auth": self.headers.get("Authorization")})}}],
                    }, "finish_reason": "stop"}]}).encode()
                    status = 200
                else:
                    body = ("x" * echo.pad + seen).encode()
                    status = echo.status
                self.send_response(status)
                self.send_header("Content-Type", "application/json" if echo.in_reply else "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.status, self.pad, self.in_reply, self.only = status, pad, in_reply, only
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


@pytest.fixture
def echo(request):
    server = _Echo(**getattr(request, "param", {}))
    yield server
    server.close()


def _endpoint(server, **kw):
    return wai.Endpoint("m", base_url=server.base_url, api_key=KEY, max_retries=0,
                        headers={"api-key": AZURE, "X-Auth-Token": TOKEN, "X-Request-Source": "ci"},
                        params={"client_secret": "cs-" + TOKEN, "top_p": 0.9, "max_tokens": 64}, **kw)


def _leaks(text: str) -> list[str]:
    return [s for s in (KEY, AZURE, TOKEN, KEY[:12], AZURE[:12], TOKEN[:12]) if s in text]


def test_keys_headers_and_params_named_like_secrets_are_hidden_in_vars_and_repr(echo):
    ep = _endpoint(echo)
    for shown in (repr(ep), str(ep), repr(vars(ep)), str(vars(ep)), repr(ep.headers), repr(ep.params)):
        assert _leaks(shown) == [], shown
    assert ep.headers["X-Request-Source"] == "ci" and ep.params["top_p"] == 0.9 and ep.params["max_tokens"] == 64


def test_keys_secret_headers_are_still_sent(echo):
    echo.in_reply = True
    captured = {}
    ep = _endpoint(echo)
    real = ep._request_headers

    def spy():
        captured.update(real())
        return captured

    ep._request_headers = spy
    ep.chat([{"role": "user", "content": "hi"}])
    assert captured["api-key"] == AZURE and captured["X-Auth-Token"] == TOKEN
    assert captured["Authorization"] == f"Bearer {KEY}"
    assert ep._payload([{"role": "user", "content": "x"}], None, {})["client_secret"] == "cs-" + TOKEN


def test_keys_echoed_in_an_endpoint_error_are_redacted(echo):
    with pytest.raises(EndpointError, match="answered 401") as info:
        _endpoint(echo).chat([{"role": "user", "content": "hi"}])
    assert _leaks(str(info.value)) == [] and "***" in str(info.value)
    assert _leaks(repr(info.value.context)) == []


@pytest.mark.parametrize("pad", range(300 - len(AZURE), 297, 4))
def test_keys_error_body_is_redacted_before_it_is_cut(pad):
    """The 300-character cut falls inside the echoed key: no prefix of it is left in the message."""
    server = _Echo(status=400, pad=pad, only="api-key")
    try:
        ep = wai.Endpoint("m", base_url=server.base_url, api_key=KEY, max_retries=0, headers={"api-key": AZURE})
        with pytest.raises(EndpointError) as info:
            ep.chat([{"role": "user", "content": "hi"}])
    finally:
        server.close()
    text = str(info.value)
    assert AZURE[: 300 - pad] not in text, text  # the part of the key the cut would have kept


def test_keys_a_model_that_echoes_the_key_never_puts_it_in_a_reply_or_a_row(echo):
    echo.in_reply = True
    ep = _endpoint(echo)
    message = ep.chat([{"role": "user", "content": "repeat your headers"}])
    assert _leaks(json.dumps(message)) == [] and "Bearer ***" in message["content"]

    @wai.tool
    def log(auth: str) -> str:
        """Log a value."""
        return "ok"

    data = wai.simulate(ep, tools=[log], system_prompt="Log things.", repeats=1, budget=2, repeat_policy="none")
    assert len(data) >= 1
    assert _leaks(json.dumps(data.rows(), default=str)) == []
