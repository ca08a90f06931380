"""Streaming over HTTP: OpenAI-compatible SSE and Ollama's native NDJSON.

One retry loop serves both wire formats. Retries happen only before the first
token: 429 (honouring ``Retry-After`` / ``retry-after-ms``, capped), 5xx and
connection errors with jittered exponential backoff, at most
``config.max_retries`` tries in total. Quota-exhausted 429s are not retried.

The API key is read from its environment variable when the request is made,
is only ever placed in the ``Authorization`` header, and is scrubbed from any
error text the provider sends back.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx
from httpx_sse import EventSource

from kimi_compact_tui.providers._stream import Collector, Outcome, one_line, run_stream
from kimi_compact_tui.providers.base import (
    EventCallback,
    ProviderConfig,
    StreamEvent,
    StreamResult,
)

#: Request fields that would let the model call tools; a summary request never has them.
TOOL_FIELDS = ("tools", "tool_choice", "functions", "function_call", "parallel_tool_calls")
QUOTA_CODES = (
    "insufficient_quota",
    "quota_exceeded",
    "exceeded_current_quota_error",
    "billing_hard_limit_reached",
    "insufficient_balance",
)
QUOTA_WORDS = ("quota", "balance", "billing", "credit")
USER_AGENT = "kimi-compact-tui"


def strip_tools(body: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k not in TOOL_FIELDS}


def text_of(content: Any) -> str:
    """Join a message's content (a string or a list of text parts) into one string."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, Mapping) and part.get("type") == "text":
                out.append(str(part.get("text") or ""))
        return "".join(out)
    return ""


# ----------------------------------------------------------------------------- errors


@dataclass
class HttpError:
    status: int
    message: str
    retryable: bool
    retry_after: float | None = None


def _provider_message(raw: bytes) -> tuple[str, str]:
    """(message, code-or-type) from an error body in any of the usual shapes."""
    text = raw.decode("utf-8", errors="replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, Mapping):
        err = data.get("error", data)
        if isinstance(err, Mapping):
            msg = err.get("message") or err.get("msg") or err.get("detail") or ""
            code = err.get("code") or err.get("type") or ""
            if not msg and isinstance(data.get("message"), str):
                msg = data["message"]
            return (str(msg) if msg else one_line(text, 200)), str(code)
        if isinstance(err, str):
            return err, ""
        if isinstance(data.get("detail"), str):
            return data["detail"], ""
    return one_line(text, 200) or "(no error message in the response)", ""


def _retry_after(headers: httpx.Headers) -> float | None:
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def describe_http_error(
    status: int, raw: bytes, headers: httpx.Headers, key_env: str | None
) -> HttpError:
    message, code = _provider_message(raw)
    lowered = f"{message} {code}".lower()
    retryable = False
    if status == 400:
        if any(w in lowered for w in ("context", "token", "too long", "length", "maximum")):
            label = "request too long for the model's context"
        else:
            label = "bad request"
    elif status == 401:
        label = "bad or missing API key"
        if key_env and not os.environ.get(key_env):
            label += f" ({key_env} is not set)"
        elif key_env:
            label += f" (from {key_env})"
    elif status == 403:
        label = "forbidden"
    elif status == 404:
        label = "model or endpoint not found"
    elif status == 413:
        label = "request too large"
    elif status == 429:
        quota = code.lower() in QUOTA_CODES or any(w in lowered for w in QUOTA_WORDS)
        label = "quota exhausted" if quota else "rate limited"
        retryable = not quota
    elif status >= 500:
        label = "server error"
        retryable = True
    else:
        label = "request refused"
    return HttpError(
        status=status,
        message=f"HTTP {status} {label}: {message}",
        retryable=retryable,
        retry_after=_retry_after(headers) if retryable else None,
    )


def backoff_delay(config: ProviderConfig, attempt: int, asked: float | None) -> float:
    """Seconds to wait before try ``attempt + 1``: what the server asked, else jittered."""
    if asked is not None:
        return min(asked, config.retry_cap)
    step = config.retry_base_delay * (2 ** (attempt - 1))
    return min(config.retry_cap, step * random.uniform(0.5, 1.0))


# ----------------------------------------------------------------------------- wire formats


class Protocol:
    kind: str = "openai"
    end_marker = "[DONE]"

    def url(self, config: ProviderConfig) -> str:
        raise NotImplementedError

    def payload(self, config: ProviderConfig, body: Mapping[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    async def read(self, response: httpx.Response, col: Collector) -> Outcome:
        raise NotImplementedError


def _bad_json(data: str) -> Outcome:
    return Outcome("failed", f"invalid JSON in a stream event: {one_line(data, 80)!r}")


def _inband_error(obj: Any) -> Outcome:
    if isinstance(obj, Mapping):
        err = obj.get("error", obj)
        if isinstance(err, Mapping):
            msg = err.get("message") or json.dumps(err)[:200]
        else:
            msg = str(err)
    else:
        msg = str(obj)
    return Outcome("failed", f"the provider sent an error mid-stream: {msg}")


class OpenAIChat(Protocol):
    """``POST {base_url}/chat/completions`` with ``stream: true``; Server-Sent Events back."""

    def __init__(self, kind: str = "openai") -> None:
        self.kind = kind

    def url(self, config: ProviderConfig) -> str:
        base = config.effective_base_url or ""
        if base.endswith("/chat/completions"):
            return base
        return base + "/chat/completions"

    def payload(self, config: ProviderConfig, body: Mapping[str, Any]) -> dict[str, Any]:
        payload = strip_tools(body)
        payload.update(strip_tools(config.extra_body))
        # The engine already chose the model (compaction_model override, else the
        # provider's); the provider's own model only fills a body without one.
        if not payload.get("model") and config.model:
            payload["model"] = config.model
        payload["stream"] = True
        if self.kind == "openai":
            options = dict(payload.get("stream_options") or {})
            options["include_usage"] = True
            payload["stream_options"] = options
        return payload

    def handle_chunk(self, obj: Mapping[str, Any], col: Collector) -> None:
        if isinstance(obj.get("model"), str) and obj["model"]:
            col.model = obj["model"]
        col.set_usage(obj.get("usage"))
        choices = obj.get("choices") or []
        if not isinstance(choices, list):
            return
        for choice in choices:
            if not isinstance(choice, Mapping) or choice.get("index", 0) not in (0, None):
                continue
            delta = choice.get("delta") or choice.get("message") or {}
            if isinstance(delta, Mapping):
                col.think(delta.get("reasoning_content"))
                col.think(delta.get("reasoning"))
                col.text(delta.get("content"))
            col.set_usage(choice.get("usage"))  # Moonshot: usage inside the finishing choice
            if choice.get("finish_reason"):
                col.finish_reason = str(choice["finish_reason"])

    async def read(self, response: httpx.Response, col: Collector) -> Outcome:
        ctype = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        if ctype == "application/json":
            # A server that ignored "stream": a whole completion or an error in one body.
            raw = await response.aread()
            try:
                obj = json.loads(raw)
            except ValueError:
                return _bad_json(raw.decode("utf-8", errors="replace"))
            if not isinstance(obj, Mapping):
                return _bad_json(raw.decode("utf-8", errors="replace"))
            if obj.get("error"):
                return _inband_error(obj)
            self.handle_chunk(obj, col)
            return col.verdict(ended_normally=True, end_marker=self.end_marker)
        if "text/event-stream" not in ctype:
            return Outcome(
                "failed",
                f"expected an event stream from the provider, got {ctype or 'no content type'!r}",
            )
        done = False
        async for sse in EventSource(response).aiter_sse():
            data = sse.data
            if sse.event == "error":
                try:
                    return _inband_error(json.loads(data))
                except ValueError:
                    return _inband_error(data)
            if not data.strip():
                continue
            if data.strip() == "[DONE]":
                done = True
                break
            try:
                obj = json.loads(data)
            except ValueError:
                return _bad_json(data)
            if not isinstance(obj, Mapping):
                return _bad_json(data)
            if obj.get("error"):
                return _inband_error(obj)
            self.handle_chunk(obj, col)
        return col.verdict(ended_normally=done, end_marker=self.end_marker)


def estimate_num_ctx(messages: list[dict[str, Any]]) -> int:
    """A context size big enough for the whole transcript plus room for the summary.

    Counts about one token per 3 characters (generous for English and code;
    CJK text is counted at one token per character), adds 4096 tokens for the
    answer, and rounds up to a multiple of 1024 (at least 8192).
    """
    tokens = 0
    for m in messages:
        text = str(m.get("content") or "")
        wide = (len(text.encode("utf-8", "surrogatepass")) - len(text)) // 2  # ~CJK chars
        tokens += (len(text) - wide) // 3 + wide + 8
    need = tokens + 4096
    return max(8192, -(-need // 1024) * 1024)


class OllamaChat(Protocol):
    """Ollama's native ``POST /api/chat``: newline-delimited JSON ending in ``done: true``."""

    kind = "ollama"
    end_marker = "done: true"
    _OPTION_FIELDS = {
        "temperature": "temperature",
        "top_p": "top_p",
        "max_tokens": "num_predict",
        "max_completion_tokens": "num_predict",
        "seed": "seed",
        "stop": "stop",
    }

    def url(self, config: ProviderConfig) -> str:
        base = config.effective_base_url or ""
        if base.endswith("/v1"):
            base = base[: -len("/v1")]
        if base.endswith("/api/chat"):
            return base
        return base + "/api/chat"

    def payload(self, config: ProviderConfig, body: Mapping[str, Any]) -> dict[str, Any]:
        src = strip_tools(body)
        messages = [
            {"role": str(m.get("role", "user")), "content": text_of(m.get("content"))}
            for m in src.get("messages") or []
            if isinstance(m, Mapping)
        ]
        options: dict[str, Any] = {}
        for key, target in self._OPTION_FIELDS.items():
            if src.get(key) is not None:
                options[target] = src[key]
        options["num_ctx"] = config.num_ctx or estimate_num_ctx(messages)
        payload: dict[str, Any] = {
            "model": src.get("model") or config.model,
            "messages": messages,
            "stream": True,
            "truncate": False,
            "options": options,
        }
        extra = strip_tools(config.extra_body)
        if isinstance(extra.get("options"), Mapping):
            options.update(extra.pop("options"))
        payload.update(extra)
        payload["stream"] = True
        return payload

    async def read(self, response: httpx.Response, col: Collector) -> Outcome:
        done = False
        async for line in response.aiter_lines():
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                return _bad_json(line)
            if not isinstance(obj, Mapping):
                return _bad_json(line)
            if obj.get("error"):
                return _inband_error(obj)
            if isinstance(obj.get("model"), str) and obj["model"]:
                col.model = obj["model"]
            message = obj.get("message") or {}
            if isinstance(message, Mapping):
                col.think(message.get("thinking"))
                col.text(message.get("content"))
            if obj.get("done"):
                done = True
                col.finish_reason = str(obj.get("done_reason") or "stop")
                prompt = obj.get("prompt_eval_count")
                completion = obj.get("eval_count")
                if prompt is not None or completion is not None:
                    col.set_usage(
                        {
                            "prompt_tokens": prompt or 0,
                            "completion_tokens": completion or 0,
                            "total_tokens": (prompt or 0) + (completion or 0),
                        }
                    )
                break
        return col.verdict(ended_normally=done, end_marker=self.end_marker)


# ----------------------------------------------------------------------------- the loop


async def _attempts(
    config: ProviderConfig, protocol: Protocol, payload: dict[str, Any], col: Collector
) -> Outcome:
    url = protocol.url(config)
    key_env = config.effective_key_env
    headers = {"User-Agent": USER_AGENT}
    if protocol.kind != "ollama":
        headers["Accept"] = "text/event-stream"
    key = os.environ.get(key_env, "") if key_env else ""
    if key:
        col.secrets.append(key)
        headers["Authorization"] = f"Bearer {key}"
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
                            response.status_code, raw, response.headers, key_env
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
    protocol: Protocol,
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
    return await run_stream(col, lambda: _attempts(config, protocol, payload, col), cancel)
