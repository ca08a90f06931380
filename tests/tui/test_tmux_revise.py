"""The feedback loop in a real terminal (tmux, 80x24, NO_COLOR=1): compact, give
feedback, the revision streams as a new candidate, the candidates screen shows
the chain and the diff between the two, the revision is written, and undone.

The installed console script opens a copy of the kimi sample session with the
offline summarizer (it revises without a model: it keeps the summary and adds
the item the feedback names). Keys go in with ``send-keys``; each wait is on a state a person would
wait for (a run finished, a screen shown), never a fixed sleep.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.tui_support import TMUX, Terminal, wait_for

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_sessions" / "kimi-debugging-session"
SCRIPT = Path(sys.executable).with_name("kimi-compact-tui")

pytestmark = [
    pytest.mark.skipif(TMUX is None, reason="tmux is not installed (apt-get install -y tmux)"),
    pytest.mark.skipif(not SCRIPT.exists(), reason=f"console script not installed: {SCRIPT}"),
    pytest.mark.skipif(not SAMPLE.is_dir(), reason=f"sample session missing: {SAMPLE}"),
]

FEEDBACK = "Add the failing test name. Be brief."
KEPT = "tests/test_parse.py::test_euro_amount"  # the item the feedback names
MARK = "Kept verbatim as the feedback asks"  # only in the revision (kept summary + the rule)


@pytest.fixture
def terminal():
    term = Terminal(80, 24)
    yield term
    term.close()


def footer(screen: str) -> str:
    lines = screen.rstrip("\n").splitlines()
    return lines[-1] if lines else ""


def on_the_main_screen(screen: str) -> bool:
    return "q Quit" in footer(screen) and "24 messages" in screen


def test_feedback_revision_diff_write_and_undo_at_80x24(terminal, tmp_path):
    session = tmp_path / "session"
    shutil.copytree(SAMPLE, session)
    context = session / "context.jsonl"
    original = context.read_bytes()
    home = tmp_path / "home"
    home.mkdir()
    command = (
        f"env NO_COLOR=1 HOME={home} KIMI_SHARE_DIR={home / 'none'} TERM=xterm-256color "
        f"{SCRIPT} {session} --provider offline; "
        "echo revise exit status $?; sleep 60"
    )
    terminal.start(command)
    terminal.wait_for(on_the_main_screen, "the main screen")

    # c: the summary; f is offered in the footer, whole, once it is finished.
    terminal.keys("c")
    terminal.wait_for(
        lambda s: "all 6 sections present" in s and "f Feedback" in footer(s),
        "the finished summary, and f Feedback in the footer",
    )

    # f: the feedback box; the text typed, ctrl+s sends it.
    terminal.keys("f")
    terminal.wait_for(lambda s: "Feedback on candidate #1" in s, "the feedback box")
    terminal.tmux("send-keys", "-t", "t", "-l", FEEDBACK)
    terminal.wait_for(lambda s: FEEDBACK in s, "the feedback typed")
    terminal.keys("C-s")
    screen = terminal.wait_for(
        lambda s: "Revising #1 (round 1)" in s and "all 6 sections present" in s,
        "the finished revision",
    )

    # The candidates: the revision's row names its parent and the feedback; the
    # two are compared, the revision's added lines in the diff.
    terminal.keys("Escape")
    terminal.wait_for(on_the_main_screen, "back to the main screen")
    terminal.keys("C")
    screen = terminal.wait_for(
        lambda s: "Candidates (2)" in s and "+++ #2" in s, "the candidates and their diff"
    )
    assert "↳ revises #1: “Add the failing test name. Be brief.”" in screen
    assert "--- #1" in screen, screen
    assert "@@ -" in screen, screen  # its first hunk (the pilot test reads the lines added)

    # Back, w, y: the revision is written (the file rotated: a backup), then u, y undoes it.
    terminal.keys("Escape")
    terminal.wait_for(on_the_main_screen, "back to the main screen")
    terminal.keys("w")
    terminal.wait_for(lambda s: "Write the compacted session?" in s, "the write dialog")
    terminal.keys("y")
    wait_for(lambda: MARK in context.read_text(encoding="utf-8"), "the revision on disk")
    assert KEPT in context.read_text(encoding="utf-8")
    assert (session / "context_1.jsonl").read_bytes() == original
    terminal.wait_for(lambda s: "kimi · 3 messages" in s, "the written session read back")
    terminal.keys("u")
    terminal.wait_for(lambda s: "Undo this tool's last write?" in s, "the undo dialog")
    terminal.keys("y")
    terminal.wait_for(lambda _s: context.read_bytes() == original, "the undo on disk")

    terminal.wait_for(on_the_main_screen, "the restored session read back")
    terminal.keys("q")
    screen = terminal.wait_for(lambda s: "revise exit status" in s, "the exit")
    assert "revise exit status 0" in screen
    assert "Traceback" not in screen
