"""The retention pane and the candidates wired into the real app (Pilot, a real
session file on disk, a fake provider returning a different summary per run)."""

from __future__ import annotations

import pytest
from textual.widgets import OptionList, TextArea

from kimi_compact_tui.compaction.summary import COMPACTED_NOTICE
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.providers import StreamResult
from kimi_compact_tui.retention import EDITOR_BLOCK_END, EDITOR_BLOCK_START, instructions_for
from kimi_compact_tui.tui import screens
from kimi_compact_tui.tui.screens.candidates import CandidatesScreen
from kimi_compact_tui.tui.screens.confirm import AskScreen, ConfirmWriteScreen
from kimi_compact_tui.tui.screens.diff import DiffScreen
from kimi_compact_tui.tui.screens.edit import EditSummaryScreen
from kimi_compact_tui.tui.screens.main import MainScreen
from kimi_compact_tui.tui.screens.stream import StreamScreen
from kimi_compact_tui.tui.widgets.retention_pane import RetentionPane
from tests.factories import write_kimi_session
from tests.tui_support import compact, settle

SIZE = (140, 44)


@pytest.fixture
def runs(monkeypatch):
    """Every stream returns summary ``run N`` (N counts the runs) and the
    request body it was given."""
    bodies: list = []

    async def fake(cfg, body, on_event, cancel):
        bodies.append(body)
        text = f"<current_focus>run {len(bodies)}</current_focus>"
        return StreamResult(status="complete", summary=text, provider="fake", total_time=2.0)

    monkeypatch.setattr(screens.stream, "stream_summary", fake)
    return bodies


def pane_of(screen) -> RetentionPane:
    pane = screen.query_one("#retention-pane", RetentionPane)
    assert pane.display and pane.report is not None and pane.items
    return pane


async def test_enter_on_a_missing_item_in_the_diff_jumps_to_its_message(tmp_path, runs, review_app):
    app = review_app(write_kimi_session(tmp_path / "s"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await compact(pilot)
        await pilot.press("escape")
        await pilot.press("d")
        await settle(pilot)
        assert isinstance(app.screen, DiffScreen)
        pane = pane_of(app.screen)
        options = app.screen.query_one("#retention-missing", OptionList)
        options.focus()
        await pilot.press("end")
        last = max(k for k, it in enumerate(pane.items) if it.messages[0] != 0)
        for _ in range(len(pane.items) - 1 - last):
            await pilot.press("up")
        item = pane.items[last]
        assert options.highlighted == last
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        assert app.screen.message_list.cursor == item.messages[0] != 0


async def test_i_in_the_stream_adds_to_the_instructions_and_reruns(tmp_path, runs, review_app):
    app = review_app(write_kimi_session(tmp_path / "s"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.state.set_custom_instruction("keep the test names")
        stream = await compact(pilot)
        item = pane_of(stream).items[0]
        await pilot.press("i")
        await pilot.pause()
        assert isinstance(app.screen, AskScreen)  # a summary would be discarded
        await pilot.press("y")
        await settle(pilot)
        assert isinstance(app.screen, StreamScreen) and app.screen is not stream
        instruction = app.state.custom_instruction
        assert instruction.startswith("keep the test names") and item.text in instruction
        added = instructions_for([item])
        assert added in instruction
        assert len(runs) == 2 and "keep the test names" in runs[0].transcript
        line = added.splitlines()[1]  # the item's own line
        assert line in runs[1].transcript and line not in runs[0].transcript
        assert app.state.summary == "<current_focus>run 2</current_focus>"


async def test_e_in_the_diff_opens_the_editor_with_the_marked_block(tmp_path, runs, review_app):
    app = review_app(write_kimi_session(tmp_path / "s"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await compact(pilot)
        await pilot.press("escape", "d")
        await settle(pilot)
        item = pane_of(app.screen).items[0]
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, EditSummaryScreen)
        text = app.screen.query_one(TextArea).text
        assert text.startswith("<current_focus>run 1</current_focus>")
        start, end = text.index(EDITOR_BLOCK_START), text.index(EDITOR_BLOCK_END)
        assert item.text in text[start:end]


async def test_candidates_accumulate_and_choosing_one_writes_it(tmp_path, runs, review_app):
    path = write_kimi_session(tmp_path / "s")
    app = review_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await compact(pilot)
        await pilot.press("r")
        await pilot.pause()
        await pilot.press("y")  # run again: replaces the summary
        await settle(pilot)
        assert app.state.summary.endswith("run 2</current_focus>")
        await pilot.press("escape")
        await settle(pilot)
        candidates = app.state.runs.candidates
        assert [c.summary for c in candidates] == [
            "<current_focus>run 1</current_focus>",
            "<current_focus>run 2</current_focus>",
        ]
        first = candidates.get(1)
        assert first.provider == "fake" and first.seconds == 2.0 and first.contract_ok is False
        assert first.prompt_sha256 == app.state.prompt.sha256
        assert first.retention is not None and first.retention.total > 0
        await pilot.press("C")
        await settle(pilot)
        assert isinstance(app.screen, CandidatesScreen)
        await pilot.press("home", "enter")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        assert app.state.summary == "<current_focus>run 1</current_focus>"
        await pilot.press("w")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmWriteScreen)
        await pilot.press("y")
        await settle(pilot)
    written = [m.text() for m in load_session(path).messages if COMPACTED_NOTICE in m.text()]
    assert len(written) == 1 and "run 1" in written[0] and "run 2" not in written[0]


async def test_candidates_key_says_why_before_any_run(tmp_path, runs, review_app):
    app = review_app(write_kimi_session(tmp_path / "s"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        seen: list[str] = []
        app.notify = lambda message, **_kw: seen.append(str(message))  # type: ignore[method-assign]
        await pilot.press("C")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        assert any("no candidates yet" in line for line in seen)


async def test_a_refused_candidate_is_not_marked_chosen(tmp_path, runs, review_app):
    app = review_app(write_kimi_session(tmp_path / "s"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await compact(pilot)
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("b")  # another range: the run no longer fits it
        await pilot.pause()
        if isinstance(app.screen, AskScreen):
            await pilot.press("y")
        await settle(pilot)
        await pilot.press("C")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert app.state.runs.candidates.chosen is None
        assert app.state.summary is None
