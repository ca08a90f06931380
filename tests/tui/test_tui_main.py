"""Pilot tests for the main screen: regions, boundary, movement, detail, gating,
untrusted text, a 100,000-message session, the picker, search and errors."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from textual.widgets import DataTable, Footer

from kimi_compact_tui.compaction.plan import (
    REGION_AFTER,
    REGION_COMPACT,
    REGION_KEPT,
    REGION_LEADING,
    REGION_TAIL,
)
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.providers import StreamResult
from kimi_compact_tui.tui import keys
from kimi_compact_tui.tui.app import ReviewApp, create_app
from kimi_compact_tui.tui.palette import ReviewCommands
from kimi_compact_tui.tui.state import ReviewState
from kimi_compact_tui.tui.widgets.detail import DetailPane
from kimi_compact_tui.tui.widgets.legend import Legend
from kimi_compact_tui.tui.widgets.status import StatusLine
from tests.core_helpers import SAMPLES
from tests.factories import (
    ESCAPE_TEXT,
    MARKUP_TEXT,
    big_session,
    hostile_messages,
    regions_messages,
    write_kimi,
    write_openai_json,
)
from tests.tui_support import compact, press_and_settle, screen_lines, screen_text, settle

SIZE = (120, 40)


async def opened(app: ReviewApp, pilot) -> None:
    await settle(pilot)


def plain(widget) -> str:
    return str(widget.render())


def detail_plain(app: ReviewApp) -> str:
    return app.query_one("#detail-body").render().plain


# --- regions --------------------------------------------------------------------------


async def test_kimi_sample_regions_and_pinned_system_prompt():
    app = create_app(SAMPLES / "kimi-debugging-session")
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        state = app.state
        n = len(state.session.messages)
        ml = app.message_list
        assert ml.message_count == n
        plan = state.preparation.plan
        assert plan.mode == "tail" and plan.noop is None
        regions = [ml.region_at(i) for i in range(n)]
        assert set(regions) == {REGION_COMPACT, REGION_TAIL}
        assert regions[plan.boundary - 1] == REGION_COMPACT
        assert regions[plan.boundary] == REGION_TAIL
        # The _system_prompt record is pinned above the list, not a numbered row.
        pinned = app.query_one("#system-prompt")
        assert pinned.display
        assert "system prompt" in plain(pinned)
        assert "You are Kimi Code CLI" in plain(pinned)
        assert ml.row_plain(0).split()[:3] == ["░", "1", "user"]  # the compactable mark
        legend = plain(app.query_one(Legend))
        assert "compactable" in legend and "preserved tail" in legend
        status = plain(app.query_one(StatusLine))
        assert "kimi" in status and f"{n} messages" in status
        assert "recorded 13,675 tokens" in status
        assert "offline — no model" in status
        assert "→" in status


async def test_openai_sample_leading_system_region():
    app = create_app(SAMPLES / "openai-retry-refactor.json")
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        ml = app.message_list
        assert ml.region_at(0) == REGION_LEADING
        assert ml.region_at(1) == REGION_LEADING
        assert ml.region_at(2) == REGION_COMPACT
        assert ml.region_at(ml.message_count - 1) == REGION_TAIL
        assert not app.query_one("#system-prompt").display
        assert "leading system" in plain(app.query_one(Legend))


async def test_markers_in_rows(tmp_path):
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        ml = app.message_list
        row3 = ml.row_plain(3)
        assert "θ" in row3 and "ƒ" in row3  # think, tool call
        assert "↩" in ml.row_plain(4)  # tool result
        assert "▣" in ml.row_plain(5)  # media
        assert "θ" not in ml.row_plain(2)


async def test_cjk_sample_opens():
    app = create_app(SAMPLES / "cjk-orders-store.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        assert app.message_list.message_count == len(app.state.session.messages) > 0
        assert "订单" in screen_text(app)


# --- boundary -------------------------------------------------------------------------


async def test_b_sets_explicit_boundary_and_escape_resets(tmp_path):
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        ml = app.message_list
        await pilot.press("j", "j", "j", "j")
        assert ml.cursor == 4
        await pilot.press("b")
        await pilot.pause()
        state = app.state
        assert state.up_to == 5
        assert state.preparation.plan.mode == "explicit"
        assert [ml.region_at(i) for i in range(ml.message_count)] == [
            REGION_LEADING,
            REGION_LEADING,
            REGION_COMPACT,
            REGION_COMPACT,
            REGION_COMPACT,
            REGION_AFTER,
            REGION_AFTER,
            REGION_AFTER,
            REGION_AFTER,
        ]
        assert "up to message 5" in plain(app.query_one(StatusLine))
        assert "after boundary" in plain(app.query_one(Legend))
        assert app.main_screen.check_action("reset_boundary", ()) is True
        await pilot.press("escape")
        await pilot.pause()
        assert state.up_to is None
        assert state.preparation.plan.mode == "tail"
        assert ml.region_at(ml.message_count - 1) == REGION_TAIL
        assert "up to message" not in plain(app.query_one(StatusLine))


async def test_boundary_on_leading_system_is_a_noop_with_reason(tmp_path):
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        await pilot.press("b")  # on message 1, a leading system message
        await pilot.pause()
        assert app.state.noop
        ml = app.message_list
        assert ml.region_at(5) == REGION_KEPT
        legend = plain(app.query_one(Legend))
        assert "nothing to compact" in legend
        assert "compactable" not in legend
        assert app.main_screen.check_action("compact", ()) is None  # shown, not available


async def test_up_to_option_starts_with_boundary(tmp_path):
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    app = create_app(path, up_to=4)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        assert app.state.up_to == 4
        assert app.message_list.region_at(4) == REGION_AFTER


async def test_up_to_out_of_range_is_an_error_not_a_crash(tmp_path):
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    app = create_app(path, up_to=99)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        assert app.state.session is not None
        assert app.state.up_to is None
        assert "out of range" in app.last_error


# --- movement ---------------------------------------------------------------------------


async def test_cursor_keys(tmp_path):
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        ml = app.message_list
        assert ml.cursor == 0
        await pilot.press("k")
        assert ml.cursor == 0
        await pilot.press("j", "down")
        assert ml.cursor == 2
        await pilot.press("up")
        assert ml.cursor == 1
        await pilot.press("end")
        assert ml.cursor == 8
        await pilot.press("j")
        assert ml.cursor == 8
        await pilot.press("home")
        assert ml.cursor == 0
        await pilot.press("pagedown")
        assert ml.cursor == 8  # a page is longer than this session
        await pilot.press("pageup")
        assert ml.cursor == 0


async def test_highlight_updates_detail(tmp_path):
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        assert "Message 1 · system" in detail_plain(app)
        await pilot.press("end")
        await pilot.pause()
        assert "Message 9 · assistant" in detail_plain(app)
        assert "preserved tail" in detail_plain(app)


# --- detail -------------------------------------------------------------------------------


async def test_detail_labels_parts_sent_and_dropped(tmp_path):
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        await pilot.press("j", "j", "j")  # message 4: think, text, tool call
        await pilot.pause()
        text = detail_plain(app)
        assert "compactable" in text
        assert " dropped  think" in text
        assert " sent  text" in text
        assert " dropped  tool call Shell (id call_1)" in text
        assert '"command": "make import"' in text
        await pilot.press("j")  # tool result
        await pilot.pause()
        assert " sent  tool result (call call_1)" in detail_plain(app)
        await pilot.press("j")  # image
        await pilot.pause()
        text = detail_plain(app)
        assert " dropped  image reference" in text
        assert "https://example.com/shot.png" in text
        await pilot.press("end")
        await pilot.pause()
        assert " kept  text" in detail_plain(app)
        # enter moves focus to the detail pane and back
        await pilot.press("enter")
        assert app.query_one(DetailPane).has_focus_within
        await pilot.press("enter")
        assert app.message_list.has_focus


async def test_detail_caps_huge_message(tmp_path):
    huge = "x" * 300_000
    path = write_openai_json(
        tmp_path / "s.json",
        [{"role": "user", "content": huge}, {"role": "assistant", "content": "ok"}],
    )
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        text = detail_plain(app)
        assert "showing the first 20,000 of 300,000 characters" in text
        assert len(text) < 25_000


# --- gating ----------------------------------------------------------------------------------


async def test_disabled_config_hides_compaction_keys_and_shows_reason(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text("compaction:\n  enabled: false\n  type: kimi\n", encoding="utf-8")
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    app = create_app(path, config_path=config)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        assert app.message_list.message_count == 9  # the session is still shown
        for action in ("boundary", "preview", "compact", "diff", "edit", "write", "model"):
            assert app.main_screen.check_action(action, ()) is False, action
        assert app.main_screen.check_action("search", ()) is True
        # Nothing will be compacted: no regions that would mislead, nothing "sent".
        ml = app.message_list
        assert {ml.region_at(i) for i in range(9)} == {REGION_KEPT}
        assert " kept  text" in detail_plain(app) and " sent " not in detail_plain(app)
        legend = plain(app.query_one(Legend))
        assert "compactable" not in legend
        assert "compaction disabled" in legend
        assert "compaction.enabled is not true" in legend
        footer = screen_lines(app)[-1]
        assert "Compact" not in footer and "Up to here" not in footer
        assert "Search" in footer
        screens = len(app.screen_stack)
        await pilot.press("c", "b", "p")
        await pilot.pause()
        assert len(app.screen_stack) == screens
        assert app.state.up_to is None


async def test_enabled_footer_shows_compaction_keys(tmp_path):
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        assert app.query_one(Footer)
        footer = screen_lines(app)[-1]
        assert "Up to here" in footer and "Compact" in footer
        assert app.main_screen.check_action("compact", ()) is True
        assert app.main_screen.check_action("write", ()) is None  # nothing to write yet
        assert app.main_screen.check_action("diff", ()) is None


def test_availability_table(tmp_path):
    state = ReviewState(config=AppConfig(raw={"compaction": {"enabled": True, "type": "kimi"}}))
    state.load(write_openai_json(tmp_path / "s.json", regions_messages()))

    def check(action: str) -> bool | None:
        return keys.check(keys.MAIN_KEYS, action, state)

    assert check("compact") is True
    assert check("write") is None and "nothing to write yet" in keys.why_not(
        keys.MAIN_KEYS, "write", state
    )
    assert check("reset_boundary") is None
    assert check("candidates") is False  # absent until a run
    state.set_boundary(3)
    state.set_result(StreamResult(status="complete", summary="S"))
    assert check("write") is True
    assert check("reset_boundary") is True
    assert check("search") is True
    state.set_result(StreamResult(status="truncated", summary="S"))
    assert check("write") is None


async def test_command_palette_lists_available_actions(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text("compaction:\n  enabled: false\n  type: kimi\n", encoding="utf-8")
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    app = create_app(path, config_path=config)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        provider = ReviewCommands(app.screen)
        actions = [k.action for k in provider._entries()]
        assert "search" in actions and "help" in actions
        assert "compact" not in actions and "boundary" not in actions
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        provider = ReviewCommands(app.screen)
        actions = [k.action for k in provider._entries()]
        assert {"compact", "boundary", "preview", "search", "quit"} <= set(actions)
        hits = [hit async for hit in provider.search("up to here")]
        assert hits and "up to here" in str(hits[0].match_display).lower()


# --- untrusted text -------------------------------------------------------------------------


async def test_markup_and_escapes_shown_literally(tmp_path):
    path = write_kimi(
        tmp_path / "hostile",
        hostile_messages(),
        system_prompt=f"sys {MARKUP_TEXT} {ESCAPE_TEXT}",
        usage=10,
    )
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        lines = screen_lines(app)
        text = "\n".join(lines)
        for forbidden in ("\x1b", "\x07", "\u202e"):
            assert forbidden not in text
        # The list row, the pinned system prompt and the detail pane show the markup literally.
        assert MARKUP_TEXT in app.message_list.row_plain(0, 200)
        assert "[bold]x[/bold] [/foo]" in text
        assert "␛[31m ␛]0;title␇ <U+202E>" in text
        detail = detail_plain(app)
        assert f"markup {MARKUP_TEXT} escapes ␛[31m ␛]0;title␇ <U+202E> end" in detail
        pinned = [line for line in lines if "system prompt" in line][0]
        assert "[bold]x[/bold]" in pinned and "␛[31m" in pinned
        await pilot.press("j")
        await pilot.pause()
        assert "␛[31m ␛]0;title␇ <U+202E>[bold]x[/bold] [/foo] [link=x]" in detail_plain(app)
        # The text sent is not altered by what is shown.
        sent = app.state.preparation.request.transcript
        assert ESCAPE_TEXT in sent and MARKUP_TEXT in sent


# --- scale --------------------------------------------------------------------------------------


async def test_hundred_thousand_messages_open_and_end_moves(tmp_path):
    path = big_session(tmp_path / "big.jsonl", 100_000)
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        ml = app.message_list
        assert ml.message_count == 100_000
        await pilot.press("end")
        await pilot.pause()
        assert ml.cursor == 99_999
        text = screen_text(app)
        assert "message number 100000" in text
        assert "100000 assistant" in text
        assert "Message 100000 · assistant" in detail_plain(app)
        await pilot.press("pageup")
        assert ml.cursor < 99_999
        await pilot.press("home")
        await pilot.pause()
        assert "message number 1 " in screen_text(app) + " "
        # Only what was drawn was built.
        assert len(ml._text_cache) < 500


# --- picker ---------------------------------------------------------------------------------------


def make_share_dir(root: Path) -> Path:
    work = "/home/dev/ledger-service"
    digest = hashlib.md5(work.encode()).hexdigest()
    share = root / "share"
    session = share / "sessions" / digest / "0b7c6d3e-1111-2222-3333-444455556666"
    write_kimi(session, regions_messages()[2:], system_prompt="You are Kimi.", usage=4321)
    (session / "wire.jsonl").write_text(
        json.dumps(
            {
                "timestamp": 1.0,
                "message": {"type": "TurnBegin", "payload": {"user_input": "Fix the importer"}},
            }
        )
        + "\n",
        encoding="utf-8",
    )
    (share / "kimi.json").write_text(json.dumps({"work_dirs": [{"path": work}]}), encoding="utf-8")
    return share


async def test_picker_with_no_session_lists_and_opens(tmp_path, monkeypatch):
    from kimi_compact_tui.tui.screens.picker import PickerScreen

    share = make_share_dir(tmp_path)
    monkeypatch.setenv("KIMI_SHARE_DIR", str(share))
    app = create_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, PickerScreen)
        text = screen_text(app)
        assert "Fix the importer" in text
        assert "/home/dev/ledger-service" in text
        assert "kimi-debugging-session" in text  # a sample session
        await pilot.press("enter")  # the first entry: the kimi-cli session
        await opened(app, pilot)
        assert not isinstance(app.screen, PickerScreen)
        assert app.state.session is not None
        assert app.message_list.message_count == 7


async def test_bad_session_path_opens_picker_with_error(tmp_path):
    from kimi_compact_tui.tui.screens.picker import PickerScreen

    app = create_app(tmp_path / "missing.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        assert "no such file or folder" in app.last_error
        assert type(app.screen).__name__ == "ErrorDialog"  # the error, above the picker
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, PickerScreen)
        await pilot.press("escape")  # nothing loaded: leaving the picker quits
        await pilot.pause()
    assert app.return_code == 0


async def test_invalid_session_file_error(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"role": "user", "content": "x"}\n{not json\n', encoding="utf-8")
    app = create_app(bad)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        assert app.last_error.startswith(f"{bad}:2: invalid JSON")


# --- search --------------------------------------------------------------------------------------


async def test_search_jumps_to_matches(tmp_path):
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        await pilot.press("slash")
        await pilot.pause()
        await pilot.press(*"STRICT", "enter")
        await pilot.pause()
        ml = app.message_list
        assert ml.cursor == 7  # "Add a --strict flag next."
        await pilot.press("n")
        assert ml.cursor == 8
        await pilot.press("n")
        assert ml.cursor == 7  # wraps
        await pilot.press("N")
        assert ml.cursor == 8
        app.main_screen.last_search = "make import"  # tool-call arguments are searched too
        await pilot.press("n")
        assert ml.cursor == 3


def test_find_message_none_when_absent():
    from kimi_compact_tui.model import Message
    from kimi_compact_tui.tui.screens.search import find_message

    msgs = [Message.make("user", "alpha"), Message.make("assistant", "beta")]
    assert find_message(msgs, "zzz", 0) is None
    assert find_message(msgs, "ALPHA", 0) == 0
    assert find_message(msgs, "beta", 1, forward=False) == 1


# --- the rest of the flow ------------------------------------------------------------------------


async def test_instruction_and_model_choices_replan(tmp_path):
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        app.state.set_custom_instruction("keep the amounts")
        app.state.set_compaction_model("kimi-k2-turbo")
        app.refresh_view()
        await pilot.pause()
        body = app.state.preparation.request.body
        assert body["model"] == "kimi-k2-turbo"
        assert "keep the amounts" in app.state.preparation.request.transcript
        status = plain(app.query_one(StatusLine))
        assert "kimi-k2-turbo (session override)" in status
        assert "custom instructions set" in status


async def test_offline_compact_stores_summary(tmp_path):
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        await compact(pilot)
        assert app.state.stream_result is not None
        assert app.state.stream_result.status == "complete"
        assert app.state.summary


def test_serve_command_line(monkeypatch, capsys):
    from kimi_compact_tui.cli import build_parser
    from kimi_compact_tui.commands import serve
    from kimi_compact_tui.commands.tui import AppOptions

    args = build_parser().parse_args(["serve", "s.json", "--up-to", "3", "--model", "m"])
    assert args.host == "127.0.0.1" and args.port == 8000
    command = serve.app_command(AppOptions.from_args(args))
    assert command.endswith(
        f"-m kimi_compact_tui tui {Path('s.json').absolute()} --model m --up-to 3"
    )
    assert serve.is_loopback("127.0.0.1") and serve.is_loopback("::1")
    assert serve.is_loopback("localhost")
    assert not serve.is_loopback("0.0.0.0")

    served = {}

    class FakeServer:
        def __init__(self, command, host, port, title):
            served.update(command=command, host=host, port=port)

        def serve(self):
            served["ran"] = True

    import textual_serve.server

    monkeypatch.setattr(textual_serve.server, "Server", FakeServer)
    args = build_parser().parse_args(["serve", "--host", "0.0.0.0", "--port", "9000"])
    assert serve.run(args) == 0
    assert served == {
        "command": serve.app_command(AppOptions.from_args(args)),
        "host": "0.0.0.0",
        "port": 9000,
        "ran": True,
    }
    assert "no authentication" in capsys.readouterr().err


def test_tui_command_bad_config_is_one_line(tmp_path, capsys):
    from kimi_compact_tui.cli import main

    assert main([str(tmp_path / "x.json"), "--config", str(tmp_path / "none.yaml")]) == 2
    err = capsys.readouterr().err
    assert (
        err.strip() == f"kimi-compact-tui: error: {tmp_path / 'none.yaml'}: config file not found"
    )


# --- write and undo through the main screen --------------------------------------------------


async def test_write_refuses_when_file_changed_since_loading(tmp_path):
    from kimi_compact_tui.tui.screens.confirm import AskScreen
    from kimi_compact_tui.tui.screens.error import ErrorDialog

    path = write_kimi(tmp_path / "sess", regions_messages()[2:], system_prompt="S", usage=50)
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await compact(pilot, back=True)
        assert app.state.writable
        assert app.main_screen.check_action("write", ()) is True
        with path.open("a", encoding="utf-8") as fh:  # kimi-cli appended meanwhile
            fh.write('{"role":"user","content":"one more"}\n')
        changed = path.read_bytes()
        await pilot.press("w")
        await pilot.pause()
        await press_and_settle(pilot, "y")
        # only an append: the refusal comes with the offer to write on the grown
        # session (tests/tui/test_tui_write_grown.py), asked, not done
        assert isinstance(app.screen, AskScreen)
        assert not isinstance(app.screen, ErrorDialog)
        assert str(path) in app.last_error
        assert path.read_bytes() == changed  # nothing written
        assert not path.with_name("context_1.jsonl").exists()
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, AskScreen)
        assert path.read_bytes() == changed


async def test_undo_without_a_write_says_nothing_of_ours(tmp_path):
    from kimi_compact_tui.tui.screens.restore import RestoreConfirmScreen

    path = write_openai_json(tmp_path / "s.json", regions_messages())
    before = path.read_bytes()
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press_and_settle(pilot, "u")
        assert isinstance(app.screen, RestoreConfirmScreen)
        body = plain(app.screen.query_one("#restore-body"))
        assert "nothing of ours to undo" in body and path.name in body
        assert not app.screen.query("#restore-yes")  # nothing to confirm
        await press_and_settle(pilot, "y")
        assert path.read_bytes() == before
        assert app.state.session is not None


async def test_write_then_undo_reloads_session(tmp_path):
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    before = path.read_bytes()
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await compact(pilot, back=True)
        await pilot.press("w")
        await pilot.pause()
        await press_and_settle(pilot, "y")
        assert app.last_error is None
        # Reloaded: leading system (2) + summary + tail (2).
        assert app.message_list.message_count == 5
        assert app.state.summary is None and app.main_screen.check_action("write", ()) is None
        assert path.read_bytes() != before
        await press_and_settle(pilot, "u", "y")
        assert app.last_error is None
        assert path.read_bytes() == before
        assert app.message_list.message_count == 9


async def test_help_lists_every_key_and_main_keys_stay_on_main_screen(tmp_path):
    from kimi_compact_tui.tui.screens.help import HelpScreen

    path = write_openai_json(tmp_path / "s.json", regions_messages())
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = screen_text(app)
        assert "compact up to here" in text
        table = app.screen.query_one(DataTable)
        rows = [table.get_row_at(i) for i in range(table.row_count)]
        shown = {(row[0].plain, row[1].plain) for row in rows}
        for _title, screen_keys in keys.SCREEN_TABLES:  # every key of every screen, "!" too
            for key in screen_keys:
                assert (key.help_keys, key.help) in shown, key
        assert ("!", "write the split history anyway") in shown
        await pilot.press("j", "b", "c")  # main-screen keys do nothing here
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert app.state.up_to is None
        assert app.message_list.cursor == 0


async def test_missing_prompt_file_shows_session_and_error(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text(
        "compaction:\n  enabled: true\n  type: kimi\n  prompt_file: nowhere.md\n", encoding="utf-8"
    )
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    app = create_app(path, config_path=config)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.message_list.message_count == 9  # still shown
        assert app.state.preparation is None
        assert app.last_error == f"{tmp_path / 'nowhere.md'}: prompt file not found"
        assert "could not be prepared" in plain(app.query_one(Legend))
        assert type(app.screen).__name__ == "ErrorDialog"
        await pilot.press("escape")
        await pilot.pause()
        assert app.main_screen.check_action("compact", ()) is None
        await pilot.press("b")  # the same error again, not a crash
        await pilot.pause()
        assert app.state.up_to is None
        assert "prompt file not found" in app.last_error


async def test_click_selects_row_and_o_opens_picker(tmp_path):
    from kimi_compact_tui.tui.screens.picker import PickerScreen

    path = write_openai_json(tmp_path / "s.json", regions_messages())
    app = create_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.click("#messages", offset=(10, 3))
        await pilot.pause()
        assert app.message_list.cursor == 3
        assert "Message 4 · assistant" in detail_plain(app)
        await pilot.press("o")
        await pilot.pause()
        assert isinstance(app.screen, PickerScreen)
        await pilot.press("escape")  # a session is loaded: back to it, not quit
        await pilot.pause()
        assert not isinstance(app.screen, PickerScreen)
        assert app.is_running
