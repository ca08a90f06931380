"""Undo and no loss, through the real app: undo and restore never surprise, a
boundary never cuts a tool call from its result unnoticed, no work is lost
silently, a write starts from where you review, the summary pane shows the text
as written, and one token figure everywhere.

Every test drives the app with keys and checks what a user sees (dialogs,
status text) and what is on disk."""

from __future__ import annotations

import re

import pytest
from textual.widgets import TextArea

from kimi_compact_tui.compaction.pairs import nearest_safe_up_to
from kimi_compact_tui.tui.app import create_app
from kimi_compact_tui.tui.screens.confirm import ConfirmWriteScreen
from kimi_compact_tui.tui.screens.diff import DiffScreen
from kimi_compact_tui.tui.screens.stream import StreamScreen
from kimi_compact_tui.tui.widgets.status import StatusLine
from tests.factories import KIMI_LINES, regions_messages, write_kimi_session, write_openai_json
from tests.tui_support import compact, press_and_settle, screen_lines, settle

SIZE = (120, 40)


def on(app, screen_name: str) -> bool:
    """The top screen is ``screen_name`` (by name: these tests also run, and
    fail, on the code from before these screens existed)."""
    return type(app.screen).__name__ == screen_name


def text_of(screen, selector: str) -> str:
    return str(screen.query_one(selector).render())


def record_notes(app) -> list[str]:
    """Every notification text from now on."""
    notes: list[str] = []
    real = app.notify

    def notify(message, *args, **kwargs):
        notes.append(str(message))
        return real(message, *args, **kwargs)

    app.notify = notify  # type: ignore[method-assign]
    return notes


async def compact_and_write(pilot) -> None:
    await compact(pilot, back=True)
    await pilot.press("w")
    await pilot.pause()
    assert isinstance(pilot.app.screen, ConfirmWriteScreen)
    await press_and_settle(pilot, "y")
    assert pilot.app.last_error is None


# --- undo and restore ------------------------------------------------------------


async def test_u_asks_naming_the_file_that_becomes_live_and_where_the_current_goes(tmp_path):
    path = write_kimi_session(tmp_path / "s")
    original = path.read_bytes()
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await compact_and_write(pilot)
        written = path.read_bytes()
        assert path.with_name("context_1.jsonl").read_bytes() == original
        await press_and_settle(pilot, "u")
        assert on(app, "RestoreConfirmScreen")
        body = text_of(app.screen, "#restore-body")
        assert "context_1.jsonl becomes the live context.jsonl" in body
        assert "before the compaction written at" in body
        assert "the current context.jsonl is kept as context_2.jsonl" in body
        await press_and_settle(pilot, "n")  # no: nothing happens
        assert path.read_bytes() == written
        await press_and_settle(pilot, "u", "y")
        assert path.read_bytes() == original
        assert path.with_name("context_2.jsonl").read_bytes() == written


async def test_second_u_does_not_reapply_the_undone_compaction(tmp_path):
    path = write_kimi_session(tmp_path / "s")
    original = path.read_bytes()
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await compact_and_write(pilot)
        await press_and_settle(pilot, "u", "y")
        assert path.read_bytes() == original
        await press_and_settle(pilot, "u")
        assert on(app, "RestoreConfirmScreen")
        body = text_of(app.screen, "#restore-body")
        assert "nothing of ours to undo" in body and "already undone" in body
        await press_and_settle(pilot, "y")  # there is nothing to confirm
        assert path.read_bytes() == original


async def test_kimi_cli_rotation_is_never_the_default_only_picked_and_labelled(tmp_path):
    path = write_kimi_session(tmp_path / "s")
    rotation = write_kimi_session(tmp_path / "s", KIMI_LINES[:6]).with_name("context_1.jsonl")
    path.rename(rotation)  # kimi-cli's own /compact left context_1.jsonl, no audit entry
    path = write_kimi_session(tmp_path / "s")
    live, old = path.read_bytes(), rotation.read_bytes()
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press_and_settle(pilot, "u")
        body = text_of(app.screen, "#restore-body")
        assert "nothing of ours to undo" in body and "wrote no compaction here" in body
        await press_and_settle(pilot, "y")
        assert path.read_bytes() == live  # u did not restore kimi-cli's rotation
        await press_and_settle(pilot, "r")
        assert on(app, "RestorePointsScreen")
        listed = str(app.screen.query_one("#points").get_option_at_index(0).prompt)
        assert "context_1.jsonl" in listed and "kimi-cli's own rotation" in listed
        await press_and_settle(pilot, "enter")
        assert on(app, "RestoreConfirmScreen")
        body = text_of(app.screen, "#restore-body")
        assert "context_1.jsonl becomes the live context.jsonl" in body
        assert "kimi-cli's own rotation" in body
        await press_and_settle(pilot, "y")
        assert path.read_bytes() == old
        assert path.with_name("context_2.jsonl").read_bytes() == live


async def test_restore_refuses_when_the_live_file_changed_and_force_keeps_it(tmp_path):
    path = write_kimi_session(tmp_path / "s")
    original = path.read_bytes()
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await compact_and_write(pilot)
        with path.open("ab") as fh:  # the agent appended a turn after the write
            fh.write(b'{"role": "user", "content": "one more turn"}\n')
        appended = path.read_bytes()
        await press_and_settle(pilot, "u")
        body = text_of(app.screen, "#restore-body")
        assert "changed since this tool wrote it" in body and "refused" in body
        shown = app.screen.body_text()  # the refusal is the line shown as the warning
        warned = [shown.plain[s.start : s.end] for s in shown.spans if "red" in str(s.style)]
        assert len(warned) == 1 and "changed since this tool wrote it" in warned[0]
        assert "refused" in warned[0]
        assert not app.screen.query("#restore-yes")
        assert app.screen.query_one("#restore-force")
        await pilot.press("y")  # the plain restore is refused
        await pilot.pause()
        assert on(app, "RestoreConfirmScreen")
        assert path.read_bytes() == appended
        await press_and_settle(pilot, "f")  # keep current as a restore point, then restore
        assert path.read_bytes() == original
        assert path.with_name("context_2.jsonl").read_bytes() == appended


# --- split tool exchanges -------------------------------------------------------


async def split_boundary(pilot) -> None:
    """An explicit boundary at message 4 (the assistant's tool call): its result
    (message 5) would be kept without the call."""
    for _ in range(3):
        await pilot.press("j")
    await pilot.press("b")
    await settle(pilot)  # the split check runs in a worker
    assert pilot.app.state.up_to == 4


async def test_status_flags_a_split_and_s_moves_to_the_nearest_safe_boundary(tmp_path):
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "split tool exchange" not in text_of(app.screen, "#status")
        await split_boundary(pilot)
        status = text_of(app.screen, "#status")
        assert "split tool exchange" in status
        assert "message 4 (tool call call_1) is compacted" in status
        assert "s: nearest safe boundary" in status
        state = app.state
        safe = nearest_safe_up_to(state.session.messages, state.preparation.plan.boundary, 2)
        assert "Safe boundary" in screen_lines(app)[-1]  # the key, in the footer
        await press_and_settle(pilot, "s")
        assert state.up_to == safe == 5
        assert not state.splits
        assert "split tool exchange" not in text_of(app.screen, "#status")


async def test_writing_a_split_history_needs_the_explicit_key(tmp_path):
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    before = path.read_bytes()
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await split_boundary(pilot)
        await compact(pilot, back=True)
        await pilot.press("w")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmWriteScreen)
        body = text_of(app.screen, "#confirm-body")
        assert "splits a tool exchange" in body
        assert "message 4 (tool call call_1) is compacted but its result (message 5)" in body
        await press_and_settle(pilot, "y")  # not enough
        assert isinstance(app.screen, ConfirmWriteScreen)
        assert path.read_bytes() == before
        await press_and_settle(pilot, "exclamation_mark")
        assert path.read_bytes() != before


# --- no silent loss of work -----------------------------------------------------


async def test_leaving_the_stream_screen_keeps_the_summary_and_c_shows_it(tmp_path):
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await compact(pilot, back=True)
        first, summary = app.state.stream_result, app.state.summary
        await press_and_settle(pilot, "c")
        assert isinstance(app.screen, StreamScreen)
        assert app.state.stream_result is first  # shown again, not run again
        assert app.screen.query_one("#summary-live", TextArea).text == summary
        assert "kept from the last run" in text_of(app.screen, "#stream-outcome")
        await pilot.press("escape")
        await pilot.pause()
        assert app.state.summary == summary


async def test_r_runs_again_only_after_asking(tmp_path):
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await compact(pilot, back=True)
        first = app.state.stream_result
        await press_and_settle(pilot, "c")  # the kept summary
        await pilot.press("r")
        await pilot.pause()
        assert on(app, "AskScreen")
        await press_and_settle(pilot, "n")  # no: the kept summary stays
        assert app.state.stream_result is first
        await press_and_settle(pilot, "r", "y")
        assert isinstance(app.screen, StreamScreen)
        assert app.state.stream_result is not first and app.state.writable


async def test_moving_the_boundary_or_escape_with_a_summary_asks_first(tmp_path):
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j", "j", "j", "j", "j", "b")
        await pilot.pause()
        await compact(pilot, back=True)
        summary = app.state.summary
        await pilot.press("j", "b")
        await pilot.pause()
        assert on(app, "AskScreen")
        assert "discards the summary" in text_of(app.screen, "#ask-body")
        await pilot.press("n")
        await pilot.pause()
        assert app.state.summary == summary and app.state.up_to == 6
        await pilot.press("escape")  # back to the default tail: asks too
        await pilot.pause()
        assert on(app, "AskScreen")
        await pilot.press("y")
        await pilot.pause()
        assert app.state.summary is None and app.state.up_to is None


async def test_leaving_the_editor_with_unsaved_changes_asks(tmp_path):
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await compact(pilot, back=True)
        summary = app.state.summary
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("x", "escape")
        await pilot.pause()
        assert on(app, "AskScreen")
        assert "not saved" in text_of(app.screen, "#ask-body")
        await pilot.press("n")  # keep editing
        await pilot.pause()
        editor = app.screen.query_one("#summary-editor", TextArea)
        assert editor.text != summary
        await pilot.press("escape", "y")
        await pilot.pause()
        assert app.state.summary == summary and not app.state.summary_edited


# --- write from where you review ------------------------------------------------


@pytest.mark.parametrize("screen", [DiffScreen, StreamScreen], ids=["diff", "finished-stream"])
async def test_w_writes_from_the_screen_under_review(tmp_path, screen):
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    before = path.read_bytes()
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        if screen is DiffScreen:
            await compact(pilot, back=True)
            await press_and_settle(pilot, "d")
        else:
            await compact(pilot)  # and stay on the finished stream screen
        assert isinstance(app.screen, screen)
        await press_and_settle(pilot, "w")
        assert isinstance(app.screen, ConfirmWriteScreen)
        await press_and_settle(pilot, "y")
        assert path.read_bytes() != before


async def test_an_unavailable_key_says_why(tmp_path):
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        notes = record_notes(app)
        await pilot.press("w", "d")
        await pilot.pause()
        assert not isinstance(app.screen, (ConfirmWriteScreen, DiffScreen))
        assert notes == [
            "nothing to write yet: press c to compact first",
            "no summary yet: press c to compact first",
        ]


# --- the summary as written, one token figure -----------------------


async def test_summary_panes_show_the_raw_text_and_markdown_is_a_toggle(tmp_path):
    path = write_kimi_session(tmp_path / "s")
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await compact(pilot)
        summary = app.state.summary
        live = app.screen.query_one("#summary-live", TextArea)
        assert live.text == summary and live.border_title == "summary as it will be written"
        await press_and_settle(pilot, "escape", "d")
        raw = app.screen.query_one("#diff-summary-raw", TextArea)
        assert raw.text == summary and "</current_focus>" in raw.text
        pane = app.screen.query_one("#summary-pane")
        assert pane.border_title == "summary as it will be written" and raw.display
        await pilot.press("m")
        await pilot.pause()
        assert not raw.display and "Markdown" in pane.border_title


async def test_backticks_and_tags_survive_in_the_diff_pane(tmp_path):
    from kimi_compact_tui.providers import StreamResult

    summary = "<current_focus>\nrun `pytest -k db`\n</current_focus>\n<environment>\n</environment>"
    path = write_kimi_session(tmp_path / "s")
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.state.set_result(StreamResult(status="complete", summary=summary))
        app.refresh_view()
        await press_and_settle(pilot, "d")
        assert app.screen.query_one("#diff-summary-raw", TextArea).text == summary


async def test_status_diff_and_confirm_give_the_same_token_estimate(tmp_path):
    from kimi_compact_tui.providers import StreamResult

    # One ':' (an odd number of JSON punctuation marks): estimating the summary
    # text in one piece or as kimi-cli's two text parts used to round apart.
    summary = "<current_focus>\nDone: f() returns 2\n</current_focus>"
    path = write_kimi_session(tmp_path / "s")
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.state.set_result(StreamResult(status="complete", summary=summary))
        app.refresh_view()
        await pilot.pause()
        status = str(app.screen.query_one(StatusLine).render())
        in_status = re.search(r"→ ([\d,]+) tokens", status).group(1)
        await press_and_settle(pilot, "d")
        head = text_of(app.screen, "#diff-head")
        in_diff = re.search(r"after [\d,]+ messages, ~([\d,]+) tokens", head).group(1)
        await press_and_settle(pilot, "escape", "w")
        body = text_of(app.screen, "#confirm-body")
        in_confirm = re.search(r"~[\d,]+ → ~([\d,]+)", body).group(1)
        assert in_status == in_diff == in_confirm
