"""The candidates screen: every finished run of this review, any two side by side.

The list shows each candidate (provider/model, prompt and its sha256, custom
instructions, output tokens, time, tokens per second, the contract check and
the retention figures). ``space`` marks a candidate for the comparison; with
two marked (the two latest at first) the screen shows both retention reports
side by side and a text diff of the two summaries. ``enter`` chooses the
highlighted candidate (the screen is dismissed with its number, the app
decides what to do); ``f`` gives feedback on the highlighted candidate (dismissed
with a :class:`FeedbackOn`: the main screen opens the feedback box, and the
revision streams as for ``f`` on the stream screen); ``escape`` closes it
with None.

A revision (feedback on a run, ``f`` on the stream screen) shows its chain:
its row says which run it revises and quotes the feedback's first line
(``↳ revises #1: “keep the failing test name”``), and each report names it
(``#3 revises #1``). When the newest run is a revision, it and the run it
revises are the two marked at first; any two runs compare the same way.

All candidate text (summaries, instructions, item text) is shown as ``Text``
through :func:`visible`, never parsed as markup.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import OptionList, RichLog, Static
from textual.widgets.option_list import Option

from kimi_compact_tui.retention import Candidate, CandidateSet, Comparison
from kimi_compact_tui.sanitize import clip_cells, one_line, visible
from kimi_compact_tui.tui import keys
from kimi_compact_tui.tui.runs import RunLink, first_line
from kimi_compact_tui.tui.widgets.footer import KeysFooter
from kimi_compact_tui.tui.widgets.retention_text import figures_text

MAX_MISSING_SHOWN = 30


@dataclass(frozen=True)
class FeedbackOn:
    """``f`` on the candidates screen: feedback on candidate ``number``."""

    number: int


#: The instructions' line of a candidate is cut at this many cells (with …).
INSTRUCTIONS_CELLS = 60
#: The feedback's line of a revision is cut at this many cells (with …).
FEEDBACK_CELLS = 56


def chain_text(link: RunLink) -> str:
    """``revises #1: “keep X”`` (the feedback's first line, cut with …)."""
    quoted = clip_cells(one_line(first_line(link.feedback), 400), FEEDBACK_CELLS)
    return f"revises #{link.parent}: “{quoted}”"


def candidate_prompt(
    candidate: Candidate,
    marked: bool,
    chosen: bool,
    *,
    timing: bool = True,
    link: RunLink | None = None,
) -> Text:
    """The candidate's line (its figures as the stream screen showed them); for
    a revision (``link``), a line naming its parent and quoting the feedback;
    when it had instructions, a line quoting them; each cut by cells with …."""
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append("● " if marked else "  ", style="bold yellow")
    if chosen:
        out.append("[chosen] ", style="bold green")
    out.append(one_line(candidate.label(timing=timing), 300))
    if link is not None:
        out.append("\n    ↳ " + chain_text(link), style="cyan")
    if candidate.custom_instructions:
        quoted = clip_cells(one_line(candidate.custom_instructions, 400), INSTRUCTIONS_CELLS)
        out.append("\n    instructions “" + quoted + "”", style="dim")
    return out


def report_text(candidate: Candidate, link: RunLink | None = None) -> Text:
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append(f"#{candidate.number} ", style="bold")
    out.append(one_line(f"{candidate.provider}/{candidate.model or '-'}", 60) + "\n")
    if link is not None:
        out.append(chain_text(link) + "\n", style="cyan")
    if candidate.contract_ok is not None:
        ok = candidate.contract_ok
        out.append(
            "contract ok\n" if ok else "contract: " + "; ".join(candidate.contract_warnings) + "\n",
            style="green" if ok else "yellow",
        )
    out.append_text(figures_text(candidate.retention))
    report = candidate.retention
    missing = report.missing_items() if report is not None else []
    if missing:
        out.append(f"\nmissing ({len(missing)}):", style="bold")
        for item in missing[:MAX_MISSING_SHOWN]:
            out.append(f"\n {item.category}: ", style="dim")
            out.append(one_line(item.text, 120))
        if len(missing) > MAX_MISSING_SHOWN:
            out.append(f"\n … {len(missing) - MAX_MISSING_SHOWN} more", style="dim")
    return out


def diff_line(line: str) -> Text:
    style = ""
    if line.startswith(("+++", "---")):
        style = "bold"
    elif line.startswith("@@"):
        style = "cyan"
    elif line.startswith("+"):
        style = "green"
    elif line.startswith("-"):
        style = "red"
    return Text(visible(line), style=style, no_wrap=True)


class CandidatesScreen(Screen[int | FeedbackOn | None]):
    BINDINGS = keys.bindings(keys.CANDIDATES_KEYS)

    DEFAULT_CSS = """
    CandidatesScreen #candidates-list {
        height: auto;
        max-height: 8;
        border: round $panel;
        text-wrap: nowrap;  /* a row never wraps mid-figure: it is cut with … */
        text-overflow: ellipsis;
    }
    CandidatesScreen #compare {
        height: 1fr;
    }
    CandidatesScreen .report {
        width: 1fr;
        border: round $panel;
        padding: 0 1;
    }
    CandidatesScreen #summary-diff {
        height: 1fr;
        border: round $panel;
    }
    CandidatesScreen #candidates-title {
        padding: 0 1;
    }
    """

    def __init__(
        self, candidates: CandidateSet, links: Mapping[int, RunLink] | None = None
    ) -> None:
        super().__init__()
        self.candidates = candidates
        self.links: Mapping[int, RunLink] = links or {}
        numbers = [c.number for c in candidates]
        self.marked: list[int] = numbers[-2:]
        newest = self.links.get(numbers[-1]) if numbers else None
        if newest is not None:  # a revision: compared with the run it revises
            self.marked = [newest.parent, numbers[-1]]

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="candidates-title")
        yield OptionList(*self._options(), id="candidates-list")
        with Horizontal(id="compare"):
            with VerticalScroll(classes="report"):
                yield Static(id="left-report")
            with VerticalScroll(classes="report"):
                yield Static(id="right-report")
        # The diff is read from its top (its file names and first hunk).
        yield RichLog(
            id="summary-diff", markup=False, highlight=False, wrap=False, auto_scroll=False
        )
        yield KeysFooter()

    def on_mount(self) -> None:
        options = self.query_one("#candidates-list", OptionList)
        if len(self.candidates):
            options.highlighted = len(self.candidates) - 1
        options.focus()
        self.refresh_comparison()

    def _title(self) -> Text:
        n = len(self.candidates)
        out = Text(f"Candidates ({n})", style="bold")
        out.append("   space: mark two to compare · enter: choose to edit and write · escape: close",
                   style="dim")  # fmt: skip
        return out

    def _options(self) -> list[Option]:
        return [Option(self._prompt(c), id=str(c.number)) for c in self.candidates]

    def _prompt(self, c: Candidate) -> Text:
        timing = getattr(self.app, "show_timing", True)
        return candidate_prompt(
            c,
            c.number in self.marked,
            c.number == self.candidates.chosen,
            timing=timing,
            link=self.links.get(c.number),
        )

    def comparison(self) -> Comparison | None:
        if len(self.marked) != 2:
            return None
        left, right = sorted(self.marked)
        return self.candidates.compare(left, right)

    def refresh_comparison(self) -> None:
        left = self.query_one("#left-report", Static)
        right = self.query_one("#right-report", Static)
        log = self.query_one("#summary-diff", RichLog)
        log.clear()
        comparison = self.comparison()
        if comparison is None:
            hint = "mark two candidates with space to compare them"
            left.update(Text(hint if len(self.candidates) > 1 else "only one candidate so far",
                             style="dim"))  # fmt: skip
            right.update(Text(""))
            return
        left.update(report_text(comparison.left, self.links.get(comparison.left.number)))
        right.update(report_text(comparison.right, self.links.get(comparison.right.number)))
        if not comparison.diff:
            log.write(Text("the two summaries are identical", style="dim"))
        for line in comparison.diff:
            log.write(diff_line(line))

    def action_toggle_mark(self) -> None:
        options = self.query_one("#candidates-list", OptionList)
        index = options.highlighted
        if index is None:
            return
        number = self.candidates.items[index].number
        if number in self.marked:
            self.marked.remove(number)
        else:
            self.marked.append(number)
            self.marked = self.marked[-2:]
        for i, c in enumerate(self.candidates):
            options.replace_option_prompt_at_index(i, self._prompt(c))
        self.refresh_comparison()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        # The app marks it chosen once its checks pass (ReviewState.choose_candidate).
        self.dismiss(self.candidates.items[event.option_index].number)

    def action_feedback(self) -> None:
        index = self.query_one("#candidates-list", OptionList).highlighted
        if index is not None:
            self.dismiss(FeedbackOn(self.candidates.items[index].number))

    def action_close(self) -> None:
        self.dismiss(None)
