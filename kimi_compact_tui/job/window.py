"""The model's context window, and whether the compaction request fits it.

A request larger than the model's window is rejected by the provider after
it was sent (or, worse, silently cut). The job checks it before any request
(``CompactionJob.readiness``: the ``TOO_LARGE`` refusal), naming both figures
and the ``--up-to`` that would fit, so the compaction can be made in two
steps.

The window is known, in this order, from:

1. the configuration's ``context_window`` (tokens, input and output
   together), which always wins;
2. the provider's own stated context size (``num_ctx`` for Ollama);
3. :data:`MODEL_WINDOWS`, the windows of the models people use, matched on
   the model name (case-insensitive, after any ``vendor/`` prefix, the
   longest known name the model's name starts with);
4. else it is unknown: the front ends say so, and nothing is refused.

The request fits when its estimated input tokens plus :data:`OUTPUT_ROOM`
(room for the summary; the request's own ``max_tokens`` when it sets one)
are within the window.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kimi_compact_tui.config import AppConfig
    from kimi_compact_tui.providers import ProviderConfig

#: Room kept for the summary when the request does not say its output limit.
OUTPUT_ROOM = 4096

#: Context windows (tokens) of common models, by the start of the model name.
MODEL_WINDOWS: dict[str, int] = {
    # Moonshot AI
    "kimi-k2-0711": 131_072,
    "kimi-k2-0905": 262_144,
    "kimi-k2-turbo": 262_144,
    "kimi-k2-thinking": 262_144,
    "kimi-k2": 131_072,
    "kimi-latest": 131_072,
    "moonshot-v1-8k": 8_192,
    "moonshot-v1-32k": 32_768,
    "moonshot-v1-128k": 131_072,
    # OpenAI
    "gpt-3.5-turbo": 16_385,
    "gpt-4-turbo": 128_000,
    "gpt-4o": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-5": 400_000,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    # Anthropic
    "claude-3": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-opus-4": 200_000,
    "claude-haiku-4": 200_000,
    # Google
    "gemini-1.5-pro": 2_097_152,
    "gemini-1.5-flash": 1_048_576,
    "gemini-2.0-flash": 1_048_576,
    "gemini-2.5": 1_048_576,
    # DeepSeek
    "deepseek-chat": 65_536,
    "deepseek-reasoner": 65_536,
}


@dataclass(frozen=True)
class Window:
    """A model's context window: ``tokens`` (None: unknown) and where the figure came from."""

    tokens: int | None
    source: str

    @property
    def known(self) -> bool:
        return self.tokens is not None

    def describe(self) -> str:
        if self.tokens is None:
            return f"context window unknown ({self.source})"
        return f"context window {self.tokens:,} tokens ({self.source})"

    def to_json(self) -> dict[str, object]:
        return {"tokens": self.tokens, "source": self.source}


def table_window(model: str | None) -> int | None:
    """The window of ``model`` from :data:`MODEL_WINDOWS`, or None."""
    if not model:
        return None
    name = model.strip().lower().rsplit("/", 1)[-1]
    best = None
    for known, tokens in MODEL_WINDOWS.items():
        if name.startswith(known) and (best is None or len(known) > len(best[0])):
            best = (known, tokens)
    return None if best is None else best[1]


def window_of(config: AppConfig, provider: ProviderConfig | None, model: str | None) -> Window:
    """The context window for a request to ``model`` through ``provider``."""
    configured = config.context_window
    if configured is not None:
        return Window(configured, "context_window in the config")
    if provider is not None and provider.num_ctx:
        return Window(provider.num_ctx, f"the {provider.kind} provider's num_ctx")
    tokens = table_window(model)
    if tokens is not None:
        return Window(tokens, f"{model}, from the table of common models")
    what = f"model {model}" if model else "no model named"
    return Window(None, f"{what}; set context_window in the config to check it")


def output_room(body_max_tokens: object) -> int:
    """The room kept for the summary: the request's own output limit, else :data:`OUTPUT_ROOM`."""
    if isinstance(body_max_tokens, int) and not isinstance(body_max_tokens, bool):
        if body_max_tokens > 0:
            return body_max_tokens
    return OUTPUT_ROOM
