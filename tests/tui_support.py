"""Shared helpers for the TUI tests: waiting on a state with a deadline (never a fixed
sleep), in a Pilot-driven app (``settle``; ``press_and_settle``, keys then rest) and in
a real terminal (tmux); the terminal sizes the
tests use; what reaches the screen (``screen_cells``, ``screen_lines``,
``screen_text``, ``static_text``). Session files come from ``tests/factories``.

A test waits for what a person would wait for (a row marked, a run finished, a screen
shown), never for text whose presence depends on timing, scrolling or terminal size.
"""

from __future__ import annotations

import asyncio
import html
import os
import re
import shutil
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widgets import Static

from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.providers import ProviderConfig
from kimi_compact_tui.tui.state import ReviewState
from tests import procs

SIZE = (120, 40)  # the usual terminal of the Pilot tests
SMALL = (80, 24)  # the smallest terminal the app is laid out for

WAIT = 20.0  # seconds for any one state to be reached
POLL = 0.02  # seconds between two looks at the state

TMUX = shutil.which("tmux")


async def wait_until(pilot, predicate: Callable[[], object], what: str, timeout: float = WAIT):
    """Let the app run until ``predicate()`` is true (returns its value); fail naming
    ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        await pilot.pause()
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        await asyncio.sleep(POLL)


def footer_in_sync(app) -> bool:
    """Whether every Footer on the current screen shows the screen's bindings as they
    are now (Textual redraws a footer a few refreshes after the bindings change)."""
    from textual.widgets import Footer

    screen = app.screen
    expected: dict[str, bool] = {}
    for _node, binding, enabled, _tooltip in screen.active_bindings.values():
        if binding.show:
            expected.setdefault(binding.action, not enabled)
    for footer in screen.query(Footer):
        shown = {
            key.action: key.has_class("-disabled")
            for key in footer.query("FooterKey")
            if not key.has_class("-command-palette")
        }
        # A footer that leaves out the keys it has no room for (KeysFooter) says which.
        left_out = getattr(footer, "left_out", frozenset())
        if shown != {a: d for a, d in expected.items() if a not in left_out}:
            return False
    return True


async def settle(pilot, timeout: float = WAIT) -> None:
    """Until the app is at rest: its workers done (also ones they started) and the
    footer showing the current bindings."""
    app = pilot.app
    deadline = time.monotonic() + timeout
    while True:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        busy = [w for w in app.workers if not w.is_finished]
        if not busy and footer_in_sync(app):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"the app did not settle in {timeout:.0f} s: {busy}")
        await asyncio.sleep(POLL)


async def press_and_settle(pilot, *keys: str, timeout: float = WAIT) -> None:
    """Press ``keys``, then wait until the app is at rest (:func:`settle`): what a
    test does before each look at the screen."""
    await pilot.press(*keys)
    await settle(pilot, timeout)


async def compact(pilot, *, back: bool = False):
    """``c`` on the main screen at rest: the stream screen, once its run has ended (its
    ``result`` set: complete, failed or cancelled) and the app is at rest. With
    ``back``, the run left a summary that can be written, and ``escape`` goes back
    to the main screen. The one way the Pilot tests run a compaction."""
    from kimi_compact_tui.tui.screens.stream import StreamScreen

    await settle(pilot)  # the session loaded: c does nothing before
    await pilot.press("c")
    screen = await wait_until(
        pilot,
        lambda: isinstance(pilot.app.screen, StreamScreen) and pilot.app.screen,
        "the stream screen",
    )
    await settle(pilot)
    assert screen.result is not None, "the run did not end"
    if back:
        assert pilot.app.state.summary is not None and pilot.app.state.writable
        await press_and_settle(pilot, "escape")
        assert type(pilot.app.screen).__name__ == "MainScreen", type(pilot.app.screen).__name__
    return screen


def review_app(path: Path | None, provider: ProviderConfig | None = None, config=None):
    """The real app on ``path`` with a state of its own: ``config`` (default: the
    defaults) and ``provider`` (default: the offline summarizer). Tests use it
    through the ``review_app`` fixture (tests/conftest.py)."""
    from kimi_compact_tui.tui.app import ReviewApp

    state = ReviewState(
        config=config or AppConfig(), provider=provider or ProviderConfig(kind="offline")
    )
    return ReviewApp(state, path)


def wait_for(predicate: Callable[[], object], what: str, timeout: float = WAIT):
    """The same outside an event loop (a thread, a process, a file)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(POLL)


class Terminal:
    """One tmux server on a socket of its own, holding one window of a fixed size.

    Keys go in with ``send-keys`` and the screen comes back from ``capture-pane``.
    The server is started by the tmux client in a session of its own, so it and the
    programs in its panes share no process group with pytest."""

    def __init__(self, width: int = 80, height: int = 24) -> None:
        assert TMUX is not None, "tmux is not installed"
        self.socket = f"kct-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.size = (width, height)
        self.socket_path = ""

    def tmux(self, *args: str) -> str:
        # -L: our own server; TMUX unset: a test run inside tmux must not talk to
        # the user's server.
        env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        done = procs.run(
            [str(TMUX), "-L", self.socket, "-f", os.devnull, *args],
            capture_output=True,
            text=True,
            timeout=10,
            env=env,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, (args, done.stderr)
        return done.stdout

    def start(self, command: str) -> None:
        width, height = self.size
        self.tmux("new-session", "-d", "-x", str(width), "-y", str(height), "-s", "t", command)
        self.socket_path = self.tmux("display-message", "-p", "#{socket_path}").strip()

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "t")

    def keys(self, *keys: str) -> None:
        """Send keys; the caller then waits for the state they lead to."""
        for key in keys:
            self.tmux("send-keys", "-t", "t", key)

    def wait_for(self, predicate: Callable[[str], object], what: str, timeout: float = WAIT):
        """Wait until ``predicate(screen)`` holds; returns that screen."""
        deadline = time.monotonic() + timeout
        screen = ""
        while True:
            screen = self.screen()
            if predicate(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; the screen:\n{screen}")
            time.sleep(0.1)

    def close(self) -> None:
        procs.run(
            [str(TMUX), "-L", self.socket, "kill-server"],
            capture_output=True,
            timeout=10,
            stdin=subprocess.DEVNULL,
        )
        if self.socket_path:
            Path(self.socket_path).unlink(missing_ok=True)


# ----------------------------------------------------------------------------- the screen


def screen_cells(app) -> list[list[str]]:
    """The screen, one list of cells per line; a wide character's second cell is ""."""
    from rich.cells import cell_len

    lines = []
    for strip in app.screen._compositor.render_strips():
        cells: list[str] = []
        for segment in strip:
            if segment.control:
                continue
            for char in segment.text:
                width = cell_len(char)
                if width == 0 and cells:
                    cells[-1] += char
                    continue
                cells.append(char)
                cells.extend([""] * (width - 1))
        lines.append(cells)
    return lines


CELL = 12.2  # SVG units per terminal cell in Textual's screenshots

_SVG_TEXT = re.compile(
    r'<text class="terminal-[\w-]*r\d+" x="([\d.]+)" y="[\d.]+" textLength="([\d.]+)" '
    r'clip-path="url\(#terminal-[\w-]*line-(\d+)\)">([^<]*)</text>'
)


def screen_lines(app) -> list[str]:
    """The current screen as plain text lines (what reaches the terminal, minus
    styles), read from Textual's public SVG screenshot: each text run placed at
    its cell column (12.2 units per cell), gaps filled with spaces."""
    runs: dict[int, list[tuple[float, float, str]]] = {}
    for x, length, line, text in _SVG_TEXT.findall(app.export_screenshot()):
        runs.setdefault(int(line), []).append((float(x), float(length), html.unescape(text)))
    out = []
    for line in range(app.size.height):
        row, cells = "", 0
        for x, length, text in sorted(runs.get(line, [])):
            column = round(x / CELL)
            row += " " * max(0, column - cells) + text.replace("\xa0", " ")
            cells = column + round(length / CELL)
        out.append(row)
    return out


def screen_text(app) -> str:
    """The current screen as plain text (``screen_lines`` joined)."""
    return "\n".join(screen_lines(app))


def static_text(screen: Screen) -> str:
    """All the text of the Static widgets on ``screen`` (as rendered content)."""
    return "\n".join(str(widget.render()) for widget in screen.query(Static))


def cells_text(app) -> str:
    """The screen as text cell by cell (``screen_cells``: a wide character once,
    zero-width characters kept, so a test can see what reaches each cell)."""
    return "\n".join("".join(line) for line in screen_cells(app))


# ----------------------------------------------------------------------------- flow screens


def make_state(
    path: Path,
    provider: ProviderConfig | None = None,
    config: AppConfig | None = None,
) -> ReviewState:
    state = ReviewState(config=config or AppConfig(), provider=provider or ProviderConfig())
    state.load(path)
    return state


class FlowHost(App[None]):
    """Pushes ``screen`` on mount and records its dismiss value."""

    CSS = "Screen { background: $surface; }"

    def __init__(self, screen: Screen | None = None) -> None:
        super().__init__()
        self.flow_screen = screen
        self.results: list[Any] = []

    def compose(self) -> ComposeResult:
        yield Static("host")

    def on_mount(self) -> None:
        if self.flow_screen is not None:
            self.push_screen(self.flow_screen, self.results.append)


def first_text_gate(fn: Any = None) -> tuple[Any, threading.Event]:
    """A stream function (``fn`` or the real ``stream_summary``) that sets the
    returned event when the first summary text arrives, so a test can wait for
    it (``await asyncio.to_thread(event.wait, 10)``) instead of polling."""
    from kimi_compact_tui.providers import stream_summary

    first = threading.Event()
    inner = fn or stream_summary

    async def stream(cfg, body, on_event, cancel):
        def seen(event):
            if event.kind == "text":
                first.set()
            if on_event is not None:
                on_event(event)

        return await inner(cfg, body, seen, cancel)

    return stream, first
