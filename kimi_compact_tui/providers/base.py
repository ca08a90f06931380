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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, Union

from kimi_compact_tui.compaction.figures import RunFigures

if TYPE_CHECKING:
    from kimi_compact_tui.compaction.request import CompactionRequest

#: The implementation kinds (``ProviderConfig.kind``); the accepted spellings,
#: aliases included, are ``registry.PROVIDER_KINDS``.
ImplementationKind = Literal["openai", "moonshot", "anthropic", "ollama", "offline"]
#: What a provider is asked to summarise: the compaction request, or its
#: OpenAI-style body (``request.body``).
SummaryInput = Union["CompactionRequest", Mapping[str, Any]]

MOONSHOT_BASE_URLS = {
    "global": "https://api.moonshot.ai/v1",
    "cn": "https://api.moonshot.cn/v1",
}
DEFAULT_BASE_URLS = {
    "openai": "https://api.openai.com/v1",
    "moonshot": MOONSHOT_BASE_URLS["global"],
    "anthropic": "https://api.anthropic.com",
    "ollama": "http://127.0.0.1:11434",
    "offline": None,
}
DEFAULT_KEY_ENVS = {
    "openai": "OPENAI_API_KEY",
    "moonshot": "MOONSHOT_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "ollama": None,
    "offline": None,
}
#: A kind whose base URL, when none is configured, may come from this variable
#: (read at call time, as Anthropic's own clients do).
BASE_URL_ENVS = {"anthropic": "ANTHROPIC_BASE_URL"}
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
    def effective_base_url(self) -> str | None:
        if self.base_url:
            return self.base_url.rstrip("/")
        if self.kind == "moonshot":
            return MOONSHOT_BASE_URLS["cn" if self.region == "cn" else "global"]
        from_env = self.base_url_from_env
        if from_env:
            return from_env.rstrip("/")
        return DEFAULT_BASE_URLS.get(self.kind)

    @property
    def base_url_from_env(self) -> str | None:
        """The base URL the environment gives (``ANTHROPIC_BASE_URL`` for anthropic)
        when none is configured, as it is set (unchecked); None otherwise."""
        name = BASE_URL_ENVS.get(self.kind)
        if self.base_url or name is None:
            return None
        return os.environ.get(name, "").strip() or None

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
