"""The offline provider: an extractive summary that needs no model and no network.

It writes the six sections of the compaction contract (:mod:`.render`) from
the session's specifics (:mod:`kimi_compact_tui.specifics`: every user request
verbatim, instructions, the agent's plan with its real statuses, files written,
commands with their results, open errors), which the compaction job hands it
with the request; a bare request body is read from its text
(:mod:`.transcript`), without the tool calls. Never larger than the messages it
replaces when it can help it. What it streams is masked
(``secrets.mask_secrets``), as the compaction job writes it. The text is
deterministic (no clock, no randomness) and streams in small chunks through
the same path as a real provider.

Asked for a revision (a request with rounds of feedback), it writes no new
summary: it keeps the last round's summary and applies only what a rule can
(:mod:`.revision`), saying which feedback it could not follow.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from kimi_compact_tui.providers._stream import Collector, Outcome, run_stream
from kimi_compact_tui.providers.base import (
    OFFLINE_MODEL,
    EventCallback,
    ProviderConfig,
    StreamEvent,
    StreamResult,
    SummaryInput,
)
from kimi_compact_tui.providers.offline.render import Summary, summarize
from kimi_compact_tui.providers.offline.revision import OfflineRevision, revise_offline
from kimi_compact_tui.providers.offline.transcript import TMessage, Transcript, read_request
from kimi_compact_tui.secrets import mask_secrets
from kimi_compact_tui.specifics import Specifics

CHUNK_CHARS = 40

__all__ = [
    "CHUNK_CHARS",
    "OfflineProvider",
    "OfflineRevision",
    "Summary",
    "TMessage",
    "Transcript",
    "chunks",
    "offline_revision",
    "offline_summary",
    "parse_transcript",
    "read_request",
    "size_warning",
    "stream_summary",
    "summarize",
]


def parse_transcript(request: SummaryInput) -> list[TMessage]:
    """The sent messages of a request (or of its body), the prompt part dropped."""
    return read_request(request).messages


def specifics_of(request: SummaryInput) -> Specifics | None:
    """The specifics the compaction job attached to ``request``, if any."""
    if isinstance(request, Mapping) or request.specifics is None:
        return None
    made = request.specifics()
    return made if isinstance(made, Specifics) else None


def offline_summary(request: SummaryInput) -> str:
    """The whole offline summary for a request (or its body), at once."""
    return _summarize(request).text


def _summarize(request: SummaryInput) -> Summary:
    return summarize(read_request(request), specifics_of(request))


def offline_revision(request: SummaryInput) -> OfflineRevision | None:
    """What a revision request comes to without a model (None: the request is
    no revision): the last round's summary kept, the feedback's rules applied."""
    if isinstance(request, Mapping) or not request.revisions:
        return None
    transcript = read_request(request)
    text = "\n".join(m.own_text for m in transcript.compacted)
    return revise_offline(
        request.revisions[-1].summary,
        [r.feedback for r in request.revisions],
        text,
        specifics_of(request),
    )


def size_warning(summary: Summary) -> str:
    return (
        f"note: the summary (about {summary.cost} tokens) is larger than the messages it "
        f"replaces (about {summary.budget} tokens): compacting would not make the session smaller"
    )


def chunks(text: str, size: int = CHUNK_CHARS) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


class OfflineProvider:
    """The :class:`~kimi_compact_tui.providers.registry.Provider` for kind ``offline``."""

    def __init__(self, config: ProviderConfig) -> None:
        self.config = config

    async def stream(
        self,
        request: SummaryInput,
        on_event: EventCallback | None = None,
        cancel: asyncio.Event | None = None,
        *,
        delay: float | None = None,
    ) -> StreamResult:
        """Stream the offline summary in small chunks, like a real provider would."""
        pause = self.config.chunk_delay if delay is None else delay
        col = Collector(on_event, provider="offline", model=OFFLINE_MODEL)

        async def work() -> Outcome:
            col.attempts = 1
            revision = await asyncio.to_thread(offline_revision, request)
            if revision is not None:
                for note in revision.notes():
                    col.emit(StreamEvent("status", note))
                text = revision.text
            else:
                col.emit(StreamEvent("status", "offline extractive summary: no model is used"))
                # Off the event loop: a 10k-message session takes about a second.
                summary = await asyncio.to_thread(_summarize, request)
                if not summary.fits:
                    col.emit(StreamEvent("status", size_warning(summary)))
                text = summary.text
            # Masked before it streams: the summary quotes the session's
            # requests and commands, and what is shown is what is written.
            text = mask_secrets(text)
            for piece in chunks(text):
                col.text(piece)
                await asyncio.sleep(pause)  # yields even at 0 so a cancel can land
            col.finish_reason = "stop"
            return col.verdict(ended_normally=True, end_marker="end of summary")

        return await run_stream(col, work, cancel, offline=True)


async def stream_summary(
    config: ProviderConfig,
    request: SummaryInput,
    on_event: EventCallback | None = None,
    cancel: asyncio.Event | None = None,
    *,
    delay: float | None = None,
) -> StreamResult:
    """``OfflineProvider(config).stream(...)``, in the shape of the package's
    ``stream_summary``."""
    return await OfflineProvider(config).stream(request, on_event, cancel, delay=delay)
