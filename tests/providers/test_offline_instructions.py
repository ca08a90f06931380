"""The offline summarizer honours custom instructions: every item the
retention pane's ``i`` lists is kept verbatim, plain "keep" / "focus on" instructions are
followed where it can, the rest is counted (not echoed), and an offline run does not name
a model it does not use."""

from __future__ import annotations

import shutil
from pathlib import Path

from textual.widgets import Static

from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.job import prepare_compaction
from kimi_compact_tui.providers import ProviderConfig
from kimi_compact_tui.providers.offline import offline_summary, read_request, summarize
from kimi_compact_tui.retention import instructions_for, retention_report
from kimi_compact_tui.tui.app import create_app
from kimi_compact_tui.tui.screens.confirm import AskScreen
from kimi_compact_tui.tui.screens.stream import StreamScreen
from kimi_compact_tui.tui.widgets.retention_pane import RetentionPane
from tests.providers.test_offline_summary import FIXTURE_MESSAGES, assert_six_sections, make_request
from tests.tui_support import FlowHost, compact, make_state, settle

ROOT = Path(__file__).resolve().parents[2]
KIMI = ROOT / "sample_sessions" / "kimi-debugging-session"
CONFIG = AppConfig(raw={"compaction": {"enabled": True, "type": "kimi"}})


def section(text: str, name: str) -> str:
    return text[text.index(f"<{name}>") : text.index(f"</{name}>")]


def test_every_item_the_retention_pane_adds_is_kept_verbatim():
    session = load_session(KIMI)
    prep = prepare_compaction(session, CONFIG)
    first = offline_summary(prep.request)
    # a summary that loses things (the hand-written one of the retention fixtures)
    poor = (ROOT / "tests" / "retention_fixtures" / "kimi-debugging.summary.md").read_text()
    missing = retention_report(session, prep.plan, poor).missing_items()
    assert len(missing) >= 5  # requests, commands, a failing test, numbers: what the pane lists
    # what `i` sends: the user's own instruction, then the block of missing items
    instruction = "Focus on the parser.\n\n" + instructions_for(missing)
    again = prepare_compaction(session, CONFIG, custom_instruction=instruction)
    second = offline_summary(again.request)
    assert second != first
    for item in missing:
        assert " ".join(item.text.split()) in second, item.text
    assert retention_report(session, again.plan, second).missing_items() == []
    assert_six_sections(second)
    assert summarize(read_request(again.request)).fits  # still smaller than what it replaces


def fixture_summary(instruction: str = "") -> str:
    return offline_summary(make_request(FIXTURE_MESSAGES, custom=instruction))


def test_plain_instructions_keep_focus_and_say_what_they_could_not_do():
    instruction = (
        "Focus on the report module.\n"
        "Keep billing/report.py.\n"
        'Keep "amounts must stay in cents" and `12 passed in 0.40s`.\n'
        "Keep the deployment notes.\n"  # nothing of the kind in the messages
        "Mention ZEBRAFISH everywhere."
    )
    text = fixture_summary(instruction)
    assert text != fixture_summary()
    assert_six_sections(text)
    focus = section(text, "current_focus")
    assert "Requested focus (custom instructions): the report module." in focus
    assert "About it (message 7): Here is the report module" in focus  # the messages about it
    context = section(text, "important_context")
    for kept in ("billing/report.py", "amounts must stay in cents", "12 passed in 0.40s"):
        assert f"  - {kept}" in context
    assert "deployment notes" not in text and "ZEBRAFISH" not in text
    assert "2 instructions of the custom instructions" in context and "no model" in context


def test_a_list_of_items_is_kept_verbatim():
    instruction = "Keep these:\n- invoice.py line 41\n* Decimal('0.01')\n1. zero total"
    context = section(fixture_summary(instruction), "important_context")
    for kept in ("invoice.py line 41", "Decimal('0.01')", "zero total"):
        assert f"  - {kept}" in context
    assert "custom instructions" in context


def test_no_instructions_no_note():
    assert "custom instructions" not in fixture_summary()


async def test_i_in_the_retention_pane_changes_the_offline_summary(tmp_path):
    from tests.retention.test_compact_retention import figures_session

    path = figures_session(tmp_path)  # more figures than the offline summary lists
    app = create_app(path, provider="offline")
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(pilot)
        first = await compact(pilot)
        before = first.query_one("#retention-pane", RetentionPane).items
        item = before[0]
        await pilot.press("i")  # the highlighted missing item to the instructions, run again
        await pilot.pause()
        assert isinstance(app.screen, AskScreen)
        await pilot.press("y")
        await settle(pilot)
        assert isinstance(app.screen, StreamScreen) and app.screen is not first
        assert item.text in app.state.summary
        after = app.screen.query_one("#retention-pane", RetentionPane).items
        assert [i.key for i in after] == [i.key for i in before[1:]]


async def test_an_offline_run_does_not_name_a_model(tmp_path):
    path = tmp_path / "session"
    shutil.copytree(KIMI, path)
    state = make_state(path / "context.jsonl", provider=ProviderConfig(kind="offline"))
    state.set_compaction_model("kimi-k2-test")
    app = FlowHost(StreamScreen(state, show_timing=False))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        title = str(app.screen.query_one("#stream-title", Static).render())
        assert "with kimi-k2-test" not in title
        assert "offline" in title and "no model" in title
        assert "kimi-k2-test is not used" in title
