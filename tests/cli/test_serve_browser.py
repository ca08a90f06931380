"""`serve` in a real browser: headless Chromium (Debian's
``chromium`` package) driven by Playwright, on a copy of the kimi-cli sample.

The page is textual-serve's client: xterm.js running the app over the page's
websocket. What the page shows is read from xterm.js's own screen buffer (the
text its renderer draws on the canvas), keys go in as a person types them, and
every URL the page requests or connects to is recorded.

Without Chromium or Playwright the tests skip, except under ``CI=true``, where
``.ci/run`` installs Chromium and the dev extra installs Playwright, so a missing
one fails. Playwright's own browser download is never used: the browser is
``/usr/bin/chromium``. One browser serves the whole module; each test gets a
fresh context (no shared cookies or storage) and its own ``serve`` process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from kimi_compact_tui.tui.widgets.message_list import REGION_MARKS
from tests import procs
from tests.cli.test_serve import ROOT, free_port, listens

CHROMIUM = Path("/usr/bin/chromium")
SAMPLE = ROOT / "sample_sessions" / "kimi-debugging-session"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DEADLINE = 60.0

#: Installed before the page's own scripts run: textual-serve's client keeps its
#: xterm.js terminal in ``this.terminal``; the first assignment of that property
#: also hands the terminal to the test. Nothing else in the page is changed.
CATCH_TERMINAL = """
Object.defineProperty(Object.prototype, "terminal", {
  configurable: true,
  set(value) {
    Object.defineProperty(this, "terminal", {
      value, writable: true, configurable: true, enumerable: true,
    });
    window.__kctTerminal = value;
  },
});
"""

#: The terminal's visible rows as text (xterm.js's buffer: what its renderer draws).
READ_SCREEN = """() => {
  const term = window.__kctTerminal;
  if (!term) return "";
  const buffer = term.buffer.active;
  const rows = [];
  for (let y = 0; y < term.rows; y++) {
    const line = buffer.getLine(buffer.viewportY + y);
    rows.push(line ? line.translateToString(true) : "");
  }
  return rows.join("\\n");
}"""


def missing_browser() -> str | None:
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is not installed (apt-get install -y chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[dev]')"
    return None


@pytest.fixture(scope="module")
def browser(tmp_path_factory) -> Iterator[Any]:
    """One headless Chromium for the module (its profile a fresh temporary folder,
    Playwright's default; its HOME a temporary folder too)."""
    why = missing_browser()
    if why is not None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true: {why}")
        pytest.skip(why)
    from playwright.sync_api import sync_playwright

    home = tmp_path_factory.mktemp("browser-home")
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, env=env, timeout=DEADLINE * 1000
        )
        try:
            yield launched
        finally:
            launched.close()


@dataclass
class Served:
    """A ``serve`` process on a loopback port, its session and its log."""

    port: int
    session: Path
    log: Path
    proc: subprocess.Popen = field(repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def log_tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-2000:]
        except OSError:
            return ""


@pytest.fixture
def served(tmp_path) -> Iterator[Served]:
    """``kimi-compact-tui serve`` on a copy of the kimi-cli sample, offline, on a port
    free a moment ago (another process may take it first: then another is tried)."""
    session = tmp_path / "session"
    shutil.copytree(SAMPLE, session)
    log = tmp_path / "serve.log"
    for _attempt in range(5):
        port = free_port()
        cmd = [sys.executable, "-m", "kimi_compact_tui", "serve", str(session)]
        cmd += ["--host", "127.0.0.1", "--port", str(port), "--provider", "offline"]
        with log.open("ab") as out:
            proc = procs.popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + DEADLINE
        while proc.poll() is None and not listens(proc.pid, port):
            if time.monotonic() > deadline:
                procs.stop(proc)
                raise AssertionError(f"serve did not listen on {port}: {log.read_text()}")
            time.sleep(0.05)
        if proc.poll() is None:
            break
        procs.stop(proc)
    else:
        raise AssertionError(f"serve did not start: {log.read_text()}")
    try:
        yield Served(port, session, log, proc)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        procs.stop(proc)


class Tab:
    """One browser tab on the served page: its screen text, its keys, its requests."""

    def __init__(self, browser: Any, served: Served) -> None:
        self.served = served
        self.context = browser.new_context(viewport={"width": 1280, "height": 800})
        self.urls: list[str] = []
        self.context.on("request", lambda request: self.urls.append(request.url))
        # Nothing outside may be fetched even if the page asked: recorded above, refused here.
        self.context.route(
            "**/*",
            lambda route: (
                route.continue_() if is_loopback(route.request.url, served.port) else route.abort()
            ),
        )
        self.page = self.context.new_page()
        self.page.on("websocket", lambda ws: self.urls.append(ws.url))
        self.page.add_init_script(CATCH_TERMINAL)

    def open(self) -> str:
        self.page.goto(self.served.url, timeout=DEADLINE * 1000)
        self.wait_for(lambda s: "24 messages" in s, "the session")
        # Keys go where a person's go once they click the terminal: xterm.js's input.
        # The app then has the focus, and its footer shows the keys.
        self.page.locator(".xterm-helper-textarea").focus()
        return self.wait_for(lambda s: "q Quit" in s, "the keys in the footer")

    def screen(self) -> str:
        return str(self.page.evaluate(READ_SCREEN))

    def wait_for(self, ready: Callable[[str], bool], what: str) -> str:
        deadline = time.monotonic() + DEADLINE
        while True:
            screen = self.screen()
            if ready(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"the page never showed {what}; it shows:\n{screen}\n"
                    f"serve's log:\n{self.served.log_tail()}"
                )
            self.page.wait_for_timeout(100)

    def key(self, name: str) -> None:
        self.page.keyboard.press(name)

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def tab(browser, served) -> Iterator[Tab]:
    opened = Tab(browser, served)
    try:
        yield opened
    finally:
        opened.close()


def is_loopback(url: str, port: int) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "ws") and parts.hostname == "127.0.0.1" and parts.port == port


def marked_row(screen: str) -> str:
    """The number of the highlighted message row (the one with ``▶``)."""
    marks = tuple(REGION_MARKS.values())
    for line in screen.split("\n"):
        if line[:1] in marks and line[1:2] == "▶":
            return line[2:].split()[0]
    return ""


def test_the_page_shows_the_session_and_loads_nothing_from_outside(tab):
    screen = tab.open()
    assert "kimi-compact-tui" in screen and "context.jsonl" in screen
    assert "The nightly job crashes when it imports the March" in screen  # message 1
    assert marked_row(screen) == "1"
    assert "offline" in screen
    # The page, its script, stylesheet, font and image, and the app's websocket: all here.
    loaded = {urlsplit(u).path for u in tab.urls}
    assert {"/", "/ws"} <= loaded and any(p.endswith("textual.js") for p in loaded), tab.urls
    assert [u for u in tab.urls if not is_loopback(u, tab.served.port)] == []


def test_keys_move_the_selection_and_open_the_help(tab):
    tab.open()
    tab.key("j")
    tab.wait_for(lambda s: marked_row(s) == "2", "the highlight on message 2")
    tab.key("j")
    tab.wait_for(lambda s: marked_row(s) == "3", "the highlight on message 3")
    tab.key("?")
    screen = tab.wait_for(lambda s: "How it works" in s, "the help screen")
    assert "Main screen" in screen and "compact up to here" in screen
    tab.key("Escape")
    tab.wait_for(lambda s: "How it works" not in s and "q Quit" in s, "the main screen again")


def test_a_write_from_the_browser_keeps_a_backup_and_undoes_exactly(tab):
    original = (SAMPLE / "context.jsonl").read_bytes()
    live = tab.served.session / "context.jsonl"
    rotation = tab.served.session / "context_1.jsonl"
    tab.open()

    tab.key("c")  # the offline summary streams to its end
    tab.wait_for(lambda s: "all 6 sections present" in s, "the finished summary")
    tab.key("w")
    screen = tab.wait_for(lambda s: "Write the compacted session?" in s, "the write dialog")
    assert "context.jsonl → context_1.jsonl" in screen and "24 → 3" in screen
    tab.key("y")
    deadline = time.monotonic() + DEADLINE
    while not (rotation.exists() and live.read_bytes() != original):
        assert time.monotonic() < deadline, f"nothing written:\n{tab.screen()}"
        tab.page.wait_for_timeout(100)
    assert rotation.read_bytes() == original  # kimi-cli's rotation: the backup, whole
    written = live.read_bytes()
    assert b"Previous context has been compacted" in written and len(written) < len(original)

    # The app goes back to the main screen and loads the written session.
    tab.wait_for(lambda s: "kimi · 3 messages" in s and marked_row(s) == "1", "the written session")
    tab.key("u")
    tab.wait_for(lambda s: "Undo this tool's last write?" in s, "the undo dialog")
    tab.key("y")
    deadline = time.monotonic() + DEADLINE
    while live.read_bytes() != original:
        assert time.monotonic() < deadline, f"not undone:\n{tab.screen()}"
        tab.page.wait_for_timeout(100)
    assert live.read_bytes() == original  # byte for byte
    # The compacted version is kept as a restore point in its turn.
    assert (tab.served.session / "context_2.jsonl").read_bytes() == written
    assert [u for u in tab.urls if not is_loopback(u, tab.served.port)] == []
