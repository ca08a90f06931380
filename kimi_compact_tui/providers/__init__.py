"""Summary providers: OpenAI-compatible SSE (OpenAI, Moonshot/Kimi, vLLM, llama.cpp,
Ollama ``/v1``), Anthropic's Messages API over SSE, Ollama native NDJSON, and the
offline extractive summarizer.

Entry points::

    config = provider_config_from(app_config.provider, provider=flag, model=flag)
    provider = create_provider(config)          # a Provider (registry.py)
    result = await provider.stream(request, on_event=print_event, cancel=event)
    # or, in one call:
    result = await stream_summary(config, request, on_event=print_event, cancel=event)

``request`` is the compaction request (``CompactionRequest``) or its OpenAI-style
body. Every provider returns a :class:`StreamResult`; none raises for provider
trouble. ``stream_summary`` is the one provider call (:class:`StreamFunction`)
the job makes. The accepted kinds are :data:`PROVIDER_KINDS`.

Importing this package loads neither pydantic, httpx nor asyncio: they load
when a ``provider:`` block is checked or a provider runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kimi_compact_tui.providers.base import (
    OFFLINE_MODEL,
    OFFLINE_NOTICE,
    EventCallback,
    ProviderConfig,
    StreamEvent,
    StreamFunction,
    StreamResult,
    SummaryInput,
    request_body,
)
from kimi_compact_tui.providers.keys import require_key
from kimi_compact_tui.providers.registry import (
    PROVIDER_KINDS,
    REGISTRY,
    Provider,
    ProviderKind,
    create_provider,
    is_remote,
    provider_config_from,
    require_model,
    resolve_kind,
    validate_provider_block,
)

if TYPE_CHECKING:
    import asyncio

__all__ = [
    "OFFLINE_MODEL",
    "OFFLINE_NOTICE",
    "PROVIDER_KINDS",
    "REGISTRY",
    "EventCallback",
    "Provider",
    "ProviderConfig",
    "ProviderKind",
    "StreamEvent",
    "StreamFunction",
    "StreamResult",
    "SummaryInput",
    "create_provider",
    "is_remote",
    "provider_config_from",
    "request_body",
    "require_key",
    "require_model",
    "resolve_kind",
    "stream_summary",
    "validate_provider_block",
]


async def stream_summary(
    config: ProviderConfig,
    request: SummaryInput,
    on_event: EventCallback | None = None,
    cancel: asyncio.Event | None = None,
) -> StreamResult:
    """Ask ``config``'s provider for the summary of ``request``, streaming through
    ``on_event``."""
    return await create_provider(config).stream(request, on_event, cancel)
