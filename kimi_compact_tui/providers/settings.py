"""The ``provider:`` settings: one declaration per provider kind, checked with pydantic.

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
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, get_args, get_origin, get_type_hints

from kimi_compact_tui import limits
from kimi_compact_tui.errors import ConfigError
from kimi_compact_tui.providers.base import ProviderConfig

if TYPE_CHECKING:
    from pydantic import BaseModel
    from pydantic_core import PydanticCustomError


def _fail(message: str) -> PydanticCustomError:
    from pydantic_core import PydanticCustomError

    return PydanticCustomError("provider_setting", message)


class Check:
    """A setting's own check, run on the value as written (it becomes pydantic's
    ``BeforeValidator`` when the settings model is made, on first use)."""

    def __init__(self, check: Callable[[Any], Any]) -> None:
        self.check = check


def _within(limit: limits.Range) -> Check:
    """A number in ``limit``'s range (seconds come back as a float)."""

    def check(v: Any) -> int | float:
        try:
            value = limit.check(v)
        except ValueError as exc:
            raise _fail(str(exc)) from None
        return float(value) if limit.unit == "seconds" else value

    return Check(check)


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


class ProviderSettings:
    """The settings every kind accepts, with the defaults docs/configuration.md gives.

    A settings class is a declaration (annotations, :class:`Check` s and
    defaults): :func:`settings_model` makes its pydantic model the first time a
    ``provider:`` block of that kind is validated, so a command that validates
    none never loads pydantic."""

    kind: str
    base_url: Annotated[str, Check(_url)] | None = None
    model: Annotated[str, Check(_model)] | None = None
    api_key_env: Annotated[str, Check(_env_name)] | None = None
    connect_timeout: Annotated[float, _within(limits.CONNECT_TIMEOUT)] = 10.0
    # The longest silence allowed between two chunks.
    read_timeout: Annotated[float, _within(limits.READ_TIMEOUT)] = 120.0
    max_retries: Annotated[int, _within(limits.MAX_RETRIES)] = 3  # tries in all
    retry_cap: Annotated[float, _within(limits.RETRY_CAP)] = 30.0  # longest wait before one retry
    # The first backoff step, doubled each retry.
    retry_base_delay: Annotated[float, _within(limits.RETRY_BASE_DELAY)] = 1.0
    extra_body: Annotated[dict[str, Any], Check(_mapping)] = {}  # noqa: RUF012 - a declaration

    @classmethod
    def field_names(cls) -> frozenset[str]:
        """Every setting this kind accepts (``kind`` included)."""
        return frozenset(name for k in cls.__mro__ for name in getattr(k, "__annotations__", {}))


class OpenAISettings(ProviderSettings):
    """Any OpenAI-compatible ``/chat/completions`` server (OpenAI, vLLM, llama.cpp)."""


class MoonshotSettings(ProviderSettings):
    """Kimi / Moonshot: ``region`` picks api.moonshot.ai (global) or api.moonshot.cn."""

    region: Annotated[str, Check(_region)] | None = None


class AnthropicSettings(ProviderSettings):
    """Anthropic's Messages API: ``max_tokens`` is the answer's limit (the API
    requires one; a ``max_tokens`` in ``compaction.settings_overrides`` wins)."""

    max_tokens: Annotated[int, _within(limits.ANSWER_TOKENS)] | None = None


class OllamaSettings(ProviderSettings):
    """Ollama's native ``/api/chat``; ``num_ctx`` is estimated from the transcript
    when not set."""

    num_ctx: Annotated[int, _within(limits.NUM_CTX)] | None = None


class OfflineSettings(ProviderSettings):
    """The offline extractive summarizer; ``chunk_delay`` paces its stream."""

    chunk_delay: Annotated[float, _within(limits.CHUNK_DELAY)] = 0.0


def _pydantic_hint(hint: Any) -> Any:
    """``hint`` with each :class:`Check` made a ``BeforeValidator`` (inside ``X | None`` too)."""
    from pydantic import BeforeValidator

    if get_origin(hint) is Annotated:
        base, *meta = get_args(hint)
        made = [BeforeValidator(m.check) if isinstance(m, Check) else m for m in meta]
        return Annotated[(base, *made)]
    args = get_args(hint)
    if args and any(get_origin(a) is Annotated for a in args):
        out = _pydantic_hint(args[0])
        for a in args[1:]:
            out = out | _pydantic_hint(a)
        return out
    return hint


_MODELS: dict[type[ProviderSettings], type[BaseModel]] = {}


def settings_model(settings: type[ProviderSettings]) -> type[BaseModel]:
    """The pydantic model of a settings declaration (made once, on first use)."""
    made = _MODELS.get(settings)
    if made is None:
        from pydantic import ConfigDict, create_model

        fields: dict[str, Any] = {
            name: (_pydantic_hint(hint), getattr(settings, name, ...))
            for name, hint in get_type_hints(settings, include_extras=True).items()
        }
        made = _MODELS[settings] = create_model(
            settings.__name__, __config__=ConfigDict(extra="forbid", frozen=True), **fields
        )
    return made


COMMON_FIELDS = ProviderSettings.field_names()
FORBIDDEN_KEYS = frozenset({"api_key", "key", "token", "apikey", "secret"})
KIND_KEYS = ("kind", "type", "provider")  # "type" and "provider" are other spellings of kind


def field_error(name: str, message: str) -> ConfigError:
    return ConfigError(f"provider.{name}: {message}")


def validate(
    settings: type[ProviderSettings], kind: str, values: Mapping[str, Any]
) -> ProviderConfig:
    """The :class:`ProviderConfig` of ``values`` (field names already checked)
    under ``kind``'s settings declaration; None means the default. With nothing
    set, the defaults need no checking (and no pydantic)."""
    given = {k: v for k, v in values.items() if v is not None and k != "kind"}
    if not given:
        return ProviderConfig(kind=kind)
    from pydantic import ValidationError

    try:
        checked = settings_model(settings).model_validate({**given, "kind": kind})
    except ValidationError as exc:
        err = exc.errors()[0]
        name = ".".join(str(x) for x in err["loc"][:1]) or "(block)"
        message = err["msg"] if err["type"] == "provider_setting" else err["msg"].lower()
        raise field_error(name, message) from None
    fields = checked.model_dump()
    problem = limits.check_request_fields(fields["extra_body"], "provider.extra_body")
    if problem is not None:
        raise ConfigError(problem)
    return ProviderConfig(**fields)
