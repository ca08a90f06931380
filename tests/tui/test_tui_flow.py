"""Pilot tests of the flow screens: preview, stream, diff, edit, confirm and
the small dialogs, each pushed on a tiny host app with a real ReviewState."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest
from rich.text import Text
from textual.widgets import DataTable, Input, Markdown, OptionList, Static, TextArea

from kimi_compact_tui.compaction.prompts import UPSTREAM_SHA256, PromptSource
from kimi_compact_tui.compaction.request import TOOL_KEYS
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.formats import registry
from kimi_compact_tui.formats.storage import SessionRef
from kimi_compact_tui.providers import ProviderConfig, StreamEvent, StreamResult, stream_summary
from kimi_compact_tui.sanitize import visible
from kimi_compact_tui.tui.keys import Key
from kimi_compact_tui.tui.screens.confirm import ConfirmWriteScreen
from kimi_compact_tui.tui.screens.diff import DiffScreen, compacted_session_of
from kimi_compact_tui.tui.screens.edit import EditSummaryScreen
from kimi_compact_tui.tui.screens.error import ErrorDialog
from kimi_compact_tui.tui.screens.help import HelpScreen
from kimi_compact_tui.tui.screens.instructions import InstructionsScreen
from kimi_compact_tui.tui.screens.model import ModelScreen
from kimi_compact_tui.tui.screens.preview import EXACT_BADGE, PreviewScreen, prompt_line
from kimi_compact_tui.tui.screens.stream import OFFLINE_BANNER, StreamScreen
from kimi_compact_tui.tui.widgets.diff_view import DiffView
from kimi_compact_tui.tui.widgets.stream_view import (
    StreamView,
    display_markdown,
    markdown_parser,
)
from tests.factories import SUMMARY, write_kimi_session, write_openai_session
from tests.loopback_server import openai_sse
from tests.tui_support import (
    FlowHost,
    first_text_gate,
    footer_in_sync,
    make_state,
    settle,
    static_text,
    wait_until,
)

SIZE = (120, 40)


@pytest.fixture
def kimi_path(tmp_path: Path) -> Path:
    return write_kimi_session(tmp_path / "session")


def finished_state(path: Path, summary: str = SUMMARY):
    state = make_state(path)
    state.set_result(StreamResult(status="complete", summary=summary))
    return state


# ----------------------------------------------------------------------------- preview


async def test_preview_shows_exact_request(kimi_path: Path) -> None:
    state = make_state(kimi_path)
    state.set_custom_instruction("Keep the [bold]error[/] texts")
    request = state.preparation.request
    screen = PreviewScreen(state)
    app = FlowHost(screen)
    copied: list[str] = []
    app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        transcript = screen.query_one("#transcript", TextArea)
        assert transcript.read_only
        assert transcript.text == visible(request.transcript, tabs=None)
        assert "## Message 1\nRole: user\nContent:\n" in transcript.text
        body = json.loads(screen.query_one("#body", TextArea).text)
        assert body == request.body
        assert not any(key in body for key in TOOL_KEYS)
        assert "api_key" not in json.dumps(body).lower()
        assert "Keep the [bold]error[/] texts" in screen.query_one("#custom", TextArea).text
        head = static_text(screen)
        assert "sha256" in head and state.preparation.prompt.source in head
        assert "tokens:" in head
        await pilot.press("b")
        await pilot.press("t")
        assert len(copied) == 2
        assert json.loads(copied[0]) == request.body
        assert copied[1] == request.transcript
        await pilot.press("escape")
        await pilot.pause()
    assert app.results == [None]


async def test_preview_shows_noop_reason(tmp_path: Path) -> None:
    path = write_openai_session(tmp_path / "short.json", 1)
    state = make_state(path)
    assert state.preparation.plan.noop
    screen = PreviewScreen(state)
    app = FlowHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        reason = str(screen.query_one("#preview-noop", Static).render())
        assert reason.count("nothing to compact") == 1  # once, not "…: … nothing to compact"
        assert state.preparation.plan.noop in reason
        assert not screen.query("#body")


async def test_preview_disabled_compaction(kimi_path: Path) -> None:
    config = AppConfig(raw={"compaction": {"enabled": False, "type": "kimi"}})
    state = make_state(kimi_path, config=config)
    screen = PreviewScreen(state)
    app = FlowHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        reason = str(screen.query_one("#preview-noop", Static).render())
        assert reason.startswith("compaction is disabled")


# ----------------------------------------------------------------------------- stream


async def run_stream(state, **kwargs):
    screen = StreamScreen(state, **kwargs)
    app = FlowHost(screen)
    return screen, app


async def test_stream_complete_against_loopback(kimi_path, loopback, provider_config) -> None:
    loopback.script(
        [
            openai_sse(
                [SUMMARY[i : i + 30] for i in range(0, len(SUMMARY), 30)],
                reasoning=["Let me think ", "about the [red]session[/]."],
                usage={"prompt_tokens": 100, "completion_tokens": 77, "total_tokens": 177},
            )
        ]
    )
    state = make_state(kimi_path, provider=provider_config("openai"))
    screen, app = await run_stream(state)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert screen.result is not None and screen.result.status == "complete"
        assert state.summary == SUMMARY
        assert state.stream_result is screen.result
        view = screen.query_one(StreamView)
        assert view.finished and view.has_class("finished")
        assert screen.query_one("#summary-live", TextArea).text == SUMMARY  # as written
        await pilot.press("m")  # rendered Markdown: a toggle
        await pilot.pause()
        assert screen.query_one("#summary-md", Markdown).source == display_markdown(SUMMARY)
        reasoning = str(screen.query_one("#reasoning", Static).render())
        assert reasoning == "Let me think about the [red]session[/]."
        outcome = str(screen.query_one("#stream-outcome", Static).render())
        assert "complete — " in outcome and "77 tokens" in outcome
        assert "all 6 sections present" in outcome
        assert not screen.has_class("offline")
        await pilot.press("escape")
        await pilot.pause()
    assert app.results == [None]  # closing is no request; the run is on the state
    sent = json.loads(loopback.requests[0].body)
    assert sent["messages"] == state.preparation.request.body["messages"]


async def test_stream_section_warning_does_not_block(kimi_path, loopback, provider_config):
    text = "<current_focus>\nFix db.py\n</current_focus>\n<environment>\n</environment>"
    loopback.script([openai_sse([text])])
    state = make_state(kimi_path, provider=provider_config("openai"))
    screen, app = await run_stream(state)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        outcome = str(screen.query_one("#stream-outcome", Static).render())
        assert "⚠ missing sections: completed_tasks" in outcome
        assert "empty section: environment" in outcome
        assert state.summary == text  # a warning, not a block


async def test_stream_failed_mid_stream(kimi_path, loopback, provider_config) -> None:
    loopback.script(
        [openai_sse(["partial ", "summary ", "never"], chunked=True, cut=True, cut_after=3)]
    )
    state = make_state(kimi_path, provider=provider_config("openai"))
    screen, app = await run_stream(state)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert screen.result.status == "failed"
        assert state.summary is None
        assert not state.writable
        outcome = str(screen.query_one("#stream-outcome", Static).render())
        assert outcome.startswith("failed — ") and "nothing can be written" in outcome
        view = screen.query_one(StreamView)
        assert not view.has_class("finished")  # the partial text stays plain, not Markdown
        assert screen.query_one("#summary-live", TextArea).text == "partial summary "


async def test_stream_truncated_cannot_be_written(kimi_path, loopback, provider_config):
    loopback.script([openai_sse(["<current_focus>\ncut off"], finish="length")])
    state = make_state(kimi_path, provider=provider_config("openai"))
    screen, app = await run_stream(state)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert screen.result.status == "truncated"
        assert state.summary is None
        outcome = str(screen.query_one("#stream-outcome", Static).render())
        assert outcome.startswith("truncated — ") and "cannot be written" in outcome


async def test_stream_cancel_with_escape(kimi_path, loopback, provider_config) -> None:
    loopback.script([openai_sse(["first ", "second"], stall=20.0, stall_after=2)])
    state = make_state(kimi_path, provider=provider_config("openai"))
    stream_fn, first = first_text_gate()
    screen, app = await run_stream(state, stream_fn=stream_fn)
    async with app.run_test(size=SIZE) as pilot:
        assert await asyncio.to_thread(first.wait, 10)
        await pilot.pause()
        assert "first" in screen.query_one(StreamView).text
        assert screen.running
        await pilot.press("escape")
        await settle(pilot)
        assert screen.result is not None and screen.result.status == "cancelled"
        assert state.summary is None
        outcome = str(screen.query_one("#stream-outcome", Static).render())
        assert outcome.startswith("cancelled — ")
        # Nothing to write: the footer does not offer w, and w says why.
        await wait_until(pilot, lambda: footer_in_sync(app), "the footer")
        offered = {key.action for key in screen.query("FooterKey")}
        assert "write" not in offered and "rerun" in offered
        await pilot.press("w")
        await pilot.pause()
        assert screen.is_current  # not dismissed with a write request
        assert any("nothing to write" in n.message for n in app._notifications)
        await pilot.press("escape")  # now it closes
        await pilot.pause()
    assert app.results == [None]  # closing is no request; the run is on the state


async def test_ten_thousand_tiny_chunks(kimi_path, loopback, provider_config) -> None:
    chunks = [f"{i % 10}" for i in range(10_000)]
    expected = "".join(chunks)
    loopback.script([openai_sse(chunks)])
    state = make_state(kimi_path, provider=provider_config("openai"))
    screen, app = await run_stream(state)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert screen.result.status == "complete"
        assert state.summary == expected
        view = screen.query_one(StreamView)
        assert view.text == expected
        assert screen.query_one("#summary-live", TextArea).text == expected
        await pilot.press("m")
        await pilot.pause()
        assert screen.query_one("#summary-md", Markdown).source == expected
        # Batched: far fewer screen updates than chunks.
        assert 1 <= view.flushes < 1000


async def test_stream_offline_provider(kimi_path: Path) -> None:
    state = make_state(kimi_path, provider=ProviderConfig(kind="offline"))
    screen, app = await run_stream(state)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert screen.result.status == "complete"
        assert screen.result.offline
        assert screen.has_class("offline")
        banner = screen.query_one("#stream-offline", Static)
        assert str(banner.render()) == OFFLINE_BANNER
        assert banner.display
        assert state.summary == screen.result.summary and state.summary.strip()
        assert "current_focus" in state.summary


async def test_stream_provider_exception_becomes_failure(kimi_path: Path) -> None:
    async def broken(cfg, body, on_event, cancel):
        on_event(StreamEvent("text", "half"))
        raise RuntimeError("boom \x1b[31m")

    state = make_state(kimi_path)
    screen, app = await run_stream(state, stream_fn=broken)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert screen.result.status == "failed"
        outcome = str(screen.query_one("#stream-outcome", Static).render())
        assert "RuntimeError: boom ␛[31m" in outcome
        assert "\x1b" not in outcome
        assert state.summary is None


async def test_stream_noop_runs_nothing(tmp_path: Path) -> None:
    calls: list[object] = []

    async def never(*args):
        calls.append(args)
        return StreamResult(status="complete", summary="x")

    state = make_state(write_openai_session(tmp_path / "s.json", 1))
    screen, app = await run_stream(state, stream_fn=never)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert calls == []
        assert "nothing to compact" in str(screen.query_one("#stream-status", Static).render())
        await pilot.press("escape")
        await pilot.pause()
    assert app.results == [None]


async def test_stream_markup_and_escapes_shown_as_text(kimi_path: Path) -> None:
    evil = "[bold red]x[/] \x1b]52;c;AAAA\x07 \u202e<current_focus>\nok\n</current_focus>"

    async def fake(cfg, body, on_event, cancel):
        on_event(StreamEvent("text", evil))
        return StreamResult(status="complete", summary=evil)

    state = make_state(kimi_path)
    screen, app = await run_stream(state, stream_fn=fake)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert state.summary == evil  # what is written is never altered
        await pilot.press("m")
        await pilot.pause()
        md = screen.query_one("#summary-md", Markdown)
        assert "\x1b" not in md.source and "\u202e" not in md.source
        assert "[bold red]x[/]" in md.source
        assert "<current_focus>" in md.source


# ----------------------------------------------------------------------------- diff


async def test_diff_shows_both_sessions(kimi_path: Path) -> None:
    state = finished_state(kimi_path)
    plan = state.preparation.plan
    screen = DiffScreen(state)
    app = FlowHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        diff = screen.diff
        assert diff is not None
        before = screen.query_one("#before", DiffView).rows
        after = screen.query_one("#after", DiffView).rows
        assert len(before) == plan.total
        assert [r.kind for r in before].count("removed") == len(plan.compact_indices)
        assert len(after) == len(plan.preserved_indices) + len(plan.leading_system_indices) + 1
        added = [r for r in after if r.kind == "added"]
        assert len(added) == 1 and SUMMARY in added[0].message.text()
        head = str(screen.query_one("#diff-head", Static).render())
        assert f"{diff.tokens_before:,} tokens" in head and f"{diff.tokens_after:,} tokens" in head
        await pilot.press("m")
        await pilot.pause()
        assert screen.query_one("#diff-summary-md", Markdown).source == display_markdown(SUMMARY)
        line = screen.query_one("#before", DiffView).row_text(0, 100)
        assert isinstance(line, Text) and "Fix the failing test" in line.plain


async def test_diff_without_summary_says_why(kimi_path: Path) -> None:
    state = make_state(kimi_path)
    screen = DiffScreen(state)
    app = FlowHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "press c" in str(screen.query_one("#diff-reason", Static).render())


async def test_diff_large_session(tmp_path: Path) -> None:
    path = write_openai_session(tmp_path / "big.json", 20_000)
    state = finished_state(path)
    screen = DiffScreen(state)
    app = FlowHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = screen.query_one("#before", DiffView)
        assert len(view.rows) == 20_001
        assert view.virtual_size.height == 20_001
        view.focus()
        await pilot.press("end")
        await pilot.pause()
        assert view.scroll_y == view.max_scroll_y > 0


# ----------------------------------------------------------------------------- edit


async def test_edit_save_becomes_state_summary_and_diff(kimi_path: Path) -> None:
    state = finished_state(kimi_path)
    screen = EditSummaryScreen(state)
    app = FlowHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        area = screen.query_one(TextArea)
        assert area.text == SUMMARY
        area.load_text("<current_focus>\nEdited by hand\n</current_focus>\n")
        await pilot.pause()
        assert "missing sections" in str(screen.query_one("#edit-sections", Static).render())
        await pilot.press("ctrl+s")
        await pilot.pause()
    edited = "<current_focus>\nEdited by hand\n</current_focus>\n"
    assert app.results == [edited]
    assert state.summary == edited
    assert state.summary_edited
    after = compacted_session_of(state)
    assert any("Edited by hand" in m.text() for m in after.messages)
    assert not any("Fixed f()" in m.text() for m in after.messages if m.role == "user")


async def test_edit_escape_changes_nothing(kimi_path: Path) -> None:
    state = finished_state(kimi_path)
    screen = EditSummaryScreen(state)
    app = FlowHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("x", "y", "escape")
        await pilot.pause()
        await pilot.press("y")  # yes, discard the unsaved change
        await pilot.pause()
    assert app.results == [None]
    assert state.summary == SUMMARY


async def test_edit_refuses_empty(kimi_path: Path) -> None:
    state = finished_state(kimi_path)
    screen = EditSummaryScreen(state)
    app = FlowHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen.query_one(TextArea).load_text("   ")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.results == []
        assert app.screen is screen
    assert state.summary == SUMMARY


# ----------------------------------------------------------------------------- confirm


@pytest.mark.parametrize(
    ("key", "expected"), [("y", True), ("enter", True), ("n", False), ("escape", False)]
)
async def test_confirm_keys(kimi_path: Path, key: str, expected: bool) -> None:
    state = finished_state(kimi_path)
    screen = ConfirmWriteScreen(state)
    app = FlowHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press(key)
        await pilot.pause()
    assert app.results == [expected]


async def test_confirm_names_file_rotation_and_counts(kimi_path: Path) -> None:
    (kimi_path.parent / "context_1.jsonl").write_text("")
    (kimi_path.parent / "context_3.jsonl").write_text("")
    state = finished_state(kimi_path)
    plan = state.preparation.plan
    screen = ConfirmWriteScreen(state)
    app = FlowHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        body = str(screen.query_one("#confirm-body", Static).render())
    assert str(kimi_path) in body
    assert "context.jsonl → context_4.jsonl" in body
    kept = len(plan.preserved_indices) + len(plan.leading_system_indices)
    assert f"{plan.total} → {kept + 1}" in body
    assert f"{len(plan.compact_indices)} compacted" in body and f"{kept} kept" in body


def test_next_rotation(tmp_path: Path) -> None:
    path = tmp_path / "context.jsonl"
    kimi = registry.get("kimi")
    assert kimi.storage.next_point(SessionRef(path)) == "context_1.jsonl"
    (tmp_path / "context_2.jsonl").write_text("")
    assert kimi.storage.next_point(SessionRef(path)) == "context_3.jsonl"


async def test_confirm_openai_backup(tmp_path: Path) -> None:
    path = write_openai_session(tmp_path / "chat.json", 8)
    state = finished_state(path)
    screen = ConfirmWriteScreen(state)
    app = FlowHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        body = str(screen.query_one("#confirm-body", Static).render())
    assert "timestamped backup beside it: chat.json.bak-" in body


# ----------------------------------------------------------------------------- dialogs


async def test_help_lists_keys_as_text() -> None:
    table_keys = (
        Key("c", "", "", "compact"),
        Key("b", "", "", "not [bold]markup[/]", display="[b]"),
    )
    screen = HelpScreen((("[red]Screen[/]", table_keys),))
    app = FlowHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        table = screen.query_one(DataTable)
        assert table.row_count == 3  # the screen's heading and its two keys
        assert table.get_row_at(0)[1].plain == "[red]Screen[/]"
        assert table.get_row_at(2)[0].plain == "[b]"
        assert table.get_row_at(2)[1].plain == "not [bold]markup[/]"
        await pilot.press("escape")
        await pilot.pause()
    assert app.results == [None]


async def test_instructions_save_and_cancel() -> None:
    screen = InstructionsScreen("keep errors")
    app = FlowHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("space", "o", "k", "ctrl+s")
        await pilot.pause()
    assert app.results == ["keep errors ok"]

    screen = InstructionsScreen("keep errors")
    app = FlowHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("x", "escape")
        await pilot.pause()
    assert app.results == [None]


async def test_model_input_suggestion_and_clear() -> None:
    screen = ModelScreen("kimi-k2", ["kimi-k2", "[b]m[/b]"])
    app = FlowHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert screen.query_one(Input).value == "kimi-k2"
        await pilot.press("enter")
        await pilot.pause()
    assert app.results == ["kimi-k2"]

    screen = ModelScreen("kimi-k2", ["kimi-k2"])
    app = FlowHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen.query_one(Input).value = ""
        await pilot.press("enter")
        await pilot.pause()
    assert app.results == [""]

    screen = ModelScreen(None, ["a-model", "[b]m[/b]"])
    app = FlowHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        options = screen.query_one(OptionList)
        options.focus()
        options.highlighted = 1
        await pilot.press("enter")
        await pilot.pause()
    assert app.results == ["[b]m[/b]"]


async def test_error_dialog_text_not_markup() -> None:
    screen = ErrorDialog("session.json: bad [red]thing[/] \x1b[2J")
    app = FlowHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        text = str(screen.query_one("#error-message", Static).render())
        assert text == "session.json: bad [red]thing[/] ␛[2J"
        await pilot.press("escape")
        await pilot.pause()
    assert app.results == [None]


# ----------------------------------------------------------------------------- pieces


def test_display_markdown_keeps_tags_visible() -> None:
    shown = display_markdown("<current_focus>\nx \x1b\n</current_focus>\n<b>raw</b>")
    assert shown.startswith("### <current_focus>\n\nx ␛")
    assert "</current_focus>" not in shown
    tokens = markdown_parser().parse(shown)
    assert not any(t.type in ("html_block", "html_inline") for t in tokens)
    inline = [t for t in tokens if t.type == "inline"]
    assert inline[0].content == "<current_focus>"


async def test_preview_badge_for_exact_upstream_prompt(kimi_path: Path) -> None:
    state = make_state(kimi_path)
    prompt = state.preparation.prompt
    exact = PromptSource("kimi-cli", "/opt/kimi-cli/compact.md", prompt.text, UPSTREAM_SHA256)
    assert exact.upstream_exact
    line = prompt_line(exact).plain
    assert "kimi-cli /opt/kimi-cli/compact.md" in line and EXACT_BADGE in line
    assert EXACT_BADGE not in prompt_line(PromptSource("inline", None, "x", "0" * 64)).plain


async def test_diff_tab_switches_panes(kimi_path: Path) -> None:
    state = finished_state(kimi_path)
    screen = DiffScreen(state)
    app = FlowHost(screen)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.focused is screen.query_one("#before", DiffView)
        await pilot.press("tab")
        assert app.focused is screen.query_one("#after", DiffView)
        await pilot.press("s")
        assert screen.has_class("no-summary-pane")
        assert not screen.query_one("#summary-pane").display


async def test_stream_retry_then_complete(kimi_path, loopback, provider_config) -> None:
    from tests.loopback_server import Reply

    loopback.script([Reply.error(503, {"error": {"message": "busy"}}), openai_sse([SUMMARY])])
    state = make_state(kimi_path, provider=provider_config("openai"))
    notes: list[str] = []

    async def spying(cfg, request, on_event, cancel):
        def spy(event: StreamEvent) -> None:
            on_event(event)
            notes.append(screen._view.buffer.note)

        return await stream_summary(cfg, request, spy, cancel)

    screen, app = await run_stream(state, stream_fn=spying)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert screen.result.status == "complete" and screen.result.attempts == 2
        assert any(n.startswith("retrying") and "attempt" in n for n in notes)
        assert str(screen.query_one("#stream-note", Static).render()) == ""
        assert state.summary == SUMMARY


async def test_closing_the_app_mid_stream_is_clean(kimi_path, loopback, provider_config) -> None:
    loopback.script([openai_sse(["first ", "second"], stall=20.0, stall_after=2)])
    state = make_state(kimi_path, provider=provider_config("openai"))
    stream_fn, first = first_text_gate()
    screen, app = await run_stream(state, stream_fn=stream_fn)
    async with app.run_test(size=SIZE) as pilot:
        assert await asyncio.to_thread(first.wait, 10)
        await pilot.pause()
        assert screen.running
        app.exit()
        await pilot.pause()
    assert state.summary is None


async def test_second_escape_stops_waiting(kimi_path: Path) -> None:
    import asyncio

    streaming = threading.Event()

    async def deaf(cfg, body, on_event, cancel):
        on_event(StreamEvent("text", "some"))
        streaming.set()
        await asyncio.sleep(30)  # ignores the cancel event
        return StreamResult(status="complete", summary="never")

    state = make_state(kimi_path)
    screen, app = await run_stream(state, stream_fn=deaf)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, streaming.is_set, "the first text")
        await pilot.press("escape")
        assert screen.running and screen.cancelling
        await pilot.press("escape")
        await settle(pilot)
        assert screen.result.status == "cancelled"
        assert screen.result.summary == "some"
        assert state.summary is None
