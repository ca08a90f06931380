"""Plain data shared by every provider: configuration, stream events and results.

Nothing here talks to the network or knows about Textual. API keys are never
stored here: a config only names the environment variable holding the key,
which is read at call time and used only in the ``Authorization`` header.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

from kimi_compact_tui.errors import ConfigError

ProviderKind = Literal["openai", "moonshot", "ollama", "offline"]
PROVIDER_KINDS: tuple[str, ...] = ("openai", "moonshot", "ollama", "offline")
#: Extra spellings accepted for ``kind`` / ``--provider``, mapped to (kind, region).
KIND_ALIASES: dict[str, tuple[str, str | None]] = {
    "moonshot-cn": ("moonshot", "cn"),
    "kimi": ("moonshot", None),
    "kimi-cn": ("moonshot", "cn"),
    "openai-compatible": ("openai", None),
    "vllm": ("openai", None),
    "llama.cpp": ("openai", None),
    "llamacpp": ("openai", None),
    "none": ("offline", None),
}

MOONSHOT_BASE_URLS = {
    "global": "https://api.moonshot.ai/v1",
    "cn": "https://api.moonshot.cn/v1",
}
DEFAULT_BASE_URLS = {
    "openai": "https://api.openai.com/v1",
    "moonshot": MOONSHOT_BASE_URLS["global"],
    "ollama": "http://127.0.0.1:11434",
    "offline": None,
}
DEFAULT_KEY_ENVS = {
    "openai": "OPENAI_API_KEY",
    "moonshot": "MOONSHOT_API_KEY",
    "ollama": None,
    "offline": None,
}
OFFLINE_MODEL = "offline-extractive"

StreamEventKind = Literal["text", "reasoning", "retry", "status"]
StreamStatus = Literal["complete", "truncated", "failed", "cancelled"]


@dataclass(frozen=True)
class ProviderConfig:
    """Where and how to ask for a summary. Holds no secret (only the key's variable name)."""

    kind: str = "offline"
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    region: str | None = None  # moonshot only: "global" (api.moonshot.ai) or "cn"
    connect_timeout: float = 10.0
    read_timeout: float = 120.0  # longest silence allowed between two chunks
    max_retries: int = 3  # tries in total, the first one included
    retry_cap: float = 30.0  # longest wait before one retry, whatever the server asks
    retry_base_delay: float = 1.0  # first backoff step; doubles each retry, with jitter
    extra_body: dict[str, Any] = field(default_factory=dict)
    num_ctx: int | None = None  # ollama native only; estimated from the transcript when None
    chunk_delay: float = 0.0  # offline only: pause between streamed chunks

    @property
    def offline(self) -> bool:
        return self.kind == "offline"

    @property
    def effective_base_url(self) -> str | None:
        if self.base_url:
            return self.base_url.rstrip("/")
        if self.kind == "moonshot":
            return MOONSHOT_BASE_URLS["cn" if self.region == "cn" else "global"]
        return DEFAULT_BASE_URLS.get(self.kind)

    @property
    def effective_key_env(self) -> str | None:
        if self.api_key_env is not None:
            return self.api_key_env or None
        return DEFAULT_KEY_ENVS.get(self.kind)

    def describe(self) -> str:
        """One line naming the provider for status bars and logs (never the key)."""
        if self.offline:
            return "offline extractive summary (no model)"
        model = self.model or "(model from request)"
        return f"{self.kind} {model} at {self.effective_base_url}"


_FLOAT_FIELDS = ("connect_timeout", "read_timeout", "retry_cap", "retry_base_delay", "chunk_delay")
_KNOWN_FIELDS = {f.name for f in fields(ProviderConfig)}
_FORBIDDEN_KEYS = {"api_key", "key", "token", "apikey", "secret"}


def _field_error(name: str, message: str) -> ConfigError:
    return ConfigError(f"provider.{name}: {message}")


def _normalise_kind(value: Any, name: str = "kind") -> tuple[str, str | None]:
    if not isinstance(value, str) or not value.strip():
        raise _field_error(name, f"must be one of {', '.join(PROVIDER_KINDS)}")
    text = value.strip().lower()
    if text in PROVIDER_KINDS:
        return text, None
    if text in KIND_ALIASES:
        return KIND_ALIASES[text]
    raise _field_error(
        name, f"unknown provider {value!r} (expected one of {', '.join(PROVIDER_KINDS)})"
    )


def _check_url(value: Any) -> str:
    if not isinstance(value, str) or not re.match(r"^https?://[^\s/]+", value.strip()):
        raise _field_error("base_url", f"must be an http(s) URL, got {value!r}")
    return value.strip().rstrip("/")


def provider_config_from(
    raw: Mapping[str, Any] | None,
    *,
    provider: str | None = None,
    base_url: str | None = None,
    model: str | None = None,
) -> ProviderConfig:
    """Merge a YAML ``provider:`` block with command line flags (flags win).

    Nothing configured means the offline extractive summarizer. Invalid values
    raise :class:`ConfigError` with one line naming the field.
    """
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ConfigError("provider: must be a mapping of settings (kind, base_url, model, ...)")
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if not isinstance(key, str):
            raise ConfigError(f"provider: field names must be text, got {key!r}")
        if key.lower() in _FORBIDDEN_KEYS:
            raise _field_error(
                key,
                "keys are not read from config files; put the key in an environment "
                "variable and name it in provider.api_key_env",
            )
        name = "kind" if key in ("type", "provider") else key
        if name not in _KNOWN_FIELDS:
            raise _field_error(key, "unknown field")
        values[name] = value

    region: str | None = None
    kind_value = provider if provider is not None else values.get("kind")
    if kind_value is None:
        # A base URL or model without a kind means an OpenAI-compatible server.
        kind = "openai" if (base_url or values.get("base_url")) else "offline"
    else:
        kind, region = _normalise_kind(kind_value, "kind" if provider is None else "--provider")
    values["kind"] = kind

    if "region" in values and values["region"] is not None:
        reg = str(values["region"]).strip().lower()
        if reg in ("cn", "china", "moonshot-cn"):
            reg = "cn"
        elif reg in ("global", "ai", "intl", "international"):
            reg = "global"
        else:
            raise _field_error("region", f"must be 'global' or 'cn', got {values['region']!r}")
        values["region"] = reg
    if region is not None:
        values["region"] = region

    if base_url is not None:
        values["base_url"] = base_url
    if values.get("base_url") is not None:
        values["base_url"] = _check_url(values["base_url"])
    if model is not None:
        values["model"] = model
    if values.get("model") is not None:
        if not isinstance(values["model"], str) or not values["model"].strip():
            raise _field_error("model", "must be a non-empty model name")
        values["model"] = values["model"].strip()
    if values.get("api_key_env") is not None:
        env = values["api_key_env"]
        if not isinstance(env, str) or (env and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", env)):
            raise _field_error("api_key_env", "must be an environment variable name")

    for name in _FLOAT_FIELDS:
        if name in values and values[name] is not None:
            v = values[name]
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                raise _field_error(name, f"must be a number of seconds, got {v!r}")
            if v < 0 or (name in ("connect_timeout", "read_timeout") and v == 0):
                raise _field_error(name, f"must be positive, got {v!r}")
            values[name] = float(v)
        elif name in values:
            del values[name]
    if "max_retries" in values:
        v = values["max_retries"]
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 10:
            raise _field_error(
                "max_retries", f"must be a whole number of tries, 1 to 10, got {v!r}"
            )
    if values.get("num_ctx") is not None:
        v = values["num_ctx"]
        if isinstance(v, bool) or not isinstance(v, int) or v < 256:
            raise _field_error("num_ctx", f"must be a whole number of tokens >= 256, got {v!r}")
    if "extra_body" in values:
        v = values["extra_body"]
        if v is None:
            v = {}
        if not isinstance(v, Mapping):
            raise _field_error("extra_body", "must be a mapping of request fields")
        values["extra_body"] = dict(v)
    return ProviderConfig(**values)


def with_overrides(config: ProviderConfig, **changes: Any) -> ProviderConfig:
    """A copy of ``config`` with some fields changed (for tests and front ends)."""
    return replace(config, **changes)


@dataclass(frozen=True)
class StreamEvent:
    """One piece of a streaming summary, handed to ``on_event`` as it arrives.

    ``text`` chunks are summary text; ``reasoning`` chunks are the model's thinking
    (shown to the user, never part of the summary); ``retry`` says a try failed
    before the first token and another follows after ``delay`` seconds; ``status``
    is a human-readable progress note.
    """

    kind: StreamEventKind
    text: str
    attempt: int | None = None
    delay: float | None = None


EventCallback = Callable[[StreamEvent], None]


@dataclass
class StreamResult:
    """How one summary request ended, with everything collected so far."""

    status: StreamStatus
    summary: str = ""
    reasoning: str = ""
    usage: dict[str, Any] | None = None
    model: str | None = None
    provider: str = "offline"
    finish_reason: str | None = None
    time_to_first_token: float | None = None
    total_time: float | None = None
    error: str | None = None
    http_status: int | None = None
    attempts: int = 0
    offline: bool = False

    @property
    def ok(self) -> bool:
        return self.status == "complete"

    @property
    def retries(self) -> int:
        return max(0, self.attempts - 1)

    def writable(self, allow_truncated: bool = False) -> bool:
        """True when the summary may be written into a session."""
        if self.status == "complete":
            return bool(self.summary.strip())
        return allow_truncated and self.status == "truncated" and bool(self.summary.strip())

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "summary": self.summary,
            "reasoning": self.reasoning,
            "usage": self.usage,
            "model": self.model,
            "provider": self.provider,
            "offline": self.offline,
            "finish_reason": self.finish_reason,
            "timings": {
                "time_to_first_token": self.time_to_first_token,
                "total": self.total_time,
            },
            "error": self.error,
            "http_status": self.http_status,
            "attempts": self.attempts,
        }


OFFLINE_NOTICE = "No model wrote this summary: it was extracted offline from the session text."
