"""The review TUI on a Claude Code transcript: the confirm dialog says what is
appended and to close Claude Code on this session first."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from kimi_compact_tui.formats.claude_code import CLOSE_NOTE, FORMAT
from kimi_compact_tui.providers import StreamResult
from kimi_compact_tui.tui.screens.confirm import ConfirmWriteScreen
from tests.factories import SUMMARY
from tests.factories.claude_code import two_turns
from tests.tui_support import FlowHost, make_state


async def test_confirm_says_appended_and_close_claude_code_first(tmp_path: Path) -> None:
    path = two_turns().write(tmp_path)
    state = make_state(path)
    state.set_result(StreamResult(status="complete", summary=SUMMARY))
    screen = ConfirmWriteScreen(state)
    app = FlowHost(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        body = str(screen.query_one("#confirm-body", Static).render())
    assert "(Claude Code transcript)" in body and "the compaction is appended" in body
    assert "Claude Code must not be running on this session" in " ".join(body.split())
    assert CLOSE_NOTE in FORMAT.write_notes and state.session.format is FORMAT
