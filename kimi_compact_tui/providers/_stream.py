"""The one path every provider's stream goes through: collecting, timing, cancelling.

A :class:`Collector` gathers summary text and reasoning apart, remembers the last
usage seen, and forwards each piece to ``on_event``. :func:`run_stream` runs a
provider's work coroutine so that a set ``cancel`` event or a cancelled task
ends it as ``cancelled`` with the partial text kept.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from kimi_compact_tui.providers.base import EventCallback, StreamEvent, StreamResult

if TYPE_CHECKING:
    import asyncio

MAX_ERROR_CHARS = 400
THINK_RE = re.compile(r"\s*<think>(.*?)</think>\s*", re.S)


def one_line(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """Collapse whitespace so an error always fits on one line."""
    flat = " ".join(str(text).split())
    if len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + "…"
    return flat


def redact(text: str | None, secrets: list[str]) -> str | None:
    if text is None:
        return None
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    return text


@dataclass
class Outcome:
    """How the work coroutine says the stream ended (before the final verdict)."""

    status: str  # "complete" | "truncated" | "failed"
    error: str | None = None
    http_status: int | None = None


class Collector:
    """Accumulates one summary stream. Safe to read at any moment (partial text)."""

    def __init__(self, on_event: EventCallback | None, *, provider: str, model: str | None):
        self.on_event = on_event
        self.provider = provider
        self.model = model
        self.summary_parts: list[str] = []
        self.reasoning_parts: list[str] = []
        self.usage: dict[str, Any] | None = None
        self.finish_reason: str | None = None
        self.attempts = 0
        self.http_status: int | None = None
        self.started_at = time.monotonic()
        self.first_token_at: float | None = None
        self.secrets: list[str] = []

    @property
    def started(self) -> bool:
        """True once any text or reasoning arrived: from then on, no retry."""
        return self.first_token_at is not None

    def _split_think(self) -> tuple[str, str]:
        """(summary, reasoning): a leading ``<think>…</think>`` block in the text (models
        served without separate reasoning fields) is reasoning, never summary."""
        text = "".join(self.summary_parts)
        reasoning = "".join(self.reasoning_parts)
        m = THINK_RE.match(text)
        if m:
            text = text[m.end() :]
            reasoning = (reasoning + "\n" if reasoning else "") + m.group(1).strip()
        return text, reasoning

    @property
    def summary(self) -> str:
        return self._split_think()[0]

    @property
    def reasoning(self) -> str:
        return self._split_think()[1]

    def _mark(self) -> None:
        if self.first_token_at is None:
            self.first_token_at = time.monotonic()

    def emit(self, event: StreamEvent) -> None:
        if event.kind in ("retry", "status") and self.secrets:
            event = replace(event, text=redact(event.text, self.secrets) or "")
        if self.on_event is not None:
            self.on_event(event)

    def text(self, chunk: Any) -> None:
        if isinstance(chunk, str) and chunk:
            self._mark()
            self.summary_parts.append(chunk)
            self.emit(StreamEvent("text", chunk))

    def think(self, chunk: Any) -> None:
        if isinstance(chunk, str) and chunk:
            self._mark()
            self.reasoning_parts.append(chunk)
            self.emit(StreamEvent("reasoning", chunk))

    def set_usage(self, usage: Any) -> None:
        if isinstance(usage, dict) and usage:
            self.usage = dict(usage)  # the last one seen wins; never summed

    def verdict(
        self,
        *,
        ended_normally: bool,
        end_marker: str,
        complete: tuple[str, ...] = ("stop",),
        limit: tuple[str, ...] = ("length",),
    ) -> Outcome:
        """Decide complete / truncated / failed once the stream is over.
        ``complete`` and ``limit`` are the wire format's finish reasons for a
        finished answer and for one cut at the output limit."""
        if not ended_normally:
            return Outcome("failed", f"the stream ended before its end marker ({end_marker})")
        reason = self.finish_reason
        has_text = bool(self.summary.strip())
        if reason in limit:
            if not has_text:
                return Outcome(
                    "failed",
                    "the model hit its output limit before writing any summary "
                    f"(finish reason: {reason})",
                )
            return Outcome("truncated", "the summary was cut off at the model's output limit")
        if reason in complete:
            if not has_text:
                return Outcome("failed", "the model returned an empty summary")
            return Outcome("complete")
        if reason is None:
            return Outcome("failed", "the stream ended without a finish reason")
        expected = " or ".join(repr(r) for r in complete)
        return Outcome("failed", f"the stream finished with reason {reason!r}, not {expected}")

    def result(self, outcome: Outcome, *, offline: bool = False) -> StreamResult:
        now = time.monotonic()
        ttft = None if self.first_token_at is None else self.first_token_at - self.started_at
        summary, reasoning = self._split_think()
        error = outcome.error
        if error is not None:
            error = one_line(redact(error, self.secrets) or "")
        return StreamResult(
            status=outcome.status,  # type: ignore[arg-type]
            summary=summary,
            reasoning=reasoning,
            usage=self.usage,
            model=self.model,
            provider=self.provider,
            finish_reason=self.finish_reason,
            time_to_first_token=ttft,
            total_time=now - self.started_at,
            error=error,
            http_status=outcome.http_status if outcome.http_status else self.http_status,
            attempts=self.attempts,
            offline=offline,
        )


async def run_stream(
    collector: Collector,
    work: Callable[[], Awaitable[Outcome]],
    cancel: asyncio.Event | None,
    *,
    offline: bool = False,
) -> StreamResult:
    """Run ``work`` until it finishes, ``cancel`` is set, or this task is cancelled."""
    import asyncio  # (loaded by the provider call that runs, not by every command)

    if cancel is not None and cancel.is_set():
        return collector.result(Outcome("cancelled", "cancelled before the request was sent"))
    task = asyncio.ensure_future(work())
    waiter = asyncio.ensure_future(cancel.wait()) if cancel is not None else None
    outcome: Outcome
    try:
        pending = {task} if waiter is None else {task, waiter}
        await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            try:
                outcome = task.result()
            except Exception as exc:  # a bug or an unexpected library error: one line
                outcome = Outcome("failed", f"unexpected error: {type(exc).__name__}: {exc}")
        else:
            outcome = Outcome("cancelled", "cancelled by the user")
    except asyncio.CancelledError:
        outcome = Outcome("cancelled", "cancelled by the user")
    finally:
        if waiter is not None:
            waiter.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
    return collector.result(outcome, offline=offline)
