"""``wai.Endpoint``: any OpenAI-compatible chat-completions server as an agent or a judge backend.

vLLM, Ollama, OpenAI, or anything else that speaks ``POST {base_url}/chat/completions``. Requests
go through httpx with a concurrency limit, a timeout, and retries with exponential backoff on 429,
5xx and transport errors (honouring ``Retry-After``); other 4xx answers fail at once with the
reason. The API key comes from ``api_key=`` or an environment variable and never appears in a
repr, a log line, an error message or a row.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from whileai._checks import check_int
from whileai.defaults import (
    ENDPOINT_BACKOFF_CAP_S,
    ENDPOINT_BACKOFF_S,
    ENDPOINT_KEY_ENV,
    ENDPOINT_MAX_RETRIES,
    ENDPOINT_TIMEOUT_S,
    SIM_CONCURRENCY,
)
from whileai.errors import ArgumentError, EndpointError

if TYPE_CHECKING:
    import httpx

__all__ = ["Endpoint"]

log = logging.getLogger("whileai.simulation")

_DEFAULT_BASE_URL = "https://api.openai.com/v1"
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


class Endpoint:
    """A model on an OpenAI-compatible server: an agent for ``simulate`` and a judge backend.

    As an agent, ``simulate(wai.Endpoint(...), ...)`` sends the conversation and the tool schemas,
    runs the tool calls it answers with against the world, and keeps ``concurrency`` requests in
    flight (asyncio). As a judge backend, :meth:`chat` (sync) and :meth:`achat` (async) take
    OpenAI messages and return the assistant message as a dict.

    Args:
        model: The model name the server knows (``"Qwen/Qwen3-4B"``, ``"gpt-4.1-mini"``, ``"llama3"``).
        base_url: The server's ``/v1`` base (``http://localhost:8000/v1`` for vLLM,
            ``http://localhost:11434/v1`` for Ollama). Default: ``$OPENAI_BASE_URL``, else OpenAI.
        api_key: The key. Default: the ``api_key_env`` environment variable; none is sent when
            neither is set (local servers need none).
        api_key_env: The environment variable the key is read from.
        timeout: Seconds per request.
        max_retries: Retries after a 429, a 5xx or a transport error, with exponential backoff.
        backoff_s: The first backoff; each retry doubles it, up to ``ENDPOINT_BACKOFF_CAP_S``.
        concurrency: Requests in flight at once through this endpoint.
        temperature: Sent when given; the server's default otherwise.
        max_tokens: Sent when given.
        headers: Extra HTTP headers.
        params: Extra request fields sent with every request (``{"top_p": 0.9}``,
            ``{"extra_body": ...}`` fields flattened in).

    Raises:
        ArgumentError: A missing model name, a base URL that is not http(s), or a bad limit.

    Examples:
        >>> ep = Endpoint("my-model", base_url="http://127.0.0.1:8000/v1", api_key="sk-secret")
        >>> ep
        Endpoint(model='my-model', base_url='http://127.0.0.1:8000/v1', key=given)
        >>> "sk-secret" in repr(vars(ep))
        False
    """

    def __init__(self, model: str, /, *, base_url: str | None = None, api_key: str | None = None,
                 api_key_env: str = ENDPOINT_KEY_ENV, timeout: float = ENDPOINT_TIMEOUT_S,
                 max_retries: int = ENDPOINT_MAX_RETRIES, backoff_s: float = ENDPOINT_BACKOFF_S,
                 concurrency: int = SIM_CONCURRENCY, temperature: float | None = None,
                 max_tokens: int | None = None, headers: Mapping[str, str] | None = None,
                 params: Mapping[str, Any] | None = None) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ArgumentError(f"model must be a non-empty model name, got {model!r}. Pass the name the server serves, "
                                "e.g. Endpoint('Qwen/Qwen3-4B', base_url='http://localhost:8000/v1').")
        url = base_url if base_url is not None else os.environ.get("OPENAI_BASE_URL") or _DEFAULT_BASE_URL
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ArgumentError(f"base_url must be an http(s) URL ending in /v1, got {url!r}. "
                                "Pass e.g. base_url='http://localhost:8000/v1'.")
        for name, value, low in (("timeout", timeout, 0.0), ("backoff_s", backoff_s, 0.0)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < low or (name == "timeout" and value == 0):
                raise ArgumentError(f"{name} must be a positive number of seconds, got {value!r}. Pass e.g. {name}=30.")
        check_int("max_retries", max_retries, minimum=0)
        check_int("concurrency", concurrency, minimum=1)
        self.model = model
        self.base_url = url.rstrip("/")
        key = api_key if api_key is not None else os.environ.get(api_key_env)
        self._key = _Secret(key or None)
        self.key_source = "api_key=" if api_key else (api_key_env if key else "none")
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.backoff_s = float(backoff_s)
        self.concurrency = int(concurrency)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.headers = dict(headers or {})
        self.params = dict(params or {})
        self._lock = threading.Lock()
        self._client: httpx.Client | None = None
        self._sem = threading.BoundedSemaphore(self.concurrency)
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[httpx.AsyncClient, asyncio.Semaphore]] = (
            weakref.WeakKeyDictionary())

    # --- what people see --------------------------------------------------------------------

    def __repr__(self) -> str:
        key = {"none": "none", "api_key=": "given"}.get(self.key_source, f"${self.key_source}")
        return f"Endpoint(model={self.model!r}, base_url={self.base_url!r}, key={key})"

    __str__ = __repr__

    @property
    def model_version(self) -> str:
        """The name rows carry in ``model_version``."""
        return self.model

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
        headers = {"Content-Type": "application/json", **self.headers}
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
        payload.update(self.params)
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

    def _post_sync(self, payload: dict[str, Any]) -> Any:
        import httpx

        client = self._sync_client()
        for attempt in range(self.max_retries + 1):
            try:
                response = client.post(self._url, json=payload, headers=self._request_headers())
            except httpx.TransportError as exc:
                if attempt < self.max_retries:
                    self._log_retry(type(exc).__name__, attempt)
                    time.sleep(self._delay(attempt, None))
                    continue
                raise self._transport_error(exc) from None
            if _retryable(response.status_code) and attempt < self.max_retries:
                self._log_retry(str(response.status_code), attempt)
                time.sleep(self._delay(attempt, response))
                continue
            return self._decode(response)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _post_async(self, client: httpx.AsyncClient, payload: dict[str, Any]) -> Any:
        import httpx

        for attempt in range(self.max_retries + 1):
            try:
                response = await client.post(self._url, json=payload, headers=self._request_headers())
            except httpx.TransportError as exc:
                if attempt < self.max_retries:
                    self._log_retry(type(exc).__name__, attempt)
                    await asyncio.sleep(self._delay(attempt, None))
                    continue
                raise self._transport_error(exc) from None
            if _retryable(response.status_code) and attempt < self.max_retries:
                self._log_retry(str(response.status_code), attempt)
                await asyncio.sleep(self._delay(attempt, response))
                continue
            return self._decode(response)
        raise AssertionError("unreachable")  # pragma: no cover

    def _log_retry(self, what: str, attempt: int) -> None:
        log.debug("retrying %s after %s (retry %d of %d)", self._url, what, attempt + 1, self.max_retries)

    def _transport_error(self, exc: Exception) -> EndpointError:
        import httpx

        kind = "timed out" if isinstance(exc, httpx.TimeoutException) else f"could not be reached ({type(exc).__name__})"
        return EndpointError(
            f"model server at {self.base_url} must answer within {self.timeout:g} s, but it {kind} "
            f"{self.max_retries + 1} times. Check the server is up and base_url is right, or raise timeout=.",
            url=self.base_url, reason=type(exc).__name__,
        )

    def _decode(self, response: httpx.Response) -> Any:
        status = response.status_code
        if status >= 400:
            body = self._redact(response.text[:300])
            tries = f" after {self.max_retries + 1} tries" if _retryable(status) else ""
            fix = {
                401: f"Set the key in ${self.key_source if self.key_source not in ('none', 'api_key=') else ENDPOINT_KEY_ENV} or pass api_key=.",
                403: "The key is not allowed to use this model; check its permissions.",
                404: f"Check base_url ends in /v1 and that the server serves model {self.model!r}.",
                429: "The server is rate limiting; lower concurrency= or raise max_retries=.",
            }.get(status, "Check the server log; 5xx answers mean the server failed." if status >= 500 else
                  "The request was refused; the message above says why.")
            raise EndpointError(
                f"model server at {self.base_url} must accept the request, but it answered {status}{tries}: {body!r}. {fix}",
                status=status, url=self.base_url,
            )
        try:
            return response.json()
        except ValueError:
            raise EndpointError(
                f"model server at {self.base_url} must answer JSON, got {self._redact(response.text[:120])!r}. "
                "Check base_url points at the /v1 API, not a web page.",
                url=self.base_url,
            ) from None

    def _redact(self, text: str) -> str:
        key = self._key.get()
        return text.replace(key, "***") if key else text

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
        extra: dict[str, Any] = {}
        if choice.get("finish_reason") is not None:
            extra["finish_reason"] = choice["finish_reason"]
        if isinstance(data.get("usage"), Mapping):
            extra["usage"] = dict(data["usage"])
        return message, extra


def _retryable(status: int) -> bool:
    return status == 429 or status >= 500


def _wire_message(message: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(message, Mapping):
        raise ArgumentError(f"each message must be a dict with role and content, got {message!r}. "
                            'Pass {"role": "user", "content": "..."}.')
    out = {k: message[k] for k in _SENT_MESSAGE_KEYS if message.get(k) is not None}
    out.setdefault("content", None)
    return out
