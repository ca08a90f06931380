"""The retention pane and the candidates screen, in a tiny app of their own
(Pilot), plus one snapshot each (fixed size, no clock)."""

from __future__ import annotations

from pathlib import Path

from textual.app import App, ComposeResult
from textual.widgets import OptionList, RichLog, Static

from kimi_compact_tui.compaction import make_plan
from kimi_compact_tui.formats import load_session
from kimi_compact_tui.retention import (
    EDITOR_BLOCK_END,
    EDITOR_BLOCK_START,
    CandidateSet,
    retention_report,
)
from kimi_compact_tui.tui import keys
from kimi_compact_tui.tui.screens.candidates import CandidatesScreen
from kimi_compact_tui.tui.widgets.retention_pane import RetentionPane

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


class PaneApp(App):
    # i and e are the host screen's keys (keys.RETENTION_KEYS), as on the stream and diff.
    BINDINGS = keys.bindings(keys.RETENTION_KEYS)

    def __init__(self, report) -> None:
        super().__init__()
        self.report = report
        self.posted: list = []

    def compose(self) -> ComposeResult:
        yield RetentionPane(self.report, id="pane")

    def on_mount(self) -> None:
        self.query_one("#retention-missing", OptionList).focus()

    def action_retention_instructions(self) -> None:
        self.query_one(RetentionPane).action_add_to_instructions()

    def action_retention_editor(self) -> None:
        self.query_one(RetentionPane).action_append_to_editor()

    def on_retention_pane_jump_to_message(self, event) -> None:
        self.posted.append(("jump", event.number))

    def on_retention_pane_add_to_instructions(self, event) -> None:
        self.posted.append(("instructions", event.text))

    def on_retention_pane_append_to_editor(self, event) -> None:
        self.posted.append(("editor", event.block))

    def on_retention_pane_scored(self, event) -> None:
        self.posted.append(("scored", event.report))


async def test_pane_figures_first_then_missing_items():
    app = PaneApp(kimi_report())
    async with app.run_test(size=SIZE) as pilot:
        figures = str(app.query_one("#retention-figures", Static).render())
        assert figures.splitlines()[0].startswith("Retention of messages 1..22")
        # the summary loses two user requests: flagged without colour too
        assert figures.splitlines()[1] == "! CRITICAL: the summary loses 2 user requests"
        assert "user requests     1/3     33% !" in figures
        assert "file paths        2/3     67%" in figures
        assert "URLs              0/0       -" in figures  # 0/0 is a dash, not 100%
        options = app.query_one("#retention-missing", OptionList)
        assert options.option_count == 10
        first = str(options.get_option_at_index(0).prompt)
        assert first == f"  ! user requests: {REQUEST_1}  #1"
        third = str(options.get_option_at_index(2).prompt)
        assert third == "  commands: pytest -q tests/test_parse.py  #14"  # not critical
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.posted == [("jump", 21)]  # the last request, message 21


async def test_pane_marks_and_posts_instructions_and_editor_block():
    app = PaneApp(kimi_report())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("i")  # nothing marked: the highlighted item
        await pilot.press("space", "down", "down", "space", "e")
        await pilot.pause()
        kind, text = app.posted[0]
        assert kind == "instructions"
        assert text.splitlines()[1:] == [f"- user requests: {REQUEST_1} (message 1; answered)"]
        kind, block = app.posted[1]
        assert kind == "editor"
        assert block.splitlines() == [
            EDITOR_BLOCK_START,
            f"- user requests: {REQUEST_1} (message 1; answered)",
            "- commands: pytest -q tests/test_parse.py (message 14)",
            EDITOR_BLOCK_END,
        ]
        options = app.query_one("#retention-missing", OptionList)
        assert str(options.get_option_at_index(0).prompt).startswith("● ! user requests")
        await pilot.press("up", "up", "space", "i")  # unmark the first
        await pilot.pause()
        assert app.posted[2][1].splitlines()[1:] == [
            "- commands: pytest -q tests/test_parse.py (message 14)"
        ]


async def test_pane_shows_untrusted_text_literally_and_updates():
    app = PaneApp(None)
    async with app.run_test(size=SIZE) as pilot:
        assert "no summary to score yet" in str(app.query_one("#retention-figures").render())
        pane = app.query_one(RetentionPane)
        pane.show(kimi_report(summary="[bold]x[/bold] \x1b[31m"))
        await pilot.pause()
        options = app.query_one("#retention-missing", OptionList)
        assert options.option_count == 20  # all 21 but the one the kept tail holds
        prompts = [str(options.get_option_at_index(i).prompt) for i in range(20)]
        # item text with square brackets is shown as it is, never parsed as markup
        assert any("[<class 'decimal.ConversionSyntax'>]" in p for p in prompts)
        pane.show(kimi_report(summary=open(FIXTURES / "kimi-debugging.summary.md").read()))
        await pilot.pause()
        assert options.option_count == 10


async def test_pane_scores_in_a_worker_and_posts_scored():
    app = PaneApp(None)
    async with app.run_test(size=SIZE) as pilot:
        session = load_session(KIMI)
        plan = make_plan(session.messages)
        summary = (FIXTURES / "kimi-debugging.summary.md").read_text(encoding="utf-8")
        pane = app.query_one(RetentionPane)
        pane.score(session, plan, summary)
        await app.workers.wait_for_complete()
        await pilot.pause()
        scored = [report for kind, report in app.posted if kind == "scored"]
        assert (
            len(scored) == 1 and scored[0].kept == 10
        )  # a command's exit is its status, no error line
        assert pane.report is scored[0]
        assert app.query_one("#retention-missing", OptionList).option_count == 10


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
    app = PaneApp(kimi_report())
    assert snap_compare(app, press=["down", "space"], terminal_size=SIZE)


def test_snapshot_candidates_comparison(snap_compare):
    app = CandidatesApp(candidate_set())
    assert snap_compare(app, terminal_size=SIZE)


async def test_a_marks_a_whole_category_and_e_appends_it():
    app = PaneApp(kimi_report())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a", "e")  # the highlighted item is a user request: both of them
        await pilot.pause()
        kind, block = app.posted[0]
        assert kind == "editor"
        lines = block.splitlines()[1:-1]
        assert [x.split(":")[0] for x in lines] == ["- user requests", "- user requests"]
        options = app.query_one("#retention-missing", OptionList)
        assert str(options.get_option_at_index(1).prompt).startswith("● ! user requests")
        await pilot.press("a")  # all marked: unmark them all
        await pilot.pause()
        assert not str(options.get_option_at_index(0).prompt).startswith("●")
