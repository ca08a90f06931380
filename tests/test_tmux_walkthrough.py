"""A person's first session, in a real terminal (tmux, 80x24) with NO_COLOR=1.

The installed console script opens a copy of the kimi sample session with
the offline summarizer; keys go in with ``send-keys`` and what a person would
read comes back from ``capture-pane``: the list with its token figures and
the highlighted row's marker, the boundary, the streamed summary, the diff,
and a clean exit. Every wait is bounded.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_sessions" / "kimi-debugging-session"
TMUX = shutil.which("tmux")
SCRIPT = Path(sys.executable).with_name("kimi-compact-tui")
WAIT = 20.0  # seconds for any one screen to appear

pytestmark = [
    pytest.mark.skipif(TMUX is None, reason="tmux is not installed (apt-get install -y tmux)"),
    pytest.mark.skipif(not SCRIPT.exists(), reason=f"console script not installed: {SCRIPT}"),
    pytest.mark.skipif(not SAMPLE.is_dir(), reason=f"sample session missing: {SAMPLE}"),
]


class Terminal:
    """One tmux server on its own socket, holding one 80x24 window."""

    def __init__(self, tmp: Path) -> None:
        self.socket = f"kct-walk-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.tmp = tmp
        self.socket_path = ""

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            [str(TMUX), "-L", self.socket, "-f", os.devnull, *args],
            capture_output=True,
            text=True,
            timeout=10,
        )
        assert done.returncode == 0, (args, done.stderr)
        return done.stdout

    def start(self, command: str) -> None:
        self.tmux("new-session", "-d", "-x", "80", "-y", "24", "-s", "walk", command)
        self.socket_path = self.tmux("display-message", "-p", "#{socket_path}").strip()

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "walk")

    def keys(self, *keys: str) -> None:
        for key in keys:
            self.tmux("send-keys", "-t", "walk", key)
            time.sleep(0.15)

    def wait_for(self, predicate, what: str, timeout: float = WAIT) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            assert "AttributeError" not in screen, screen
            if predicate(screen):
                return screen
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {what}; the screen:\n{screen}")

    def close(self) -> None:
        subprocess.run(
            [str(TMUX), "-L", self.socket, "kill-server"], capture_output=True, timeout=10
        )
        if self.socket_path:
            Path(self.socket_path).unlink(missing_ok=True)


@pytest.fixture
def terminal(tmp_path):
    term = Terminal(tmp_path)
    yield term
    term.close()


ROW = re.compile(
    r"^▌(?P<mark>[▶ ]) *(?P<number>\d+) (?P<role>\w+) .*? (?P<tokens>[\d,]+)\s*\S*\s*▕"
)


#: What the main screen's footer may show, each key whole.
MAIN_FOOTER = [
    "b Up to here", "s Safe boundary", "esc Tail", "p Preview", "i Instruct", "m Model",
    "c Compact", "d Diff", "e Edit", "C Candidates", "w Write", "u Undo", "/ Search",
    "? Help", "q Quit",
]  # fmt: skip


def list_rows(screen: str) -> list[re.Match[str]]:
    return [m for line in screen.splitlines() if (m := ROW.match(line))]


def test_first_session_under_no_color(terminal, tmp_path):
    session = tmp_path / "session"
    shutil.copytree(SAMPLE, session)
    home = tmp_path / "home"
    home.mkdir()
    command = (
        f"env NO_COLOR=1 HOME={home} KIMI_SHARE_DIR={home / 'none'} TERM=xterm-256color "
        f"{SCRIPT} {session} --provider offline; "
        "echo walkthrough exit status $?; sleep 60"
    )
    terminal.start(command)

    # The list: every row with its number, role and full token figure; row 1 marked.
    screen = terminal.wait_for(
        lambda s: len(list_rows(s)) >= 10 and "q Quit" in s, "the message list and its keys"
    )
    rows = list_rows(screen)
    assert [int(r["number"]) for r in rows] == list(range(1, len(rows) + 1))
    assert [r["mark"] for r in rows][:3] == ["▶", " ", " "]
    assert all(r["tokens"].replace(",", "").isdigit() for r in rows)
    footer = screen.rstrip("\n").splitlines()[-1]
    assert "? Help" in footer and "q Quit" in footer
    rest = footer  # whole keys only (issue 18 item 15: never "d Di")
    for shown in MAIN_FOOTER:
        rest = rest.replace(shown, "", 1)
    assert rest.strip() == "", f"a cut key in the footer: {footer!r}"
    # The status area is three lines: legend, figures, model · prompt · provider.
    lines = screen.rstrip("\n").splitlines()
    edge = max(i for i, line in enumerate(lines) if line.startswith("▔▔▔"))
    assert len(lines) - 1 - edge - 1 == 3, lines[edge:]
    assert "→" in lines[-3] and lines[-2].lstrip().startswith("model "), lines[edge:]
    assert "24 messages" in screen

    # Move down twice: the marker follows; b sets the boundary there.
    terminal.keys("j", "j")
    screen = terminal.wait_for(
        lambda s: [r["mark"] for r in list_rows(s)][:3] == [" ", " ", "▶"], "the marker on row 3"
    )
    terminal.keys("b")
    screen = terminal.wait_for(lambda s: "up to message 3" in s, "the boundary in the status")
    assert "after boundary" in screen

    # c: the offline summary streams to completion.
    terminal.keys("c")
    screen = terminal.wait_for(
        lambda s: "all 6 sections present" in s and "<current_focus>" in s, "the finished summary"
    )
    assert "Compacting 3 messages" in screen
    assert "No model wrote this summary" in screen

    # escape, then d: before and after, side by side.
    terminal.keys("Escape")
    terminal.wait_for(lambda s: len(list_rows(s)) >= 10, "back to the list")
    terminal.keys("d")
    screen = terminal.wait_for(lambda s: "after the write" in s, "the diff")
    assert "before 24 messages" in screen and "after 22 messages" in screen
    assert "3 removed" in screen and "1 added" in screen
    assert "summary as it will be written" in screen

    # escape, q, y: the app ends cleanly (Textual draws on stderr, so a crash would
    # print its traceback here) and leaves the session as it was.
    terminal.keys("Escape")
    terminal.wait_for(lambda s: len(list_rows(s)) >= 10, "back to the list")
    terminal.keys("q")  # an unwritten summary: quitting asks first (issue 18 item 3)
    terminal.wait_for(lambda s: "Discard the unwritten summary?" in s, "the quit question")
    terminal.keys("y")
    screen = terminal.wait_for(lambda s: "walkthrough exit status" in s, "the exit")
    assert "walkthrough exit status 0" in screen
    assert "Traceback" not in screen and "Error" not in screen  # nothing printed on the way out
    assert (session / "context.jsonl").read_bytes() == (SAMPLE / "context.jsonl").read_bytes()
