"""``wai server``: a Starlette app over the store, the REST routes of the route table, API keys.

Handlers are thin: authenticate, validate the body with the same pydantic model the client uses,
run the one Service method in a worker thread, dump the model. Pages (Jinja2, a later addition)
are passed to :func:`create_app` as extra routes and read the same Service.
"""

from __future__ import annotations

import errno
import ipaddress
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from whileai.defaults import (
    API_KEY_HEADER,
    LOCAL_ACCOUNT,
    SERVER_BODY_MAX_BYTES,
    SERVER_HOST,
    SERVER_LOOPBACK_HOSTS,
    SERVER_PORT,
)
from whileai.errors import ArgumentError, PlatformError, WaiError
from whileai.platform._routes import ALIASES_0131, ROUTES, Alias, Route, field_message
from whileai.platform._service import PlatformDB, Service
from whileai.platform.server._compat import HANDLERS, gone_message, is_0131
from whileai.platform.server._guard import EdgeGuard, finite_json, parse_json

__all__ = ["create_app", "is_loopback", "openapi", "serve", "service_for"]

log = logging.getLogger("whileai.server")

#: Every method a route with no equivalent answers 410 on.
_ANY = ["GET", "POST", "PUT", "PATCH", "DELETE"]


def _error(status: int, code: str, message: str, **extra: Any) -> Any:
    from starlette.responses import JSONResponse

    return JSONResponse({"error": {"code": code, "message": message, **extra}}, status_code=status)


def _authenticate(db: PlatformDB, key: str | None) -> tuple[str, str | None]:
    if not db.keys_on():
        if key:
            return db.account_of(key)
        with db.write() as con:
            db.ensure_account(con, LOCAL_ACCOUNT)
        return LOCAL_ACCOUNT, None
    return db.account_of(key)


async def service_for(request: Any) -> Service:
    """The Service of the request's account (401 as a PlatformError when the key is missing or wrong).

    For pages mounted with ``create_app(routes=...)``: they read the same records the REST routes do.
    """
    from starlette.concurrency import run_in_threadpool

    db: PlatformDB = request.app.state.db
    account, key_id = await run_in_threadpool(_authenticate, db, request.headers.get(API_KEY_HEADER))
    request.state.key_id = key_id
    return Service(db, account)


async def _held(request: Any, answer: Callable[[Any, float], Awaitable[Any]]) -> Any:
    """Run ``answer`` with the store opened once for the whole request (503 when it is busy)."""
    from starlette.concurrency import run_in_threadpool

    started = time.perf_counter()
    request.state.key_id = None
    db: PlatformDB = request.app.state.db
    try:
        await run_in_threadpool(db.acquire)  # one open of the store for the whole request
    except WaiError as exc:
        return _error(503, "store_busy", exc.message)
    try:
        return await answer(request, started)
    finally:
        await run_in_threadpool(db.release)


def _failure(request: Any, exc: Exception) -> Any:
    """The JSON error a route's exception answers (a bug is a 500 whose traceback goes to the log)."""
    if isinstance(exc, PlatformError):
        return _error(exc.status, exc.code, exc.message, **({"field": exc.argument} if exc.argument else {}))
    if isinstance(exc, WaiError):
        return _error(422, "invalid", exc.message, **({"field": exc.argument} if exc.argument else {}))
    log.exception("%s %s failed", request.method, request.url.path)
    return _error(500, "internal", f"the server failed on this request ({type(exc).__name__}); "
                                   "its log has the traceback.")


def _compat_endpoint(alias: Alias) -> Callable[[Any], Any]:
    """A route of whileai 0.131's client: its body through the edge, its handler (``_compat``), JSON."""
    from starlette.concurrency import run_in_threadpool
    from starlette.responses import JSONResponse

    handler = HANDLERS[alias.handler or ""]

    async def answer(request: Any, started: float) -> Any:
        try:
            body = None
            if request.method in ("POST", "PUT", "PATCH"):
                body = parse_json(await request.body(), request.headers.get("content-type"))
            service = await service_for(request)
            result = await run_in_threadpool(handler, service, dict(request.path_params), request.query_params, body)
            response = JSONResponse(finite_json(result), status_code=alias.status)
        except Exception as exc:
            response = _failure(request, exc)
        log.info("%s %s %d key=%s %.1f ms (0.131 client)", request.method, request.url.path, response.status_code,
                 request.state.key_id or "-", (time.perf_counter() - started) * 1000)
        return response

    async def endpoint(request: Any) -> Any:
        return await _held(request, answer)

    endpoint.__name__ = f"compat_{alias.handler}"
    return endpoint


def _shared(alias: Alias, ours: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """One of our routes that 0.131's client also calls: its requests (``_compat.is_0131``) go to the alias."""
    theirs = _compat_endpoint(alias)

    async def endpoint(request: Any) -> Any:
        body = None
        if alias.shared == "body":
            raw = await request.body()  # a body past the limit raises through to the edge's 413
            try:
                body = parse_json(raw or b"null", request.headers.get("content-type"))
            except PlatformError:
                body = None  # not JSON, too deep or out of range: our route answers with the edge's error
        if is_0131(alias, request.headers, body):
            return await theirs(request)
        return await ours(request)

    endpoint.__name__ = getattr(ours, "__name__", "endpoint")
    return endpoint


def _gone(alias: Alias) -> Callable[[Any], Any]:
    async def endpoint(request: Any) -> Any:
        return _error(410, "gone", gone_message(alias, request.method, request.url.path))

    return endpoint


def _endpoint(route: Route) -> Callable[[Any], Any]:
    from starlette.concurrency import run_in_threadpool
    from starlette.responses import JSONResponse

    adapter: TypeAdapter[Any] = TypeAdapter(route.returns)

    async def endpoint(request: Any) -> Any:
        return await _held(request, _answer)

    async def _answer(request: Any, started: float) -> Any:
        try:
            kwargs: dict[str, Any] = dict(request.path_params)
            for q in route.query:
                if request.query_params.get(q) is not None:
                    kwargs[q] = request.query_params[q]
            for q in route.required_query:
                if q not in kwargs:
                    raise PlatformError(422, "invalid", f"query parameter {q!r} is required, got none. "
                                                        f"Add ?{q}=... to the URL.", argument=q)
            if route.body is not None:
                name, model = route.body
                data = parse_json(await request.body(), request.headers.get("content-type"))
                try:
                    kwargs[name] = model.model_validate(data)
                except ValidationError as exc:
                    loc, message = field_message(exc)
                    raise PlatformError(422, "invalid", message, argument=loc) from exc
            service = await service_for(request)
            result = await run_in_threadpool(getattr(service, route.op), **kwargs)
            content = finite_json(adapter.dump_python(result, mode="json"))
            if route.op == "create_run":
                content["runId"] = content["id"]
            response = JSONResponse(content, status_code=route.status)
        except Exception as exc:  # a PlatformError or WaiError answers its status; a bug 500, logged
            response = _failure(request, exc)
        log.info("%s %s %d key=%s %.1f ms", request.method, request.url.path, response.status_code,
                 request.state.key_id or "-", (time.perf_counter() - started) * 1000)
        return response

    endpoint.__name__ = route.op
    return endpoint


def openapi() -> dict[str, Any]:
    """The OpenAPI 3.1 document of the route table, with every body and answer schema."""
    components: dict[str, Any] = {}
    ref = "#/components/schemas/{model}"

    def schema_of(tp: Any) -> dict[str, Any]:
        schema = TypeAdapter(tp).json_schema(ref_template=ref)
        components.update(schema.pop("$defs", {}))
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            components[tp.__name__] = schema
            return {"$ref": ref.format(model=tp.__name__)}
        return schema

    error = {"type": "object", "properties": {"error": {"type": "object", "properties": {
        "code": {"type": "string"}, "message": {"type": "string"}, "field": {"type": "string"}}}}}
    key_header = {"name": API_KEY_HEADER, "in": "header", "required": False, "schema": {"type": "string"}}

    def answers(status: str, schema: dict[str, Any], errors: Sequence[tuple[int, str]]) -> dict[str, Any]:
        return {status: {"description": "OK", "content": {"application/json": {"schema": schema}}},
                **{str(s): {"description": d, "content": {"application/json": {"schema": error}}} for s, d in errors}}

    paths: dict[str, Any] = {}
    for route in ROUTES:
        params = [{"name": p, "in": "path", "required": True, "schema": {"type": "string"}} for p in route.path_params]
        params += [{"name": q, "in": "query", "required": q in route.required_query, "schema": {"type": "string"}}
                   for q in route.query]
        op: dict[str, Any] = {
            "operationId": route.op, "summary": route.summary, "tags": list(route.tags),
            "parameters": [key_header, *params],
            "responses": answers(str(route.status), schema_of(route.returns), (
                (401, "missing or wrong API key"), (404, "unknown (or another account's) object"),
                (409, "the id exists"), (422, "a body or query field is invalid; error.field names it"))),
        }
        if route.body is not None:
            op["requestBody"] = {"required": True, "content": {"application/json": {"schema": schema_of(route.body[1])}}}
        paths.setdefault(route.path, {})[route.method.lower()] = op
    whoami = {"type": "object", "properties": {"account": {"type": "string"}, "key_id": {"type": ["string", "null"]},
                                                "keys_on": {"type": "boolean"}, "version": {"type": "string"}}}
    for path, op_id, summary, answer in (
            ("/whoami", "whoami", "The account and key id the request is served as (wai login checks it).", whoami),
            ("/openapi.json", "openapi", "This document.", {"type": "object"})):
        paths[path] = {"get": {"operationId": op_id, "summary": summary, "tags": ["server"], "parameters": [key_header],
                               "responses": answers("200", answer, ((401, "missing or wrong API key"),))}}
    return {"openapi": "3.1.0", "info": {"title": "whileai server", "version": _version()},
            "paths": paths, "components": {"schemas": components,
                                           "securitySchemes": {"apiKey": {"type": "apiKey", "in": "header",
                                                                          "name": API_KEY_HEADER}}}}


def _version() -> str:
    from whileai._version import __version__

    return __version__


def _negotiated(rest: Callable[[Any], Any], page: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A REST endpoint that answers a browser (Accept: text/html, no API key header) with the page instead."""

    async def endpoint(request: Any) -> Any:
        if "text/html" in request.headers.get("accept", "") and API_KEY_HEADER not in request.headers:
            return await page(request)
        return await rest(request)

    endpoint.__name__ = getattr(rest, "__name__", "endpoint")
    return endpoint


def create_app(store: str | os.PathLike[str] | None = None, *, routes: Sequence[Any] = (),
               db: PlatformDB | None = None, html_routes: dict[tuple[str, str], Any] | None = None,
               allowed_hosts: Sequence[str] | None = SERVER_LOOPBACK_HOSTS,
               max_body: int = SERVER_BODY_MAX_BYTES) -> Any:
    """The ASGI app: the REST routes over one store, ``/openapi.json``, ``/whoami``, and ``routes``.

    The store is opened for each request and closed after it (writes serialised, each committed
    before its answer), so the CLI and notebooks read and write the same file between requests
    (docs/reliability.md, "Store").

    Args:
        store: The store file (default ``$WAI_STORE``, else ``.wai/store.duckdb``).
        routes: Extra Starlette routes (the Runs pages), mounted after the REST routes; they get
            the records through :func:`service_for`.
        db: An open :class:`PlatformDB` to use instead of opening ``store``.
        html_routes: ``(method, path) -> endpoint`` for REST paths a browser gets a page on (the
            Runs page at ``GET /agents/{name}``); a request with an API key or without
            ``Accept: text/html`` still gets the JSON.
        allowed_hosts: The host names a request's ``Host`` may carry (``SERVER_LOOPBACK_HOSTS``;
            ``serve`` adds the bound address and ``--allow-host``); None checks no Host (for an
            app run in-process only). Cross-site writes are refused either way (``_guard.py``).
        max_body: The largest request body in bytes (``SERVER_BODY_MAX_BYTES``); larger is 413.

    Returns:
        A ``starlette.applications.Starlette`` app; ``app.state.db`` is the store.
    """
    import contextlib

    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.responses import JSONResponse
    from starlette.routing import Route as StarletteRoute

    database = db if db is not None else PlatformDB(store, shared=True)
    document = openapi()

    async def openapi_json(request: Any) -> Any:
        return JSONResponse(document)

    async def whoami(request: Any) -> Any:
        try:
            service = await service_for(request)
        except PlatformError as exc:
            return _error(exc.status, exc.code, exc.message)
        return JSONResponse({"account": service.account, "key_id": request.state.key_id,
                             "keys_on": database.keys_on(), "version": _version()})

    async def not_found(request: Any, exc: Exception) -> Any:
        status = getattr(exc, "status_code", 404)
        return _error(status, "not_found" if status == 404 else "method_not_allowed",
                      f"{request.method} {request.url.path} is not a route of this server "
                      f"({status}). The routes are listed at /openapi.json.")

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> Any:
        yield
        database.close()

    pages = html_routes or {}
    shared = {(a.method, a.path): a for a in ALIASES_0131 if a.shared}
    table = []
    for r in ROUTES:
        rest = _endpoint(r)
        if (r.method, r.path) in shared:
            rest = _shared(shared.pop((r.method, r.path)), rest)
        table.append(StarletteRoute(r.path, _negotiated(rest, pages[(r.method, r.path)])
                                    if (r.method, r.path) in pages else rest, methods=[r.method]))
    table += [StarletteRoute("/openapi.json", openapi_json, methods=["GET"]),
              StarletteRoute("/whoami", whoami, methods=["GET"]), *routes]
    # whileai 0.131's client (docs/platform.md, "0.131's client"): its other routes, after ours
    table += [StarletteRoute(a.path, _compat_endpoint(a) if a.handler else _gone(a),
                             methods=_ANY if a.method == "*" else [a.method]) for a in ALIASES_0131 if not a.shared]
    from starlette.middleware import Middleware

    guard = Middleware(EdgeGuard, allowed_hosts=allowed_hosts, max_body=max_body)
    app = Starlette(routes=table, exception_handlers={HTTPException: not_found}, lifespan=lifespan,
                    middleware=[guard])
    app.state.db = database
    return app


def is_loopback(host: str) -> bool:
    """Whether ``host`` only listens on this machine (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve(host: str = SERVER_HOST, port: int = SERVER_PORT, *, store: str | os.PathLike[str] | None = None,
          log_level: str = "info", on_start: Callable[[str], None] | None = None,
          allow_hosts: Sequence[str] = ()) -> None:
    """Run ``wai server`` until interrupted: uvicorn over :func:`create_app`.

    A non-loopback ``host`` is refused unless the store holds API keys (``wai keys create NAME``),
    so nothing answers other machines without a key. A request's ``Host`` must name ``host``, a
    loopback name when ``host`` is loopback, or one of ``allow_hosts`` (DNS rebinding).

    Raises:
        ArgumentError: A non-loopback host with keys off, or a port outside 1-65535.
    """
    import uvicorn

    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        raise ArgumentError(f"port must be an integer from 1 to 65535, got {port!r}. Pass --port {SERVER_PORT}.")
    sock = _bound_socket(host, port)  # before the store is opened or made, and before the URL is printed
    try:
        db = PlatformDB(store, shared=True)
    except BaseException:
        sock.close()
        raise
    if not is_loopback(host) and not db.keys_on():
        db.close()
        sock.close()
        raise ArgumentError(f"host must be a loopback address while API keys are off, got {host!r}. Create a key "
                            "first (wai keys create NAME --store ...), or keep --host 127.0.0.1.", argument="host")
    url = f"http://{host if ':' not in host else f'[{host}]'}:{port}"
    logging.basicConfig(level=getattr(logging, log_level.upper(), logging.INFO), format="%(message)s")
    log.setLevel(getattr(logging, log_level.upper(), logging.INFO))
    from whileai.platform.pages import Pages

    pages = Pages()
    if on_start is not None:
        on_start(f"wai server: {url} (store {db.path}; API keys {'on' if db.keys_on() else 'off'})")
        on_start(f"Runs pages: open {pages.login_url(url)}" if not db.keys_on() else
                 f"Runs pages: open {url}/login and sign in with an API key (or {url}/login?token=KEY)")
    allowed = [host, *allow_hosts, *(SERVER_LOOPBACK_HOSTS if is_loopback(host) else ())]
    app = create_app(db=db, routes=pages.routes(), html_routes=pages.html_routes(), allowed_hosts=allowed)
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, access_log=False)
    with sock:
        uvicorn.Server(config).run(sockets=[sock])


def _bound_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` (as uvicorn binds one: ``SO_REUSEADDR``), for uvicorn to listen on.

    Raises:
        ArgumentError: The port is in use, or the address is not one of this machine's.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ArgumentError(f"port must be free, got {port}, which another program already listens on at "
                                f"{host}. Pass another --port, or stop that program.", argument="port") from exc
        raise ArgumentError(f"host must be an address of this machine, got {host!r} ({exc.strerror or exc}). "
                            "Pass --host 127.0.0.1.", argument="host") from exc
    return sock
