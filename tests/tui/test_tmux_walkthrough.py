"""A person's first session, in a real terminal (tmux, 80x24) with NO_COLOR=1.

The installed console script opens a copy of the kimi sample session with
the offline summarizer; keys go in with ``send-keys`` and what a person would
read comes back from ``capture-pane``: the list with its token figures and
the highlighted row's marker, the boundary, the streamed summary, the diff,
and a clean exit. Each key is sent once the screen shows the state it acts on,
and each wait is on a state (a row marked, a run finished, a screen shown),
never on text that is on screen only at some scroll position or terminal size.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from tests.tui_support import TMUX, Terminal

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_sessions" / "kimi-debugging-session"
SCRIPT = Path(sys.executable).with_name("kimi-compact-tui")

pytestmark = [
    pytest.mark.skipif(TMUX is None, reason="tmux is not installed (apt-get install -y tmux)"),
    pytest.mark.skipif(not SCRIPT.exists(), reason=f"console script not installed: {SCRIPT}"),
    pytest.mark.skipif(not SAMPLE.is_dir(), reason=f"sample session missing: {SAMPLE}"),
]


@pytest.fixture
def terminal():
    term = Terminal(80, 24)
    yield term
    term.close()


ROW = re.compile(
    r"^[┃░▌╎│](?P<mark>[▶ ]) *(?P<number>\d+) (?P<role>\w+) .*? (?P<tokens>[\d,]+)\s*\S*\s*▕"
)


#: What the main screen's footer may show, each key whole.
MAIN_FOOTER = [
    "b Up to here", "s Safe boundary", "esc Tail", "p Preview", "i Instruct", "m Model",
    "c Compact", "d Diff", "e Edit", "C Candidates", "w Write", "u Undo", "/ Search",
    "? Help", "q Quit",
]  # fmt: skip


def list_rows(screen: str) -> list[re.Match[str]]:
    return [m for line in screen.splitlines() if (m := ROW.match(line))]


def marks(screen: str) -> list[str]:
    return [r["mark"] for r in list_rows(screen)]


def footer(screen: str) -> str:
    lines = screen.rstrip("\n").splitlines()
    return lines[-1] if lines else ""


def on_the_list(screen: str) -> bool:
    """The main screen: message rows, and its footer's keys."""
    return len(list_rows(screen)) >= 3 and "q Quit" in footer(screen)


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
    screen = terminal.wait_for(on_the_list, "the message list and its keys")
    rows = list_rows(screen)
    assert [int(r["number"]) for r in rows] == list(range(1, len(rows) + 1))
    assert marks(screen)[:3] == ["▶", " ", " "]
    assert all(r["tokens"].replace(",", "").isdigit() for r in rows)
    line = footer(screen)
    assert "? Help" in line and "q Quit" in line
    rest = line  # whole keys only (never "d Di")
    for shown in MAIN_FOOTER:
        rest = rest.replace(shown, "", 1)
    assert rest.strip() == "", f"a cut key in the footer: {line!r}"
    # The status area is three lines: legend, figures, model · prompt · provider.
    lines = screen.rstrip("\n").splitlines()
    edge = max(i for i, text in enumerate(lines) if text.startswith("▔▔▔"))
    assert len(lines) - 1 - edge - 1 == 3, lines[edge:]
    assert "→" in lines[-3] and lines[-2].lstrip().startswith("model "), lines[edge:]
    assert "24 messages" in screen

    # Move down twice: the marker follows; b sets the boundary there.
    terminal.keys("j")
    terminal.wait_for(lambda s: marks(s)[:3] == [" ", "▶", " "], "the marker on row 2")
    terminal.keys("j")
    terminal.wait_for(lambda s: marks(s)[:3] == [" ", " ", "▶"], "the marker on row 3")
    terminal.keys("b")
    screen = terminal.wait_for(lambda s: "up to message 3" in s, "the boundary in the status")
    assert "after boundary" in screen

    # c: the offline summary streams to completion. The run's end is a state shown
    # below the summary pane whatever the pane's scroll position: its section check.
    terminal.keys("c")
    screen = terminal.wait_for(lambda s: "all 6 sections present" in s, "the finished summary")
    assert "Compacting 3 messages" in screen
    assert "No model wrote this summary" in screen

    # escape, then d: before and after, side by side.
    terminal.keys("Escape")
    terminal.wait_for(on_the_list, "back to the list")
    terminal.keys("d")
    screen = terminal.wait_for(lambda s: "after the write" in s, "the diff")
    assert "before 24 messages" in screen and "after 22 messages" in screen
    assert "3 removed" in screen and "1 added" in screen
    assert "summary as it will be written" in screen

    # escape, q, y: the app ends cleanly (Textual draws on stderr, so a crash would
    # print its traceback here) and leaves the session as it was.
    terminal.keys("Escape")
    terminal.wait_for(on_the_list, "back to the list")
    # The summary is not written, so q asks first; y discards it and quits.
    terminal.keys("q")
    terminal.wait_for(lambda s: "Discard the unwritten summary?" in s, "the discard question")
    terminal.keys("y")
    screen = terminal.wait_for(lambda s: "walkthrough exit status" in s, "the exit")
    assert "walkthrough exit status 0" in screen
    assert "Traceback" not in screen and "Error" not in screen  # nothing printed on the way out
    assert (session / "context.jsonl").read_bytes() == (SAMPLE / "context.jsonl").read_bytes()
