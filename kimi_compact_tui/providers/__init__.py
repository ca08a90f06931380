"""Summary providers: OpenAI-compatible SSE (OpenAI, Moonshot/Kimi, vLLM, llama.cpp,
Ollama ``/v1``), Ollama native NDJSON, and the offline extractive summarizer.

Entry point::

    result = await stream_summary(config, body, on_event=print_event, cancel=event)

``body`` is the OpenAI-style request body built by the compaction core. Every
provider returns a :class:`StreamResult`; none raises for provider trouble.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from kimi_compact_tui.providers.base import (
    OFFLINE_MODEL,
    OFFLINE_NOTICE,
    PROVIDER_KINDS,
    EventCallback,
    ProviderConfig,
    StreamEvent,
    StreamResult,
    provider_config_from,
)

StreamFn = Callable[
    [ProviderConfig, Mapping[str, Any], EventCallback | None, asyncio.Event | None],
    Awaitable[StreamResult],
]

__all__ = [
    "OFFLINE_MODEL",
    "OFFLINE_NOTICE",
    "PROVIDER_KINDS",
    "EventCallback",
    "ProviderConfig",
    "StreamEvent",
    "StreamResult",
    "get_provider",
    "provider_config_from",
    "stream_summary",
]


def get_provider(config: ProviderConfig) -> StreamFn:
    """The ``stream_summary``-shaped function that serves ``config.kind``."""
    if config.kind == "offline":
        from kimi_compact_tui.providers.offline import stream_summary as offline_stream

        return offline_stream
    from kimi_compact_tui.providers.http import OllamaChat, OpenAIChat, stream_http

    if config.kind == "ollama":
        protocol: Any = OllamaChat()
    elif config.kind in ("openai", "moonshot"):
        protocol = OpenAIChat(config.kind)
    else:
        from kimi_compact_tui.errors import ConfigError

        raise ConfigError(f"provider.kind: unknown provider {config.kind!r}")

    async def _stream(cfg, body, on_event=None, cancel=None):  # type: ignore[no-untyped-def]
        return await stream_http(cfg, protocol, body, on_event, cancel)

    return _stream


async def stream_summary(
    config: ProviderConfig,
    body: Mapping[str, Any],
    on_event: EventCallback | None = None,
    cancel: asyncio.Event | None = None,
) -> StreamResult:
    """Ask ``config``'s provider for the summary of ``body``, streaming through ``on_event``."""
    return await get_provider(config)(config, body, on_event, cancel)
