"""The server's edge: what a request must be before any route reads it, and what an answer may hold.

:class:`EdgeGuard` is an ASGI middleware in front of every route (REST and pages):

- ``Host`` must name the address the server is bound to, a loopback name when it listens on
  loopback, or a name given with ``--allow-host`` (DNS rebinding: a page on another name that
  resolves to 127.0.0.1 gets 421; RFC 9110 section 7.4);
- a state-changing request (POST, PUT, PATCH, DELETE) from a browser must come from this server's
  own pages: an ``Origin`` of another site or ``Sec-Fetch-Site: cross-site``/``same-site`` gets
  403 (Fetch Metadata, W3C; OWASP CSRF cheat sheet). Requests without those headers (curl, the
  Python client) are not browsers' and pass;
- a body larger than ``max_body`` bytes gets 413 naming the limit, from ``Content-Length`` before
  anything is read, or once a chunked body passes it.

:func:`parse_json` reads a REST body: JSON only (415 for another content type, so a cross-site
``text/plain`` form post cannot reach a route), no deeper than ``SERVER_JSON_MAX_DEPTH`` (400), and
every number finite and inside the store's range (422 naming the field). :func:`finite_json` makes
an answer safe to send whatever the store already holds: a non-finite number is sent as ``null``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from whileai.defaults import SERVER_BODY_MAX_BYTES, SERVER_JSON_MAX_DEPTH
from whileai.errors import PlatformError

__all__ = ["EdgeGuard", "finite_json", "host_name", "parse_json"]

_UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: The largest integer the store keeps (DuckDB BIGINT); a JSON integer outside it is refused.
_INT_MAX = 2**63 - 1


def host_name(value: str) -> str:
    """The host part of a ``Host`` header or URL authority, lower case, without port or brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value[1:]
    if value.count(":") == 1:
        return value.split(":", 1)[0]
    return value


class _TooLarge(PlatformError):
    """Raised from the body stream: a REST route answers it as its 413, any other route through the guard."""


class EdgeGuard:
    """ASGI middleware: the Host, cross-site and body-size checks of the module docstring.

    Args:
        app: The ASGI app behind it.
        allowed_hosts: Host names (no port) requests may carry; ``None`` checks no Host (an app
            run in-process, with no socket a browser could reach).
        max_body: The largest body in bytes (``SERVER_BODY_MAX_BYTES``).
    """

    def __init__(self, app: Any, *, allowed_hosts: Iterable[str] | None,
                 max_body: int = SERVER_BODY_MAX_BYTES) -> None:
        self.app = app
        self.allowed = None if allowed_hosts is None else frozenset(host_name(h) for h in allowed_hosts)
        self.max_body = int(max_body)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        refusal = self.refusal(scope["method"], headers)
        if refusal is not None:
            await _send_error(send, *refusal)
            return
        length = headers.get("content-length", "")
        if length.strip().isdigit() and int(length) > self.max_body:
            await _send_error(send, *self._too_large(int(length)))
            return
        seen = 0
        started = False

        async def counted() -> Any:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body:
                    raise _TooLarge(*self._too_large(None))
            return message

        async def tracked(message: Any) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, tracked)
        except _TooLarge:
            if not started:
                await _send_error(send, *self._too_large(None))

    def _too_large(self, length: int | None) -> tuple[int, str, str]:
        got = f"{length:,} bytes" if length is not None else "more than that (a chunked body)"
        return (413, "too_large", f"the request body must be at most {self.max_body:,} bytes (the server's limit, "
                                  f"SERVER_BODY_MAX_BYTES), got {got}. Send fewer rows or points per call.")

    def refusal(self, method: str, headers: dict[str, str]) -> tuple[int, str, str] | None:
        """(status, code, message) when the request must be refused before any route sees it."""
        host = host_name(headers.get("host", ""))
        if self.allowed is not None and host not in self.allowed:
            return (421, "bad_host", f"the Host header must name this server ({', '.join(sorted(self.allowed))}), "
                                     f"got {headers.get('host', '')!r}. Open the server by that address, or start "
                                     "it with --allow-host NAME for a name you trust.")
        if method.upper() not in _UNSAFE:
            return None
        site = headers.get("sec-fetch-site", "").lower()
        if site and site not in ("same-origin", "none"):
            return (403, "cross_site", f"a {method} must come from this server's own pages, got Sec-Fetch-Site: "
                                       f"{site!r}. Another site's page cannot change records here.")
        origin = headers.get("origin")
        # A page served with a strict Referrer-Policy makes a browser send ``Origin: null`` on its
        # own form posts; Sec-Fetch-Site (set by the browser, not by script) then says same-origin.
        if origin is not None and not (origin == "null" and site == "same-origin"):
            parts = urlsplit(origin)
            same = parts.netloc.lower() == headers.get("host", "").lower() and parts.scheme in ("http", "https")
            if not same:
                return (403, "cross_site", f"a {method} must come from this server's own pages, got Origin: "
                                           f"{origin!r}. Another site's page cannot change records here.")
        return None


async def _send_error(send: Any, status: int, code: str, message: str) -> None:
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def parse_json(raw: bytes, content_type: str | None) -> Any:
    """A REST body read as JSON with every number finite and in range (see the module docstring).

    Raises:
        PlatformError: 415 (not JSON content), 400 (not JSON, or nested past the limit), or 422
            naming the field of a non-finite or out-of-range number.
    """
    kind = (content_type or "").split(";", 1)[0].strip().lower()
    if kind != "application/json" and not kind.endswith("+json"):
        raise PlatformError(415, "unsupported_media_type", f"the body's Content-Type must be application/json, got "
                                                           f"{content_type!r}. Send JSON with that header.")
    try:
        data = json.loads(raw or b"null")  # Infinity and NaN parse, and are refused by field below
    except RecursionError as exc:
        raise PlatformError(400, "too_deep", f"the body must nest at most {SERVER_JSON_MAX_DEPTH} levels deep, got "
                                             "far more. Send a flatter body.") from exc
    except ValueError as exc:
        raise PlatformError(400, "invalid_json", f"the body must be JSON, got {raw[:80]!r} ({exc}). "
                                                 "Send Content-Type: application/json.") from exc
    _check_values(data)
    return data


def _check_values(data: Any) -> None:
    """Walk the parsed body (no recursion): depth, finite floats, integers the store can keep."""
    stack: list[tuple[Any, tuple[str, ...]]] = [(data, ())]
    while stack:
        value, path = stack.pop()
        if len(path) > SERVER_JSON_MAX_DEPTH:
            raise PlatformError(400, "too_deep", f"the body must nest at most {SERVER_JSON_MAX_DEPTH} levels deep, "
                                                 f"got more under {'.'.join(path[:5])!r}. Send a flatter body.")
        field = ".".join(path) or "(the whole body)"
        if isinstance(value, float) and not math.isfinite(value):
            raise PlatformError(422, "invalid", f"body field {field!r} must be a finite number, got {value!r} "
                                                "(1e309 overflows to inf). Send a number, or null.", argument=field)
        if isinstance(value, int) and not isinstance(value, bool) and not -_INT_MAX - 1 <= value <= _INT_MAX:
            raise PlatformError(422, "invalid", f"body field {field!r} must be an integer within 64 bits, got one of "
                                                f"{len(str(abs(value)))} digits. Send a smaller number.", argument=field)
        if isinstance(value, dict):
            stack.extend((v, (*path, str(k))) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, (*path, str(i))) for i, v in enumerate(value))


def finite_json(value: Any) -> Any:
    """``value`` (JSON-ready) with every NaN or infinite float replaced by ``None``.

    Answers are built from what the store holds, which may predate the edge checks: one stored
    ``Infinity`` must not make every read of the account fail.
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_json(v) for v in value]
    return value
