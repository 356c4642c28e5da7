"""The Runs pages as Starlette routes: sign-in, the agents list, the Runs page, a run, its graded rows, Promote.

``Pages().routes()`` goes to ``create_app(store, routes=...)``; ``wai server`` mounts them and
prints the sign-in link. A browser signs in once (``/login`` with a key, or the link's token) and
gets an HttpOnly, SameSite=Strict cookie holding a random session id signed with a per-process
secret (HMAC-SHA256): never the key. Every page reads the records through the same
:class:`~whileai.platform._service.Service` the REST routes use, scoped to the session's account.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from whileai.defaults import (
    CHART_COLORS,
    CHART_HEIGHT,
    CHART_MARGIN,
    LOCAL_ACCOUNT,
    SESSION_COOKIE,
    SESSION_MAX_AGE_S,
)
from whileai.errors import ArgumentError, PlatformError, WaiError
from whileai.platform._models import Promote
from whileai.platform._page import explore_view, rows_view, runs_page
from whileai.platform._service import PlatformDB, Service
from whileai.platform.pages._render import STATIC, render

__all__ = ["Pages", "safe_next"]

log = logging.getLogger("whileai.server")

#: Rows the rows page lists at most (the counts and the by-tag table cover every row).
ROWS_LISTED = 2000

#: The pages' Content-Security-Policy: scripts only from this server, so posted text can never run.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")

ASSETS = {"inline": False, "css_href": "/static/page.css", "js_src": "/static/page.js",
          "plotly_src": "/static/plotly-basic.min.js"}


def safe_next(value: str | None) -> str:
    """``value`` when it is a path on this site (``/agents/x?y``), else ``/``: no scheme, host or ``//``.

    Examples:
        >>> safe_next("/agents/refund-agent"), safe_next("//evil.example/x"), safe_next("https://e.com/")
        ('/agents/refund-agent', '/', '/')
    """
    if not value or not value.startswith("/") or value.startswith("//") or "\\" in value:
        return "/"
    parts = urlsplit(value)
    if parts.scheme or parts.netloc or any(ord(c) < 32 for c in value):
        return "/"
    return value


def _number(value: str | None, name: str, kind: type[int] | type[float]) -> Any:
    """A query parameter as a number, None when absent or empty (ArgumentError naming it when not a number)."""
    if value is None or not value.strip():
        return None
    try:
        number = kind(value)
    except ValueError as exc:
        raise ArgumentError(f"{name} must be {'an integer' if kind is int else 'a number'}, got {value!r}. "
                            f"Fix ?{name}= in the address, or leave it empty.", argument=name, value=value) from exc
    if number != number or number in (float("inf"), float("-inf")):
        raise ArgumentError(f"{name} must be a finite number, got {value!r}. Fix ?{name}= in the address.",
                            argument=name, value=value)
    return number


@dataclass
class Session:
    """One signed-in browser: its account and key id, when it ends, and its form token."""

    account: str
    key_id: str | None
    expires: float
    csrf: str


class Pages:
    """The page routes, their sessions and the sign-in token ``wai server`` prints.

    Args:
        login_token: The token ``/login?token=`` accepts while the store has no API keys (the
            local account); default a fresh random one. With keys on, the token is a key.
        secret: The HMAC secret session ids are signed with (default: 32 random bytes, so
            sessions end when the server does).
    """

    def __init__(self, *, login_token: str | None = None, secret: bytes | None = None) -> None:
        self.login_token = login_token or secrets.token_urlsafe(24)
        self._secret = secret or secrets.token_bytes(32)
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    # --- sessions -----------------------------------------------------------------------------

    def _sign(self, sid: str) -> str:
        return hmac.new(self._secret, sid.encode("ascii"), hashlib.sha256).hexdigest()

    def _new_session(self, account: str, key_id: str | None) -> str:
        sid = secrets.token_urlsafe(24)
        with self._lock:
            now = time.time()
            self._sessions = {k: s for k, s in self._sessions.items() if s.expires > now}
            self._sessions[sid] = Session(account, key_id, now + SESSION_MAX_AGE_S, secrets.token_urlsafe(16))
        return f"{sid}.{self._sign(sid)}"

    def session(self, request: Any) -> Session | None:
        """The request's session, when its cookie carries a valid signature of a live session id."""
        raw = request.cookies.get(SESSION_COOKIE) or ""
        sid, _, sig = raw.partition(".")
        if not sid or not sig or not hmac.compare_digest(sig, self._sign(sid)):
            return None
        with self._lock:
            s = self._sessions.get(sid)
        return s if s is not None and s.expires > time.time() else None

    def _account_for(self, db: PlatformDB, token: str) -> tuple[str, str | None]:
        if db.keys_on():
            return db.account_of(token)
        if not hmac.compare_digest(token.encode(), self.login_token.encode()):
            raise PlatformError(401, "unauthorized", "the token is not the one this server printed at start. "
                                                     "Use the link wai server printed, or restart it for a new one.")
        with db.write() as con:
            db.ensure_account(con, LOCAL_ACCOUNT)
        return LOCAL_ACCOUNT, None

    def login_url(self, base_url: str, next_path: str | None = None) -> str:
        """The sign-in link ``wai server`` prints (keys off: carries the start token)."""
        query = f"token={quote(self.login_token)}" + (f"&next={quote(next_path)}" if next_path else "")
        return f"{base_url.rstrip('/')}/login?{query}"

    # --- responses ----------------------------------------------------------------------------

    @staticmethod
    def _html(body: str, status: int = 200) -> Any:
        from starlette.responses import HTMLResponse

        return HTMLResponse(body, status_code=status, headers={
            "Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin",
            "Cache-Control": "no-store"})

    def _page(self, template: str, request: Any, session: Session | None, status: int = 200, **context: Any) -> Any:
        return self._html(render(template, assets=ASSETS, account=session.account if session else None,
                                 key_id=session.key_id if session else None, **context), status)

    def _error_page(self, request: Any, session: Session | None, exc: Exception) -> Any:
        status = exc.status if isinstance(exc, PlatformError) else 422
        message = exc.message if isinstance(exc, WaiError) else str(exc)
        return self._page("error.html", request, session, status=status, code=status, message=message)

    @staticmethod
    def _redirect(url: str) -> Any:
        from starlette.responses import RedirectResponse

        return RedirectResponse(url, status_code=303)

    # --- routes -------------------------------------------------------------------------------

    def routes(self) -> list[Any]:
        """The Starlette routes: ``/``, ``/login``, ``/logout``, the Promote confirm step, the rows page, ``/static``.

        The Runs page and a run's page share their paths with REST routes: see :meth:`html_routes`.
        """
        from starlette.routing import Mount, Route
        from starlette.staticfiles import StaticFiles

        from whileai.charts import plotly_js_path

        async def plotly(request: Any) -> Any:
            from starlette.responses import FileResponse

            return FileResponse(plotly_js_path(), media_type="text/javascript",
                                headers={"Cache-Control": "public, max-age=86400"})

        async def favicon(request: Any) -> Any:
            from starlette.responses import Response

            return Response(status_code=204)

        return [
            Route("/", self._guard(self._agents), methods=["GET"]),
            Route("/login", self._login, methods=["GET", "POST"]),
            Route("/logout", self._logout, methods=["POST"]),
            Route("/agents/{name}/promote/confirm", self._guard(self._promote), methods=["GET", "POST"]),
            Route("/favicon.ico", favicon, methods=["GET"]),
            Route("/runs/{run_id}/evals/{behavior}", self._guard(self._rows), methods=["GET"]),
            Route("/static/plotly-basic.min.js", plotly, methods=["GET"]),
            Mount("/static", app=StaticFiles(directory=str(STATIC)), name="static"),
            # GET /agents/{name} and GET /runs/{id} are REST routes too: the browser (Accept: text/html) gets the page
        ]

    def html_routes(self) -> dict[tuple[str, str], Any]:
        """REST paths a browser asking for HTML gets a page on instead of JSON: (method, path) -> handler."""
        return {("GET", "/agents/{name}"): self._guard(self._runs_page),
                ("GET", "/runs"): self._guard(self._explore),
                ("GET", "/agents/{agent}/diff"): self._guard(self._diff_page),
                ("GET", "/runs/{run_id}"): self._guard(self._run_page)}

    def _guard(self, handler: Any) -> Any:
        from starlette.concurrency import run_in_threadpool

        async def endpoint(request: Any) -> Any:
            started = time.perf_counter()
            session = self.session(request)
            if session is None:
                target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
                response = self._redirect(f"/login?next={quote(target)}")
            else:
                service = Service(request.app.state.db, session.account)
                body = await request.body() if request.method == "POST" else b""
                try:
                    response = await run_in_threadpool(handler, request, session, service, body)
                except (PlatformError, WaiError) as exc:
                    response = self._error_page(request, session, exc)
                except Exception as exc:  # a bug: a page saying so, the traceback in the log
                    log.exception("%s %s failed", request.method, request.url.path)
                    response = self._page("error.html", request, session, status=500, message=
                                          f"the page failed ({type(exc).__name__}); the server log has the traceback.",
                                          code=500)
            log.info("%s %s %d key=%s %.1f ms", request.method, request.url.path, response.status_code,
                     (session.key_id if session else None) or "-", (time.perf_counter() - started) * 1000)
            return response

        return endpoint

    async def _login(self, request: Any) -> Any:
        from starlette.concurrency import run_in_threadpool

        if request.method == "POST":
            form = {k: v[0] for k, v in parse_qs((await request.body()).decode("utf-8", "replace")).items()}
        else:
            form = dict(request.query_params)
        token, next_path = form.get("key") or form.get("token"), safe_next(form.get("next"))
        db: PlatformDB = request.app.state.db
        keys_on = await run_in_threadpool(db.keys_on)
        if not token:
            return self._page("login.html", request, None, next=next_path, keys_on=keys_on, error=None)
        try:
            account, key_id = await run_in_threadpool(self._account_for, db, token)
        except PlatformError as exc:
            log.info("%s /login 401 key=- (sign-in refused)", request.method)
            return self._page("login.html", request, None, status=401, next=next_path, keys_on=keys_on,
                              error=exc.message)
        response = self._redirect(next_path)
        response.set_cookie(SESSION_COOKIE, self._new_session(account, key_id), max_age=SESSION_MAX_AGE_S,
                            httponly=True, samesite="strict", path="/")
        return response

    async def _logout(self, request: Any) -> Any:
        raw = request.cookies.get(SESSION_COOKIE) or ""
        sid = raw.partition(".")[0]
        if self.session(request) is not None:
            with self._lock:
                self._sessions.pop(sid, None)
        response = self._redirect("/login")
        response.delete_cookie(SESSION_COOKIE, path="/")
        return response

    def _agents(self, request: Any, session: Session, service: Service, body: bytes) -> Any:
        agents = service.agents()
        return self._page("agents.html", request, session, agents=agents,
                          served={a.name: service.served(a.name) for a in agents})

    def render_runs_page(self, service: Service, name: str, session: Session | None = None) -> str:
        """The Runs page's HTML for one agent (what ``GET /agents/{name}`` answers a browser)."""
        page = runs_page(service.dashboard(name))
        return render("runs.html", assets=ASSETS, account=session.account if session else service.account,
                      key_id=session.key_id if session else None, page=page, charts=page.charts())

    def _runs_page(self, request: Any, session: Session, service: Service, body: bytes) -> Any:
        return self._html(self.render_runs_page(service, request.path_params["name"], session))

    def _run_page(self, request: Any, session: Session, service: Service, body: bytes) -> Any:
        run = service.run(request.path_params["run_id"])
        return self._page("run.html", request, session, run=run, scores=service.scores(run.id),
                          record_json=json.dumps(run.record, indent=2, default=str),
                          summary_json=json.dumps(run.summary, indent=2, default=str),
                          delta_json=json.dumps(run.delta, indent=2, default=str) if run.delta else "")

    def _explore(self, request: Any, session: Session, service: Service, body: bytes) -> Any:
        q = request.query_params
        picked = list(dict.fromkeys([*q.getlist("pick"), *(r for r in (q.get("runs") or "").split(",") if r)]))
        comparison = service.compare(picked) if picked else None
        view = explore_view(
            service.runs(archived=True), q=q.get("q", ""), agent=q.get("agent", ""), version=q.get("version", ""),
            state=q.get("state", ""), archived=q.get("archived", "").lower() in ("true", "1", "yes", "on"),
            picked=picked, comparison=comparison, metric=q.get("metric"),
            smooth=_number(q.get("smooth"), "smooth", float) or 0.0, step_from=_number(q.get("from"), "from", int),
            step_to=_number(q.get("to"), "to", int))
        data = None
        if comparison is not None:
            data = {"metric": view.metric, "smooth": view.smooth, "from": view.step_from, "to": view.step_to,
                    "colors": list(CHART_COLORS), "height": CHART_HEIGHT, "margin": CHART_MARGIN,
                    "series": [s.model_dump() for s in comparison.series]}
        return self._page("explore.html", request, session, view=view, compare_data=data)

    def _rows(self, request: Any, session: Session, service: Service, body: bytes) -> Any:
        run_id, behavior = request.path_params["run_id"], request.path_params["behavior"]
        run = service.run(run_id)
        scores = [s for s in service.scores(run_id) if s.behavior == behavior]
        rows = service.rows(run_id, behavior)
        specs = service.behaviors(run.agent) if run.agent else {}
        from whileai.platform._models import Behavior

        spec = specs.get(behavior) or Behavior(name=behavior)
        view = rows_view(run_id, spec, scores[-1], rows, show=request.query_params.get("show", "all"))
        return self._page("rows.html", request, session, view=view, shown_cap=ROWS_LISTED)

    def _diff_page(self, request: Any, session: Session, service: Service, body: bytes) -> Any:
        agent, q = request.path_params["agent"], request.query_params
        missing = [k for k in ("behavior", "a", "b") if not q.get(k)]
        if missing:
            raise PlatformError(422, "invalid", f"query parameter {missing[0]!r} is required, got none. Open "
                                                f"/agents/{agent}/diff?behavior=NAME&a=SERVED&b=CANDIDATE.")
        d = service.diff(agent, q["behavior"], q["a"], q["b"])
        return self._page("diff.html", request, session, d=d, agent=agent, shown_cap=ROWS_LISTED)

    def _promote(self, request: Any, session: Session, service: Service, body: bytes) -> Any:
        name = request.path_params["name"]
        if request.method == "GET":
            version = request.query_params.get("version") or ""
            service.agent(name)
            service.promotable(name, version)  # the page asks only about a version that can be served
            return self._page("confirm.html", request, session, agent=name, version=version,
                              served=service.served(name), csrf=session.csrf)
        form = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}
        if not hmac.compare_digest(form.get("csrf", ""), session.csrf):
            raise PlatformError(403, "forbidden", "the Promote form must come from this session's confirm page, got "
                                                  "a missing or stale form token. Press Promote on the Runs page again.")
        service.promote(name, Promote(version=form.get("version", ""), by=session.key_id or session.account))
        return self._redirect(f"/agents/{quote(name)}#verdict")
