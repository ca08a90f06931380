"""The gate in the TUI (issue 33 items 1 and 2): the picker lists pending reviews
first, marked with the trigger and how many times they were held, every row shows
its context meter, and ``A`` lets the agent's next compaction through once (asks
first). The gate is handed to the app as plain data (``commands.tui.gate_of``)."""

from __future__ import annotations

import json
from pathlib import Path

from kimi_compact_tui.commands.tui import gate_of
from kimi_compact_tui.formats.gate import hook_of
from kimi_compact_tui.hooks.pending import GateState
from kimi_compact_tui.hooks.run import run_hook
from kimi_compact_tui.tui.app import create_app
from kimi_compact_tui.tui.screens.confirm import AskScreen
from kimi_compact_tui.tui.screens.picker import PickerScreen
from tests.factories import claude_code as cc
from tests.tui_support import cells_text, press_and_settle, settle, wait_until

SIZE = (120, 40)
NEAR = "11111111-aaaa-4bbb-8ccc-000000000001"
HELD = "22222222-aaaa-4bbb-8ccc-000000000002"


def claude_session(config: Path, sid: str, prompt: str, total: int) -> Path:
    t = cc.Transcript(sid=sid)
    t.user(prompt)
    (rec,) = t.assistant([cc.text("on it")])
    for line in t.lines:
        if line.get("uuid") == rec:
            line["message"]["usage"] = {"input_tokens": total - 500, "cache_read_input_tokens": 400,
                                        "cache_creation_input_tokens": 50, "output_tokens": 50}  # fmt: skip
    return t.write(config)


def hold(state: GateState, sid: str, transcript: Path, times: int = 1) -> None:
    body = json.dumps({"session_id": sid, "transcript_path": str(transcript), "trigger": "auto",
                       "hook_event_name": "PreCompact"}).encode()  # fmt: skip
    for _ in range(times):
        assert run_hook("claude-code", hook_of, body, state=state).held


def home(tmp_path: Path, monkeypatch) -> tuple[Path, Path, GateState]:
    config = tmp_path / "claude"
    near = claude_session(config, NEAR, "Near the threshold", 146_000)
    held = claude_session(config, HELD, "Held by the gate", 20_000)
    import os

    os.utime(held, (1_000_000_000, 1_000_000_000))  # older: pending still comes first
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    monkeypatch.setenv("KIMI_SHARE_DIR", str(tmp_path / "none"))
    state = GateState(tmp_path / "gate")
    hold(state, HELD, held, times=2)
    return near, held, state


async def test_the_picker_lists_pending_reviews_first_with_the_context_meter(tmp_path, monkeypatch):
    near, held, state = home(tmp_path, monkeypatch)
    app = create_app(None, provider="offline", gate=gate_of(state))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        picker = await wait_until(
            pilot, lambda: isinstance(app.screen, PickerScreen) and app.screen.entries and app.screen,
            "the picker's rows",
        )  # fmt: skip
        assert [e.path for e in picker.entries[:2]] == [held, near]  # the pending one first
        text = cells_text(app)
        lines = text.split("\n")
        first = next(line for line in lines if "Held by the gate" in line)
        assert "⏸ PENDING REVIEW (auto, held 2 times)" in first
        assert not any("PENDING" in line for line in lines if "Near the threshold" in line)
        assert "context 73% · compacts at 84%" in text
        assert "context 10% · compacts at 84%" in text
        assert "1 pending review first" in text


async def test_allow_once_from_the_picker_asks_then_lets_the_next_compaction_through(
    tmp_path, monkeypatch
):
    near, held, state = home(tmp_path, monkeypatch)
    app = create_app(None, provider="offline", gate=gate_of(state))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        picker = await wait_until(
            pilot, lambda: isinstance(app.screen, PickerScreen) and app.screen.entries and app.screen,
            "the picker's rows",
        )  # fmt: skip
        picker.query_one("#picker-list").focus()
        await press_and_settle(pilot, "down")  # the session that is not pending
        assert picker.check_action("allow_once", ()) is False
        await press_and_settle(pilot, "up")
        assert picker.check_action("allow_once", ()) is True
        await press_and_settle(pilot, "A")
        assert isinstance(app.screen, AskScreen)
        await press_and_settle(pilot, "n")  # asked: no, nothing allowed
        assert state.allowances() == []
        await press_and_settle(pilot, "A", "y")
        assert state.allowances() == [f"claude-code--{HELD}"]
        assert isinstance(app.screen, PickerScreen)
    body = json.dumps({"session_id": HELD, "transcript_path": str(held), "trigger": "auto"})
    through = run_hook("claude-code", hook_of, body.encode(), state=state)
    assert not through.held and through.exit_code == 0  # the next compaction goes through
    assert run_hook("claude-code", hook_of, body.encode(), state=state).held  # once


def long_session(config: Path, sid: str) -> Path:
    t = cc.Transcript(sid=sid)
    for n in range(6):
        t.user(f"Step {n}: change the parser so amounts like 1.234,{n}0 import")
        t.assistant([cc.text(f"Done with step {n}; the importer reads the March file now.")])
    return t.write(config)


async def test_a_pending_session_says_so_allows_once_and_writing_clears_it(
    tmp_path, monkeypatch, review_app
):
    from kimi_compact_tui.tui.screens.confirm import ConfirmWriteScreen
    from tests.tui_support import compact

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # where the store clears
    path = long_session(tmp_path / "claude", HELD)
    state = GateState()
    hold(state, HELD, path)
    app = review_app(path)
    app.gate = gate_of(state)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.state.held is not None and app.state.held.session == HELD
        notices = [n.message for n in app._notifications]
        assert any("PENDING REVIEW (auto, held 1 time)" in m for m in notices), notices
        await press_and_settle(pilot, "A")
        assert isinstance(app.screen, AskScreen)
        await press_and_settle(pilot, "y")
        assert state.allowances() == [f"claude-code--{HELD}"]
        await compact(pilot, back=True)
        await pilot.press("w")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmWriteScreen), "the dialog")
        await pilot.press("y")
        await wait_until(pilot, lambda: app.state.held is None, "the pending review cleared")
        assert state.pending() == []  # the store's write cleared it
        notices = [n.message for n in app._notifications]
        assert any("is cleared: resume claude-code" in m for m in notices), notices
        assert app.main_screen.check_action("allow_once", ()) is not True  # nothing pending


async def test_allow_once_on_the_main_screen_says_why_not_when_nothing_is_pending(
    tmp_path, review_app
):
    path = long_session(tmp_path / "claude", NEAR)
    app = review_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press_and_settle(pilot, "A")
        assert not isinstance(app.screen, AskScreen)
        notices = [n.message for n in app._notifications]
        assert any("no pending review" in m for m in notices), notices
