"""The retention pane and the candidates screen, in a tiny app of their own
(Pilot), plus one snapshot each (fixed size, no clock)."""

from __future__ import annotations

from pathlib import Path

from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widgets import OptionList, RichLog, Static

from kimi_compact_tui.compaction import make_plan
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.providers import ProviderConfig, StreamResult
from kimi_compact_tui.retention import (
    EDITOR_BLOCK_END,
    EDITOR_BLOCK_START,
    CandidateSet,
    retention_report,
)
from kimi_compact_tui.tui import keys
from kimi_compact_tui.tui.flow import AddInstructions, JumpToMessage, OpenEditor
from kimi_compact_tui.tui.retention_controller import RetentionController
from kimi_compact_tui.tui.screens.candidates import CandidatesScreen
from kimi_compact_tui.tui.screens.retention_host import RetentionHost
from kimi_compact_tui.tui.state import ReviewState
from kimi_compact_tui.tui.widgets.retention_pane import RetentionPane
from tests.tui_support import wait_until

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "retention_fixtures"
KIMI = ROOT / "sample_sessions" / "kimi-debugging-session"
REQUEST_1 = (
    "The nightly job crashes when it imports the March statements. "
    "Can you find out why? The repo is ledger-service."
)
SIZE = (110, 34)


def kimi_report(summary: str | None = None):
    session = load_session(KIMI)
    plan = make_plan(session.messages)
    if summary is None:
        summary = (FIXTURES / "kimi-debugging.summary.md").read_text(encoding="utf-8")
    return retention_report(session, plan, summary)


def kimi_state(summary: str | None = None) -> ReviewState:
    """The review state of the kimi sample with ``summary`` as the summary under review
    (the bundled fixture by default)."""
    state = ReviewState(config=AppConfig(), provider=ProviderConfig())
    state.load(KIMI)
    if summary is None:
        summary = (FIXTURES / "kimi-debugging.summary.md").read_text(encoding="utf-8")
    state.set_result(StreamResult(status="complete", summary=summary, provider="offline"))
    return state


class PaneScreen(RetentionHost, Screen):
    """A host like the stream and the diff: the pane's keys are the screen's."""

    BINDINGS = keys.bindings(keys.RETENTION_KEYS)

    def __init__(self, state: ReviewState, posted: list) -> None:
        super().__init__()
        self.state = state
        self.controller = RetentionController(self, state)
        self.posted = posted

    def compose(self) -> ComposeResult:
        yield RetentionPane(self.state, id="retention-pane")

    def on_mount(self) -> None:
        self.state.watch(lambda: self.controller.score(self.state.summary))
        self.controller.score(self.state.summary)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.retention_check(action)

    def dismiss(self, result=None):  # what the main screen would carry out, recorded
        if isinstance(result, JumpToMessage):
            self.posted.append(("jump", result.number))
        elif isinstance(result, AddInstructions):
            self.posted.append(("instructions", result.text))
        elif isinstance(result, OpenEditor):
            self.posted.append(("editor", result.block))


class PaneApp(App):
    def __init__(self, state: ReviewState) -> None:
        super().__init__()
        self.state = state
        self.posted: list = []

    def on_mount(self) -> None:
        self.push_screen(PaneScreen(self.state, self.posted))


async def scored(pilot) -> OptionList:
    """The pane's list once the summary is scored (a worker of the host's controller)."""
    app = pilot.app
    await wait_until(pilot, lambda: app.state.scored(app.state.summary), "the report")
    options = app.screen.query_one("#retention-missing", OptionList)
    await wait_until(pilot, lambda: options.option_count > 1, "the missing items")
    return options


async def test_pane_figures_first_then_missing_items():
    app = PaneApp(kimi_state())
    async with app.run_test(size=SIZE) as pilot:
        options = await scored(pilot)
        figures = str(app.screen.query_one("#retention-figures", Static).render())
        assert figures.splitlines()[0].startswith("Retention of messages 1..22")
        # the summary loses two user requests: flagged without colour too
        assert figures.splitlines()[1] == "! CRITICAL: the summary loses 2 user requests"
        assert "user requests     1/3     33% !" in figures
        assert "file paths        2/3     67%" in figures
        assert "URLs              0/0       -" in figures  # 0/0 is a dash, not 100%
        assert options.option_count == 10
        first = str(options.get_option_at_index(0).prompt)
        assert first == f"  ! user requests: {REQUEST_1}  #1"
        third = str(options.get_option_at_index(2).prompt)
        assert third == "  commands: pytest -q tests/test_parse.py  #14"  # not critical
        options.focus()
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.posted == [("jump", 21)]  # the last request, message 21


async def test_pane_marks_and_posts_instructions_and_editor_block():
    app = PaneApp(kimi_state())
    async with app.run_test(size=SIZE) as pilot:
        options = await scored(pilot)
        options.focus()
        await pilot.press("i")  # nothing marked: the highlighted item
        await pilot.press("space", "down", "down", "space", "e")
        await pilot.pause()
        kind, text = app.posted[0]
        assert kind == "instructions"
        assert text.splitlines()[1:] == [f"- user requests: {REQUEST_1} (message 1; answered)"]
        # Marked items are pins: the editor opens on the summary with their block
        # already in it (nothing appended twice).
        assert app.posted[1] == ("editor", "")
        written = app.state.summary_to_write
        assert written[written.index(EDITOR_BLOCK_START) :].splitlines() == [
            EDITOR_BLOCK_START,
            f"- user requests: {REQUEST_1} (message 1; answered)",
            "- commands: pytest -q tests/test_parse.py (message 14)",
            EDITOR_BLOCK_END,
        ]
        assert str(options.get_option_at_index(0).prompt).startswith("● ! user requests")
        await pilot.press("up", "up", "space", "i")  # unmark the first
        await pilot.pause()
        assert app.posted[2][1].splitlines()[1:] == [
            "- commands: pytest -q tests/test_parse.py (message 14)"
        ]


async def test_pane_shows_untrusted_text_literally_and_follows_the_state():
    state = kimi_state(summary="[bold]x[/bold] \x1b[31m")
    app = PaneApp(state)
    async with app.run_test(size=SIZE) as pilot:
        options = await scored(pilot)
        assert options.option_count == 20  # all 21 but the one the kept tail holds
        prompts = [str(options.get_option_at_index(i).prompt) for i in range(20)]
        # item text with square brackets is shown as it is, never parsed as markup
        assert any("[<class 'decimal.ConversionSyntax'>]" in p for p in prompts)
        good = (FIXTURES / "kimi-debugging.summary.md").read_text(encoding="utf-8")
        state.set_summary(good)  # the pane follows the state: the new summary scored
        await wait_until(pilot, lambda: options.option_count == 10, "the new report shown")


async def test_the_controller_scores_in_a_worker_and_the_state_keeps_the_report():
    state = kimi_state()
    assert state.scored(state.summary) is None
    app = PaneApp(state)
    async with app.run_test(size=SIZE) as pilot:
        options = await scored(pilot)
        report = state.scored(state.summary)
        assert report.kept == 10  # a command's exit is its status, no error line
        assert app.screen.query_one(RetentionPane).report is report
        assert options.option_count == 10


async def test_no_summary_says_so_and_offers_no_pin():
    state = ReviewState(config=AppConfig(), provider=ProviderConfig())
    state.load(KIMI)
    app = PaneApp(state)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        figures = str(app.screen.query_one("#retention-figures").render())
        assert "no summary to score yet" in figures
        assert app.screen.check_action("retention_pin", ()) is False


def candidate_set() -> CandidateSet:
    session = load_session(KIMI)
    plan = make_plan(session.messages)
    good = (FIXTURES / "kimi-debugging.summary.md").read_text(encoding="utf-8")
    poor = good.replace("`python -m ledger.importer fixtures/2026-03.csv` ", "").replace(
        "ledger/parse.py", "the parser"
    )
    cands = CandidateSet()
    for text, model, seconds in ((poor, "[red]m1[/red]", 2.0), (good, "m2", 4.0)):
        cands.add(
            text, provider="offline", model=model, prompt_source="bundled",
            prompt_sha256="0" * 64, output_tokens=400, seconds=seconds, contract_ok=True,
            retention=retention_report(session, plan, text),
        )  # fmt: skip
    return cands


class CandidatesApp(App):
    def __init__(self, cands) -> None:
        super().__init__()
        self.cands = cands
        self.result = "unset"

    def on_mount(self) -> None:
        self.push_screen(CandidatesScreen(self.cands), self.done)

    def done(self, value) -> None:
        self.result = value


async def test_candidates_screen_compares_the_two_latest_and_chooses():
    app = CandidatesApp(candidate_set())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CandidatesScreen)
        left = str(screen.query_one("#left-report", Static).render())
        right = str(screen.query_one("#right-report", Static).render())
        assert left.startswith("#1 offline/[red]m1[/red]")  # literal, not markup
        assert "commands          0/3      0%" in left
        assert "commands          1/3     33%" in right
        diff = [str(line.text) for line in screen.query_one("#summary-diff", RichLog).lines]
        assert diff[:2] == ["--- #1", "+++ #2"]
        assert any(line.startswith("+- Reproduced the crash with `python -m") for line in diff)
        await pilot.press("space")  # unmark #2 (highlighted): one left, no comparison
        await pilot.pause()
        assert screen.comparison() is None
        assert "mark two candidates" in str(screen.query_one("#left-report").render())
        await pilot.press("up", "enter")
        await pilot.pause()
        # The screen only answers with the number: the app marks it chosen after its checks.
        assert app.result == 1 and app.cands.chosen is None


async def test_candidates_screen_with_one_then_three_candidates():
    cands = candidate_set()
    only = CandidateSet(items=cands.items[:1])
    app = CandidatesApp(only)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "only one candidate so far" in str(app.screen.query_one("#left-report").render())
        await pilot.press("escape")
        await pilot.pause()
        assert app.result is None and only.chosen is None
    cands.add("third", provider="offline", prompt_source="bundled", prompt_text="")
    app = CandidatesApp(cands)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert screen.marked == [2, 3]
        await pilot.press("up", "up", "space")  # mark #1: the oldest mark (#2) drops
        await pilot.pause()
        assert screen.marked == [3, 1]
        comparison = screen.comparison()
        assert (comparison.left.number, comparison.right.number) == (1, 3)
        right = str(screen.query_one("#right-report", Static).render())
        assert "retention: no summary to score yet" in right  # #3 has no report


def test_snapshot_retention_pane(snap_compare):
    app = PaneApp(kimi_state())

    async def scored_then_pinned(pilot) -> None:
        await scored(pilot)
        await pilot.press("down", "space")
        await wait_until(pilot, lambda: app.state.pinned is not None, "the pin")
        await wait_until(pilot, lambda: app.state.pinned.scored, "the pinned figures")
        await pilot.pause()

    assert snap_compare(app, run_before=scored_then_pinned, terminal_size=SIZE)


def test_snapshot_candidates_comparison(snap_compare):
    app = CandidatesApp(candidate_set())
    assert snap_compare(app, terminal_size=SIZE)


async def test_a_marks_a_whole_category_and_e_appends_it():
    app = PaneApp(kimi_state())
    async with app.run_test(size=SIZE) as pilot:
        options = await scored(pilot)
        await pilot.press("e")  # nothing pinned: the highlighted item, appended
        await pilot.pause()
        kind, block = app.posted[0]
        assert kind == "editor" and block.splitlines()[0] == EDITOR_BLOCK_START
        assert [x.split(":")[0] for x in block.splitlines()[1:-1]] == ["- user requests"]
        await pilot.press("a")  # the highlighted item is a user request: both of them
        await wait_until(pilot, lambda: app.state.pinned is not None, "pinned")
        lines = app.state.pinned.anchored.block.splitlines()[1:-1]
        assert [x.split(":")[0] for x in lines] == ["- user requests", "- user requests"]
        await wait_until(
            pilot,
            lambda: str(options.get_option_at_index(1).prompt).startswith("● ! user requests"),
            "both pinned",
        )
        await pilot.press("a")  # all marked: unmark them all
        await wait_until(pilot, lambda: app.state.pinned is None, "unpinned")
        await pilot.pause()
        assert not str(options.get_option_at_index(0).prompt).startswith("●")


async def test_pane_shows_a_misstated_item_with_the_wrong_statement_and_the_session():
    """Issue 31: the pane counts misstated items on the category's line and lists
    each with the summary's words and what the session says."""
    good = (FIXTURES / "kimi-debugging.summary.md").read_text(encoding="utf-8")
    app = PaneApp(kimi_state(good + "\n- `pytest -q tests/test_parse.py` passed\n"))
    async with app.run_test(size=SIZE) as pilot:
        options = await scored(pilot)
        figures = str(app.screen.query_one("#retention-figures", Static).render())
        line = next(x for x in figures.splitlines() if x.startswith(" commands"))
        assert "1 misstated" in line, line
        prompts = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        wrong = [p for p in prompts if "misstated" in p and "pytest -q tests/test_parse.py" in p]
        assert len(wrong) == 1, prompts
        assert "stated passed; the session says exit 1" in wrong[0]
        assert "- `pytest -q tests/test_parse.py` passed" in wrong[0]  # the summary's words
        index = prompts.index(wrong[0])
        options.focus()
        options.highlighted = index
        await pilot.press("enter")
        await pilot.pause()
        assert app.posted == [("jump", 14)]  # its message
        # pins act on missing items only: the highlighted misstated row is none
        assert app.screen.query_one(RetentionPane).highlighted_item() is None
