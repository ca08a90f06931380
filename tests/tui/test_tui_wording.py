"""Layout and wording a new user met: notices that covered
the status lines and dialogs, the title cut to ``(copy…``, two Quit entries in
the palette, candidate rows wrapped mid-figure, "1 messages" and ranges of one,
"nothing to compact" said twice, a command name the user never typed, and CLI
figures without thousands separators."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from textual.widgets import OptionList
from textual.widgets._toast import Toast

from kimi_compact_tui import cli, wording
from kimi_compact_tui.diff import diff_sessions
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.retention import CandidateSet
from kimi_compact_tui.tui import keys
from kimi_compact_tui.tui.app import create_app
from kimi_compact_tui.tui.screens.candidates import CandidatesScreen
from kimi_compact_tui.tui.screens.diff import diff_header
from kimi_compact_tui.tui.screens.restore import RestoreConfirmScreen
from kimi_compact_tui.tui.widgets.legend import legend_text
from kimi_compact_tui.tui.widgets.status import StatusLine
from tests.core_helpers import SAMPLES
from tests.factories import regions_messages, write_openai_json, write_openai_session
from tests.factories.cli import run_cli
from tests.tui_support import (
    FlowHost,
    compact,
    make_state,
    press_and_settle,
    screen_lines,
    settle,
    wait_until,
)

SAMPLE = SAMPLES / "kimi-debugging-session"


def toasts(app) -> list[Toast]:
    return [t for t in app.screen.query(Toast) if t.region.area]


# ----------------------------------------------------------------------------- notices


async def test_the_sample_copy_notice_keeps_off_the_status_lines_at_80x24():
    app = create_app(SAMPLE, provider="offline")
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        shown = await wait_until(pilot, lambda: toasts(app), "the 'opened a copy' notice")
        assert any("opened a copy" in str(t.render()) for t in shown)
        status, legend = app.screen.query_one(StatusLine), app.screen.query_one("#legend")
        for toast in shown:
            assert not toast.region.overlaps(status.region), (toast.region, status.region)
            assert not toast.region.overlaps(legend.region), (toast.region, legend.region)
        lines = screen_lines(app)
        assert "messages" in lines[status.region.y]  # the figures are readable meanwhile


async def test_a_dialog_is_not_covered_by_earlier_notices(tmp_path):
    path = write_openai_json(tmp_path / "s.json", regions_messages())
    app = create_app(path, provider="offline")
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        await compact(pilot, back=True)
        await press_and_settle(pilot, "w")
        await press_and_settle(pilot, "y")
        assert app.last_error is None
        await wait_until(pilot, lambda: toasts(app), "the write's notice")
        await press_and_settle(pilot, "u")  # at once, while the write's notice is up
        assert isinstance(app.screen, RestoreConfirmScreen)
        box = app.screen.query_one("Vertical").region
        assert not [t for t in toasts(app) if t.region.overlaps(box)]


# ----------------------------------------------------------------------------- title, palette


async def test_the_title_keeps_the_copy_mark_whole_at_80_columns():
    app = create_app(SAMPLE, provider="offline")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        title = screen_lines(app)[0]
        assert "(copy of the sample)" in title, title
        assert "context.jsonl" in title
        assert "(copy…" not in title


async def test_the_title_has_the_app_name_when_there_is_room():
    app = create_app(SAMPLE, provider="offline")
    async with app.run_test(size=(200, 40)) as pilot:
        await settle(pilot)
        title = screen_lines(app)[0]
        assert (
            "kimi-compact-tui — kimi-debugging-session/context.jsonl (copy of the sample)" in title
        )


async def test_the_palette_has_one_quit(tmp_path):
    from textual.command import CommandPalette

    path = write_openai_json(tmp_path / "s.json", regions_messages())
    app = create_app(path, provider="offline")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        palette = await wait_until(
            pilot, lambda: isinstance(app.screen, CommandPalette) and app.screen, "the palette"
        )
        await pilot.press(*"quit")
        listing = palette.query_one("CommandList", OptionList)
        await wait_until(pilot, lambda: listing.option_count, "the matches")
        # The providers answer in turn, in the palette's search worker: wait for it to end.
        group = CommandPalette._GATHER_COMMANDS_GROUP
        await wait_until(
            pilot,
            lambda: not any(w.group == group and not w.is_finished for w in app.workers),
            "every command provider's answer",
        )
        await settle(pilot)
        prompts = [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]
        assert sum(1 for p in prompts if p.lower().startswith("quit")) == 1, prompts


# ----------------------------------------------------------------------------- candidates


async def test_candidate_rows_do_not_wrap_at_120_columns():
    cands = CandidateSet()
    for model in ("a-very-long-model-name-for-the-first-run", "another-long-model-name-2"):
        cands.add(
            "summary " * 50, provider="openai-compatible-provider", model=model,
            prompt_source="bundled", prompt_sha256="0" * 64, output_tokens=123456,
            seconds=12.5, contract_ok=False,
        )  # fmt: skip
    app = FlowHost(CandidatesScreen(cands))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        listing = app.screen.query_one("#candidates-list", OptionList)
        assert listing.region.height == len(cands) + 2  # one line each, and its border
        lines = screen_lines(app)[listing.region.y + 1 : listing.region.bottom - 1]
        assert [line.split()[2] for line in lines] == ["#1", "#2"], lines


# ----------------------------------------------------------------------------- wording


def test_counts_and_ranges_of_one():
    assert wording.count(1, "message") == "1 message"
    assert wording.count(0, "message") == "0 messages"
    assert wording.count(1234, "message") == "1,234 messages"
    assert wording.span(1, 1) == "message 1"
    assert wording.span(1, 8) == "messages 1–8"
    assert wording.number(141771) == "141,771" and wording.number(None) == "-"


def test_the_diff_header_says_1_message(tmp_path):
    before = load_session(write_openai_session(tmp_path / "a.json", 4))
    after = load_session(write_openai_json(tmp_path / "b.json", [{"role": "user", "content": "x"}]))
    header = diff_header(diff_sessions(before, after)).plain
    assert "1 message," in header and "1 messages" not in header


def test_nothing_to_compact_is_said_once(tmp_path):
    state = make_state(write_openai_session(tmp_path / "short.json", 1))
    assert state.noop and "nothing to compact" in state.noop
    why = keys.why_not(keys.MAIN_KEYS, "compact", state)
    assert why.count("nothing to compact") == 1, why
    assert state.write_refusal().count("nothing to compact") == 1
    legend = legend_text(state, lambda _r: None).plain  # type: ignore[arg-type,return-value]
    assert legend.count("nothing to compact") == 1, legend


def test_the_cli_says_nothing_to_compact_once(tmp_path):
    path = write_openai_session(tmp_path / "short.json", 1)
    done = run_cli("compact", str(path), "--provider", "offline", "--output", str(tmp_path / "o"))
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("nothing to compact") == 1, done.stderr


def test_the_cli_names_a_range_of_one_as_one_message(tmp_path):
    turns = [{"role": ("user", "assistant")[i % 2], "content": f"turn {i}"} for i in range(6)]
    path = write_openai_json(tmp_path / "s.json", turns)
    out = tmp_path / "out.json"
    done = run_cli(
        "compact", str(path), "--up-to", "1", "--provider", "offline", "--output", str(out)
    )
    assert done.returncode == 0, done.stderr
    assert "compacting message 1 with" in done.stderr, done.stderr
    assert "1–1" not in done.stderr


def test_errors_name_the_command_the_user_typed(capsys, tmp_path):
    session = tmp_path / "s"
    shutil.copytree(SAMPLE, session)
    assert cli.main(["--up-to", "0", str(session)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kimi-compact-tui: error: "), err
    assert cli.main(["tui", "--up-to", "0", str(session)]) == 2
    assert capsys.readouterr().err.startswith("kimi-compact-tui tui: error: ")


def test_cli_figures_have_thousands_separators(tmp_path):
    session = tmp_path / "s"
    shutil.copytree(SAMPLE, session)
    done = run_cli("plan", str(session))
    assert done.returncode == 0, done.stderr
    assert "recorded 13,675" in done.stdout, done.stdout[:400]
    done = run_cli("preview", str(session), "--provider", "offline")
    assert done.returncode == 0, done.stderr
    line = next(ln for ln in done.stdout.splitlines() if ln.startswith("messages "))
    tokens = line.split("≈")[1].split()[0]
    assert "," in tokens, line  # more than 999 tokens, written 1,234


def claude_transcript(folder: Path) -> Path:
    from tests.factories.claude_code import two_turns

    return two_turns().write(folder)


def gemini_session(folder: Path) -> Path:
    from tests.factories.gemini_cli import session_file

    return session_file(folder)


@pytest.mark.parametrize("make", [claude_transcript, gemini_session], ids=["claude", "gemini"])
def test_the_recorded_figure_goes_after_a_write(tmp_path, make):
    """The agent's last recorded context size describes the history before a
    compaction: after a write (the kept records are copies, with their figures)
    the status line no longer shows it, until the agent replies again."""
    from kimi_compact_tui.providers import StreamResult
    from kimi_compact_tui.tui.widgets.status import status_text

    path = make(tmp_path / "home")
    state = make_state(path)
    before = len(state.session.messages)
    assert "recorded " in status_text(state).plain
    state.set_result(StreamResult(status="complete", summary="The user ran a command."))
    said = state.write()
    assert re.search(r"\(\d+ messages → \d+: \d+ compacted into the summary", said), said
    state.load(path)
    assert len(state.session.messages) < before  # compacted
    assert "recorded" not in status_text(state).plain
