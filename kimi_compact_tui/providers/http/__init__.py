"""Streaming over HTTP: OpenAI-compatible SSE, Anthropic's Messages API over SSE
and Ollama's native NDJSON.

One retry loop serves every wire format (:mod:`.wire`, :mod:`.anthropic`). Retries happen only
before the first token: 429 (honouring ``Retry-After`` / ``retry-after-ms``,
capped), 5xx and connection errors with jittered exponential backoff, at most
``config.max_retries`` tries in total. Quota-exhausted 429s are not retried
(:mod:`.errors`).

The API key is read from its environment variable when the request is made,
only for a base URL it belongs to (:func:`..keys.sent_key_variable`), is only ever placed in the wire format's key header (``Authorization``, or
Anthropic's ``x-api-key``), and is scrubbed from any error text the provider
sends back. A request that needs a key (:mod:`..keys`) is never sent without one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kimi_compact_tui.errors import ConfigError
from kimi_compact_tui.providers._stream import Collector, Outcome, one_line, run_stream
from kimi_compact_tui.providers.base import (
    EventCallback,
    ProviderConfig,
    StreamEvent,
    StreamResult,
    SummaryInput,
    request_body,
)
from kimi_compact_tui.providers.http.anthropic import AnthropicMessages
from kimi_compact_tui.providers.http.errors import (
    QUOTA_CODES,
    HttpError,
    backoff_delay,
    describe_http_error,
)
from kimi_compact_tui.providers.http.wire import (
    TOOL_FIELDS,
    OllamaChat,
    OpenAIChat,
    Wire,
    estimate_num_ctx,
    strip_tools,
    text_of,
)
from kimi_compact_tui.providers.keys import require_key, sent_key_variable

if TYPE_CHECKING:
    import asyncio

USER_AGENT = "kimi-compact-tui"

__all__ = [
    "QUOTA_CODES",
    "AnthropicMessages",
    "TOOL_FIELDS",
    "USER_AGENT",
    "HttpError",
    "HttpProvider",
    "OllamaChat",
    "OpenAIChat",
    "Wire",
    "backoff_delay",
    "describe_http_error",
    "estimate_num_ctx",
    "stream_http",
    "strip_tools",
    "text_of",
]


class HttpProvider:
    """The :class:`~kimi_compact_tui.providers.registry.Provider` for the HTTP kinds
    (openai, moonshot, anthropic, ollama): ``protocol`` is the kind's wire class
    (``registry.KINDS``), made for ``config.kind``."""

    def __init__(self, config: ProviderConfig, protocol: Wire) -> None:
        self.config = config
        self.protocol = protocol

    async def stream(
        self,
        request: SummaryInput,
        on_event: EventCallback | None = None,
        cancel: asyncio.Event | None = None,
    ) -> StreamResult:
        return await stream_http(
            self.config, self.protocol, request_body(request), on_event, cancel
        )


# ----------------------------------------------------------------------------- the loop


async def _attempts(
    config: ProviderConfig, protocol: Wire, payload: dict[str, Any], col: Collector
) -> Outcome:
    import asyncio

    import httpx  # (loaded when a request is made, not by every command)

    url = protocol.url(config)
    key_env = sent_key_variable(config)  # None: no key belongs to this URL
    key = os.environ.get(key_env, "").strip() if key_env else ""
    unsent = None if key_env else config.effective_key_env  # named in a 401, never read
    if key:
        col.secrets.append(key)
    headers = {"User-Agent": USER_AGENT, **protocol.headers(key)}
    timeout = httpx.Timeout(
        connect=config.connect_timeout,
        read=config.read_timeout,
        write=config.read_timeout,
        pool=config.connect_timeout,
    )
    tries = max(1, config.max_retries)
    async with httpx.AsyncClient(timeout=timeout, follow_redirects=False, trust_env=True) as client:
        attempt = 0
        while True:
            attempt += 1
            col.attempts = attempt
            got_response = False
            retry_reason: str | None = None
            asked: float | None = None
            try:
                async with client.stream("POST", url, json=payload, headers=headers) as response:
                    got_response = True
                    col.http_status = response.status_code
                    if response.status_code >= 400:
                        raw = await response.aread()
                        err = describe_http_error(
                            response.status_code, raw, response.headers, key_env, unsent
                        )
                        if not (err.retryable and attempt < tries and not col.started):
                            return Outcome("failed", err.message, err.status)
                        retry_reason, asked = err.message, err.retry_after
                    elif response.status_code >= 300:
                        return Outcome(
                            "failed",
                            f"HTTP {response.status_code}: the provider redirected to "
                            f"{response.headers.get('location', '?')}; set base_url to that",
                            response.status_code,
                        )
                    else:
                        col.emit(
                            StreamEvent(
                                "status",
                                f"HTTP {response.status_code} from {protocol.kind}; "
                                "waiting for the first token",
                                attempt=attempt,
                            )
                        )
                        return await protocol.read(response, col)
            except httpx.TimeoutException as exc:
                if isinstance(exc, httpx.ConnectTimeout | httpx.PoolTimeout):
                    retry_reason = f"could not connect to {url} within {config.connect_timeout:g} s"
                else:
                    what = "mid-stream" if col.started else "waiting for the first token"
                    return Outcome(
                        "failed",
                        f"no data from the provider for {config.read_timeout:g} s {what} "
                        "(read timeout)",
                    )
            except httpx.ConnectError as exc:
                retry_reason = f"could not connect to {url}: {exc or type(exc).__name__}"
            except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
                if got_response or col.started:
                    return Outcome(
                        "failed", f"the connection broke mid-stream: {exc or type(exc).__name__}"
                    )
                retry_reason = f"the server closed the connection: {exc or type(exc).__name__}"
            except httpx.HTTPError as exc:
                return Outcome("failed", f"HTTP error: {type(exc).__name__}: {exc}")
            if retry_reason is None:  # pragma: no cover - every branch above sets or returns
                return Outcome("failed", "the request failed")
            if attempt >= tries or col.started:
                return Outcome("failed", f"{retry_reason} (after {attempt} tries)")
            delay = backoff_delay(config, attempt, asked)
            col.emit(
                StreamEvent(
                    "retry",
                    one_line(
                        f"{retry_reason}; retrying in {delay:.2f} s (try {attempt + 1} of {tries})"
                    ),
                    attempt=attempt + 1,
                    delay=delay,
                )
            )
            await asyncio.sleep(delay)


async def stream_http(
    config: ProviderConfig,
    protocol: Wire,
    body: Mapping[str, Any],
    on_event: EventCallback | None = None,
    cancel: asyncio.Event | None = None,
) -> StreamResult:
    payload = protocol.payload(config, body)
    col = Collector(on_event, provider=config.kind, model=payload.get("model"))
    if not payload.get("model"):
        return col.result(
            Outcome(
                "failed", "no model configured: set provider.model in the config or pass --model"
            )
        )
    try:  # a request that needs a key is never sent without one
        require_key(config)
    except ConfigError as exc:
        return col.result(Outcome("failed", str(exc)))
    return await run_stream(col, lambda: _attempts(config, protocol, payload, col), cancel)
