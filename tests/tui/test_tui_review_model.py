"""One review model: pins, the summary to write and the chosen candidate live in
``ReviewState`` only, and every screen shows them from there.

- The three stories: after ``f`` feedback with pins, the stream screen's "summary
  as it will be written", the write dialog and the written file told three
  different stories (the box dropped the pinned block, the question before the
  feedback said the pins "are no longer what is written", and the file had the
  block). Pins are item keys of the range: they hold on the revision and on any
  candidate chosen again, and the box, the dialog and the file agree.
- The retention pane's keys act wherever the pane is shown: ``space``, ``a`` and
  the probe key did nothing until Tab focused the pane, and nothing said so.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import OptionList, TextArea

from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.providers import ProviderConfig
from kimi_compact_tui.retention import EDITOR_BLOCK_START
from kimi_compact_tui.tui import keys
from kimi_compact_tui.tui.app import ReviewApp
from kimi_compact_tui.tui.screens.candidates import CandidatesScreen
from kimi_compact_tui.tui.screens.confirm import AskScreen, ConfirmWriteScreen
from kimi_compact_tui.tui.screens.diff import DiffScreen
from kimi_compact_tui.tui.screens.feedback import FeedbackScreen
from kimi_compact_tui.tui.screens.stream import StreamScreen
from kimi_compact_tui.tui.state import ReviewState
from tests.factories import write_openai_json
from tests.loopback_server import openai_sse
from tests.test_probe import MESSAGES
from tests.tui_support import SIZE, settle, wait_until

REQUEST_1 = MESSAGES[1]["content"]
REQUEST_2 = MESSAGES[7]["content"]
#: A lossy model summary: it keeps none of the user's requests.
LOSSY = (
    "<current_focus>\nThe changelog.\n</current_focus>\n\n"
    "<important_context>\n- LOSSY-MARKER: the threshold work went on.\n</important_context>\n"
)
#: A revision that drops the block it was sent (the model rewrote the summary).
REVISED_WITHOUT = LOSSY.replace("The changelog.", "The changelog, revised.")


def make_app(path: Path, provider: ProviderConfig) -> ReviewApp:
    return ReviewApp(ReviewState(config=AppConfig(), provider=provider), path)


def box_text(screen: StreamScreen) -> str:
    return screen.query_one("#summary-live", TextArea).text


def summary_message(path: Path) -> str:
    texts = [m.text() for m in load_session(path).messages if "LOSSY-MARKER" in m.text()]
    assert len(texts) == 1, texts
    return texts[0]


def probe_key() -> str:
    """The key that probes the summary from the stream screen (its table, or the pane's)."""
    tables = (*keys.STREAM_KEYS, *keys.RETENTION_PANE_KEYS)
    return next(k for k in tables if "probe" in k.action).key.split(",")[0]


async def finished_stream(pilot) -> StreamScreen:
    """c, then wait for the run to end and its retention to be shown (no focus moved)."""
    await settle(pilot)
    await pilot.press("c")
    screen = await wait_until(
        pilot,
        lambda: isinstance(pilot.app.screen, StreamScreen)
        and pilot.app.screen.result is not None
        and pilot.app.screen,
        "the finished stream",
    )
    options = screen.query_one("#retention-missing", OptionList)
    await wait_until(pilot, lambda: options.option_count > 1, "the missing items")
    await settle(pilot)
    return screen


async def send_feedback(pilot, text: str) -> StreamScreen:
    before = pilot.app.screen
    await pilot.press("f")
    box = await wait_until(
        pilot, lambda: isinstance(pilot.app.screen, FeedbackScreen) and pilot.app.screen, "box"
    )
    box.query_one(TextArea).load_text(text)
    await pilot.press("ctrl+s")

    def revision() -> StreamScreen | None:
        screen = pilot.app.screen
        if isinstance(screen, AskScreen):  # pins alone lose nothing: no question
            raise AssertionError(f"asked: {screen.body}")
        if isinstance(screen, StreamScreen) and screen is not before and screen.revision:
            return screen if screen.result is not None else None
        return None

    screen = await wait_until(pilot, revision, "the revision's finished stream")
    await settle(pilot)
    return screen


async def write_and_read(pilot, path: Path) -> tuple[str, str]:
    """w, then y: the dialog's body and the summary message written."""
    await pilot.press("w")
    dialog = await wait_until(
        pilot,
        lambda: isinstance(pilot.app.screen, ConfirmWriteScreen) and pilot.app.screen,
        "the write dialog",
    )
    body = str(dialog.query_one("#confirm-body").render())
    await pilot.press("y")
    await wait_until(pilot, lambda: "LOSSY-MARKER" in path.read_text(), "the write")
    await settle(pilot)
    return body, summary_message(path)


# ----------------------------------------------------------------------------- the three stories


@pytest.mark.parametrize("keeps_block", [False, True], ids=["revision-drops", "revision-keeps"])
async def test_after_feedback_with_pins_the_box_the_dialog_and_the_file_agree(
    tmp_path, loopback, provider_config, keeps_block
):
    path = write_openai_json(tmp_path / "chat.json", MESSAGES)
    app = make_app(path, provider_config("openai"))
    async with app.run_test(size=SIZE) as pilot:
        loopback.script([openai_sse([LOSSY])])
        stream = await finished_stream(pilot)
        stream.query_one("#retention-missing").focus()  # the keys' own test is below
        await pilot.press("a")  # pin every user request
        await wait_until(pilot, lambda: app.state.pinned, "the pins in the state")
        pinned_text = app.state.summary_to_write
        assert pinned_text.count(EDITOR_BLOCK_START) == 1
        # The model revises what it was sent: the summary as written, block included.
        revised = (
            pinned_text.replace("The changelog.", "The changelog, revised.")
            if keeps_block
            else REVISED_WITHOUT
        )
        loopback.script([openai_sse([revised])])
        revision = await send_feedback(pilot, "Say the changelog was revised.")
        sent = loopback.requests[1].json["messages"]
        assert sent[-2]["content"] == pinned_text  # the pins went to the model

        # One story: the box shows what is written, the pins are still pinned,
        # and the block appears once (the model's own, or the pins' again).
        await wait_until(pilot, lambda: box_text(revision) == app.state.summary_to_write, "the box")
        shown = box_text(revision)
        assert "revised" in shown and shown.count(EDITOR_BLOCK_START) == 1
        assert REQUEST_1 in shown and REQUEST_2 in shown
        body, written = await write_and_read(pilot, path)
        assert "2 pinned items" in body
        assert written.count(EDITOR_BLOCK_START) == 1 and shown.strip() in written


async def test_a_candidate_chosen_again_shows_and_writes_its_pins(
    tmp_path, loopback, provider_config
):
    """Pins on #1, a revision #2, then #1 chosen again: ``c`` shows #1 as it is
    written (with its block), the dialog says so, and the file has it."""
    path = write_openai_json(tmp_path / "chat.json", MESSAGES)
    app = make_app(path, provider_config("openai"))
    async with app.run_test(size=SIZE) as pilot:
        loopback.script([openai_sse([LOSSY]), openai_sse([REVISED_WITHOUT])])
        stream = await finished_stream(pilot)
        stream.query_one("#retention-missing").focus()  # the keys' own test is below
        await pilot.press("space")  # pin the first user request
        await wait_until(pilot, lambda: app.state.pinned, "the pins in the state")
        await send_feedback(pilot, "Say the changelog was revised.")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, StreamScreen), "main screen")
        await pilot.press("C")
        await wait_until(pilot, lambda: isinstance(app.screen, CandidatesScreen), "candidates")
        await settle(pilot)
        await pilot.press("home", "enter")  # choose #1 again
        await wait_until(pilot, lambda: app.state.summary == LOSSY, "#1 chosen")
        await pilot.press("c")  # shows the kept summary
        kept = await wait_until(
            pilot, lambda: isinstance(app.screen, StreamScreen) and app.screen, "the stream"
        )
        await wait_until(pilot, lambda: box_text(kept) == app.state.summary_to_write, "the box")
        assert EDITOR_BLOCK_START in box_text(kept) and REQUEST_1 in box_text(kept)
        body, written = await write_and_read(pilot, path)
        assert "1 pinned item" in body
        assert written.count(EDITOR_BLOCK_START) == 1 and REQUEST_1 in written


# ----------------------------------------------------------------------------- the pane's keys


async def test_the_panes_keys_act_on_the_stream_screen_without_focusing_it(
    tmp_path, loopback, provider_config
):
    path = write_openai_json(tmp_path / "chat.json", MESSAGES)
    app = make_app(path, provider_config("openai"))
    async with app.run_test(size=SIZE) as pilot:
        loopback.script([openai_sse([LOSSY])])
        stream = await finished_stream(pilot)
        options = stream.query_one("#retention-missing", OptionList)
        assert not options.has_focus  # nothing focused the pane
        # The pane says which of its items the keys act on.
        hint = str(stream.query_one("#retention-hint").render())
        assert "space: pin the highlighted item" in hint
        await pilot.press("space")
        await wait_until(pilot, lambda: app.state.pinned, "a pin without Tab")
        assert [i.text for i in app.state.pinned.items] == [REQUEST_1]
        await pilot.press("a")  # every user request
        await wait_until(
            pilot,
            lambda: app.state.pinned and len(app.state.pinned.items) == 2,
            "both user requests pinned",
        )
        await pilot.press(probe_key())
        await wait_until(pilot, lambda: isinstance(app.screen, AskScreen), "the probe's question")
        await pilot.press("n")


async def test_the_panes_keys_act_on_the_diff_screen_without_focusing_it(
    tmp_path, loopback, provider_config
):
    path = write_openai_json(tmp_path / "chat.json", MESSAGES)
    app = make_app(path, provider_config("openai"))
    async with app.run_test(size=SIZE) as pilot:
        loopback.script([openai_sse([LOSSY])])
        await finished_stream(pilot)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, StreamScreen), "main screen")
        await pilot.press("d")
        diff = await wait_until(
            pilot,
            lambda: isinstance(app.screen, DiffScreen) and app.screen.diff and app.screen,
            "the diff",
        )
        options = diff.query_one("#retention-missing", OptionList)
        await wait_until(pilot, lambda: options.option_count > 1, "the missing items")
        assert not options.has_focus
        await pilot.press("space")
        await wait_until(pilot, lambda: app.state.pinned, "a pin without Tab")
        await wait_until(
            pilot, lambda: EDITOR_BLOCK_START in app.state.summary_to_write, "the block"
        )
        await pilot.press("space")  # the same item: unpinned
        await wait_until(pilot, lambda: app.state.pinned is None, "unpinned")


# ----------------------------------------------------------------------------- the model itself


def test_pins_are_item_keys_of_the_range_held_across_summaries_and_ended_by_an_edit(tmp_path):
    """No Textual: the state alone. A pin holds on any summary of the range (the
    block holds the items that summary misses, none when it keeps them), an edit
    or a boundary move ends it, and every change is signalled once to watchers."""
    from kimi_compact_tui.providers import StreamResult

    path = write_openai_json(tmp_path / "chat.json", MESSAGES)
    state = ReviewState(config=AppConfig(), provider=ProviderConfig())
    state.load(path)
    seen: list[str | None] = []
    stop = state.watch(lambda: seen.append(state.summary_to_write))
    state.set_result(StreamResult(status="complete", summary=LOSSY))
    first = state.retention(LOSSY).missing_items()[0]
    assert first.text == REQUEST_1
    state.set_pins([first])
    assert seen[-1] == state.summary_to_write and REQUEST_1 in seen[-1]
    assert state.pins_line() == "1 pinned item: written inside the summary"

    # Another summary of the same range (a revision, a candidate): the pin holds.
    state.set_result(StreamResult(status="complete", summary=REVISED_WITHOUT))
    assert EDITOR_BLOCK_START in state.summary_to_write and REQUEST_1 in state.summary_to_write
    # One that keeps the item itself: pinned, and no block is added.
    keeps = REVISED_WITHOUT + f"\n- the user asked: {REQUEST_1}\n"
    state.set_result(StreamResult(status="complete", summary=keeps))
    assert state.summary_to_write == keeps
    assert state.pins_line() == "1 pinned item: the summary already holds them"

    state.set_summary(keeps + "\nedited")  # an edit ends the pins
    assert state.pinned_keys() == frozenset() and state.pins_line() is None
    state.set_result(StreamResult(status="complete", summary=LOSSY))
    state.set_pins([first])
    state.set_boundary(5)  # another range: the pins were of the old one
    assert state.pinned is None and state.summary_to_write is None
    stop()
    count = len(seen)
    state.set_boundary(None)
    assert len(seen) == count  # stopped watching
