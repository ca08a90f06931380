"""The TUI steps of ``benchmarks.run``: the message list ready, the last row
highlighted, and the stream screen's lag behind 10,000 tiny chunks."""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------- TUI


def tui_available() -> str | None:
    """None when the TUI can be benchmarked, else the reason it cannot."""
    try:
        from kimi_compact_tui.tui import app as _app  # noqa: F401
    except Exception as exc:  # not landed yet / broken import
        return f"kimi_compact_tui.tui.app not importable ({type(exc).__name__}: {exc})"
    if not hasattr(_app, "create_app"):
        return "kimi_compact_tui.tui.app has no create_app"
    return None


def _find_message_list(app) -> Any:
    from kimi_compact_tui.tui.widgets.message_list import MessageList

    for screen in [app.screen, *getattr(app, "screen_stack", [])]:
        found = screen.query(MessageList)
        if found:
            return found.first()
    return None


async def tui_open_once(path: Path) -> tuple[float, float]:
    from kimi_compact_tui.tui.app import create_app

    t0 = time.perf_counter()
    app = create_app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        total = None
        while True:
            lst = _find_message_list(app)
            count = _row_count(lst) if lst is not None else None
            if count:
                total = count
                break
            await pilot.pause(0.005)
            if time.perf_counter() - t0 > 120:
                raise TimeoutError("TUI list not ready after 120 s")
        ready = time.perf_counter() - t0
        t1 = time.perf_counter()
        lst.focus()
        await pilot.press("end")
        while _highlighted(lst) != total - 1:
            await pilot.pause(0.005)
            if time.perf_counter() - t1 > 60:
                raise TimeoutError("end of list not reached after 60 s")
        await pilot.pause()  # let the refresh happen
        to_end = time.perf_counter() - t1
    return ready, to_end


def _row_count(lst) -> int | None:
    for attr in ("message_count", "row_count", "count", "total"):
        value = getattr(lst, attr, None)
        if isinstance(value, int):
            return value
    items = getattr(lst, "items", None) or getattr(lst, "messages", None)
    return len(items) if items is not None else None


def _highlighted(lst) -> int | None:
    for attr in ("index", "cursor", "highlighted", "selected"):
        value = getattr(lst, attr, None)
        if isinstance(value, int):
            return value
    return None


def wall(fn: Callable[[], Any]) -> float:
    gc.collect()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def bench_tui(path: Path, repeats: int) -> dict[str, float]:
    ready, to_end = [], []
    for _ in range(repeats):
        gc.collect()
        r, e = asyncio.run(tui_open_once(path))
        ready.append(r)
        to_end.append(e)
    return {"ready": statistics.median(ready), "to_end": statistics.median(to_end)}


# ----------------------------------------------------------------------------- streaming


def stream_available() -> str | None:
    reason = tui_available()
    if reason:
        return reason
    try:
        from kimi_compact_tui.tui.screens import stream  # noqa: F401
    except Exception as exc:
        return f"kimi_compact_tui.tui.screens.stream not importable ({type(exc).__name__}: {exc})"
    return None


async def _stream_once(chunks: int) -> dict[str, float]:
    from benchmarks.stream_bench import stream_through_tui

    return await stream_through_tui(chunks)


def bench_stream(chunks: int, repeats: int) -> dict[str, float]:
    lags, totals = [], []
    for _ in range(repeats):
        res = asyncio.run(_stream_once(chunks))
        lags.append(res["lag"])
        totals.append(res["total"])
    return {"lag": statistics.median(lags), "total": statistics.median(totals)}
