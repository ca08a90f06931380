"""Anthropic's Messages API: ``POST {base}/v1/messages`` with ``stream: true``,
Server-Sent Events back.

The request's system message becomes the top-level ``system``; the one
synthetic user message keeps its text parts as text blocks, in order (an empty
part is left out and a blank one joins the block before it, since the API
refuses both alone: the text sent is the same). ``max_tokens`` is required by
the API: the request's own (``compaction.settings_overrides``), else
``extra_body``'s, else ``provider.max_tokens``, else :data:`DEFAULT_MAX_TOKENS`.
No tool field is ever sent.

The stream: ``message_start`` (model, input usage), ``content_block_start`` /
``content_block_delta`` (``text_delta`` is summary text, ``thinking_delta`` is
reasoning, ``signature_delta`` is ignored) / ``content_block_stop``,
``message_delta`` (``stop_reason``, output usage), ``message_stop`` (the end
marker), ``ping``, and ``error``. ``end_turn`` and ``stop_sequence`` are a
complete answer, ``max_tokens`` a truncated one; anything else fails, named.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kimi_compact_tui.providers._stream import Collector, Outcome
from kimi_compact_tui.providers.base import ProviderConfig
from kimi_compact_tui.providers.http.wire import (
    TOOL_FIELDS,
    Wire,
    bad_json,
    content_type,
    events,
    not_a_stream,
    text_of,
)

if TYPE_CHECKING:
    import httpx

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 8192
#: Fields that would give the model tools, Anthropic's own included; never sent.
ANTHROPIC_TOOL_FIELDS = (*TOOL_FIELDS, "mcp_servers")
#: OpenAI-style request fields and their Messages API names.
RENAMED = {"max_completion_tokens": "max_tokens", "stop": "stop_sequences"}
#: Fields of the OpenAI-style body that the Messages API builds its own way.
OWNED = ("model", "messages", "system", "stream", "stream_options")
COMPLETE = ("end_turn", "stop_sequence")
#: The events that carry text or thinking: where the part is, and its two types.
BLOCK_EVENTS = {
    "content_block_start": ("content_block", "text", "thinking"),
    "content_block_delta": ("delta", "text_delta", "thinking_delta"),
}
LIMIT = ("max_tokens",)


def _fields(source: Mapping[str, Any]) -> dict[str, Any]:
    return {
        RENAMED.get(k, k): v
        for k, v in source.items()
        if k not in ANTHROPIC_TOOL_FIELDS and k not in OWNED
    }


def text_blocks(content: Any) -> list[dict[str, str]]:
    """A message's text parts as Messages API text blocks, in order."""
    parts = content if isinstance(content, list) else [content]
    texts = [
        str(p if isinstance(p, str) else p.get("text") or "")
        for p in parts
        if isinstance(p, str) or (isinstance(p, Mapping) and p.get("type") == "text")
    ]
    blocks: list[dict[str, str]] = []
    pending = ""
    for text in texts:
        if text.strip():
            blocks.append({"type": "text", "text": pending + text})
            pending = ""
        elif blocks:
            blocks[-1]["text"] += text
        else:
            pending += text
    if pending and not blocks:
        blocks.append({"type": "text", "text": pending})
    return blocks


def split_system(messages: Any) -> tuple[str, list[dict[str, Any]]]:
    """(the top-level ``system`` text, the other messages as Messages API messages)."""
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for m in messages if isinstance(messages, list) else []:
        if not isinstance(m, Mapping):
            continue
        if m.get("role") == "system":
            system.append(text_of(m.get("content")))
            continue
        role = "assistant" if m.get("role") == "assistant" else "user"
        out.append({"role": role, "content": text_blocks(m.get("content"))})
    return "\n\n".join(system), out


def _merge_usage(usage: Any, col: Collector) -> None:
    """Input usage comes first (``message_start``), output usage last
    (``message_delta``): the result keeps both."""
    if isinstance(usage, Mapping):
        merged = dict(col.usage or {})
        merged.update({k: v for k, v in usage.items() if v is not None})
        col.set_usage(merged)


def _error(obj: Any) -> Outcome:
    err = obj.get("error", obj) if isinstance(obj, Mapping) else obj
    if isinstance(err, Mapping):
        kind, message = err.get("type"), err.get("message") or json.dumps(err)[:200]
        text = f"{kind}: {message}" if isinstance(kind, str) and kind != "error" else message
    else:
        text = str(err)
    return Outcome("failed", f"the provider sent an error mid-stream: {text}")


class AnthropicMessages(Wire):
    """The Messages API wire format (``x-api-key``, ``anthropic-version``)."""

    def __init__(self, kind: str = "anthropic") -> None:
        super().__init__(kind)

    end_marker = "message_stop"

    def headers(self, key: str) -> dict[str, str]:
        headers = {"Accept": "text/event-stream", "anthropic-version": ANTHROPIC_VERSION}
        if key:
            headers["x-api-key"] = key
        return headers

    def url(self, config: ProviderConfig) -> str:
        base = config.effective_base_url or ""
        if base.endswith("/v1/messages"):
            return base
        return base + ("/messages" if base.endswith("/v1") else "/v1/messages")

    def payload(self, config: ProviderConfig, body: Mapping[str, Any]) -> dict[str, Any]:
        system, messages = split_system(body.get("messages"))
        payload: dict[str, Any] = {"model": body.get("model") or config.model}
        payload.update(_fields(body))
        payload.update(_fields(config.extra_body))
        if payload.get("max_tokens") is None:
            payload["max_tokens"] = config.max_tokens or DEFAULT_MAX_TOKENS
        if isinstance(payload.get("stop_sequences"), str):
            payload["stop_sequences"] = [payload["stop_sequences"]]
        if system:
            payload["system"] = system
        payload["messages"] = messages
        payload["stream"] = True
        return payload

    def handle(self, kind: Any, obj: Mapping[str, Any], col: Collector) -> None:
        """One stream event (anything not listed, ``ping`` included, is ignored:
        the API may add event types)."""
        if kind == "message_start":
            message = obj.get("message")
            if isinstance(message, Mapping):
                if isinstance(message.get("model"), str) and message["model"]:
                    col.model = message["model"]
                _merge_usage(message.get("usage"), col)
        elif kind in BLOCK_EVENTS:
            field, text_type, thinking_type = BLOCK_EVENTS[kind]
            part = obj.get(field)
            if isinstance(part, Mapping) and part.get("type") == text_type:
                col.text(part.get("text"))
            elif isinstance(part, Mapping) and part.get("type") == thinking_type:
                col.think(part.get("thinking"))
        elif kind == "message_delta":
            delta = obj.get("delta")
            if isinstance(delta, Mapping) and delta.get("stop_reason"):
                col.finish_reason = str(delta["stop_reason"])
            _merge_usage(obj.get("usage"), col)

    def _whole(self, obj: Mapping[str, Any], col: Collector) -> Outcome:
        """A whole message in one JSON body (a server that ignored ``stream``)."""
        self.handle("message_start", {"message": obj}, col)
        for block in obj.get("content") or []:
            self.handle("content_block_start", {"content_block": block}, col)
        self.handle("message_delta", {"delta": obj, "usage": obj.get("usage")}, col)
        return col.verdict(
            ended_normally=True, end_marker=self.end_marker, complete=COMPLETE, limit=LIMIT
        )

    async def read(self, response: httpx.Response, col: Collector) -> Outcome:
        ctype = content_type(response)
        if ctype == "application/json":
            raw = (await response.aread()).decode("utf-8", errors="replace")
            try:
                obj = json.loads(raw)
            except ValueError:
                return bad_json(raw)
            if not isinstance(obj, Mapping):
                return bad_json(raw)
            return _error(obj) if obj.get("type") == "error" else self._whole(obj, col)
        refused = not_a_stream(ctype)
        if refused is not None:
            return refused
        done = False
        async for sse in events(response):
            if not sse.data.strip():
                continue
            try:
                obj = json.loads(sse.data)
            except ValueError:
                if sse.event == "error":
                    return _error(sse.data)
                return bad_json(sse.data)
            if not isinstance(obj, Mapping):
                return bad_json(sse.data)
            kind = obj.get("type") or sse.event
            if kind == "error" or sse.event == "error":
                return _error(obj)
            if kind == "message_stop":
                done = True
                break
            self.handle(kind, obj, col)
        return col.verdict(
            ended_normally=done, end_marker=self.end_marker, complete=COMPLETE, limit=LIMIT
        )
