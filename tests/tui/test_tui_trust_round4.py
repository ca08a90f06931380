"""What a new user hit in the TUI on round 4 (issue 32, items 4, 5 and 6, and the
TUI parts of 3): each test failed on the code before the fix.

- At 80x24 the retention pane under a finished stream shows its missing items;
  ``space``/``a`` are not offered when nothing is missing; the main footer shows
  ``w``, ``d`` and ``e`` at 80 columns once a summary exists.
- ``P`` edits the prompt on the main screen; the probe has its own key (``Q``),
  and the number of questions is chosen before anything is sent.
- After a failed revision, quitting asks while earlier runs are kept as
  candidates; the quit question names the pins.
- Feedback can be given on a highlighted candidate.
- The probe's report is kept per candidate (by the summary probed).
- The sample copy's notice is short and brief at 80x24.
"""

from __future__ import annotations

import re
from pathlib import Path

from textual.widgets import OptionList, TextArea
from textual.widgets._footer import FooterKey

from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.providers import ProviderConfig
from kimi_compact_tui.tui.app import NOTICE_SECONDS, ReviewApp, create_app
from kimi_compact_tui.tui.retention_controller import job_probe, probe_inputs, step_count
from kimi_compact_tui.tui.screens.candidates import CandidatesScreen
from kimi_compact_tui.tui.screens.confirm import AskScreen
from kimi_compact_tui.tui.screens.feedback import FeedbackScreen
from kimi_compact_tui.tui.screens.stream import StreamScreen
from kimi_compact_tui.tui.state import ReviewState
from kimi_compact_tui.tui.widgets.footer import KeysFooter
from tests.factories import write_openai_json
from tests.loopback_server import Reply, openai_sse
from tests.test_probe import MESSAGES
from tests.tui_support import SMALL, settle, wait_until

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_sessions" / "kimi-debugging-session"
LOSSY = (
    "<current_focus>\nThe changelog.\n</current_focus>\n\n"
    "<important_context>\n- LOSSY-MARKER: the threshold work went on.\n</important_context>\n"
)


def make_app(path: Path, provider: ProviderConfig) -> ReviewApp:
    return ReviewApp(ReviewState(config=AppConfig(), provider=provider), path)


async def finished(pilot) -> StreamScreen:
    await settle(pilot)
    await pilot.press("c")
    screen = await wait_until(
        pilot,
        lambda: isinstance(pilot.app.screen, StreamScreen)
        and pilot.app.screen.result is not None
        and pilot.app.screen,
        "the finished stream",
    )
    state = pilot.app.state
    await wait_until(pilot, lambda: state.scored(screen.subject()), "the retention report")
    await settle(pilot)
    return screen


async def back_to_main(pilot) -> None:
    await pilot.press("escape")
    await wait_until(pilot, lambda: not isinstance(pilot.app.screen, StreamScreen), "main")
    await settle(pilot)


def footer_actions(screen) -> set[str]:
    footer = screen.query_one(KeysFooter)
    return {k.action for k in footer.query(FooterKey) if k.region.area}


# ----------------------------------------------------------------------------- layout and footer


async def test_at_80x24_the_finished_streams_pane_shows_its_missing_items(
    tmp_path, loopback, provider_config
):
    path = write_openai_json(tmp_path / "chat.json", MESSAGES)
    app = make_app(path, provider_config("openai"))
    async with app.run_test(size=SMALL) as pilot:
        loopback.script([openai_sse([LOSSY])])
        stream = await finished(pilot)
        pane = stream.query_one("#retention-pane")
        options = stream.query_one("#retention-missing", OptionList)
        await wait_until(pilot, lambda: options.option_count > 4, "the missing items")
        await settle(pilot)
        # Four rows of missing items at least (it was about four rows for the whole pane,
        # the figures first: no item could be seen).
        assert options.region.height >= 4, options.region
        assert pane.region.bottom <= stream.query_one(KeysFooter).region.y
        hint = stream.query_one("#retention-hint")
        assert hint.region.height == 1 and "space: pin" in str(hint.render())
        # The keys that act on the pane are in the footer.
        assert {"retention_pin", "write"} <= footer_actions(stream)


async def test_space_and_a_are_not_offered_when_nothing_is_missing(
    tmp_path, loopback, provider_config
):
    from kimi_compact_tui.retention.anchor import anchor

    path = write_openai_json(tmp_path / "chat.json", MESSAGES)
    scratch = ReviewState(config=AppConfig(), provider=ProviderConfig())
    scratch.load(path)
    everything = anchor(scratch.retention(LOSSY), LOSSY, 100_000).text  # keeps every item
    app = make_app(path, provider_config("openai"))
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        loopback.script([openai_sse([everything])])
        stream = await finished(pilot)
        assert app.state.scored(stream.subject()).missing_items() == []
        options = stream.query_one("#retention-missing", OptionList)
        assert stream.check_action("retention_pin", ()) is False
        assert stream.check_action("retention_pin_all", ()) is False
        assert not {"retention_pin", "retention_pin_all"} & footer_actions(stream)
        assert "nothing is missing" in str(options.get_option_at_index(0).prompt)
        assert "Q: probe" in str(stream.query_one("#retention-hint").render())


async def test_the_main_footer_shows_write_diff_and_edit_at_80_columns_once_a_summary_exists():
    app = create_app(SAMPLE, provider="offline")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        assert "compact" in footer_actions(app.screen)
        await finished(pilot)
        await back_to_main(pilot)
        shown = footer_actions(app.screen)
        assert {"write", "diff", "edit"} <= shown, shown
        assert {"help", "quit"} <= shown


# ----------------------------------------------------------------------------- the probe


async def test_the_probe_key_is_not_the_prompt_key_and_the_count_is_chosen(
    tmp_path, loopback, provider_config
):
    path = write_openai_json(tmp_path / "chat.json", MESSAGES)
    app = make_app(path, provider_config("openai"))
    async with app.run_test(size=SMALL) as pilot:
        loopback.script([openai_sse([LOSSY])])
        await finished(pilot)
        available = len(job_probe(probe_inputs(app.state, 100)).questions)
        assert available > 3
        await pilot.press("Q")
        ask = await wait_until(
            pilot, lambda: isinstance(app.screen, AskScreen) and app.screen, "the question"
        )
        assert "+: more · -: fewer" in ask.body
        first = int(re.search(r"(\d+) questions? ·", ask.body).group(1))
        fewer = step_count(first, more=False)
        assert fewer < first
        await pilot.press("minus")  # fewer: asked again, with fewer questions
        again = await wait_until(
            pilot,
            lambda: isinstance(app.screen, AskScreen) and app.screen is not ask and app.screen,
            "asked again",
        )
        assert f"Send {fewer} requests" in again.body and f"{fewer} questions" in again.body
        loopback.script([openai_sse(["I do not know."]) for _ in range(fewer)])
        await pilot.press("y")
        text = app.state.summary_to_write
        await wait_until(pilot, lambda: app.state.probe_of(text), "the probe's report")
        assert len(loopback.requests) == 1 + fewer  # the run, then the questions
        assert len(app.state.probe_of(text).answers) == fewer


async def test_a_probe_report_is_kept_per_candidate(tmp_path, loopback, provider_config):
    """A probe of #1, then a revision #2 (no probe of its own), then #1 chosen again:
    its report is shown again, not lost and not shown for #2."""
    path = write_openai_json(tmp_path / "chat.json", MESSAGES)
    revised = LOSSY.replace("The changelog.", "The changelog, revised.")
    app = make_app(path, provider_config("openai"))
    async with app.run_test(size=SMALL) as pilot:
        loopback.script([openai_sse([LOSSY])])
        first = await finished(pilot)
        n = len(job_probe(probe_inputs(app.state)).questions)
        loopback.script([openai_sse(["I do not know."]) for _ in range(n)])
        await pilot.press("Q")
        await wait_until(pilot, lambda: isinstance(app.screen, AskScreen), "the question")
        await pilot.press("y")
        await wait_until(pilot, lambda: app.state.probe_of(LOSSY), "the probe of #1")
        figures = first.query_one("#retention-figures")
        await wait_until(pilot, lambda: "Probe 0/" in str(figures.render()), "shown")

        loopback.script([openai_sse([revised])])
        await pilot.press("f")
        box = await wait_until(
            pilot, lambda: isinstance(app.screen, FeedbackScreen) and app.screen, "box"
        )
        box.query_one(TextArea).load_text("Say it was revised.")
        await pilot.press("ctrl+s")
        second = await wait_until(
            pilot,
            lambda: isinstance(app.screen, StreamScreen)
            and app.screen.revision
            and app.screen.result
            and app.screen,
            "the revision",
        )
        await wait_until(pilot, lambda: app.state.scored(revised), "its retention")
        await settle(pilot)
        assert "Probe" not in str(second.query_one("#retention-figures").render())
        await back_to_main(pilot)
        await pilot.press("C")
        await wait_until(pilot, lambda: isinstance(app.screen, CandidatesScreen), "candidates")
        await pilot.press("home", "enter")
        await wait_until(pilot, lambda: app.state.summary == LOSSY, "#1 chosen")
        await pilot.press("c")
        kept = await wait_until(
            pilot, lambda: isinstance(app.screen, StreamScreen) and app.screen, "#1 shown"
        )
        figures = kept.query_one("#retention-figures")
        await wait_until(pilot, lambda: "Probe 0/" in str(figures.render()), "#1's probe")


# ----------------------------------------------------------------------------- leaving


async def test_after_a_failed_revision_quit_asks_about_the_earlier_runs(
    tmp_path, loopback, provider_config
):
    path = write_openai_json(tmp_path / "chat.json", MESSAGES)
    app = make_app(path, provider_config("openai"))
    async with app.run_test(size=SMALL) as pilot:
        loopback.script(
            [openai_sse([LOSSY]), Reply.error(400, {"error": {"message": "bad request"}})]
        )
        await finished(pilot)
        await pilot.press("f")
        box = await wait_until(
            pilot, lambda: isinstance(app.screen, FeedbackScreen) and app.screen, "box"
        )
        box.query_one(TextArea).load_text("Shorter.")
        await pilot.press("ctrl+s")
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, StreamScreen)
            and app.screen.revision
            and app.screen.result is not None,
            "the failed revision",
        )
        assert app.state.summary is None  # the failed run left nothing to write
        await back_to_main(pilot)
        await pilot.press("q")
        ask = await wait_until(
            pilot, lambda: isinstance(app.screen, AskScreen) and app.screen, "asked"
        )
        assert "1 earlier run" in ask.body and "#1" in ask.body
        await pilot.press("n")
        await settle(pilot)
        assert app.is_running


async def test_the_quit_question_names_the_pins(tmp_path, loopback, provider_config):
    path = write_openai_json(tmp_path / "chat.json", MESSAGES)
    app = make_app(path, provider_config("openai"))
    async with app.run_test(size=SMALL) as pilot:
        loopback.script([openai_sse([LOSSY])])
        await finished(pilot)
        await pilot.press("a")
        await wait_until(pilot, lambda: app.state.pinned, "pinned")
        await back_to_main(pilot)
        await pilot.press("q")
        ask = await wait_until(
            pilot, lambda: isinstance(app.screen, AskScreen) and app.screen, "asked"
        )
        assert "with its 2 pinned items is not written" in ask.body


# ----------------------------------------------------------------------------- feedback


async def test_feedback_on_a_highlighted_candidate():
    app = create_app(SAMPLE, provider="offline")
    async with app.run_test(size=SMALL) as pilot:
        await finished(pilot)
        await back_to_main(pilot)
        await pilot.press("C")
        await wait_until(pilot, lambda: isinstance(app.screen, CandidatesScreen), "candidates")
        await pilot.press("f")
        box = await wait_until(
            pilot, lambda: isinstance(app.screen, FeedbackScreen) and app.screen, "box"
        )
        assert box.number == 1
        box.query_one(TextArea).load_text("Keep the failing test name.")
        await pilot.press("ctrl+s")
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, StreamScreen)
            and app.screen.revision
            and app.screen.result is not None,
            "the revision",
        )
        assert app.state.runs.links[2].parent == 1


# ----------------------------------------------------------------------------- wording


async def test_the_sample_copy_notice_is_short_and_brief_at_80x24():
    app = create_app(SAMPLE, provider="offline")
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await settle(pilot)
        notices = await wait_until(
            pilot,
            lambda: [n for n in app._notifications if "opened a copy" in n.message],
            "the notice",
        )
        assert notices[0].timeout <= NOTICE_SECONDS <= 4
        assert len(notices[0].message) <= 80 and "\n" not in notices[0].message


async def test_feedback_on_an_edit_asks_in_words_that_read(tmp_path, loopback, provider_config):
    path = write_openai_json(tmp_path / "chat.json", MESSAGES)
    app = make_app(path, provider_config("openai"))
    async with app.run_test(size=SMALL) as pilot:
        loopback.script([openai_sse([LOSSY])])
        await finished(pilot)
        await back_to_main(pilot)
        app.state.set_summary(LOSSY + "\nedited by hand")
        await pilot.press("c")
        await wait_until(pilot, lambda: isinstance(app.screen, StreamScreen), "the kept run")
        await settle(pilot)
        await pilot.press("f")
        box = await wait_until(
            pilot, lambda: isinstance(app.screen, FeedbackScreen) and app.screen, "box"
        )
        box.query_one(TextArea).load_text("Shorter.")
        await pilot.press("ctrl+s")
        ask = await wait_until(
            pilot, lambda: isinstance(app.screen, AskScreen) and app.screen, "asked"
        )
        # It read "your edit go to the model with the summary, but are no longer ...".
        assert ask.body.startswith("Your edit goes to the model as the summary it revises.")
        assert "in place of your edit" in ask.body
