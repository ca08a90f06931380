"""Shared helpers for the TUI tests: waiting on a state with a deadline (never a fixed
sleep), in a Pilot-driven app and in a real terminal (tmux).

A test waits for what a person would wait for (a row marked, a run finished, a screen
shown), never for text whose presence depends on timing, scrolling or terminal size.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from tests import procs

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
