"""Two ways to reach the records: straight into the DuckDB store, or over HTTP to ``wai server``.

Both answer ``call(op, **arguments)`` for every :class:`~whileai.platform._service.Service` method
the route table names, and return the same models, so ``Tracked`` and ``Run`` never know which
one they hold.
"""

from __future__ import annotations

import os
from typing import Any, Protocol, cast
from urllib.parse import quote

from pydantic import BaseModel, TypeAdapter

from whileai.defaults import API_KEY_HEADER, PLATFORM_TIMEOUT_S
from whileai.errors import ArgumentError, PlatformError
from whileai.platform._routes import BY_OP

__all__ = ["Backend", "HttpBackend", "LocalBackend", "backend_for"]

_ADAPTERS: dict[str, TypeAdapter[Any]] = {}


def _adapter(op: str) -> TypeAdapter[Any]:
    if op not in _ADAPTERS:
        _ADAPTERS[op] = TypeAdapter(BY_OP[op].returns)
    return _ADAPTERS[op]


class Backend(Protocol):
    """What a tracked agent talks to: one call per Service method."""

    def call(self, op: str, /, **arguments: Any) -> Any:
        """Run ``op`` with ``arguments``; raise :class:`~whileai.errors.PlatformError` on refusal."""
        ...

    def describe(self) -> str:
        """Where the records go, for a person."""
        ...


class LocalBackend:
    """Writes straight into the store: no server, no process to run (``track(..., store=PATH)``)."""

    def __init__(self, store: str | os.PathLike[str] | None = None, *, api_key: str | None = None) -> None:
        from whileai.platform._service import Service

        self.service = Service.local(store, api_key=api_key)

    def call(self, op: str, /, **arguments: Any) -> Any:
        """Run the Service method ``op``."""
        if op not in BY_OP:
            raise ValueError(f"unknown platform operation {op!r}")
        return getattr(self.service, op)(**arguments)

    def describe(self) -> str:
        """The store file."""
        return f"store {self.service.db.path}"


class HttpBackend:
    """Calls ``wai server`` over HTTP with httpx.

    ``transport=`` takes an httpx transport (``httpx.MockTransport``, ``httpx.HTTPTransport(retries=3)``)
    or an ASGI app (``create_app(store)``), which then runs in-process with no socket.
    """

    def __init__(self, base_url: str, *, api_key: str | None = None, transport: Any = None,
                 timeout: float = PLATFORM_TIMEOUT_S) -> None:
        import httpx

        headers = {API_KEY_HEADER: api_key} if api_key else {}
        self.base_url = base_url.rstrip("/")
        self.client: httpx.Client
        if transport is not None and not isinstance(transport, httpx.BaseTransport) and callable(transport):
            # an ASGI app (create_app(...)): run it in-process through Starlette's test client, an httpx.Client
            import warnings

            with warnings.catch_warnings():  # starlette 1.x points at httpx2; httpx is what this client uses
                warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
                from starlette.testclient import TestClient

                # an httpx.Client, or httpx2's Client (same API) where huggingface_hub brought httpx2
                self.client = cast("httpx.Client", TestClient(transport, base_url=self.base_url, headers=headers,
                                                              raise_server_exceptions=False))
        else:
            self.client = httpx.Client(base_url=self.base_url, headers=headers, transport=transport, timeout=timeout)

    def close(self) -> None:
        """Close the connection pool."""
        self.client.close()

    def describe(self) -> str:
        """The server URL."""
        return f"server {self.base_url}"

    def call(self, op: str, /, **arguments: Any) -> Any:
        """Send the route ``op`` names; decode its answer into the same model the store returns."""
        import httpx

        route = BY_OP[op]
        values = {p: str(arguments.pop(p)) for p in route.path_params}
        for name, value in values.items():  # "" names the listing; "/" is decoded into another route's path
            if not value or "/" in value or value in (".", ".."):
                raise ArgumentError(f"{name} must be an id or a name, without '/', got {value!r}. List the ids with "
                                    "tracked.runs() (GET /runs).", argument=name)
        path = route.path.format(**{p: quote(v, safe="") for p, v in values.items()})
        body: Any = None
        if route.body is not None:
            value = arguments.pop(route.body[0])
            body = value.model_dump(mode="json", exclude_unset=True) if isinstance(value, BaseModel) else value
        params = {q: arguments.pop(q) for q in route.query if arguments.get(q) is not None}
        arguments = {k: v for k, v in arguments.items() if k not in route.query}
        if arguments:
            raise ValueError(f"{op} got unexpected arguments {sorted(arguments)}")
        try:
            resp = self.client.request(route.method, path, json=body, params=params)
        except httpx.TransportError as exc:
            raise PlatformError(503, "unreachable", f"wai server at {self.base_url} cannot be reached ({exc}). Start it "
                                                    "with `wai server`, or check the URL (wai status).") from exc
        if resp.status_code >= 400:
            raise _error(resp)
        return _adapter(op).validate_python(resp.json())


def _error(resp: Any) -> PlatformError:
    try:
        err = resp.json().get("error", {})
        return PlatformError(resp.status_code, str(err.get("code", "error")), str(err.get("message", resp.text)),
                             argument=err.get("field"))
    except (ValueError, AttributeError):
        return PlatformError(resp.status_code, "error", f"the server answered {resp.status_code}: {resp.text[:400]}")


def backend_for(*, base_url: str | None = None, api_key: str | None = None, store: str | os.PathLike[str] | None = None,
                transport: Any = None) -> Backend:
    """The backend a call should use.

    ``store=`` writes into that store directly. Otherwise the server is ``base_url=``, else
    ``WHILEAI_BASE_URL``, else the saved login (with ``transport=`` and no URL, an in-process app);
    the key is ``api_key=``, else ``WHILEAI_API_KEY``, else the saved one when the server is the
    saved one (a saved key is never sent to another server). With no server anywhere, the local
    store (``$WAI_STORE``, else ``.wai/store.duckdb``): offline, no account.
    """
    from whileai.platform._credentials import resolve_api_key, resolve_base_url

    if store is not None:
        return LocalBackend(store, api_key=api_key)
    url, _ = resolve_base_url(base_url)
    if url is None and transport is not None:
        url = "http://localhost"
    if url is None:
        return LocalBackend(None, api_key=api_key)
    key, _ = resolve_api_key(api_key, server=url)
    return HttpBackend(url, api_key=key, transport=transport)
