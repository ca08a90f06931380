"""Plain data shared by every provider: configuration, stream events and results.

Nothing here talks to the network or knows about Textual. API keys are never
stored here: a config only names the environment variable holding the key,
which is read at call time and used only in the request's key header
(``Authorization``, or Anthropic's ``x-api-key``).
Validation of the ``provider:`` block lives in :mod:`.settings`, the kinds in
:mod:`.registry`.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol, Union

from kimi_compact_tui.compaction.figures import RunFigures
from kimi_compact_tui.secrets import without_userinfo

if TYPE_CHECKING:
    import asyncio

    from kimi_compact_tui.compaction.request import CompactionRequest

#: What a provider is asked to summarise: the compaction request, or its
#: OpenAI-style body (``request.body``).
SummaryInput = Union["CompactionRequest", Mapping[str, Any]]


class KindFacts(Protocol):
    """What a :class:`ProviderConfig` reads from its kind's declaration (the
    ``Kind`` lines in :mod:`.registry`, the one place a kind is declared)."""

    @property
    def name(self) -> str: ...
    @property
    def default_url(self) -> str | None: ...
    @property
    def key_env(self) -> str | None: ...
    @property
    def base_url_env(self) -> str | None: ...
    @property
    def region_urls(self) -> Mapping[str, str]: ...


#: The declared implementation kinds by name, as :mod:`.registry` declares
#: them (it fills this when the package is imported).
KINDS: dict[str, KindFacts] = {}
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
    max_tokens: int | None = None  # anthropic only: the answer's limit (None: the default)

    @property
    def offline(self) -> bool:
        return self.kind == "offline"

    @property
    def facts(self) -> KindFacts | None:
        """The declaration of this config's kind (None for an undeclared kind)."""
        return KINDS.get(self.kind)

    @property
    def effective_base_url(self) -> str | None:
        if self.base_url:
            return self.base_url.rstrip("/")
        facts = self.facts
        if facts is None:
            return None
        if self.region and self.region in facts.region_urls:
            return facts.region_urls[self.region]
        from_env = self.base_url_from_env
        if from_env:
            return from_env.rstrip("/")
        return facts.default_url

    @property
    def base_url_env(self) -> str | None:
        """The variable that may give this kind's base URL (``ANTHROPIC_BASE_URL``)."""
        facts = self.facts
        return facts.base_url_env if facts is not None else None

    @property
    def base_url_from_env(self) -> str | None:
        """The base URL the environment gives (``ANTHROPIC_BASE_URL`` for anthropic)
        when none is configured, as it is set (unchecked); None otherwise."""
        name = self.base_url_env
        if self.base_url or name is None:
            return None
        return os.environ.get(name, "").strip() or None

    @property
    def effective_key_env(self) -> str | None:
        if self.api_key_env is not None:
            return self.api_key_env or None
        facts = self.facts
        return facts.key_env if facts is not None else None

    def describe(self) -> str:
        """One line naming the provider for status bars and logs (never the key)."""
        if self.offline:
            return "offline extractive summary (no model)"
        model = self.model or "(model from request)"
        return f"{self.kind} {model} at {without_userinfo(self.effective_base_url or '')}"


def request_body(request: SummaryInput) -> Mapping[str, Any]:
    """The OpenAI-style body of a request (a body is returned as it is)."""
    return request if isinstance(request, Mapping) else request.body


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


class StreamFunction(Protocol):
    """The provider call, the one seam between the job and the providers:
    ``(config, request, on_event, cancel) -> StreamResult``. The package's
    ``stream_summary`` is one; tests pass their own."""

    def __call__(
        self,
        config: ProviderConfig,
        request: SummaryInput,
        on_event: EventCallback | None = None,
        cancel: asyncio.Event | None = None,
        /,
    ) -> Awaitable[StreamResult]: ...


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

    def write_refusal(
        self, summary: str | None = None, allow_truncated: bool = False
    ) -> str | None:
        """The one rule for "writable": None when ``summary`` (default: this
        run's own text; an edit of it otherwise) may be written into a session
        after this run, else why not."""
        text = self.summary if summary is None else summary
        if self.status == "truncated" and not allow_truncated:
            return "the summary was truncated at the model's output limit"
        if self.status not in ("complete", "truncated"):
            return f"the summary is {self.status}" + (f" ({self.error})" if self.error else "")
        if not text.strip():
            return "the summary is empty"
        return None

    def writable(self, allow_truncated: bool = False) -> bool:
        """True when this run's summary may be written into a session."""
        return self.write_refusal(allow_truncated=allow_truncated) is None

    @property
    def output_tokens(self) -> int | None:
        """The one output-token rule: the summary's tokens as the provider
        reported them (None when it did not)."""
        usage = self.usage
        if not isinstance(usage, dict):
            return None
        for key in ("completion_tokens", "output_tokens", "eval_count"):
            value = usage.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                return value
        return None

    def figures(self) -> RunFigures:
        """The run's one token figure and time (:mod:`kimi_compact_tui.compaction.figures`):
        :attr:`output_tokens` when reported, else the estimate of the summary."""
        return RunFigures.of(self.summary, self.output_tokens, self.total_time)

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
