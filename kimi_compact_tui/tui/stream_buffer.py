"""Where a streaming summary's chunks wait for the screen (plain Python, no Textual).

The provider's thread only appends to a :class:`StreamBuffer`; the UI thread
drains it on a timer (:class:`~kimi_compact_tui.tui.widgets.stream_view.StreamView`).
``deque.append`` and ``popleft`` are atomic, so no chunk is lost between the
two threads, and the worker never touches a widget.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable

from kimi_compact_tui.compaction.tokens import token_counts, tokens_from_counts
from kimi_compact_tui.providers import StreamEvent


class StreamBuffer:
    """Text and reasoning chunks received and not yet shown, and all text so far."""

    def __init__(self) -> None:
        self._text: deque[str] = deque()
        self._reasoning: deque[str] = deque()
        self._text_parts: list[str] = []
        self._reasoning_parts: list[str] = []
        self.text_len = 0
        self._counts = (0, 0, 0)  # token_counts of the text taken so far (they add up)
        self.reasoning_len = 0
        self.note = ""  # the provider's latest progress note ("" once text flows)

    # --- the provider's thread ------------------------------------------------------
    def push_text(self, chunk: str) -> None:
        if chunk:
            self._text.append(chunk)

    def push_reasoning(self, chunk: str) -> None:
        if chunk:
            self._reasoning.append(chunk)

    # --- the UI thread ----------------------------------------------------------------
    @staticmethod
    def _drain(pending: deque[str]) -> str:
        out = []
        while pending:
            out.append(pending.popleft())
        return "".join(out)

    def take_text(self) -> str:
        """The text received since the last take ("" when none)."""
        chunk = self._drain(self._text)
        if chunk:
            self._text_parts.append(chunk)
            self.text_len += len(chunk)
            a, b, c = token_counts(chunk)
            x, y, z = self._counts
            self._counts = (x + a, y + b, z + c)
        return chunk

    @property
    def taken_tokens(self) -> int:
        """The estimate (:func:`estimate_tokens`) of the text taken so far,
        without joining it again on every flush."""
        return tokens_from_counts(self._counts)

    def take_reasoning(self) -> str:
        chunk = self._drain(self._reasoning)
        if chunk:
            self._reasoning_parts.append(chunk)
            self.reasoning_len += len(chunk)
        return chunk

    @property
    def pending(self) -> bool:
        return bool(self._text or self._reasoning)

    @property
    def text(self) -> str:
        """All summary text received so far (taken or not)."""
        return "".join(self._text_parts) + "".join(list(self._text))

    @property
    def reasoning(self) -> str:
        return "".join(self._reasoning_parts) + "".join(list(self._reasoning))

    @property
    def shown_reasoning(self) -> str:
        return "".join(self._reasoning_parts)

    @property
    def text_chars(self) -> int:
        return self.text_len + sum(len(c) for c in list(self._text))

    @property
    def reasoning_chars(self) -> int:
        return self.reasoning_len + sum(len(c) for c in list(self._reasoning))


class RunControl:
    """The cancel switch of one run in a worker thread's event loop.

    The worker attaches its loop, its task and its cancel event when it starts;
    the UI thread calls :meth:`cancel` (the provider stops and keeps the partial
    text) or :meth:`stop` (the task itself is cancelled). Both are safe from
    any thread and do nothing once the loop has closed; a cancel asked before
    the worker started is applied when it attaches."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[object] | None = None
        self._event: asyncio.Event | None = None
        self.cancel_requested = False

    def attach(self) -> asyncio.Event:
        """In the worker: register the running loop and task; the event the
        provider waits on."""
        event = asyncio.Event()
        with self._lock:
            self._loop = asyncio.get_running_loop()
            self._task = asyncio.current_task()
            self._event = event
            if self.cancel_requested:
                event.set()
        return event

    def _call(self, callback: Callable[[], object]) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(callback)
            except RuntimeError:  # the loop closed meanwhile
                pass

    def cancel(self) -> None:
        with self._lock:
            self.cancel_requested = True
            event = self._event
        if event is not None:
            self._call(event.set)

    def stop(self) -> None:
        self.cancel()
        task = self._task
        if task is not None:
            self._call(task.cancel)


def buffer_events(buffer: StreamBuffer) -> Callable[[StreamEvent], None]:
    """The provider's ``on_event`` (called in the worker): collect into ``buffer`` only."""

    def on_event(event: StreamEvent) -> None:
        if event.kind == "text":
            buffer.push_text(event.text)
            buffer.note = ""  # progress notes ("waiting for the first token") are stale now
        elif event.kind == "reasoning":
            buffer.push_reasoning(event.text)
            buffer.note = ""
        elif event.kind == "retry":
            delay = f" in {event.delay:.1f} s" if event.delay is not None else ""
            buffer.note = f"retrying{delay} (attempt {event.attempt or '?'}): {event.text}"
        else:
            buffer.note = event.text

    return on_event
