"""The prompt is edited in the TUI as a copy and re-run; the
request and the candidate carry the edited prompt's sha256; no prompt file changes."""

from __future__ import annotations

import hashlib
from pathlib import Path

from textual.widgets import TextArea

from kimi_compact_tui.tui.screens.main import MainScreen
from kimi_compact_tui.tui.screens.prompt_edit import EditPromptScreen
from tests.factories import write_kimi_session
from tests.tui.test_retention_wiring import SIZE, runs  # noqa: F401
from tests.tui_support import compact, settle

BUNDLED = Path(__file__).resolve().parents[2] / "prompts" / "kimi_compact.md"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


async def test_an_edited_prompt_is_a_copy_that_the_next_run_uses(
    tmp_path, runs, review_app  # noqa: F811
):
    bundled_before = BUNDLED.read_bytes()
    app = review_app(write_kimi_session(tmp_path / "s"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        configured = app.state.prompt
        await compact(pilot)
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("P")
        await pilot.pause()
        assert isinstance(app.screen, EditPromptScreen)
        edited = configured.text + "\nAlso keep every shell command verbatim.\n"
        app.screen.query_one(TextArea).text = edited
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.press("y")  # the summary of the first run would be discarded: asked first
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        prompt = app.state.prompt
        assert prompt.source == "edited" and prompt.path is None and prompt.sha256 == sha(edited)
        assert app.state.preparation.request.parts[-1] == "\n" + edited
        await compact(pilot)
        assert "Also keep every shell command verbatim." in runs[-1].transcript
        assert "Also keep every shell command verbatim." not in runs[0].transcript
        first, second = list(app.state.runs.candidates)[-2:]
        assert first.prompt_sha256 == configured.sha256
        assert second.prompt_sha256 == sha(edited) and second.prompt_source == "edited"
        # ctrl+r goes back to the configured prompt.
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("P")
        await pilot.pause()
        await pilot.press("ctrl+r")
        await pilot.pause()
        await pilot.press("y")
        await settle(pilot)
        assert app.state.prompt.sha256 == configured.sha256
    assert BUNDLED.read_bytes() == bundled_before
