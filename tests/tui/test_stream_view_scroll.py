"""A finished summary is shown from its start, however the stream's end falls against
the screen's refreshes (the follow-the-end scroll of the last chunk must not land
after it: under load it did, and the stream screen ended scrolled to the end)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import TextArea

from kimi_compact_tui.tui.widgets.stream_view import StreamView
from tests.tui_support import wait_until

SUMMARY = "".join(f"<line_{i}>\nsome summary text {i}\n" for i in range(120))


class ViewApp(App):
    def compose(self) -> ComposeResult:
        yield StreamView(id="view")


async def test_the_end_of_a_stream_right_after_a_chunk_leaves_the_summary_at_its_start():
    app = ViewApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(StreamView)
        live = view.query_one("#summary-live", TextArea)
        view.push_text(SUMMARY)
        view.flush()  # the last chunk: the view follows it to the end after the refresh...
        view.call_after_refresh(view.finish)  # ...and the run ends in that same refresh
        await wait_until(pilot, lambda: view.finished, "the summary finished")
        for _ in range(3):  # anything still scheduled to scroll
            await pilot.pause()
        assert live.max_scroll_y > 0
        assert live.scroll_y == 0


async def test_a_summary_still_streaming_follows_its_end():
    app = ViewApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(StreamView)
        live = view.query_one("#summary-live", TextArea)
        view.push_text(SUMMARY)
        view.flush()
        await wait_until(
            pilot, lambda: live.max_scroll_y > 0 and live.scroll_y == live.max_scroll_y, "the end"
        )
        assert not view.finished
