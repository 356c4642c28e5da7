"""``wai.Endpoint``: any OpenAI-compatible chat-completions server as an agent or a judge backend.

vLLM, Ollama, OpenAI, or anything else that speaks ``POST {base_url}/chat/completions``. A model
can be named as a string, ``"provider/model"`` (``"openai/gpt-4o-mini"``, ``"anthropic/claude-..."``,
``"vllm/Qwen/Qwen3-4B"``): ``MODEL_PROVIDERS`` in ``whileai.defaults`` maps the provider to its
base URL and its own key variable. Requests go through httpx with a concurrency limit, a timeout,
and retries with exponential backoff on 429, 5xx and transport errors (honouring ``Retry-After``);
other 4xx answers fail at once with the reason. The API key comes from ``api_key=`` or the
provider's environment variable and never appears in a repr, ``vars()``, a log line, an error
message or a row; neither does any header or parameter whose name holds key, auth, token or
secret (Azure's ``api-key``, ``X-Auth-Token``), nor a key the server or the model echoes back
(docs/reliability.md, "Keys"). Each endpoint counts what it sent (requests, tokens in and out) for the run's egress report,
and refuses every request while an ``offline=True`` run is in progress.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
import weakref
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

from whileai._checks import check_int
from whileai.defaults import (
    DEFAULT_PROVIDER,
    ENDPOINT_BACKOFF_CAP_S,
    ENDPOINT_BACKOFF_S,
    ENDPOINT_KEY_ENV,
    ENDPOINT_MAX_RETRIES,
    ENDPOINT_REFUSED_RETRIES,
    ENDPOINT_TIMEOUT_S,
    MODEL_PROVIDERS,
    SECRET_NAME_PARTS,
    SIM_CONCURRENCY,
)
from whileai.errors import ArgumentError, EndpointError

if TYPE_CHECKING:
    import httpx

__all__ = ["Endpoint", "ModelRef", "as_endpoint", "offline", "resolve_model"]

log = logging.getLogger("whileai.simulation")

_DEFAULT_BASE_URL = MODEL_PROVIDERS["openai"][0]
_LOCAL_PROVIDERS = frozenset(name for name, (_, key_env, _src) in MODEL_PROVIDERS.items() if key_env is None)
_SEED_FIELD = {"anthropic": None, "mistral": "random_seed"}  # providers whose API names the sampling seed otherwise
_offline_lock = threading.Lock()
_offline_depth = 0


class ModelRef(NamedTuple):
    """A model named as a string, resolved: where it is served and which key it needs."""

    provider: str | None
    """The provider from ``MODEL_PROVIDERS`` (None for a bare name on a server given by ``base_url``)."""
    model: str
    """The name sent in the request's ``model`` field."""
    base_url: str
    """The server's ``/v1`` base."""
    key_env: str | None
    """The provider's own key variable (None: a local server that needs none)."""


def resolve_model(name: str, *, base_url: str | None = None) -> ModelRef:
    """Resolve ``"provider/model"`` (or a bare model name) to its server, model field and key variable.

    ``MODEL_PROVIDERS`` (``whileai.defaults``) holds the table. A bare name (``"gpt-4o-mini"``) is
    an OpenAI model (``"claude-..."`` an Anthropic one) unless ``base_url`` names another server,
    where it is sent as written. With ``base_url`` the name is sent verbatim too, except that a
    local-server prefix (``vllm/``, ``ollama/``, ``lmstudio/``) is taken off: ``"ollama/llama3"``
    with ``base_url="http://gpu-box:11434/v1"`` sends ``llama3`` there.

    Raises:
        ArgumentError: An empty name, or ``"provider/"`` with nothing after it.

    Examples:
        >>> resolve_model("openai/gpt-4o-mini")
        ModelRef(provider='openai', model='gpt-4o-mini', base_url='https://api.openai.com/v1', key_env='OPENAI_API_KEY')
        >>> resolve_model("vllm/Qwen/Qwen3-4B").base_url
        'http://127.0.0.1:8000/v1'
        >>> resolve_model("Qwen/Qwen3-4B", base_url="http://127.0.0.1:9000/v1").model
        'Qwen/Qwen3-4B'
    """
    if not isinstance(name, str) or not name.strip():
        raise ArgumentError(f"model must be a non-empty model name, got {name!r}. Pass e.g. 'openai/gpt-4o-mini' or "
                            "'vllm/Qwen/Qwen3-4B'.", argument="model")
    name = name.strip()
    prefix, sep, rest = name.partition("/")
    provider = prefix.lower() if sep and prefix.lower() in MODEL_PROVIDERS else None
    if provider is not None and not rest.strip():
        raise ArgumentError(f"model must name a model after the provider, got {name!r}. Pass e.g. '{provider}/<model>'.",
                            argument="model")
    if base_url is not None:
        if provider in _LOCAL_PROVIDERS:
            return ModelRef(provider, rest, base_url, None)
        return ModelRef(None, name, base_url, None)
    if provider is None:
        env_url = os.environ.get("OPENAI_BASE_URL")
        if env_url:
            return ModelRef(None, name, env_url, ENDPOINT_KEY_ENV)
        provider = "anthropic" if name.lower().startswith("claude") else DEFAULT_PROVIDER
        rest = name
    url, key_env, _ = MODEL_PROVIDERS[provider]
    return ModelRef(provider, rest, url, key_env)


def as_endpoint(model: Any, **settings: Any) -> Any:
    """``model`` as an :class:`Endpoint` when it is a model name; anything else comes back as it is.

    The one place a model named as a string becomes an endpoint: the agent, the situation writer,
    the simulated user and the rubric judge all go through it.
    """
    if isinstance(model, str):
        return Endpoint(model, **settings)
    return model


@contextmanager
def offline() -> Iterator[None]:
    """While inside, every :class:`Endpoint` refuses to send a request (``simulate(offline=True)``)."""
    global _offline_depth
    with _offline_lock:
        _offline_depth += 1
    try:
        yield
    finally:
        with _offline_lock:
            _offline_depth -= 1
_SENT_MESSAGE_KEYS = ("role", "content", "name", "tool_calls", "tool_call_id")


class _Secret:
    """Holds the key; prints as ``***`` wherever it is shown."""

    __slots__ = ("_value",)

    def __init__(self, value: str | None) -> None:
        self._value = value

    def get(self) -> str | None:
        return self._value

    def __repr__(self) -> str:
        return "'***'" if self._value else "None"

    __str__ = __repr__

    def __reduce__(self) -> Any:  # never pickled with the key in it
        return (_Secret, (None,))


#: What an Endpoint builds for itself and never ships (pickling keeps the settings only).
_RUNTIME = ("_key", "_lock", "_client", "_sem", "_loops", "_sent", "_reached")


class Endpoint:
    """A model on an OpenAI-compatible server: an agent for ``simulate`` and a judge backend.

    As an agent, ``simulate(wai.Endpoint(...), ...)`` sends the conversation and the tool schemas,
    runs the tool calls it answers with against the world, and keeps ``concurrency`` requests in
    flight (asyncio). As a judge backend, :meth:`chat` (sync) and :meth:`achat` (async) take
    OpenAI messages and return the assistant message as a dict.

    Args:
        model: The model: ``"provider/model"`` (``"openai/gpt-4o-mini"``, ``"groq/llama-3.3-70b"``,
            ``"ollama/llama3"``; see :func:`resolve_model`), or the name the server at ``base_url``
            knows (``"Qwen/Qwen3-4B"``).
        base_url: The server's ``/v1`` base (``http://localhost:8000/v1`` for vLLM,
            ``http://localhost:11434/v1`` for Ollama). Default: the provider's, else
            ``$OPENAI_BASE_URL``, else OpenAI.
        api_key: The key. Default: the provider's own key variable (``OPENAI_API_KEY``,
            ``ANTHROPIC_API_KEY``, ...), or ``api_key_env`` when given; none is sent when neither
            is set (local servers need none). A hosted provider's endpoint without its key raises.
        api_key_env: The environment variable the key is read from (default: the provider's).
        timeout: Seconds per request.
        max_retries: Retries after a 429, a 5xx or a transport error, with exponential backoff.
        backoff_s: The first backoff; each retry doubles it, up to ``ENDPOINT_BACKOFF_CAP_S``.
        concurrency: Requests in flight at once through this endpoint.
        temperature: Sent when given; the server's default otherwise.
        max_tokens: Sent when given.
        top_p: Sent when given.
        headers: Extra HTTP headers. One whose name holds key, auth, token or secret (``api-key``)
            is a credential: sent as given, shown as ``***``, redacted from errors and replies.
        params: Extra request fields sent with every request (``{"top_p": 0.9}``,
            ``{"extra_body": ...}`` fields flattened in).

    Raises:
        ArgumentError: A missing model name, a base URL that is not http(s), or a bad limit.
        EndpointError: A hosted provider's model with its key variable unset and no ``api_key=``.

    Examples:
        >>> ep = Endpoint("my-model", base_url="http://127.0.0.1:8000/v1", api_key="sk-secret")
        >>> ep
        Endpoint(model='my-model', base_url='http://127.0.0.1:8000/v1', key=given)
        >>> "sk-secret" in repr(vars(ep))
        False
    """

    def __init__(self, model: str, /, *, base_url: str | None = None, api_key: str | None = None,
                 api_key_env: str | None = None, timeout: float = ENDPOINT_TIMEOUT_S,
                 max_retries: int = ENDPOINT_MAX_RETRIES, backoff_s: float = ENDPOINT_BACKOFF_S,
                 concurrency: int = SIM_CONCURRENCY, temperature: float | None = None,
                 max_tokens: int | None = None, top_p: float | None = None,
                 headers: Mapping[str, str] | None = None, params: Mapping[str, Any] | None = None) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ArgumentError(f"model must be a non-empty model name, got {model!r}. Pass the name the server serves, "
                                "e.g. Endpoint('Qwen/Qwen3-4B', base_url='http://localhost:8000/v1').")
        ref = resolve_model(model, base_url=base_url)
        url = ref.base_url
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ArgumentError(f"base_url must be an http(s) URL ending in /v1, got {url!r}. "
                                "Pass e.g. base_url='http://localhost:8000/v1'.")
        for name, value, low in (("timeout", timeout, 0.0), ("backoff_s", backoff_s, 0.0)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < low or (name == "timeout" and value == 0):
                raise ArgumentError(f"{name} must be a positive number of seconds, got {value!r}. Pass e.g. {name}=30.")
        check_int("max_retries", max_retries, minimum=0)
        check_int("concurrency", concurrency, minimum=1)
        self.model = ref.model
        self.provider = ref.provider
        self.base_url = url.rstrip("/")
        env = api_key_env or ref.key_env or ENDPOINT_KEY_ENV
        key = api_key if api_key is not None else os.environ.get(env)
        if not key and api_key_env is None and ref.key_env and ref.provider not in _LOCAL_PROVIDERS and \
                self.base_url == MODEL_PROVIDERS[ref.provider or DEFAULT_PROVIDER][0].rstrip("/"):
            raise EndpointError(
                f"{ref.key_env} must be set to call {model!r} at {self.base_url}, got nothing in the environment. "
                f"Set the provider's own key (export {ref.key_env}=...) or pass api_key=.",
                url=self.base_url, name=self.model, argument=ref.key_env)
        self._key = _Secret(key or None)
        self._key_env = ref.key_env
        self.key_source = "api_key=" if api_key else (env if key else "none")
        self.top_p = top_p
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.backoff_s = float(backoff_s)
        self.concurrency = int(concurrency)
        self.temperature = temperature
        self.max_tokens = max_tokens
        # a header or parameter named like a credential is held as a _Secret: never shown, sent as is
        self.headers: dict[str, Any] = {k: _Secret(v) if _is_secret(k, v) else v for k, v in dict(headers or {}).items()}
        self.params: dict[str, Any] = {k: _Secret(v) if _is_secret(k, v) else v for k, v in dict(params or {}).items()}
        self._lock = threading.Lock()
        self._client: httpx.Client | None = None
        self._sem = threading.BoundedSemaphore(self.concurrency)
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[httpx.AsyncClient, asyncio.Semaphore]] = (
            weakref.WeakKeyDictionary())
        self._sent = {"requests": 0, "input_tokens": 0, "output_tokens": 0}
        self._reached = False  # the server has answered once (a refused connection before that is fatal)

    # --- shipping to another process (the Ray engine) --------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        """Settings only: no lock, client or counts, and never the key (it is read again from the environment)."""
        return {k: v for k, v in self.__dict__.items() if k not in _RUNTIME}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Rebuilt in the receiving process: the key is read from the variable it came from (``key_source``)."""
        self.__dict__.update(state)
        source = state.get("key_source", "none")
        self._key = _Secret(os.environ.get(source) or None if source not in ("none", "api_key=") else None)
        self._lock = threading.Lock()
        self._client = None
        self._sem = threading.BoundedSemaphore(self.concurrency)
        self._loops = weakref.WeakKeyDictionary()
        self._sent = {"requests": 0, "input_tokens": 0, "output_tokens": 0}
        self._reached = False

    # --- what people see --------------------------------------------------------------------

    def __repr__(self) -> str:
        key = {"none": "none", "api_key=": "given"}.get(self.key_source, f"${self.key_source}")
        return f"Endpoint(model={self.model!r}, base_url={self.base_url!r}, key={key})"

    __str__ = __repr__

    @property
    def model_version(self) -> str:
        """The name rows carry in ``model_version``."""
        return self.model

    @property
    def host(self) -> str:
        """The host requests go to (``api.openai.com``, ``127.0.0.1:8000``)."""
        return urlsplit(self.base_url).netloc

    def settings(self) -> dict[str, Any]:
        """The generation settings rows record: model, provider, base URL (never the key) and sampling knobs."""
        return {"model": self.model, "provider": self.provider, "base_url": self.base_url,
                "temperature": self.params.get("temperature", self.temperature),
                "top_p": self.params.get("top_p", self.top_p),
                "max_tokens": self.params.get("max_tokens", self.max_tokens)}

    def with_settings(self, **settings: Any) -> Endpoint:
        """A copy with other sampling settings (``temperature``, ``top_p``, ``max_tokens``); the key carries over."""
        clone = object.__new__(Endpoint)
        clone.__dict__.update({k: v for k, v in self.__dict__.items()
                               if k not in ("_lock", "_client", "_sem", "_loops", "_sent", "_reached")})
        clone.params = dict(self.params)
        for name, value in settings.items():
            if value is not None:
                setattr(clone, name, value)
        clone._lock = threading.Lock()
        clone._client = None
        clone._sem = threading.BoundedSemaphore(clone.concurrency)
        clone._loops = weakref.WeakKeyDictionary()
        clone._sent = {"requests": 0, "input_tokens": 0, "output_tokens": 0}
        clone._reached = False
        return clone

    def seed_params(self, seed: int) -> dict[str, Any]:
        """The request field that carries a sampling seed on this provider (``{}`` where there is none)."""
        field = _SEED_FIELD.get(self.provider or "", "seed")
        return {field: int(seed)} if field and "seed" not in self.params else {}

    def sent(self) -> dict[str, Any]:
        """What this endpoint has sent so far: host, model, requests, and the tokens the server reported."""
        with self._lock:
            counts = dict(self._sent)
        return {"host": self.host, "base_url": self.base_url, "model": self.model, "provider": self.provider, **counts}

    # --- the public calls -------------------------------------------------------------------

    def chat(self, messages: Sequence[Mapping[str, Any]], *, tools: Sequence[Any] | None = None,
             **params: Any) -> dict[str, Any]:
        """Send a conversation; return the assistant message (``role``, ``content``, ``tool_calls``).

        Args:
            messages: OpenAI chat messages.
            tools: Tools the model may call (``@wai.tool`` objects or OpenAI schemas).
            **params: Request fields for this call (``temperature=0``, ``max_tokens=256``,
                ``response_format={...}``); they override the endpoint's.

        Returns:
            The assistant message as a dict.

        Raises:
            EndpointError: The server could not be reached, refused the request, or kept failing
                after ``max_retries`` retries.
        """
        payload = self._payload(messages, tools, params)
        with self._sem:
            data = self._post_sync(payload)
        return self._parse(data)[0]

    async def achat(self, messages: Sequence[Mapping[str, Any]], *, tools: Sequence[Any] | None = None,
                    **params: Any) -> dict[str, Any]:
        """The async form of :meth:`chat`: at most ``concurrency`` requests in flight per event loop."""
        message, _ = await self._acomplete_parsed(messages, tools, params)
        return message

    async def aclose(self) -> None:
        """Close the connection pool this event loop uses."""
        loop = asyncio.get_running_loop()
        state = self._loops.pop(loop, None)
        if state is not None:
            await state[0].aclose()

    def close(self) -> None:
        """Close the sync connection pool."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def __enter__(self) -> Endpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- engine hooks -----------------------------------------------------------------------

    async def _acomplete(self, messages: Sequence[Mapping[str, Any]], *, tools: Sequence[Any] | None = None,
                         **params: Any) -> dict[str, Any]:
        """The assistant message plus ``finish_reason`` and ``usage`` (the engine reads and drops them)."""
        message, extra = await self._acomplete_parsed(messages, tools, params)
        return {**message, **extra}

    async def _acomplete_parsed(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Any] | None,
                                params: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        payload = self._payload(messages, tools, params)
        client, sem = self._loop_state()
        async with sem:
            data = await self._post_async(client, payload)
        return self._parse(data)

    # --- requests -----------------------------------------------------------------------------

    @property
    def _url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def _request_headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", **_reveal(self.headers)}
        key = self._key.get()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _payload(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Any] | None,
                 params: Mapping[str, Any]) -> dict[str, Any]:
        if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
            raise ArgumentError(f"messages must be a list of OpenAI chat messages, got {type(messages).__name__}. "
                                'Pass [{"role": "user", "content": "..."}].')
        payload: dict[str, Any] = {"model": self.model, "messages": [_wire_message(m) for m in messages]}
        if tools:
            from whileai.simulation._tools import normalize_tools

            payload["tools"] = [t.schema for t in normalize_tools(list(tools))]
        if self.temperature is not None:
            payload["temperature"] = self.temperature
        if self.max_tokens is not None:
            payload["max_tokens"] = self.max_tokens
        if self.top_p is not None:
            payload["top_p"] = self.top_p
        payload.update(_reveal(self.params))
        payload.update(params)
        return payload

    def _delay(self, attempt: int, response: httpx.Response | None) -> float:
        delay = min(ENDPOINT_BACKOFF_CAP_S, self.backoff_s * (2 ** attempt))
        if response is not None:
            after = response.headers.get("retry-after")
            try:
                if after is not None:
                    delay = min(ENDPOINT_BACKOFF_CAP_S, max(delay, float(after)))
            except ValueError:
                pass
        return delay

    def _sync_client(self) -> httpx.Client:
        import httpx

        with self._lock:
            if self._client is None:
                self._client = httpx.Client(timeout=self.timeout,
                                            limits=httpx.Limits(max_connections=self.concurrency))
            return self._client

    def _loop_state(self) -> tuple[httpx.AsyncClient, asyncio.Semaphore]:
        import httpx

        loop = asyncio.get_running_loop()
        state = self._loops.get(loop)
        if state is None:
            state = (httpx.AsyncClient(timeout=self.timeout, limits=httpx.Limits(max_connections=self.concurrency)),
                     asyncio.Semaphore(self.concurrency))
            self._loops[loop] = state
        return state

    def _refuse_offline(self) -> None:
        if _offline_depth:
            raise EndpointError(
                f"offline=True must make no network call, but model {self.model!r} at {self.base_url} was about to be "
                "asked. Use an offline agent (wai.seeded_agent, a callable) and simulator=False, or drop offline=True.",
                url=self.base_url, name=self.model, reason="offline")

    def _count(self, data: Any) -> None:
        usage = data.get("usage") if isinstance(data, Mapping) else None
        with self._lock:
            self._sent["requests"] += 1
            if isinstance(usage, Mapping):
                for ours, theirs in (("input_tokens", ("prompt_tokens", "input_tokens")),
                                     ("output_tokens", ("completion_tokens", "output_tokens"))):
                    for key in theirs:
                        value = usage.get(key)
                        if isinstance(value, (int, float)) and not isinstance(value, bool):
                            self._sent[ours] += int(value)
                            break

    def _post_sync(self, payload: dict[str, Any]) -> Any:
        import httpx

        self._refuse_offline()
        client = self._sync_client()
        for attempt in range(self.max_retries + 1):
            try:
                response = client.post(self._url, json=payload, headers=self._request_headers())
            except httpx.TransportError as exc:
                if self._refused(exc, attempt):
                    raise self._refused_error(exc, attempt) from None
                if attempt < self.max_retries:
                    self._log_retry(type(exc).__name__, attempt)
                    time.sleep(self._delay(attempt, None))
                    continue
                raise self._transport_error(exc) from None
            self._reached = True
            if _retryable(response.status_code) and attempt < self.max_retries:
                self._log_retry(str(response.status_code), attempt)
                time.sleep(self._delay(attempt, response))
                continue
            data = self._decode(response)
            self._count(data)
            return data
        raise AssertionError("unreachable")  # pragma: no cover

    async def _post_async(self, client: httpx.AsyncClient, payload: dict[str, Any]) -> Any:
        import httpx

        self._refuse_offline()
        for attempt in range(self.max_retries + 1):
            try:
                response = await client.post(self._url, json=payload, headers=self._request_headers())
            except httpx.TransportError as exc:
                if self._refused(exc, attempt):
                    raise self._refused_error(exc, attempt) from None
                if attempt < self.max_retries:
                    self._log_retry(type(exc).__name__, attempt)
                    await asyncio.sleep(self._delay(attempt, None))
                    continue
                raise self._transport_error(exc) from None
            self._reached = True
            if _retryable(response.status_code) and attempt < self.max_retries:
                self._log_retry(str(response.status_code), attempt)
                await asyncio.sleep(self._delay(attempt, response))
                continue
            data = self._decode(response)
            self._count(data)
            return data
        raise AssertionError("unreachable")  # pragma: no cover

    def _refused(self, exc: Exception, attempt: int) -> bool:
        """A connection refused (or a host not found) by a server that never answered, past its short retry."""
        import httpx

        return (isinstance(exc, httpx.ConnectError) and not self._reached
                and attempt >= min(self.max_retries, ENDPOINT_REFUSED_RETRIES))

    def _refused_error(self, exc: Exception, attempt: int) -> EndpointError:
        tries = f"{attempt + 1} time{'s' if attempt else ''}"
        text = (f"model server at {self.base_url} must be running, but it refused the connection "
                f"({type(exc).__name__}) {tries} and has not answered once. Start the server (e.g. "
                "'vllm serve MODEL' or 'ollama serve') or fix base_url= to where it listens.")
        return EndpointError(self._redact(text), url=self.base_url, name=self.model, reason="refused")

    def _log_retry(self, what: str, attempt: int) -> None:
        log.debug("retrying %s after %s (retry %d of %d)", self._url, what, attempt + 1, self.max_retries)

    def _transport_error(self, exc: Exception) -> EndpointError:
        import httpx

        tries = f"{self.max_retries + 1} time{'s' if self.max_retries else ''}"
        if isinstance(exc, httpx.TimeoutException):
            text = (f"model server at {self.base_url} must answer within {self.timeout:g} s, but it timed out {tries}. "
                    "Check the server is up and not overloaded, or raise timeout=.")
        elif isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)):
            text = (f"model server at {self.base_url} must send a whole reply, but it closed the connection mid-reply "
                    f"({type(exc).__name__}) {tries}. Check the server log: it crashed, or a proxy cut the reply.")
        else:
            text = (f"model server at {self.base_url} must be reachable, but it could not be reached "
                    f"({type(exc).__name__}) {tries}. Check the server is up and base_url is right.")
        return EndpointError(self._redact(text), url=self.base_url, reason=type(exc).__name__)

    def _decode(self, response: httpx.Response) -> Any:
        status = response.status_code
        if status >= 400:
            body = self._redact(response.text)[:300]  # redacted before cut, so no prefix of a key survives
            tries = f" after {self.max_retries + 1} tries" if _retryable(status) else ""
            fix = {
                401: f"Set the key in ${self.key_source if self.key_source not in ('none', 'api_key=') else (self._key_env or ENDPOINT_KEY_ENV)} or pass api_key=.",
                403: "The key is not allowed to use this model; check its permissions.",
                404: f"Check base_url ends in /v1 and that the server serves model {self.model!r}.",
                429: "The server is rate limiting; lower concurrency= or raise max_retries=.",
            }.get(status, "Check the server log; 5xx answers mean the server failed." if status >= 500 else
                  "The request was refused; the message above says why.")
            raise EndpointError(
                f"model server at {self.base_url} must accept the request for model {self.model!r}, but it answered "
                f"{status}{tries}: {body!r}. {fix}",
                status=status, url=self.base_url, name=self.model,
            )
        try:
            return response.json()
        except ValueError:
            raise EndpointError(
                f"model server at {self.base_url} must answer JSON, got {self._redact(response.text)[:120]!r}. "
                "Check base_url points at the /v1 API, not a web page.",
                url=self.base_url,
            ) from None

    def _secrets(self) -> list[str]:
        """Every credential this endpoint holds: the key and each secret-named header or parameter value."""
        found = [self._key.get()] + [v.get() for v in (*self.headers.values(), *self.params.values())
                                     if isinstance(v, _Secret)]
        return sorted({f for f in found if isinstance(f, str) and f}, key=len, reverse=True)

    def _redact(self, text: str) -> str:
        """``text`` with every credential replaced by ``***`` (longest first, so no part of one is left)."""
        for secret in self._secrets():
            text = text.replace(secret, "***")
        return text

    def _redact_value(self, value: Any) -> Any:
        """A reply value (text, list or dict) with every credential replaced by ``***``."""
        if isinstance(value, str):
            return self._redact(value)
        if isinstance(value, list):
            return [self._redact_value(v) for v in value]
        if isinstance(value, Mapping):
            return {k: self._redact_value(v) for k, v in value.items()}
        return value

    def _parse(self, data: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        choices = data.get("choices") if isinstance(data, Mapping) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            raise EndpointError(
                f"model server at {self.base_url} must answer with choices, got {self._redact(str(data)[:160])!r}. "
                "Check the server speaks the OpenAI chat-completions API.", url=self.base_url)
        choice = choices[0]
        raw = choice.get("message")
        if not isinstance(raw, Mapping):
            raise EndpointError(f"model server at {self.base_url} must answer a message in choices[0], got "
                                f"{self._redact(str(choice)[:160])!r}. Check the server version.", url=self.base_url)
        message: dict[str, Any] = {"role": "assistant", "content": raw.get("content")}
        if raw.get("tool_calls"):
            message["tool_calls"] = raw["tool_calls"]
        for key in ("reasoning_content", "refusal"):
            if raw.get(key):
                message[key] = raw[key]
        if self._secrets():  # a model that echoes the key (or a header it saw) never puts it in a row
            message = self._redact_value(message)
        extra: dict[str, Any] = {}
        if choice.get("finish_reason") is not None:
            extra["finish_reason"] = choice["finish_reason"]
        if isinstance(data.get("usage"), Mapping):
            extra["usage"] = dict(data["usage"])
        return message, extra


def _is_secret(name: Any, value: Any) -> bool:
    """A header or parameter whose name holds key, auth, token or secret and whose value is text."""
    low = str(name).lower()
    return isinstance(value, str) and any(part in low for part in SECRET_NAME_PARTS)


def _reveal(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v.get() if isinstance(v, _Secret) else v for k, v in values.items()}


def _retryable(status: int) -> bool:
    return status == 429 or status >= 500


def _wire_message(message: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(message, Mapping):
        raise ArgumentError(f"each message must be a dict with role and content, got {message!r}. "
                            'Pass {"role": "user", "content": "..."}.')
    out = {k: message[k] for k in _SENT_MESSAGE_KEYS if message.get(k) is not None}
    out.setdefault("content", None)
    return out
