"""Revise by feedback in the TUI: ``f`` on the stream screen
after a finished summary opens the feedback box; sent, the revision streams as
a new candidate linked to the one it revises. The request is the compaction
request for the range, unchanged, then each summary (assistant) and feedback
(user) of the chain; a revision of a summary whose range or session changed
is refused before any request; revisions are runs like any other (kept per
load and boundary, written with backup and undo, asked about before they are
dropped); the candidates screen shows each chain."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import OptionList, Static, TextArea

from kimi_compact_tui.compaction.summary import COMPACTED_NOTICE
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.providers import ProviderConfig
from kimi_compact_tui.tui.screens.candidates import CandidatesScreen
from kimi_compact_tui.tui.screens.confirm import AskScreen, ConfirmWriteScreen
from kimi_compact_tui.tui.screens.feedback import FeedbackScreen
from kimi_compact_tui.tui.screens.picker import PickerScreen
from kimi_compact_tui.tui.screens.restore import RestoreConfirmScreen
from kimi_compact_tui.tui.screens.stream import StreamScreen
from kimi_compact_tui.tui.state import ReviewState
from tests.factories import SUMMARY, write_kimi_session, write_openai_json
from tests.loopback_server import openai_sse
from tests.tui_support import SIZE, SMALL, compact, screen_text, settle, static_text, wait_until

REVISED = SUMMARY.replace("Finish the parser fix", "Finish the parser fix in db.py")
AGAIN = REVISED + "\n\nThe changelog is done."
F1 = "Name the file that was fixed."
F2 = "keep the changelog\nand say it is done"


async def feedback(pilot, text: str) -> StreamScreen:
    """``f``, type ``text``, ctrl+s: the revision's stream screen, once it ended."""
    before = pilot.app.screen
    await pilot.press("f")
    box = await wait_until(
        pilot, lambda: isinstance(pilot.app.screen, FeedbackScreen) and pilot.app.screen, "box"
    )
    box.query_one(TextArea).load_text(text)
    await pilot.press("ctrl+s")

    def revision() -> StreamScreen | None:
        screen = pilot.app.screen
        if isinstance(screen, StreamScreen) and screen is not before and screen.revision:
            return screen
        return None

    screen = await wait_until(pilot, revision, "the revision's stream screen")
    await settle(pilot)
    return screen


def sent(loopback, n: int) -> list[dict]:
    return json.loads(loopback.requests[n].body)["messages"]


def summary_texts(path: Path) -> list[str]:
    return [m.text() for m in load_session(path).messages if COMPACTED_NOTICE in m.text()]


# ----------------------------------------------------------------------------- loopback


async def test_the_revision_request_is_the_compaction_request_then_summary_then_feedback(
    tmp_path, loopback, provider_config, review_app
) -> None:
    """Two rounds through the app: each request is the compaction request's two
    messages, unchanged, then each summary as the assistant and each feedback as
    the user, in order; toolless. ``r`` on a revision sends the same revision
    again. Each revision is a candidate linked to its parent and becomes the
    summary to write; it is written with a backup and undone."""
    loopback.script(
        [openai_sse([SUMMARY]), openai_sse([REVISED]), openai_sse([REVISED]), openai_sse([AGAIN])]
    )
    path = write_kimi_session(tmp_path / "s")
    original = path.read_bytes()
    app = review_app(path, provider_config("openai"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        first = await compact(pilot)
        assert first.result.summary == SUMMARY
        assert first.check_action("feedback", ()) is True

        one = await feedback(pilot, F1)
        assert one.result.status == "complete" and one.result.summary == REVISED
        assert "Revising #1 (round 1)" in static_text(one)
        base = sent(loopback, 0)
        assert len(base) == 2
        assert sent(loopback, 1) == [
            *base,
            {"role": "assistant", "content": SUMMARY},
            {"role": "user", "content": F1},
        ]

        await pilot.press("r")  # on a revision, r sends the same revision again
        await wait_until(pilot, lambda: isinstance(app.screen, AskScreen), "the rerun's ask")
        await pilot.press("y")
        again = await wait_until(
            pilot,
            lambda: isinstance(app.screen, StreamScreen) and app.screen is not one and app.screen,
            "the revision run again",
        )
        await settle(pilot)
        assert again.revision == one.revision and again.result.summary == REVISED
        assert sent(loopback, 2) == sent(loopback, 1)
        assert app.state.runs.links[3] == app.state.runs.links[2]

        two = await feedback(pilot, F2)  # the revision revised: the chain stays in order
        assert two.result.summary == AGAIN
        assert "Revising #3 (round 2)" in static_text(two)
        assert sent(loopback, 3) == [
            *base,
            {"role": "assistant", "content": SUMMARY},
            {"role": "user", "content": F1},
            {"role": "assistant", "content": REVISED},
            {"role": "user", "content": F2},
        ]
        assert all("tools" not in json.loads(r.body) for r in loopback.requests)
        assert len(loopback.requests) == 4

        runs = app.state.runs
        assert [c.summary for c in runs.candidates] == [SUMMARY, REVISED, REVISED, AGAIN]
        assert (runs.links[2].parent, runs.links[2].feedback) == (1, F1)
        assert (runs.links[4].parent, runs.links[4].feedback) == (3, F2)
        assert 1 not in runs.links and runs.chain(4) == [1, 3, 4]
        assert app.state.summary == AGAIN and app.state.writable

        await pilot.press("w")  # written like any summary: confirmed, backup, undo
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmWriteScreen), "confirm")
        await pilot.press("y")
        await settle(pilot)
        texts = summary_texts(path)
        assert len(texts) == 1 and AGAIN in texts[0]
        assert path.with_name("context_1.jsonl").read_bytes() == original

        await pilot.press("u")
        await wait_until(pilot, lambda: isinstance(app.screen, RestoreConfirmScreen), "undo")
        await pilot.press("y")
        await settle(pilot)
        assert path.read_bytes() == original


async def test_feedback_on_an_edit_sends_the_edit(
    tmp_path, loopback, provider_config, review_app
) -> None:
    """The summary feedback is on is the one the reviewer has: an edit is sent as
    the assistant's message, not the text the model wrote."""
    loopback.script([openai_sse([SUMMARY]), openai_sse([REVISED])])
    path = write_kimi_session(tmp_path / "s")
    app = review_app(path, provider_config("openai"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await compact(pilot)
        await pilot.press("escape")
        await settle(pilot)
        edited = SUMMARY.replace("Finish the parser fix", "Ship the parser fix")
        app.state.set_summary(edited)
        kept = await compact(pilot)  # c shows the kept summary: the edit
        assert kept.view.text == edited
        # The edit lives only in the summary the revision replaces: asked first,
        # and "n" sends nothing (failed before: the edit was replaced unasked).
        await pilot.press("f")
        box = await wait_until(
            pilot, lambda: isinstance(pilot.app.screen, FeedbackScreen) and pilot.app.screen, "box"
        )
        box.query_one(TextArea).load_text(F1)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, AskScreen), "the question")
        await pilot.press("n")
        await wait_until(pilot, lambda: pilot.app.screen is kept, "back on the stream")
        assert len(loopback.requests) == 1 and app.state.summary == edited
        await pilot.press("f")
        box = await wait_until(
            pilot, lambda: isinstance(pilot.app.screen, FeedbackScreen) and pilot.app.screen, "box"
        )
        box.query_one(TextArea).load_text(F1)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, AskScreen), "the question")
        await pilot.press("y")
        await wait_until(pilot, lambda: len(loopback.requests) == 2, "the revision's request")
        assert sent(loopback, 1)[2:] == [
            {"role": "assistant", "content": edited},
            {"role": "user", "content": F1},
        ]


async def test_a_session_changed_on_disk_refuses_the_revision_before_any_request(
    tmp_path, loopback, provider_config, review_app
) -> None:
    loopback.script([openai_sse([SUMMARY]), openai_sse([REVISED])])
    path = write_kimi_session(tmp_path / "s")
    app = review_app(path, provider_config("openai"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await compact(pilot)
        with path.open("a", encoding="utf-8") as f:  # the agent goes on meanwhile
            f.write(json.dumps({"role": "user", "content": "one more thing"}) + "\n")
        refused = await feedback(pilot, F1)
        assert refused.result is None and refused.refused is not None
        assert "the session changed on disk" in refused.refused
        text = static_text(refused)
        assert "not started" in text and "nothing was sent" in text
        assert len(loopback.requests) == 1
        assert len(app.state.runs) == 1 and app.state.summary == SUMMARY


async def test_a_moved_boundary_refuses_the_revision_before_any_request(
    tmp_path, loopback, provider_config, review_app
) -> None:
    """A revision asked for a run made on another range (the boundary moved
    since) is refused, saying both ranges; nothing is sent."""
    loopback.script([openai_sse([SUMMARY]), openai_sse([REVISED])])
    path = write_kimi_session(tmp_path / "s")
    app = review_app(path, provider_config("openai"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await compact(pilot)
        link = app.state.revision_link(1, SUMMARY, F1)
        await pilot.press("escape")
        await settle(pilot)
        app.state.set_boundary(2)  # compact messages 1-3 now
        refused = StreamScreen(app.state, revision=link)
        await app.push_screen(refused)
        await settle(pilot)
        assert refused.result is None and refused.refused is not None
        assert "the boundary moved" in refused.refused
        assert "the range is now 1–3" in refused.refused
        assert "nothing was sent" in static_text(refused)
        assert len(loopback.requests) == 1 and len(app.state.runs) == 1


# ----------------------------------------------------------------------------- offline

FAILING = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Make the cache key include the tenant slug."},
    {
        "role": "assistant",
        "content": "Running the tests.",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "Shell", "arguments": '{"command": "pytest -q"}'},
            }
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "FAILED tests/test_cache.py::test_slug_in_key - AssertionError: keys collide\n"
        "1 failed, 3 passed in 0.2s",
    },
    {
        "role": "assistant",
        "content": "Fixed the key.",
        "tool_calls": [
            {
                "id": "c2",
                "type": "function",
                "function": {"name": "Shell", "arguments": '{"command": "pytest -q"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c2", "content": "4 passed in 0.2s"},
    {"role": "assistant", "content": "All green now."},
    {"role": "user", "content": "Good. Now the docs."},
    {"role": "assistant", "content": "Docs updated."},
]


async def test_offline_revision_keeps_what_the_feedback_names(tmp_path, review_app) -> None:
    """The offline provider revises too: "add the failing test name" makes it
    keep that item. The revision is a candidate linked to its parent, and the
    candidates screen shows the chain and compares the two."""
    path = write_openai_json(tmp_path / "failing.json", FAILING)
    app = review_app(path, ProviderConfig(kind="offline"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        first = await compact(pilot)
        assert "test_slug_in_key" not in first.result.summary
        revision = await feedback(pilot, "Add the failing test name.")
        assert revision.result.offline
        assert "tests/test_cache.py::test_slug_in_key" in revision.result.summary
        assert app.state.summary == revision.result.summary
        assert app.state.runs.links[2].parent == 1
        await pilot.press("escape")
        await settle(pilot)

        await pilot.press("C")
        screen = await wait_until(
            pilot, lambda: isinstance(app.screen, CandidatesScreen) and app.screen, "candidates"
        )
        await settle(pilot)
        assert screen.marked == [1, 2]
        rows = [str(o.prompt) for o in screen.query_one(OptionList)._options]
        assert "revises #" not in rows[0]
        assert "↳ revises #1: “Add the failing test name.”" in rows[1]
        comparison = screen.comparison()
        assert comparison is not None
        added = [line for line in comparison.diff if line.startswith("+")]
        assert any("test_slug_in_key" in line for line in added)
        assert "revises #1:" in str(screen.query_one("#right-report", Static).render())


async def test_offline_feedback_keeps_the_summary_and_says_no_model_is_involved(
    tmp_path, review_app
) -> None:
    """Issue 31 item 17: with no model the feedback box says the summary is
    kept and only a rule applies; the revision starts with the summary under
    review, adds what "keep" names, and changes nothing for the rest."""
    path = write_openai_json(tmp_path / "failing.json", FAILING)
    app = review_app(path, ProviderConfig(kind="offline"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        first = await compact(pilot)
        await pilot.press("f")
        box = await wait_until(
            pilot, lambda: isinstance(app.screen, FeedbackScreen) and app.screen, "box"
        )
        await settle(pilot)
        shown = screen_text(app)
        assert "No model (offline)" in shown and "The model gets" not in shown, shown
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is not box
        revision = await feedback(pilot, 'keep "deploy after the migration". Write it in French.')
        kept = first.result.summary
        revised = revision.result.summary
        assert revised.startswith(kept.rsplit("</important_context>", 1)[0].rstrip("\n"))
        assert "Kept verbatim as the feedback asks" in revised
        assert "  - deploy after the migration" in revised
        assert "French" not in revised


async def test_revisions_are_asked_about_and_kept_per_boundary(tmp_path, review_app) -> None:
    """After a revision, moving the boundary and opening another session ask
    first (the revision is the summary they would drop); the revision stays a
    candidate of its own range only."""
    path = write_kimi_session(tmp_path / "s")
    other = write_kimi_session(tmp_path / "other")
    app = review_app(path, ProviderConfig(kind="offline"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await compact(pilot)
        await feedback(pilot, "keep the changelog")
        await pilot.press("escape")
        await settle(pilot)
        assert app.state.current_run == 2 and app.state.has_work

        await pilot.press("o")
        picker = await wait_until(
            pilot, lambda: isinstance(app.screen, PickerScreen) and app.screen, "picker"
        )
        picker.dismiss(other)
        ask = await wait_until(pilot, lambda: isinstance(app.screen, AskScreen) and app.screen, "o")
        assert "The summary (revision #2 of #1, 1 round of feedback) is not written" in str(
            ask.body
        )
        await pilot.press("n")
        await settle(pilot)
        assert app.state.session_path == path and len(app.state.runs) == 2

        app.main_screen.message_list.move_to(2)
        await pilot.press("b")
        ask = await wait_until(
            pilot, lambda: isinstance(app.screen, AskScreen) and app.screen, "the boundary's ask"
        )
        assert "discards the summary (revision #2 of #1, 1 round of feedback)" in str(ask.body)
        await pilot.press("y")
        await settle(pilot)
        assert app.state.summary is None and len(app.state.runs) == 2
        await pilot.press("C")
        await wait_until(pilot, lambda: isinstance(app.screen, CandidatesScreen), "candidates")
        await settle(pilot)
        await pilot.press("enter")  # the revision, highlighted: of another range
        await settle(pilot)
        assert app.state.summary is None
        assert app.last_error is not None and "another range" in app.last_error


async def test_feedback_needs_a_finished_summary_and_fits_80x24(tmp_path, review_app) -> None:
    """``f`` is in the stream screen's footer, whole, at 80x24 once a summary is
    finished; ``?`` lists it and the feedback box's keys."""
    path = write_kimi_session(tmp_path / "s")
    app = review_app(path, ProviderConfig(kind="offline"))
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await compact(pilot)
        footer = screen_text(app).rstrip("\n").split("\n")[-1]
        assert "f Feedback" in footer and "r Run again" in footer, footer  # r stays at 80x24
        await pilot.press("f")
        box = await wait_until(
            pilot, lambda: isinstance(app.screen, FeedbackScreen) and app.screen, "box"
        )
        await pilot.press("ctrl+s")  # empty: not sent
        await settle(pilot)
        assert app.screen is box
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, StreamScreen) and len(app.state.runs) == 1
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        table = app.screen.query_one("#help-table")
        rows = [" ".join(str(cell) for cell in table.get_row_at(i)) for i in range(table.row_count)]
        assert any("Feedback (f on the stream)" in row for row in rows), rows
        assert any(row.startswith("f ") and "feedback on this summary" in row for row in rows)
        assert any(row.startswith("ctrl+s ") and "send the feedback" in row for row in rows)


async def test_feedback_is_shown_as_text_not_markup(tmp_path, review_app) -> None:
    """Feedback is the reviewer's text: the chain's row and report show it as
    typed, brackets and all, never parsed as markup."""
    path = write_kimi_session(tmp_path / "s")
    app = review_app(path, ProviderConfig(kind="offline"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await compact(pilot)
        await feedback(pilot, "[bold]keep[/] the changelog [link=x]")
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("C")
        await wait_until(pilot, lambda: isinstance(app.screen, CandidatesScreen), "candidates")
        await settle(pilot)
        shown = screen_text(app)
        assert "↳ revises #1: “[bold]keep[/] the changelog [link=x]”" in shown, shown


async def test_rounds_that_do_not_fit_are_left_out_and_said(
    tmp_path, loopback, provider_config, review_app
) -> None:
    """With a context size that holds the compaction request and one round, the
    third run sends only the latest summary and feedback, and says that the
    oldest round was left out."""
    from kimi_compact_tui.compaction.request import RevisionRound
    from kimi_compact_tui.job.revise import ANSWER_ROOM

    long_summary = SUMMARY + "\n" + "padding words " * 800
    loopback.script([openai_sse([long_summary]), openai_sse([REVISED]), openai_sse([AGAIN])])
    path = write_kimi_session(tmp_path / "s")
    probe = ReviewState(config=AppConfig())
    probe.load(path)
    assert probe.preparation is not None and probe.preparation.request is not None
    base = probe.preparation.request.estimated_input_tokens()
    room = RevisionRound(REVISED, F2).estimated_tokens() + 50
    assert RevisionRound(long_summary, F1).estimated_tokens() > room
    app = review_app(path, provider_config("openai", num_ctx=ANSWER_ROOM + base + room))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await compact(pilot)
        one = await feedback(pilot, F1)  # one round: always sent
        assert "left out" not in static_text(one)
        two = await feedback(pilot, F2)
        assert sent(loopback, 2)[2:] == [
            {"role": "assistant", "content": REVISED},
            {"role": "user", "content": F2},
        ]
        assert "the 1 oldest feedback round was left out" in static_text(two)
        assert app.state.runs.links[3].rounds[0].summary == long_summary  # the chain is whole
