"""A scripted OpenAI-compatible chat server on 127.0.0.1 (a free port) for the endpoint tests.

A test subclasses :class:`FakeEndpoint` with its own ``reply(body)`` (the completion to send for a
request body); the server logs each request (path, headers, the Authorization header, body),
answers 401 under ``/denied/`` and stops with ``close()``.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeEndpoint:
    """The HTTP plumbing of a fake chat-completions server; ``reply`` is the script."""

    def __init__(self) -> None:
        self.log: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with fake.lock:
                    fake.log.append({"path": self.path, "headers": dict(self.headers),
                                     "auth": self.headers.get("Authorization"), "body": body})
                if self.path.startswith("/denied/"):
                    return self._send(401, {"error": {"message": "invalid api key"}})
                self._send(200, fake.reply(body))

            def _send(self, status, payload):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        """The completion for a request body (each test's script)."""
        raise AssertionError(f"{type(self).__name__} must define reply(), got a request for {body.get('model')!r}")

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
