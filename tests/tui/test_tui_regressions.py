"""Regressions in the app shell: messages that arrive while another screen is
on top, and the still loading line."""

from __future__ import annotations

from kimi_compact_tui.tui.app import create_app
from kimi_compact_tui.tui.screens.help import HelpScreen
from tests.core_helpers import SAMPLES

SIZE = (120, 40)


async def _open(app, pilot) -> None:
    await app.workers.wait_for_complete()
    await pilot.pause()
    assert app.state.session is not None and app.message_list.message_count


async def test_highlight_and_refresh_while_a_dialog_is_open():
    app = create_app(SAMPLES / "kimi-debugging-session")
    async with app.run_test(size=SIZE) as pilot:
        await _open(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        # A worker finishing (or a scripted move) while the help is up must not
        # look for the main screen's widgets on the help screen.
        app.message_list.cursor = 3
        app.refresh_view()
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.pause()
        body = app.query_one("#detail-body").render().plain
        assert body.lstrip().startswith("Message 4 ·"), body[:80]


async def test_quitting_right_after_the_list_fills_does_not_crash():
    """The list posts Highlighted when it fills; if the app closes before that
    message is handled, the handler must not look for unmounted widgets
    (seen as NoMatches('DetailPane') when a benchmark closed the app at once)."""
    for _ in range(5):
        app = create_app(SAMPLES / "kimi-debugging-session")
        async with app.run_test(size=SIZE) as pilot:
            await app.workers.wait_for_complete()
            await pilot.pause()  # the list fills here; the app closes at once
            assert app.message_list.message_count
        assert app.return_code in (None, 0)


async def test_loading_note_is_a_still_line_naming_the_file():
    app = create_app(SAMPLES / "openai-retry-refactor.json")
    async with app.run_test(size=SIZE) as pilot:
        await _open(app, pilot)
        ml = app.message_list
        ml.show_loading("Loading big.jsonl (86.1 MB)…")
        await pilot.pause()
        assert ml.message_count == 0
        assert "Loading big.jsonl (86.1 MB)…" in ml.render_line(0).text
        ml.show_loading(None)
        assert ml.render_line(0).text.strip() == ""
