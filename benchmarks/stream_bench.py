"""Streaming benchmark: many tiny chunks from the loopback server through the
TUI's :class:`StreamScreen`, headless.

The provider callback is wrapped to time the arrival of the last chunk (it
carries an end marker); the lag is the time from then until the marker is in
the screen's summary widgets and a refresh has run.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from textual.app import App

from benchmarks import generate
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.providers import ProviderConfig, stream_summary
from kimi_compact_tui.tui.screens.stream import StreamScreen
from kimi_compact_tui.tui.state import ReviewState
from tests.loopback_server import LoopbackServer, openai_sse

END = "<<END-OF-STREAM>>"


class _Host(App[None]):
    def __init__(self, screen: StreamScreen) -> None:
        super().__init__()
        self.stream_screen = screen

    def on_mount(self) -> None:
        self.push_screen(self.stream_screen)


def _screen_text(screen: StreamScreen) -> str:
    """The summary text the screen's widgets hold (live area or final Markdown)."""
    out = []
    for selector in ("#summary-live", "#summary-md"):
        try:
            widget = screen.query_one(selector)
        except Exception:
            continue
        if not widget.display:
            continue
        text = getattr(widget, "text", None)
        if text is None:
            text = getattr(widget, "source", None)
        if isinstance(text, str):
            out.append(text)
    return "\n".join(out)


async def stream_through_tui(chunks: int, session_path: Path | None = None) -> dict[str, float]:
    pieces = [f"{i % 10}" for i in range(chunks - 1)] + [END]
    path = session_path or generate.ensure(1_000)["kimi"]
    arrived: dict[str, float] = {}

    with LoopbackServer(lifetime=300) as server:
        server.script([openai_sse(pieces)])
        provider = ProviderConfig(
            kind="openai", base_url=server.base_url, model="bench", api_key_env=None
        )
        state = ReviewState(config=AppConfig(), provider=provider)
        state.load(path)

        async def timed_stream(cfg: Any, body: Any, on_event: Any, cancel: Any) -> Any:
            def wrapped(event: Any) -> None:
                if event.kind == "text" and END in (event.text or ""):
                    arrived.setdefault("last", time.perf_counter())
                if on_event is not None:
                    on_event(event)

            arrived["start"] = time.perf_counter()
            return await stream_summary(cfg, body, wrapped, cancel)

        screen = StreamScreen(state, stream_fn=timed_stream)
        app = _Host(screen)
        async with app.run_test(size=(120, 40)) as pilot:
            deadline = time.perf_counter() + 120
            while "last" not in arrived or END not in _screen_text(screen):
                await pilot.pause(0.002)
                if time.perf_counter() > deadline:
                    raise TimeoutError("the last chunk never reached the screen")
            await pilot.pause()  # one refresh: painted
            shown = time.perf_counter()
            await app.workers.wait_for_complete()
            status = screen.result.status if screen.result is not None else "running"
    if status != "complete":
        raise RuntimeError(f"stream ended {status}")
    return {"lag": shown - arrived["last"], "total": shown - arrived["start"]}
