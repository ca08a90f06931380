"""The retention pane's pins and probe, through the real app (Pilot).

Pins: the pane's marks are pins; the figures show the
summary WITH the pinned block before anything is written; the diff, the write
and the written session hold the block inside the summary message; undo puts
the file back byte for byte.

Probe: ``P`` in the pane asks first (how many requests, their
size), then asks a real model server on 127.0.0.1 one question per request,
holding the summary and no compacted message; the answers sit beside the
figures; a question not answered right jumps to its message. The offline
provider is refused in one line, with no dialog.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from textual.widgets import TextArea

from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.job.probe import PROBE_PROMPT
from kimi_compact_tui.providers import ProviderConfig
from kimi_compact_tui.retention import EDITOR_BLOCK_END, EDITOR_BLOCK_START
from kimi_compact_tui.tui.retention_controller import OFFLINE_PROBE, job_probe, probe_inputs
from kimi_compact_tui.tui.screens.confirm import AskScreen, ConfirmWriteScreen
from kimi_compact_tui.tui.screens.diff import DiffScreen
from kimi_compact_tui.tui.screens.stream import StreamScreen
from kimi_compact_tui.tui.state import ReviewState
from kimi_compact_tui.tui.widgets.retention_pane import RetentionPane
from tests.factories import FORMAT_WRITERS, write_openai_json
from tests.job.test_probe import COMPACTED_ONLY, MESSAGES
from tests.loopback_server import openai_sse
from tests.tui_support import SIZE, settle, wait_until

REQUEST_1 = MESSAGES[1]["content"]
REQUEST_2 = MESSAGES[7]["content"]
#: A lossy model summary: it keeps none of the user's requests.
LOSSY = (
    "<current_focus>\nThe changelog.\n</current_focus>\n\n"
    "<important_context>\n- LOSSY-MARKER: the threshold work went on.\n</important_context>\n"
)


@pytest.fixture
def session_file(tmp_path: Path) -> Path:
    return write_openai_json(tmp_path / "chat.json", MESSAGES)


def figures(screen) -> str:
    return str(screen.query_one("#retention-figures").render())


def figure_line(text: str, label: str) -> str:
    return next(line for line in text.splitlines() if line.strip().startswith(label))


async def compacted(pilot) -> StreamScreen:
    """c, then wait for the run to end and its retention to be scored; the pane focused
    (its keys act without the focus too: tests/tui/test_tui_review_model.py)."""
    await settle(pilot)
    await pilot.press("c")
    screen = await wait_until(
        pilot,
        lambda: isinstance(pilot.app.screen, StreamScreen) and pilot.app.screen,
        "the stream screen",
    )
    pane = screen.query_one(RetentionPane)
    await wait_until(pilot, lambda: pane.report is not None, "the retention report")
    await settle(pilot)
    pane.option_list.focus()
    await pilot.pause()
    return screen


def shown_summary(diff: DiffScreen) -> str:
    """The diff screen's "summary as it will be written", as drawn."""
    from kimi_compact_tui.tui.widgets.stream_view import SummaryPane

    return diff.query_one(SummaryPane).summary


def marked_rows(pane: RetentionPane) -> int:
    """How many missing items the pane shows pinned (``●``)."""
    rows = [str(pane.option_list.get_option_at_index(i).prompt) for i in range(len(pane.items))]
    return sum(row.startswith("●") for row in rows)


def summary_message(path: Path) -> str:
    texts = [m.text() for m in load_session(path).messages if "LOSSY-MARKER" in m.text()]
    assert len(texts) == 1, texts
    return texts[0]


# ----------------------------------------------------------------------------- pins


async def test_pins_change_the_figures_then_the_diff_and_the_write_hold_the_block_and_undo(
    session_file, loopback, provider_config, review_app
):
    original = session_file.read_bytes()
    loopback.script([openai_sse([LOSSY])])
    app = review_app(session_file, provider_config("openai"))
    async with app.run_test(size=SIZE) as pilot:
        stream = await compacted(pilot)
        pane = stream.query_one(RetentionPane)
        before = figures(stream)
        assert "user requests     0/2      0% !" in before  # the lossy summary loses both
        first = pane.items[0]
        assert first.category == "user_requests" and first.text == REQUEST_1
        assert app.state.summary == LOSSY and app.state.pinned is None

        await pilot.press("a")  # pin every user request
        pinned = await wait_until(pilot, lambda: app.state.pinned, "the pins in the state")
        assert [i.text for i in pinned.items] == [REQUEST_1, REQUEST_2]
        after = figures(stream)
        # The figures are of the summary WITH the pinned block: what would be written.
        assert "user requests     2/2    100%" in after
        assert "● 2 pinned: written inside the summary (~" in after
        assert "CRITICAL" not in after
        # Both pins are marked without colour: ● and ! at the start of the row.
        row = str(pane.option_list.get_option_at_index(0).prompt)
        assert row.startswith("● ! user requests: ")
        assert app.state.summary == LOSSY  # the summary itself is kept apart
        to_write = app.state.summary_to_write
        assert to_write.startswith(LOSSY.rstrip("\n"))
        block = to_write[to_write.index(EDITOR_BLOCK_START) :]
        assert block.splitlines()[1:] == [
            f"- user requests: {REQUEST_1} (message 2; answered)",
            f"- user requests: {REQUEST_2} (message 8; answered)",
            EDITOR_BLOCK_END,
        ]

        await pilot.press("escape")  # back to the main screen: the pins stay
        await wait_until(pilot, lambda: not isinstance(app.screen, StreamScreen), "main screen")
        await pilot.press("d")
        diff = await wait_until(
            pilot,
            lambda: isinstance(app.screen, DiffScreen) and app.screen.diff and app.screen,
            "the diff",
        )
        assert EDITOR_BLOCK_START in shown_summary(diff) and REQUEST_2 in shown_summary(diff)
        added = [r for r in diff.diff.rows if r.kind == "added"]
        assert len(added) == 1 and EDITOR_BLOCK_START in added[0].message.text()
        assert "● 2 pinned" in str(diff.query_one("#diff-head").render())
        dpane = diff.query_one(RetentionPane)
        await wait_until(pilot, lambda: marked_rows(dpane) == 2, "the pins shown on the diff")
        assert "user requests     2/2    100%" in figures(diff)

        await pilot.press("escape")
        await pilot.press("w")
        dialog = await wait_until(
            pilot, lambda: isinstance(app.screen, ConfirmWriteScreen) and app.screen, "dialog"
        )
        assert "● 2 pinned items: written inside the summary" in str(
            dialog.query_one("#confirm-body").render()
        )
        await pilot.press("y")
        await settle(pilot)
        written = summary_message(session_file)
        assert EDITOR_BLOCK_START in written and EDITOR_BLOCK_END in written
        assert f"- user requests: {REQUEST_1} (message 2; answered)" in written
        # Inside the one summary message, after the model's text.
        assert written.index("LOSSY-MARKER") < written.index(EDITOR_BLOCK_START)

        await pilot.press("u")
        await pilot.pause()
        await pilot.press("y")
        await settle(pilot)
        assert session_file.read_bytes() == original


async def test_a_pin_on_the_diff_builds_the_diff_again_and_unpinning_drops_the_block(
    session_file, loopback, provider_config, review_app
):
    loopback.script([openai_sse([LOSSY])])
    app = review_app(session_file, provider_config("openai"))
    async with app.run_test(size=SIZE) as pilot:
        await compacted(pilot)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, StreamScreen), "main screen")
        await pilot.press("d")
        diff = await wait_until(
            pilot,
            lambda: isinstance(app.screen, DiffScreen) and app.screen.diff and app.screen,
            "the diff",
        )
        pane = diff.query_one(RetentionPane)
        await wait_until(pilot, lambda: pane.items, "the missing items")
        assert EDITOR_BLOCK_START not in shown_summary(diff)
        plain = diff.diff
        pane.option_list.focus()
        await pilot.press("space")  # pin the first user request, here on the diff
        await wait_until(pilot, lambda: diff.diff is not plain, "the diff built again")
        added = [r for r in diff.diff.rows if r.kind == "added"][0].message.text()
        assert f"- user requests: {REQUEST_1}" in added and REQUEST_2 not in added
        await wait_until(
            pilot, lambda: "user requests     1/2     50% !" in figures(diff), "the pinned figures"
        )
        # The diff is built again beside the pane, never over it: the focus stays
        # (it left the pane when the rebuild covered it, depending on the timing).
        assert pane.option_list.has_focus
        await pilot.press("space")  # unpin: the summary as the model wrote it
        await wait_until(pilot, lambda: app.state.pinned is None, "no pins in the state")
        await wait_until(
            pilot, lambda: EDITOR_BLOCK_START not in shown_summary(diff), "the block gone"
        )
        await wait_until(
            pilot, lambda: "user requests     0/2      0% !" in figures(diff), "the plain figures"
        )
        assert pane.option_list.has_focus
        assert app.state.summary_to_write == LOSSY


# ----------------------------------------------------------------------------- probe


async def test_probe_asks_first_sends_the_summary_and_no_compacted_message_and_jumps(
    session_file, loopback, provider_config, review_app
):
    app = review_app(session_file, provider_config("openai"))
    async with app.run_test(size=SIZE) as pilot:
        loopback.script([openai_sse([LOSSY])])
        stream = await compacted(pilot)
        pane = stream.query_one(RetentionPane)
        probe = job_probe(probe_inputs(app.state))  # the questions the pane will ask
        n = len(probe.questions)
        assert n >= 5
        edited = next(q for q in probe.questions if q.category == "edited_files")
        answers = [
            f"It was {edited.expected[0]}." if q is edited else "I do not know."
            for q in probe.questions
        ]
        loopback.script([openai_sse([a]) for a in answers])

        await pilot.press("Q")
        ask = await wait_until(
            pilot, lambda: isinstance(app.screen, AskScreen) and app.screen, "the question"
        )
        body = str(ask.query_one("#ask-body").render())
        assert probe.describe() in body  # how many requests and their estimated size
        assert len(loopback.requests) == 1  # nothing is sent before the answer
        await pilot.press("y")
        await wait_until(pilot, lambda: pane.probe is not None, "the probe's answers")

        sent = loopback.requests[1:]
        assert len(sent) == n
        for request, question in zip(sent, probe.questions, strict=True):
            messages = request.json["messages"]
            whole = "\n".join(str(m["content"]) for m in messages)
            assert "LOSSY-MARKER" in whole  # the summary is sent
            for marker in COMPACTED_ONLY:  # no compacted message is
                assert marker not in whole
            assert messages[-1]["content"] == f"{PROBE_PROMPT}\n\n{question.text}"
            assert "tools" not in request.json

        shown = figures(stream)
        assert f"Probe 1/{n} answered right" in shown
        assert figure_line(shown, "edited files").rstrip().endswith("Q 1/1")
        assert len(pane.failed) == n - 1
        options = pane.option_list
        last = str(options.get_option_at_index(options.option_count - 1).prompt)
        target = pane.failed[-1].question
        assert last.startswith(f"WRONG   Q{target.number} ")
        assert "answer: I do not know." in last

        await pilot.press("end", "enter")  # the last question not answered right
        await wait_until(pilot, lambda: not isinstance(app.screen, StreamScreen), "main screen")
        assert app.message_list.cursor == target.messages[0]


async def test_the_offline_provider_is_refused_in_one_line_without_a_dialog(
    session_file, review_app
):
    app = review_app(session_file, ProviderConfig(kind="offline"))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        stream = await compacted(pilot)
        await pilot.press("Q")
        await pilot.pause()
        assert isinstance(app.screen, StreamScreen) and app.screen is stream
        said = [n.message for n in app._notifications]
        assert said == [OFFLINE_PROBE]
        assert "\n" not in OFFLINE_PROBE
        assert not [w for w in app.workers if w.name.startswith("probe")]
        assert stream.query_one(RetentionPane).probe is None


async def test_pane_keys_are_in_the_one_table_and_help():
    from kimi_compact_tui.tui import keys

    actions = {k.action: k for k in keys.RETENTION_KEYS}
    # P edits the prompt on the main screen: the probe has a key of its own.
    assert actions["retention_probe"].key == "Q" and actions["retention_probe"].label == "Probe"
    assert keys.by_action(keys.MAIN_KEYS, "prompt").key == "P"
    assert actions["retention_pin"].label == "Pin"
    for table in (keys.STREAM_KEYS, keys.DIFF_KEYS):  # the host screens' own keys
        bound = {k.action for k in table}
        assert {"retention_probe", "retention_pin", "retention_pin_all"} <= bound


async def test_leaving_the_screen_while_asking_stops_the_probe(
    session_file, loopback, provider_config, monkeypatch, review_app
):
    from kimi_compact_tui.tui import retention_controller

    returned = threading.Event()  # set when the asking call returns (or raises)
    real = retention_controller.job_probe

    def observed(inputs, questions=None, stopped=None):
        try:
            return real(inputs, questions, stopped)
        finally:
            if questions is not None:
                returned.set()

    monkeypatch.setattr(retention_controller, "job_probe", observed)
    # A model that takes a minute over its first answer, with a 30 s read timeout.
    app = review_app(session_file, provider_config("openai", read_timeout=30.0))
    async with app.run_test(size=SIZE) as pilot:
        loopback.script([openai_sse([LOSSY])])
        await compacted(pilot)
        n = len(real(probe_inputs(app.state)).questions)
        loopback.script([openai_sse(["slow"], stall=60.0, stall_after=1)] * n)
        await pilot.press("Q")
        await wait_until(pilot, lambda: isinstance(app.screen, AskScreen), "the question")
        await pilot.press("y")
        await wait_until(pilot, lambda: len(loopback.requests) == 2, "the first question sent")
        await pilot.press("escape")  # leave the stream screen while the model is silent
        ask = await wait_until(
            pilot, lambda: isinstance(app.screen, AskScreen) and app.screen, "asked first"
        )
        assert "leaving stops it" in ask.body
        await pilot.press("y")
        # The request under way is cancelled, not waited for (30 s of read timeout).
        await wait_until(pilot, returned.is_set, "the probe to stop", timeout=10)
        assert len(loopback.requests) == 2  # nothing more was sent
        assert app.state.probe_of(app.state.summary_to_write) is None
        assert not isinstance(app.screen, StreamScreen)


async def test_e_on_pinned_items_opens_the_editor_on_the_summary_with_one_block(
    session_file, loopback, provider_config, review_app
):
    from textual.widgets import TextArea

    from kimi_compact_tui.tui.screens.edit import EditSummaryScreen

    loopback.script([openai_sse([LOSSY])])
    app = review_app(session_file, provider_config("openai"))
    async with app.run_test(size=SIZE) as pilot:
        await compacted(pilot)
        await pilot.press("a")
        await wait_until(pilot, lambda: app.state.pinned, "the pins in the state")
        await pilot.press("e")
        edit = await wait_until(
            pilot, lambda: isinstance(app.screen, EditSummaryScreen) and app.screen, "editor"
        )
        text = edit.query_one(TextArea).text
        assert text == app.state.summary_to_write
        assert text.count(EDITOR_BLOCK_START) == 1 and REQUEST_2 in text
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: app.state.summary_edited, "the edit saved")
        # The edited text holds the block; the pins (of the model's text) are done.
        assert app.state.pinned is None
        assert app.state.summary_to_write == text


def test_anchor_of_pins_holds_only_the_pinned_items_in_the_blocks_order():
    from kimi_compact_tui.compaction import make_plan
    from kimi_compact_tui.retention import retention_report
    from kimi_compact_tui.retention.anchor import anchor
    from tests.tui.test_retention_tui import KIMI

    session = load_session(KIMI)
    plan = make_plan(session.messages)
    report = retention_report(session, plan, "nothing kept")
    missing = report.missing_items()
    request = next(i for i in missing if i.category == "user_requests")
    number = next(i for i in missing if i.category == "numbers")  # not in compact --anchor
    command = next(i for i in missing if i.category == "commands")
    anchored = anchor(report, "nothing kept", pinned=[number, command, request])
    assert [i.category for i in anchored.items] == ["user_requests", "commands", "numbers"]
    again = retention_report(session, plan, anchored.text)
    kept = {i.text for c in again.categories.values() for i, _ in c.kept}
    assert {request.text, command.text, number.text} <= kept
    assert len(missing) > 3
    lines = anchored.block.splitlines()
    assert lines[0] == EDITOR_BLOCK_START and lines[-1] == EDITOR_BLOCK_END
    assert len(lines) == 5  # the three pins, nothing else the summary misses


@pytest.mark.parametrize("name", sorted(FORMAT_WRITERS))
def test_the_pinned_block_is_written_inside_every_formats_summary_and_undone(name, tmp_path):
    """The state's write with pins (what ``w`` commits), for every format: the block
    sits in the one summary message the agent resumes with; undo gives the bytes back."""
    import asyncio

    from kimi_compact_tui.formats import registry
    from kimi_compact_tui.retention import retention_report

    opened = FORMAT_WRITERS[name](tmp_path)
    fmt = load_session(opened).format
    ref = registry.resolve(opened)
    original = fmt.storage.current(ref).data  # a file's bytes, a database session's rows
    state = ReviewState(
        config=AppConfig(raw={"compaction": {"enabled": True, "type": "kimi"}}),
        provider=ProviderConfig(),
    )
    session = state.load(opened)
    prep = state.preparation
    state.set_result(asyncio.run(state.job.summarize(prep, ProviderConfig())))
    state.set_summary(LOSSY)
    base = retention_report(session, prep.plan, LOSSY)
    items = base.missing_items()[:3]
    assert items, "the lossy summary misses something to pin"
    state.set_pins(items)
    assert state.pinned is not None and state.pinned.items == tuple(items)
    state.write()
    texts = [m.text() for m in load_session(opened).messages if "LOSSY-MARKER" in m.text()]
    assert len(texts) == 1
    assert EDITOR_BLOCK_START in texts[0] and EDITOR_BLOCK_END in texts[0]
    assert texts[0].index("LOSSY-MARKER") < texts[0].index(EDITOR_BLOCK_START)
    state.restore(state.undo_offer())
    assert fmt.storage.current(ref).data == original


async def test_the_probe_asks_about_the_summary_as_written_with_its_pins(
    session_file, loopback, provider_config, review_app
):
    app = review_app(session_file, provider_config("openai"))
    async with app.run_test(size=SIZE) as pilot:
        loopback.script([openai_sse([LOSSY])])
        stream = await compacted(pilot)
        pane = stream.query_one(RetentionPane)
        await pilot.press("a")  # pin every user request
        await wait_until(pilot, lambda: app.state.pinned, "the pins in the state")
        n = len(job_probe(probe_inputs(app.state)).questions)
        loopback.script([openai_sse(["I do not know."]) for _ in range(n)])
        await pilot.press("Q")
        ask = await wait_until(
            pilot, lambda: isinstance(app.screen, AskScreen) and app.screen, "the question"
        )
        assert "the summary with its 2 pinned items" in str(ask.query_one("#ask-body").render())
        await pilot.press("y")
        await wait_until(pilot, lambda: pane.probe is not None, "the probe's answers")
        for request in loopback.requests[1:]:
            whole = "\n".join(str(m["content"]) for m in request.json["messages"])
            assert "LOSSY-MARKER" in whole and EDITOR_BLOCK_START in whole
            for marker in COMPACTED_ONLY:
                assert marker not in whole
        assert f"Probe (2 pinned) 0/{n} answered right" in figures(stream)


async def test_the_stream_screens_summary_is_the_one_written_with_its_pins(
    session_file, loopback, provider_config, review_app
):
    """The stream screen's "summary as it will be written" shows the pinned block
    as soon as items are pinned, and loses it on unpinning (it showed the
    model's text alone while the pins were written)."""
    loopback.script([openai_sse([LOSSY])])
    app = review_app(session_file, provider_config("openai"))
    async with app.run_test(size=SIZE) as pilot:
        stream = await compacted(pilot)
        live = stream.query_one("#summary-live", TextArea)
        assert EDITOR_BLOCK_START not in live.text
        await pilot.press("space")  # pin the first missing item
        await wait_until(pilot, lambda: app.state.pinned is not None, "the pins in the state")
        await wait_until(pilot, lambda: EDITOR_BLOCK_START in live.text, "the block shown")
        assert live.text.index("LOSSY-MARKER") < live.text.index(EDITOR_BLOCK_START)
        await pilot.press("space")  # unpin
        await wait_until(pilot, lambda: app.state.pinned is None, "no pins")
        await wait_until(pilot, lambda: EDITOR_BLOCK_START not in live.text, "the block gone")


async def test_a_pin_holds_for_the_write_before_its_figures_are_scored(
    session_file, loopback, provider_config, monkeypatch, review_app
):
    """A pin reached the state only once its worker had scored the figures: ``w``
    (or escape) pressed meanwhile wrote the summary without the block that the pane
    already showed as pinned."""
    import threading

    from kimi_compact_tui.job.prepare import Preparation

    gate = threading.Event()
    real = Preparation.retention

    def slow(prep, summary):
        if EDITOR_BLOCK_START in summary:
            gate.wait(10)  # the scoring of the pinned text takes its time
        return real(prep, summary)

    monkeypatch.setattr(Preparation, "retention", slow)
    loopback.script([openai_sse([LOSSY])])
    app = review_app(session_file, provider_config("openai"))
    async with app.run_test(size=SIZE) as pilot:
        await compacted(pilot)
        await pilot.press("space")  # pin, while the figures are still being scored
        await pilot.pause()
        assert app.state.pinned is not None
        assert EDITOR_BLOCK_START in (app.state.summary_to_write or "")
        gate.set()
        assert not app.state.pinned.scored
        await wait_until(pilot, lambda: app.state.pinned and app.state.pinned.scored, "scored")
