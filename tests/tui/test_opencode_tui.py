"""The TUI on an opencode session, in a real terminal (tmux, 80x24, NO_COLOR=1).

The installed console script opens ``DB#ses_…`` (one session of a database holding
two) with the offline summarizer: a boundary, the stream, the diff, the write (its
dialog names the session, not only the database), undo, and a clean exit. The
session's rows are back as they were, and the other session's never changed.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest

from tests.factories.writers import write_opencode
from tests.tui_support import TMUX, Terminal

SCRIPT = Path(sys.executable).with_name("kimi-compact-tui")

pytestmark = [
    pytest.mark.skipif(TMUX is None, reason="tmux is not installed (apt-get install -y tmux)"),
    pytest.mark.skipif(not SCRIPT.exists(), reason=f"console script not installed: {SCRIPT}"),
]


def all_rows(db: Path) -> dict[str, list[tuple[object, ...]]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        out: dict[str, list[tuple[object, ...]]] = {}
        for (sid,) in conn.execute("SELECT id FROM session"):
            out[str(sid)] = conn.execute(
                "SELECT m.*, p.* FROM message m LEFT JOIN part p ON p.message_id = m.id"
                " WHERE m.session_id = ? ORDER BY m.id, p.id",
                (sid,),
            ).fetchall()
    finally:
        conn.close()
    return out


@pytest.fixture
def terminal():
    term = Terminal(80, 24)
    yield term
    term.close()


def test_open_boundary_stream_diff_write_undo_quit(terminal, tmp_path):
    ref = write_opencode(tmp_path)
    db, _, sid = str(ref).rpartition("#")
    before = all_rows(Path(db))
    home = tmp_path / "home"
    home.mkdir()
    terminal.start(
        f"env NO_COLOR=1 HOME={home} TERM=xterm-256color {SCRIPT} '{ref}' --provider offline; "
        "echo walkthrough exit status $?; sleep 60"
    )
    screen = terminal.wait_for(lambda s: "q Quit" in s and "8 messages" in s, "the list")
    assert "opencode · 8 messages" in screen

    for _ in range(4):  # to message 5, the second prompt; b: compact up to it
        terminal.keys("j")
    terminal.keys("b")
    terminal.wait_for(lambda s: "up to message 5" in s, "the boundary")
    terminal.keys("c")
    terminal.wait_for(lambda s: "all 6 sections present" in s, "the finished summary")
    terminal.keys("Escape")
    terminal.wait_for(lambda s: "q Quit" in s, "back to the list")
    terminal.keys("d")
    screen = terminal.wait_for(lambda s: "after the write" in s, "the diff")
    assert "before 8 messages" in screen and "after 5 messages" in screen
    assert "5 removed" in screen and "2 added" in screen  # opencode's framing, our summary
    terminal.keys("Escape")
    terminal.wait_for(lambda s: "q Quit" in s, "back to the list")

    terminal.keys("w")
    screen = terminal.wait_for(lambda s: "Write (y)" in s, "the write dialog")
    flat = screen.replace("\n", "").replace(" ", "").replace("█", "")
    assert f"#{sid}" in flat and "othersessionsinthedatabasearenottouched" in flat
    assert "messages8→5(5compactedinto1summary,3kept)" in flat
    terminal.wait_for(lambda s: "checking the file" not in s, "the file checked")
    terminal.keys("y")
    screen = terminal.wait_for(lambda s: "Wrote" in s, "the write")
    terminal.wait_for(lambda s: "opencode · 5 messages" in s, "the session read back")
    after = all_rows(Path(db))
    assert after[sid] != before[sid]
    assert {k: v for k, v in after.items() if k != sid} == {
        k: v for k, v in before.items() if k != sid
    }

    terminal.keys("u")
    screen = terminal.wait_for(lambda s: "Restore (y)" in s, "the undo question")
    flat = screen.replace("\n", "").replace(" ", "").replace("█", "")
    assert f"becomesthelive{Path(db).name}#{sid}" in flat  # the session, not the database
    terminal.keys("y")
    terminal.wait_for(lambda s: "opencode · 8 messages" in s, "the session undone")
    assert all_rows(Path(db)) == before

    terminal.keys("q")
    screen = terminal.wait_for(lambda s: "walkthrough exit status" in s, "the exit")
    assert "walkthrough exit status 0" in screen and "Traceback" not in screen
