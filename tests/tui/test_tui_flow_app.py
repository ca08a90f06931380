"""The whole flow through the real app: compact (offline and loopback), diff,
edit, write with confirmation, the file on disk, then undo; plus cancel and
failure leaving nothing to write."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from kimi_compact_tui.compaction.summary import COMPACTED_NOTICE
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.providers import ProviderConfig
from kimi_compact_tui.tui.screens.confirm import ConfirmWriteScreen
from kimi_compact_tui.tui.screens.diff import DiffScreen
from kimi_compact_tui.tui.screens.edit import EditSummaryScreen
from kimi_compact_tui.tui.screens.restore import RestoreConfirmScreen
from kimi_compact_tui.tui.screens.stream import StreamScreen
from tests.factories import SUMMARY, write_kimi_session
from tests.loopback_server import openai_sse
from tests.tui_support import compact, first_text_gate, settle

SIZE = (120, 40)


def summary_texts(path: Path) -> list[str]:
    session = load_session(path)
    return [m.text() for m in session.messages if COMPACTED_NOTICE in m.text()]


async def test_offline_flow_write_and_undo(tmp_path: Path, review_app) -> None:
    path = write_kimi_session(tmp_path / "s")
    original = path.read_bytes()
    app = review_app(path, ProviderConfig(kind="offline"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        stream = await compact(pilot)
        assert stream.result.status == "complete" and stream.result.offline
        summary = app.state.summary
        assert summary and app.state.writable
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, StreamScreen)

        await pilot.press("d")
        await settle(pilot)
        assert isinstance(app.screen, DiffScreen) and app.screen.diff is not None
        assert app.screen.diff.added == 1
        await pilot.press("escape")
        await pilot.pause()

        await pilot.press("w")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmWriteScreen)
        await pilot.press("y")
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmWriteScreen)

        rotated = path.with_name("context_1.jsonl")
        assert rotated.read_bytes() == original
        texts = summary_texts(path)
        assert len(texts) == 1 and summary in texts[0]
        written = load_session(path)
        assert [m.text() for m in written.messages[-2:]] == [
            "Great, write the changelog.",
            "Done: CHANGELOG.md updated.",
        ]

        await pilot.press("u")
        await pilot.pause()
        assert isinstance(app.screen, RestoreConfirmScreen)  # u asks first
        assert path.read_bytes() != original
        await pilot.press("y")
        await settle(pilot)
        assert path.read_bytes() == original


async def test_loopback_flow_edit_then_write(
    tmp_path, loopback, provider_config, review_app
) -> None:
    loopback.script([openai_sse([SUMMARY[:50], SUMMARY[50:]], reasoning=["thinking"])])
    path = write_kimi_session(tmp_path / "s")
    app = review_app(path, provider_config("openai"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        stream = await compact(pilot)
        assert stream.result.status == "complete"
        assert app.state.summary == SUMMARY
        await pilot.press("escape")
        await pilot.pause()

        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, EditSummaryScreen)
        edited = SUMMARY.replace("Finish the parser fix", "Ship the parser fix")
        app.screen.query_one("TextArea").load_text(edited)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.state.summary == edited

        await pilot.press("w")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot)
    texts = summary_texts(path)
    assert len(texts) == 1 and "Ship the parser fix" in texts[0]
    sent = json.loads(loopback.requests[0].body)
    assert "tools" not in sent


async def test_failed_and_cancelled_runs_cannot_be_written(
    tmp_path, loopback, provider_config, monkeypatch, review_app
) -> None:
    from kimi_compact_tui.tui.screens import stream as stream_screen

    gated, first = first_text_gate()
    monkeypatch.setattr(stream_screen, "stream_summary", gated)
    loopback.script(
        [
            openai_sse(["half a summ"], chunked=True, cut=True, cut_after=2),
            openai_sse(["first ", "second"], stall=20.0, stall_after=2),
        ]
    )
    path = write_kimi_session(tmp_path / "s")
    original = path.read_bytes()
    app = review_app(path, provider_config("openai"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        stream = await compact(pilot)
        assert stream.result.status == "failed"
        assert app.state.summary is None and not app.state.writable
        await pilot.press("escape")
        await pilot.pause()

        first.clear()  # the failed run's text set it
        await pilot.press("c")
        await pilot.pause()
        stream = app.screen
        assert isinstance(stream, StreamScreen)
        assert await asyncio.to_thread(first.wait, 10)
        await pilot.pause()
        assert stream.view.text
        await pilot.press("escape")
        await settle(pilot)
        assert stream.result.status == "cancelled"
        assert app.state.summary is None and not app.state.writable
        await pilot.press("escape")
        await pilot.pause()

        await pilot.press("w")  # gated: no confirm dialog, nothing written
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmWriteScreen)
    assert path.read_bytes() == original
    assert not path.with_name("context_1.jsonl").exists()
