"""A write refused because the agent appended turns after the loaded ones keeps
the review: the app asks once (naming how many messages were added), moves the
review onto the grown session (the summary, its pins and the candidates kept),
shows the new diff (the new turns in the kept tail), and ``w`` writes it as
usual (the dialog, the restore point, ``u``). Any other change is refused as
before, with the reload."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Static

from kimi_compact_tui.diff import KEPT
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.tui.screens.confirm import AskScreen, ConfirmWriteScreen
from kimi_compact_tui.tui.screens.diff import DiffScreen
from kimi_compact_tui.tui.screens.error import ErrorDialog
from kimi_compact_tui.tui.screens.restore import RestoreConfirmScreen
from tests.factories import regions_messages, write_kimi
from tests.tui_support import compact, press_and_settle, wait_until

SIZE = (120, 40)
NEW_TURN = "Also add a test for the parser, please."


def ask_body(screen: AskScreen) -> str:
    return str(screen.query_one("#ask-body", Static).render())


def append_turns(path: Path, *texts: str) -> None:
    """What kimi-cli does when the user sends a message meanwhile: one line
    per message, appended to context.jsonl."""
    with path.open("a", encoding="utf-8") as fh:
        for text in texts:
            fh.write(json.dumps({"role": "user", "content": text}) + "\n")


async def test_a_write_refused_by_appended_turns_is_offered_on_the_grown_session(
    tmp_path, review_app
):
    path = write_kimi(tmp_path / "sess", regions_messages()[2:], system_prompt="S", usage=50)
    app = review_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await compact(pilot, back=True)
        state = app.state
        summary = state.summary
        missing = state.retention(summary).missing_items()
        assert missing, "the offline summary misses an item to pin"
        state.set_pins(missing[:1])
        pins = state.pinned_keys()
        candidates = len(state.runs)
        loaded = len(state.session.messages)
        append_turns(path, NEW_TURN)
        grown = path.read_bytes()

        await press_and_settle(pilot, "w")
        assert isinstance(app.screen, ConfirmWriteScreen)
        await press_and_settle(pilot, "y")
        ask = app.screen
        assert isinstance(ask, AskScreen), type(ask).__name__
        body = ask_body(ask)
        assert "The agent added 1 message after the ones loaded" in body
        assert "kept tail" in body and "Review the new diff and write?" in body
        assert path.read_bytes() == grown  # nothing written

        await press_and_settle(pilot, "y")
        diff_screen = app.screen
        assert isinstance(diff_screen, DiffScreen), type(diff_screen).__name__
        diff = await wait_until(pilot, lambda: diff_screen.diff, "the new diff")
        assert diff.before_count == loaded + 1
        last = diff.rows[-1]
        assert last.kind == KEPT and last.message.text() == NEW_TURN
        # the review is the one made before: the summary, its pins, the candidates
        assert state.summary == summary
        assert state.pinned_keys() == pins and pins
        assert len(state.runs) == candidates
        state.choose_candidate(1)  # raises when the candidate summarised another range
        assert state.pinned_keys() == pins

        await press_and_settle(pilot, "w")
        dialog = app.screen
        assert isinstance(dialog, ConfirmWriteScreen), type(dialog).__name__
        await wait_until(pilot, lambda: dialog.disk_warning is not None, "the disk check")
        assert dialog.disk_warning == ""
        await press_and_settle(pilot, "y")
        assert not isinstance(app.screen, ErrorDialog), app.last_error

        written = load_session(path)
        assert written.messages[-1].text() == NEW_TURN
        assert any(summary[:60] in m.text() for m in written.messages)
        assert path.with_name("context_1.jsonl").read_bytes() == grown

        await press_and_settle(pilot, "u")
        assert isinstance(app.screen, RestoreConfirmScreen)
        await press_and_settle(pilot, "y")
        assert path.read_bytes() == grown


async def test_a_change_that_is_not_an_append_is_still_refused(tmp_path, review_app):
    messages = regions_messages()[2:]
    path = write_kimi(tmp_path / "sess", messages, system_prompt="S", usage=50)
    app = review_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await compact(pilot, back=True)
        summary = app.state.summary
        changed = [dict(m) for m in messages]
        changed[0]["content"] = "An earlier request, rewritten."
        write_kimi(tmp_path / "sess", [*changed, {"role": "user", "content": NEW_TURN}])
        before = path.read_bytes()

        await press_and_settle(pilot, "w")
        await press_and_settle(pilot, "y")
        assert isinstance(app.screen, ErrorDialog), type(app.screen).__name__
        assert app.screen.query("#error-reload"), "the refusal offers the reload"
        assert "changed on disk" in app.last_error
        assert path.read_bytes() == before
        assert app.state.summary == summary


async def test_declining_the_grown_write_writes_nothing_and_keeps_the_review(tmp_path, review_app):
    path = write_kimi(tmp_path / "sess", regions_messages()[2:], system_prompt="S", usage=50)
    app = review_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await compact(pilot, back=True)
        summary, job = app.state.summary, app.state.job
        append_turns(path, NEW_TURN, "And the docs.")
        grown = path.read_bytes()
        await press_and_settle(pilot, "w")
        await press_and_settle(pilot, "y")
        assert isinstance(app.screen, AskScreen)
        assert "The agent added 2 messages" in ask_body(app.screen)
        await press_and_settle(pilot, "n")
        assert type(app.screen).__name__ == "MainScreen"
        assert app.state.job is job and app.state.summary == summary
        assert path.read_bytes() == grown
