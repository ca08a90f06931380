"""The provider registry: every provider kind, declared once, and the
spellings that select them.

A kind is one :class:`Kind` line in :data:`KINDS`: the class that speaks its
wire format (an HTTP wire class, served by :class:`~.http.HttpProvider`, or a
provider of its own such as the offline summarizer), its settings
declaration (:mod:`.settings`), its default URL, its key variable and its
other spellings. :data:`REGISTRY` (every accepted spelling of
``provider.kind`` / ``--provider``) is made from those lines. Nothing here loads pydantic,
httpx or asyncio: a provider's transport loads when it runs, pydantic when a
``provider:`` block sets something.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from kimi_compact_tui import limits
from kimi_compact_tui.errors import ConfigError
from kimi_compact_tui.providers import base
from kimi_compact_tui.providers.base import (
    EventCallback,
    ProviderConfig,
    StreamResult,
    SummaryInput,
)
from kimi_compact_tui.providers.http.anthropic import AnthropicMessages
from kimi_compact_tui.providers.http.wire import OllamaChat, OpenAIChat, Wire
from kimi_compact_tui.providers.settings import (
    COMMON_FIELDS,
    FORBIDDEN_KEYS,
    KIND_KEYS,
    AnthropicSettings,
    MoonshotSettings,
    OfflineSettings,
    OllamaSettings,
    OpenAISettings,
    ProviderSettings,
    field_error,
    validate,
)

if TYPE_CHECKING:
    import asyncio


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


def _offline(config: ProviderConfig) -> Provider:
    """The offline summarizer (its module loads only when one is made)."""
    from kimi_compact_tui.providers.offline import OfflineProvider

    return OfflineProvider(config)


@dataclass(frozen=True)
class Kind:
    """One implementation kind (``ProviderConfig.kind``), declared once.

    ``serves`` is the class that speaks its wire format: an HTTP wire class
    (:class:`~.http.wire.Wire`, run by :class:`~.http.HttpProvider`), or a
    function that makes a provider of its own (the offline summarizer)."""

    name: str
    serves: type[Wire] | Callable[[ProviderConfig], Provider]
    settings: type[ProviderSettings]
    default_url: str | None = None
    key_env: str | None = None
    base_url_env: str | None = None  # a variable that may give the URL (read at call time)
    region_urls: Mapping[str, str] = field(default_factory=dict)
    regions: Mapping[str, str] = field(default_factory=dict)  # spelling -> the region it implies
    aliases: tuple[str, ...] = ()  # other spellings of the kind
    remote: bool = True  # a model over the network: it needs a model name

    def create(self, config: ProviderConfig) -> Provider:
        """The provider that serves ``config`` (a config of this kind)."""
        serves = self.serves
        if isinstance(serves, type):
            from kimi_compact_tui.providers.http import HttpProvider

            return HttpProvider(config, serves(self.name))
        return serves(config)


MOONSHOT_URLS = {"global": "https://api.moonshot.ai/v1", "cn": "https://api.moonshot.cn/v1"}

#: Every implementation kind, one line each.
KINDS: tuple[Kind, ...] = (
    Kind("openai", OpenAIChat, OpenAISettings, "https://api.openai.com/v1", "OPENAI_API_KEY",
         aliases=("vllm",)),
    Kind("moonshot", OpenAIChat, MoonshotSettings, MOONSHOT_URLS["global"], "MOONSHOT_API_KEY",
         region_urls=MOONSHOT_URLS, regions={"moonshot-cn": "cn"}, aliases=("kimi",)),
    Kind("anthropic", AnthropicMessages, AnthropicSettings, "https://api.anthropic.com",
         "ANTHROPIC_API_KEY", base_url_env="ANTHROPIC_BASE_URL"),
    Kind("ollama", OllamaChat, OllamaSettings, "http://127.0.0.1:11434"),
    Kind("offline", _offline, OfflineSettings, remote=False),
)  # fmt: skip
KIND_BY_NAME: dict[str, Kind] = {k.name: k for k in KINDS}
base.KINDS.update(KIND_BY_NAME)  # what a ProviderConfig reads (URL, key variable)

#: kind-specific setting -> the kind it belongs to
KIND_FIELDS = {
    name: k.name for k in KINDS for name in k.settings.field_names() if name not in COMMON_FIELDS
}


@dataclass(frozen=True)
class ProviderKind:
    """One accepted spelling of ``provider.kind`` / ``--provider``: the
    implementation kind it selects and the region it implies."""

    declared: Kind
    region: str | None = None

    @property
    def kind(self) -> str:
        return self.declared.name

    @property
    def remote(self) -> bool:
        return self.declared.remote

    @property
    def factory(self) -> Callable[[ProviderConfig], Provider]:
        return self.declared.create


def _spellings(kinds: tuple[Kind, ...]) -> dict[str, ProviderKind]:
    """Each kind's name and region spellings, in :data:`KINDS` order, then the
    aliases in alphabetical order (docs/configuration.md's order)."""
    out: dict[str, ProviderKind] = {}
    for k in kinds:
        out[k.name] = ProviderKind(k)
        out.update({spelling: ProviderKind(k, region) for spelling, region in k.regions.items()})
    for alias, name in sorted((a, k.name) for k in kinds for a in k.aliases):
        out[alias] = ProviderKind(KIND_BY_NAME[name])
    return out


#: Every accepted spelling of a kind, made from :data:`KINDS`.
REGISTRY: dict[str, ProviderKind] = _spellings(KINDS)
#: Every accepted kind, in docs/configuration.md's order (for error messages and help).
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


def check_keys(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The block's settings by field name; refuses keys in the file and unknown fields."""
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if not isinstance(key, str):
            raise ConfigError(f"provider: field names must be text, got {limits.shown(key)}")
        if key.lower() in FORBIDDEN_KEYS:
            raise field_error(
                key,
                "keys are not read from config files; put the key in an environment "
                "variable and name it in provider.api_key_env",
            )
        name = "kind" if key in KIND_KEYS else key
        if name not in COMMON_FIELDS and name not in KIND_FIELDS:
            raise field_error(key, "unknown field")
        values[name] = value
    return values


def validate_settings(kind: str, values: Mapping[str, Any]) -> ProviderConfig:
    """Validate ``values`` with ``kind``'s settings declaration (None means the default)."""
    for name in values:
        owner = KIND_FIELDS.get(name)
        if owner is not None and owner != kind:
            raise field_error(name, f"only for kind {owner}, not {kind}")
    return validate(KIND_BY_NAME[kind].settings, kind, values)


def validate_provider_block(raw: Any) -> ProviderConfig:
    """Check a config file's ``provider:`` block on its own (at load time)."""
    return provider_config_from(raw)


def create_provider(config: ProviderConfig) -> Provider:
    """The provider that serves ``config.kind``."""
    declared = KIND_BY_NAME.get(config.kind)
    if declared is None:
        raise field_error("kind", f"unknown provider {config.kind!r}")
    return declared.create(config)
