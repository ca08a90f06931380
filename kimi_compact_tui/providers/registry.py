"""The provider registry: every accepted kind, its settings model and its implementation.

Adding a provider means one module with a class that satisfies :class:`Provider`,
one settings model in :mod:`kimi_compact_tui.providers.settings` (when it has
settings of its own) and one line in :data:`REGISTRY`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from kimi_compact_tui.errors import ConfigError
from kimi_compact_tui.providers.base import (
    EventCallback,
    ProviderConfig,
    StreamResult,
    SummaryInput,
)
from kimi_compact_tui.providers.settings import (
    KIND_FIELDS,
    check_keys,
    field_error,
    validate_settings,
)


@runtime_checkable
class Provider(Protocol):
    """One configured provider.

    ``stream(request, on_event, cancel)`` asks for the summary of ``request`` (a
    :class:`~kimi_compact_tui.compaction.request.CompactionRequest`, or its
    OpenAI-style ``body``) and returns how it ended as a :class:`StreamResult`.
    Contract:

    - it never raises for provider trouble (HTTP errors, timeouts, bad streams,
      an empty or cut summary): the result says ``failed`` with a one-line error;
    - every piece of text or reasoning is passed to ``on_event`` as it arrives
      (:class:`StreamEvent`), with ``retry`` and ``status`` notes in between;
    - setting ``cancel`` (or cancelling the task) ends it as ``cancelled`` with
      the partial text kept;
    - ``complete`` only after a normal end with finish reason ``stop`` (or the
      wire format's own spelling of it, e.g. Anthropic's ``end_turn``);
    - an API key is read from its environment variable at call time, used only
      in the key header (``Authorization``, Anthropic's ``x-api-key``) and
      scrubbed from every error text; a request that needs a key
      (:func:`~kimi_compact_tui.providers.keys.require_key`) is never sent
      without one.
    """

    config: ProviderConfig

    async def stream(
        self,
        request: SummaryInput,
        on_event: EventCallback | None = None,
        cancel: asyncio.Event | None = None,
    ) -> StreamResult: ...


def _http(config: ProviderConfig) -> Provider:
    from kimi_compact_tui.providers.http import HttpProvider

    return HttpProvider(config)


def _offline(config: ProviderConfig) -> Provider:
    from kimi_compact_tui.providers.offline import OfflineProvider

    return OfflineProvider(config)


@dataclass(frozen=True)
class ProviderKind:
    """One accepted spelling of ``provider.kind`` / ``--provider``: the
    implementation kind it selects (``ProviderConfig.kind``), the region it
    implies, whether it is a remote service that needs a model, and its factory."""

    kind: str
    factory: Callable[[ProviderConfig], Provider]
    remote: bool = True
    region: str | None = None
    description: str = ""


REGISTRY: dict[str, ProviderKind] = {
    "openai": ProviderKind("openai", _http, description="OpenAI-compatible SSE"),
    "moonshot": ProviderKind("moonshot", _http, description="Kimi / Moonshot (global)"),
    "moonshot-cn": ProviderKind("moonshot", _http, region="cn", description="Moonshot (China)"),
    "anthropic": ProviderKind("anthropic", _http, description="Anthropic Messages API over SSE"),
    "ollama": ProviderKind("ollama", _http, description="Ollama native /api/chat"),
    "offline": ProviderKind("offline", _offline, remote=False, description="no model"),
    "kimi": ProviderKind("moonshot", _http, description="alias of moonshot"),
    "vllm": ProviderKind("openai", _http, description="alias of openai"),
}
#: Every accepted kind, in the order docs/configuration.md lists them (for error messages and help).
PROVIDER_KINDS: tuple[str, ...] = tuple(REGISTRY)


def _kinds_listed() -> str:
    return ", ".join(PROVIDER_KINDS)


def resolve_kind(value: Any, name: str = "kind") -> ProviderKind:
    """The registry entry for a spelling of a kind; ``name`` is the field or option
    named in the error (``kind`` or ``--provider``)."""
    if not isinstance(value, str) or not value.strip():
        raise _named_error(name, f"must be one of {_kinds_listed()}")
    entry = REGISTRY.get(value.strip().lower())
    if entry is None:
        raise _named_error(name, f"unknown provider {value!r} (expected one of {_kinds_listed()})")
    return entry


def _named_error(name: str, message: str) -> ConfigError:
    return ConfigError(f"{name}: {message}") if name.startswith("-") else field_error(name, message)


def is_remote(kind: str) -> bool:
    """True for a kind that calls a model over the network (and so needs a model)."""
    return resolve_kind(kind).remote


def require_model(config: ProviderConfig, request_model: str | None) -> None:
    """Raise :class:`ConfigError` when ``config`` is a remote provider and no model
    is chosen for the request (``--model``, ``compaction_model``, ``provider.model``)."""
    if is_remote(config.kind) and not (request_model or config.model):
        raise ConfigError(
            f"provider.model: the {config.kind} provider needs a model: set provider.model "
            "or compaction_model in the config, or pass --model"
        )


# The key check (``providers.keys.require_key``) is called beside require_model:
# a provider that needs a key never sends a request without one.


def provider_config_from(
    raw: Mapping[str, Any] | None,
    *,
    provider: str | None = None,
    base_url: str | None = None,
    model: str | None = None,
) -> ProviderConfig:
    """Merge a YAML ``provider:`` block with command line flags (flags win).

    Nothing configured means the offline extractive summarizer; a base URL with
    no kind means an OpenAI-compatible server. Invalid values raise
    :class:`ConfigError` with one line naming the field. When ``--provider``
    changes the block's kind, the block's settings that belong to another kind
    (``region``, ``num_ctx``, ``chunk_delay``) are left out.
    """
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ConfigError("provider: must be a mapping of settings (kind, base_url, model, ...)")
    values = check_keys(raw)
    if provider is not None:
        entry = resolve_kind(provider, "--provider")
        if values.get("kind") is not None and resolve_kind(values["kind"]).kind != entry.kind:
            values = {
                k: v for k, v in values.items() if KIND_FIELDS.get(k, entry.kind) == entry.kind
            }
    elif values.get("kind") is not None:
        entry = resolve_kind(values["kind"])
    else:
        entry = REGISTRY["openai" if (base_url or values.get("base_url")) else "offline"]
    if entry.region is not None:
        values["region"] = entry.region
    if base_url is not None:
        values["base_url"] = base_url
    if model is not None:
        values["model"] = model
    return validate_settings(entry.kind, values)


def validate_provider_block(raw: Any) -> ProviderConfig:
    """Check a config file's ``provider:`` block on its own (at load time)."""
    return provider_config_from(raw)


def create_provider(config: ProviderConfig) -> Provider:
    """The provider that serves ``config.kind``."""
    entry = REGISTRY.get(config.kind)
    if entry is None or entry.kind != config.kind:
        raise field_error("kind", f"unknown provider {config.kind!r}")
    return entry.factory(config)
