"""The ``provider:`` settings, one pydantic model per provider kind.

Every kind accepts the common settings (``base_url``, ``model``, ``api_key_env``,
the timeouts and retries, ``extra_body``); the offline provider reads only
``model`` (shown as the request's model) and ignores the rest, so a config can
switch ``kind`` without deleting them. A setting that belongs to one kind
(``region``: moonshot, ``num_ctx``: ollama, ``max_tokens``: anthropic,
``chunk_delay``: offline) is an error with another. Every error is one line naming the field; a key is never
read from a config file (``api_key`` and friends are refused without echoing
the value).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError
from pydantic_core import PydanticCustomError

from kimi_compact_tui import limits
from kimi_compact_tui.errors import ConfigError
from kimi_compact_tui.providers.base import ProviderConfig


def _fail(message: str) -> PydanticCustomError:
    return PydanticCustomError("provider_setting", message)


def _within(limit: limits.Range) -> BeforeValidator:
    """A number in ``limit``'s range (seconds come back as a float)."""

    def check(v: Any) -> int | float:
        try:
            value = limit.check(v)
        except ValueError as exc:
            raise _fail(str(exc)) from None
        return float(value) if limit.unit == "seconds" else value

    return BeforeValidator(check)


def _url(v: Any) -> str:
    if not isinstance(v, str) or not re.match(r"^https?://[^\s/]+", v.strip()):
        raise _fail(f"must be an http(s) URL, got {limits.shown(v)}")
    return v.strip().rstrip("/")


def _model(v: Any) -> str:
    if not isinstance(v, str) or not v.strip():
        raise _fail("must be a non-empty model name")
    return v.strip()


def _env_name(v: Any) -> str:
    if not isinstance(v, str) or (v and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v)):
        raise _fail("must be an environment variable name")
    return v


def _mapping(v: Any) -> dict[str, Any]:
    if not isinstance(v, Mapping):
        raise _fail("must be a mapping of request fields")
    return dict(v)


REGION_SPELLINGS = {
    "cn": "cn",
    "china": "cn",
    "moonshot-cn": "cn",
    "global": "global",
    "ai": "global",
    "intl": "global",
    "international": "global",
}


def _region(v: Any) -> str:
    region = REGION_SPELLINGS.get(str(v).strip().lower())
    if region is None:
        raise _fail(f"must be 'global' or 'cn', got {limits.shown(v)}")
    return region


class ProviderSettings(BaseModel):
    """The settings every kind accepts, with the defaults docs/configuration.md gives."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str
    base_url: Annotated[str, BeforeValidator(_url)] | None = None
    model: Annotated[str, BeforeValidator(_model)] | None = None
    api_key_env: Annotated[str, BeforeValidator(_env_name)] | None = None
    connect_timeout: Annotated[float, _within(limits.CONNECT_TIMEOUT)] = 10.0
    # The longest silence allowed between two chunks.
    read_timeout: Annotated[float, _within(limits.READ_TIMEOUT)] = 120.0
    max_retries: Annotated[int, _within(limits.MAX_RETRIES)] = 3  # tries in all
    retry_cap: Annotated[float, _within(limits.RETRY_CAP)] = 30.0  # longest wait before one retry
    # The first backoff step, doubled each retry.
    retry_base_delay: Annotated[float, _within(limits.RETRY_BASE_DELAY)] = 1.0
    extra_body: Annotated[dict[str, Any], BeforeValidator(_mapping)] = {}

    def to_config(self) -> ProviderConfig:
        return ProviderConfig(**self.model_dump())


class OpenAISettings(ProviderSettings):
    """Any OpenAI-compatible ``/chat/completions`` server (OpenAI, vLLM, llama.cpp)."""

    kind: Literal["openai"] = "openai"


class MoonshotSettings(ProviderSettings):
    """Kimi / Moonshot: ``region`` picks api.moonshot.ai (global) or api.moonshot.cn."""

    kind: Literal["moonshot"] = "moonshot"
    region: Annotated[str, BeforeValidator(_region)] | None = None


class AnthropicSettings(ProviderSettings):
    """Anthropic's Messages API: ``max_tokens`` is the answer's limit (the API
    requires one; a ``max_tokens`` in ``compaction.settings_overrides`` wins)."""

    kind: Literal["anthropic"] = "anthropic"
    max_tokens: Annotated[int, _within(limits.ANSWER_TOKENS)] | None = None


class OllamaSettings(ProviderSettings):
    """Ollama's native ``/api/chat``; ``num_ctx`` is estimated from the transcript
    when not set."""

    kind: Literal["ollama"] = "ollama"
    num_ctx: Annotated[int, _within(limits.NUM_CTX)] | None = None


class OfflineSettings(ProviderSettings):
    """The offline extractive summarizer; ``chunk_delay`` paces its stream."""

    kind: Literal["offline"] = "offline"
    chunk_delay: Annotated[float, _within(limits.CHUNK_DELAY)] = 0.0


SETTINGS_BY_KIND: dict[str, type[ProviderSettings]] = {
    "openai": OpenAISettings,
    "moonshot": MoonshotSettings,
    "anthropic": AnthropicSettings,
    "ollama": OllamaSettings,
    "offline": OfflineSettings,
}
COMMON_FIELDS = frozenset(ProviderSettings.model_fields)
#: kind-specific setting -> the kind it belongs to
KIND_FIELDS = {
    name: kind
    for kind, model in SETTINGS_BY_KIND.items()
    for name in model.model_fields
    if name not in COMMON_FIELDS
}
FORBIDDEN_KEYS = frozenset({"api_key", "key", "token", "apikey", "secret"})
KIND_KEYS = ("kind", "type", "provider")  # "type" and "provider" are other spellings of kind


def field_error(name: str, message: str) -> ConfigError:
    return ConfigError(f"provider.{name}: {message}")


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
    """Validate ``values`` with ``kind``'s settings model (None means the default)."""
    model = SETTINGS_BY_KIND[kind]
    for name in values:
        owner = KIND_FIELDS.get(name)
        if owner is not None and owner != kind:
            raise field_error(name, f"only for kind {owner}, not {kind}")
    given = {k: v for k, v in values.items() if v is not None and k != "kind"}
    try:
        settings = model.model_validate({**given, "kind": kind})
    except ValidationError as exc:
        err = exc.errors()[0]
        name = ".".join(str(x) for x in err["loc"][:1]) or "(block)"
        message = err["msg"] if err["type"] == "provider_setting" else err["msg"].lower()
        raise field_error(name, message) from None
    problem = limits.check_request_fields(settings.extra_body, "provider.extra_body")
    if problem is not None:
        raise ConfigError(problem)
    return settings.to_config()
