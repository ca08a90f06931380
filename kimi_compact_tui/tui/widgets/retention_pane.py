"""The retention pane: what the summary keeps of the compacted range, and what it loses.

The per-category figures come first, then the missing items. The pane only
posts messages; the app decides what they do:

* ``enter`` on a missing item posts :class:`RetentionPane.JumpToMessage`
  with the item's first (1-based) message number;
* ``space`` pins or unpins the highlighted item; ``a`` every item of its
  category (all of them, or none when all were pinned). The pins (the marks)
  are the anchor block written inside the summary
  (:mod:`kimi_compact_tui.tui.pins`): after each change a worker scores the
  summary WITH the block, the figures show that (what would be written) and
  the pane posts :class:`RetentionPane.PinsChanged` for the host to keep;
* ``i`` posts :class:`RetentionPane.AddToInstructions` with the marked items
  (else the highlighted one) and the instruction text for a re-run;
* ``e`` posts :class:`RetentionPane.AppendToEditor` with them as a clearly
  marked block for the summary editor.

* ``P`` posts :class:`RetentionPane.ProbeRequested`; the host checks the
  provider and calls :meth:`RetentionPane.start_probe`, which plans the
  questions in a worker, asks first (how many requests, their estimated size),
  asks them in another worker and shows the answers next to the figures (a
  ``Q correct/total`` column and the score), then each question not answered
  right below the missing items: ``enter`` on one jumps to its message.

A summary that loses a user request, an instruction or an open task is flagged
critical: a ``!`` on the category's line and on each such item, and a
``CRITICAL`` line under the title; a pinned item starts with ``●`` (both
readable without colour).

Item text comes from the session: it is shown as ``Text`` through
:func:`visible`, never parsed as markup.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import Worker, WorkerState, get_current_worker

from kimi_compact_tui.retention import (
    CATEGORY_LABELS,
    KEPT_IN_TAIL,
    Item,
    RetentionReport,
    editor_block,
    instructions_for,
    retention_report,
)
from kimi_compact_tui.sanitize import fit_cells, one_line
from kimi_compact_tui.tui import keys
from kimi_compact_tui.tui.pins import DEFAULT_ANCHOR_BUDGET, Pinned, pin, pinned_now

MARK_ON = "● "
MARK_OFF = "  "
CRITICAL_MARK = "! "


#: The label column; narrower (labels cut with …) when the row is narrower.
LABEL_CELLS = 15
ROW_CELLS = LABEL_CELLS + 1 + 9 + 5  # " label", "kept/total", "pct%"


PROBE_CELLS = 8  # "  Q 9/10"
STOP_POLL = 0.1  # seconds between two looks at whether the probe's worker was cancelled
PROBE_LABELS = {"decisions": "decisions"}


def probe_figures(probe: Any, label: str = "Probe") -> tuple[dict[str, tuple[int, int]], Text]:
    """The probe's per-category figures and its score line (``probe``: a ProbeReport;
    ``label`` says what was probed, e.g. ``Probe (2 pinned)``)."""
    by_category = {
        name: (int(s["correct"]), int(s["total"])) for name, s in probe.categories().items()
    }
    s = probe.score()
    pct = "-" if s["percent"] is None else f"{s['percent']:.0f}%"
    line = Text(no_wrap=True, overflow="ellipsis")
    line.append(label, style="bold")
    line.append(f" {s['correct']}/{s['total']} answered right ({pct}), {s['partial']} partial")
    others = [
        f"{PROBE_LABELS.get(n, n)} {c}/{t}"
        for n, (c, t) in by_category.items()
        if n not in CATEGORY_LABELS
    ]
    if others:
        line.append(" · " + " · ".join(others))
    return by_category, line


def figures_text(
    report: RetentionReport | None,
    width: int | None = None,
    *,
    pinned: Pinned | None = None,
    probe: Any = None,
    probe_note: Text | None = None,
    probe_label: str = "Probe",
) -> Text:
    """One line per category: label, kept/total, percent, and how many only
    the kept tail holds; 0/0 shows a dash, never 100%. In a row narrower than
    :data:`ROW_CELLS` (``width``) the labels are cut, so the figures stay on
    their line (a three-pane diff at 80 columns). With ``pinned``, ``report``
    is the summary with the pinned block, and a line says so; with ``probe``
    (a ProbeReport) a ``Q correct/total`` column and the probe's score line;
    ``probe_note`` says what the probe is doing."""
    label_cells = LABEL_CELLS
    if width is not None and width < ROW_CELLS:
        label_cells = max(4, LABEL_CELLS - (ROW_CELLS - width))
    out = Text(no_wrap=True, overflow="ellipsis")
    if report is None:
        out.append("retention: no summary to score yet", style="dim")
        return out
    if report.compacted is None:
        out.append("retention: nothing is compacted", style="dim")
        return out
    first, last = report.compacted
    out.append(f"Retention of messages {first}..{last}", style="bold")
    out.append(f"   {report.kept}/{report.total} kept\n", style="dim")
    if pinned is not None:
        out.append(f"{MARK_ON}{pinned.line()}\n", style="bold")
    by_probe: dict[str, tuple[int, int]] = {}
    probe_line: Text | None = probe_note
    if probe is not None:
        by_probe, probe_line = probe_figures(probe, probe_label)
    if probe_line is not None:  # near the top: a short pane still shows it
        out.append_text(probe_line)
        out.append("\n")
    critical = report.critical_line()
    if critical:
        out.append(f"{CRITICAL_MARK}{critical}\n", style="bold red")
    for name, c in report.categories.items():
        label = CATEGORY_LABELS.get(name, name)
        pct = c.percent
        style = "dim" if pct is None else "green" if pct >= 80 else "yellow" if pct >= 40 else "red"
        label = fit_cells(label, label_cells)
        out.append(f" {label}", style="bold" if c.missing else "")
        out.append(f"{c.kept_count:>4}/{c.total:<4}", style=style)
        out.append(f"{'-' if pct is None else f'{pct:.0f}%':>5}", style=style)
        if c.critical_missing:
            out.append(f" {CRITICAL_MARK.strip()}", style="bold red")
        asked = by_probe.get(name)
        if asked is not None and (width is None or width >= ROW_CELLS + PROBE_CELLS):
            out.append(f"  Q {asked[0]}/{asked[1]}".ljust(PROBE_CELLS))
        tail = sum(1 for _, where in c.kept if where == KEPT_IN_TAIL)
        note = f"  {tail} in kept tail" if tail else ""
        used = ROW_CELLS + (PROBE_CELLS if by_probe else 0)
        if note and (width is None or width >= used + len(note)):
            out.append(note, style="dim")  # left out where it would push the figures off
        out.append("\n")
    out.rstrip()
    return out


def item_prompt(item: Item, marked: bool, critical: bool = False) -> Text:
    label = CATEGORY_LABELS.get(item.category, item.category)
    where = ",".join(str(i + 1) for i in item.messages[:4])
    if len(item.messages) > 4:
        where += ",…"
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append(MARK_ON if marked else MARK_OFF, style="bold yellow")
    if critical:
        out.append(CRITICAL_MARK, style="bold red")
    out.append(f"{label}: ", style="bold")
    out.append(one_line(item.text, 200))
    out.append(f"  #{where}", style="dim")
    return out


def answer_prompt(answer: Any) -> Text:
    """A question not answered right: its verdict (a word, not only a colour),
    the question, what was expected and what came back, and its messages."""
    q = answer.question
    where = ",".join(str(i + 1) for i in q.messages[:4])
    if len(q.messages) > 4:
        where += ",…"
    label = CATEGORY_LABELS.get(q.category, q.category)
    got = answer.answer if answer.answer is not None else f"(no answer: {answer.error})"
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append(f"{answer.grade.verdict.upper():<8}", style="bold red")
    out.append(f"Q{q.number} {label}: ", style="bold")
    out.append(one_line(q.text, 160))
    out.append("  expected: ", style="dim")
    out.append(one_line(q.expected_text, 120))
    out.append("  answer: ", style="dim")
    out.append(one_line(got, 120))
    out.append(f"  #{where}", style="dim")
    return out


@dataclass(frozen=True)
class ProbeInputs:
    """What probing needs, taken by the host on the UI thread (the workers read
    nothing else): the session, the plan, the summary as it would be written,
    the compaction's request settings and the provider."""

    session: Any
    plan: Any
    summary: str
    compaction_cfg: dict[str, Any]
    model: str | None
    base_model: str | None
    provider: Any
    what: str  # what is probed, for people ("the summary", "… with 2 pinned items")
    pins: int = 0  # how many pinned items the summary carries
    limit: int | None = None


def plan_questions(inputs: ProbeInputs) -> Any:
    """The probe's questions and request bodies (a ProbePlan; no request sent)."""
    from kimi_compact_tui.job.prepare import specifics_of
    from kimi_compact_tui.job.probe import DEFAULT_QUESTIONS, plan_probe

    return plan_probe(
        inputs.session,
        inputs.plan,
        inputs.summary,
        specifics_of(inputs.session, inputs.plan)(),
        inputs.compaction_cfg,
        model=inputs.model,
        base_model=inputs.base_model,
        limit=inputs.limit or DEFAULT_QUESTIONS,
    )


class ProbeStopped(Exception):
    """The probe's worker was cancelled (its pane went away): nothing more is sent."""


def ask_questions(probe: Any, provider: Any, stopped: Callable[[], bool] = lambda: False) -> Any:
    """Send the questions, one request each, and grade the answers (a ProbeReport).
    ``stopped`` is looked at while it runs: once true, the request under way is
    cancelled and :class:`ProbeStopped` raised (a thread worker cannot be interrupted)."""
    from kimi_compact_tui.job.probe import ask
    from kimi_compact_tui.providers import StreamResult, stream_summary

    async def run() -> Any:
        cancel = asyncio.Event()

        async def watch() -> None:
            while not stopped():
                await asyncio.sleep(STOP_POLL)
            cancel.set()

        async def send(config: Any, body: dict[str, Any]) -> StreamResult:
            if cancel.is_set():
                raise ProbeStopped
            return await stream_summary(config, body, None, cancel)

        watcher = asyncio.create_task(watch())
        try:
            report = await ask(probe, provider, send)
        finally:
            watcher.cancel()
        if cancel.is_set():
            raise ProbeStopped
        return report

    return asyncio.run(run())


class RetentionFigures(Static):
    """The figures of one report, laid out for the width they are drawn at
    (labels cut in a narrow pane, see :func:`figures_text`)."""

    def __init__(self, report: RetentionReport | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.report = report
        self.note: Text | None = None  # shown instead while a report is computed
        self.pinned: Pinned | None = None  # the report is of the summary with these pins
        self.probe: Any = None  # a ProbeReport
        self.probe_note: Text | None = None  # what the probe is doing
        self.probe_label = "Probe"  # what was probed

    def show(
        self,
        report: RetentionReport | None,
        note: Text | None = None,
        pinned: Pinned | None = None,
    ) -> None:
        self.report, self.note, self.pinned = report, note, pinned
        self.refresh(layout=True)

    def show_probe(self, probe: Any, note: Text | None = None, label: str = "Probe") -> None:
        self.probe, self.probe_note, self.probe_label = probe, note, label
        self.refresh(layout=True)

    def render(self) -> Text:
        if self.note is not None:
            return self.note
        return figures_text(
            self.report,
            self.content_region.width or None,
            pinned=self.pinned,
            probe=self.probe,
            probe_note=self.probe_note,
            probe_label=self.probe_label,
        )


class RetentionPane(Vertical, can_focus=False):
    """Per-category figures, then the missing items of one report (then the
    questions a probe did not see answered right)."""

    DEFAULT_CSS = """
    RetentionPane {
        height: 1fr;
        border: round $panel;
    }
    RetentionPane > #retention-figures {
        height: auto;
        padding: 0 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    RetentionPane > #retention-missing {
        height: 1fr;
        border: none;
    }
    RetentionPane > #retention-hint {
        height: 1;
        color: $text-muted;
        padding: 0 1;
    }
    """

    BINDINGS = keys.bindings(keys.RETENTION_PANE_KEYS)

    class Scored(Message):
        """A report computed by :meth:`RetentionPane.score` is shown."""

        def __init__(self, report: RetentionReport) -> None:
            super().__init__()
            self.report = report

    class PinsChanged(Message):
        """The pins changed: ``pinned`` is the summary with their block and its
        retention (None: nothing is pinned)."""

        def __init__(self, pinned: Pinned | None) -> None:
            super().__init__()
            self.pinned = pinned

    class ProbeRequested(Message):
        """``P``: the host checks the provider and calls :meth:`RetentionPane.start_probe`."""

    class JumpToMessage(Message):
        """Show message ``number`` (1-based) in the message list."""

        def __init__(self, number: int, item: Item | None) -> None:
            super().__init__()
            self.number = number
            self.item = item  # None for a probe's question

    class AddToInstructions(Message):
        """Add ``items`` to the custom instructions (``text``) and re-run."""

        def __init__(self, items: list[Item], text: str) -> None:
            super().__init__()
            self.items = items
            self.text = text

    class AppendToEditor(Message):
        """Open the editor with ``block`` appended to the summary."""

        def __init__(self, items: list[Item], block: str) -> None:
            super().__init__()
            self.items = items
            self.block = block

    def __init__(
        self,
        report: RetentionReport | None = None,
        *,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.report = report
        self.items: list[Item] = []
        self.marked: set[int] = set()  # the pins: indices into items
        self.critical: set[int] = set()  # indices of the items flagged critical
        self.source: tuple[Any, Any, str] | None = None  # session, plan, summary scored
        self.budget = DEFAULT_ANCHOR_BUDGET
        self.pinned: Pinned | None = None
        self.probe: Any = None  # the last ProbeReport shown
        self.failed: list[Any] = []  # its answers not right, listed after the items
        self._probe_inputs: ProbeInputs | None = None

    def compose(self) -> ComposeResult:
        yield RetentionFigures(self.report, id="retention-figures")
        yield OptionList(id="retention-missing")
        yield Static(
            Text(
                "enter: go to message · space: pin · a: pin all of its kind · P: probe · "
                "i: to instructions · e: to editor"
            ),
            id="retention-hint",
        )

    def on_mount(self) -> None:
        self._fill()

    @property
    def option_list(self) -> OptionList:
        return self.query_one("#retention-missing", OptionList)

    @property
    def figures(self) -> RetentionFigures:
        return self.query_one(RetentionFigures)

    def show(self, report: RetentionReport | None) -> None:
        """Show another report (pins and a probe of another summary are cleared)."""
        self.workers.cancel_group(self, "pins")
        self.report = report
        self.marked.clear()
        self.pinned = None
        self.probe, self.failed = None, []
        self.figures.show_probe(None)
        self._show_figures()
        self._fill()

    def _show_figures(self) -> None:
        pinned = self.pinned
        self.figures.show(pinned.report if pinned else self.report, pinned=pinned)

    def score(self, session: Any, plan: Any, summary: str) -> None:
        """Compute the report in a worker thread (a 10,000-message range takes
        about half a second), then show it and post :class:`Scored`."""
        self.source = (session, plan, summary)
        note = Text("retention: scoring the summary…", style="dim")
        self.figures.show(None, note)
        self._score(session, plan, summary)

    @work(thread=True, exclusive=True, group="retention", name="retention")
    def _score(self, session: Any, plan: Any, summary: str) -> RetentionReport:
        """The report (reads its arguments only); the UI thread shows it."""
        return retention_report(session, plan, summary)

    @work(thread=True, exclusive=True, group="pins", name="pins")
    def _pin(
        self,
        session: Any,
        plan: Any,
        summary: str,
        base: RetentionReport,
        items: list[Item],
        budget: int,
    ) -> Pinned:
        """The summary with the pinned block and its retention (reads its arguments only)."""
        return pin(session, plan, summary, base, items, budget)

    @work(thread=True, exclusive=True, group="probe", name="probe-plan", exit_on_error=False)
    def _plan_probe(self, inputs: ProbeInputs) -> Any:
        """The questions and their requests (reads its arguments only)."""
        return plan_questions(inputs)

    @work(thread=True, exclusive=True, group="probe", name="probe-ask", exit_on_error=False)
    def _ask(self, probe: Any, provider: Any) -> Any:
        """Ask and grade (reads its arguments only); None when cancelled."""
        worker = get_current_worker()
        try:
            return ask_questions(probe, provider, lambda: worker.is_cancelled)
        except ProbeStopped:
            return None

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        name = event.worker.name
        if name not in ("retention", "pins", "probe-plan", "probe-ask"):
            return
        event.stop()
        if event.state == WorkerState.ERROR and name.startswith("probe"):
            error = event.worker.error
            self._probe_status(f"probe: failed: {type(error).__name__}: {error}")
            return
        if event.state != WorkerState.SUCCESS:
            return
        result = event.worker.result
        if name == "retention":
            assert isinstance(result, RetentionReport)
            self.show(result)
            self.post_message(self.Scored(result))
        elif name == "pins":
            assert isinstance(result, Pinned)
            if list(result.items) != self.pinned_items() or self.source is None:
                return  # the pins changed since: a newer worker answers
            if result.summary != self.source[2]:
                return
            self.pinned = result
            self._show_figures()
            self.post_message(self.PinsChanged(result))
        elif name == "probe-plan":
            self._confirm_probe(result)
        elif result is not None:
            self.show_probe(result)

    # --- the missing items and the probe's questions --------------------------------
    def _fill(self) -> None:
        self.items = self.report.missing_items() if self.report is not None else []
        flagged = self.report.critical_missing() if self.report is not None else []
        self.critical = {i for i, item in enumerate(self.items) if item in flagged}
        options = self.option_list
        highlighted = options.highlighted
        options.clear_options()
        if not self.items:
            text = "nothing is missing" if self.report is not None else ""
            options.add_option(Option(Text(text, style="dim"), disabled=True))
        else:
            options.add_options(
                [
                    Option(item_prompt(item, i in self.marked, i in self.critical), id=str(i))
                    for i, item in enumerate(self.items)
                ]
            )
        if self.failed:
            head = Text("probe: not answered right (enter: go to its message)", style="bold")
            options.add_option(Option(head, disabled=True))
            options.add_options(
                [Option(answer_prompt(a), id=f"q{i}") for i, a in enumerate(self.failed)]
            )
        count = options.option_count
        if highlighted is not None and highlighted < count:
            options.highlighted = highlighted
        elif self.items:
            options.highlighted = 0

    def _current(self) -> int | None:
        index = self.option_list.highlighted
        if index is None or not self.items or index >= len(self.items):
            return None
        return index

    def _answer_at(self, index: int) -> Any:
        """The failed question listed at option ``index``, or None."""
        first = max(len(self.items), 1) + 1  # after the items (or the placeholder) and the head
        if self.failed and first <= index < first + len(self.failed):
            return self.failed[index - first]
        return None

    def chosen_items(self) -> list[Item]:
        """The marked items in report order, else the highlighted one."""
        if self.marked:
            return [self.items[i] for i in sorted(self.marked)]
        current = self._current()
        return [] if current is None else [self.items[current]]

    def pinned_items(self) -> list[Item]:
        return [self.items[i] for i in sorted(self.marked)]

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        index = event.option_index
        if 0 <= index < len(self.items) and self.items[index].messages:
            item = self.items[index]
            self.post_message(self.JumpToMessage(item.messages[0] + 1, item))
            return
        answer = self._answer_at(index)
        if answer is not None and answer.question.messages:
            self.post_message(self.JumpToMessage(answer.question.messages[0] + 1, None))

    # --- pins ------------------------------------------------------------------------
    def _redraw_items(self, indices: list[int]) -> None:
        for i in indices:
            self.option_list.replace_option_prompt_at_index(
                i, item_prompt(self.items[i], i in self.marked, i in self.critical)
            )

    def _pins_changed(self) -> None:
        """Score the summary with the new pins (in a worker), or show it without."""
        items = self.pinned_items()
        if self.source is None or self.report is None:
            return  # shown without a session (nothing to score against)
        if not items:
            self.workers.cancel_group(self, "pins")
            self.pinned = None
            self._show_figures()
            self.post_message(self.PinsChanged(None))
            return
        session, plan, summary = self.source
        note = Text("retention: scoring the summary with the pinned items…", style="dim")
        self.figures.show(None, note)
        # The pins hold for the write now (w, escape), not once their figures are in.
        self.post_message(self.PinsChanged(pinned_now(summary, self.report, items, self.budget)))
        self._pin(session, plan, summary, self.report, items, self.budget)

    def show_pins(self, pinned: Pinned) -> None:
        """Pin ``pinned``'s items again (kept by the host for the same summary)."""
        if self.source is None or pinned.summary != self.source[2]:
            return
        self.marked = {i for i, item in enumerate(self.items) if item in pinned.items}
        self._redraw_items(list(range(len(self.items))))
        if len(self.marked) != len(pinned.items) or not pinned.scored:
            self._pins_changed()  # some are no longer missing, or never scored: again
            return
        self.pinned = pinned
        self._show_figures()

    def action_toggle_mark(self) -> None:
        current = self._current()
        if current is None:
            return
        self.marked.symmetric_difference_update({current})
        self._redraw_items([current])
        self._pins_changed()

    def action_mark_category(self) -> None:
        current = self._current()
        if current is None:
            return
        category = self.items[current].category
        same = [i for i, item in enumerate(self.items) if item.category == category]
        if all(i in self.marked for i in same):
            self.marked.difference_update(same)
        else:
            self.marked.update(same)
        self._redraw_items(same)
        self._pins_changed()

    def action_add_to_instructions(self) -> None:
        items = self.chosen_items()
        if items:
            self.post_message(self.AddToInstructions(items, instructions_for(items)))

    def action_append_to_editor(self) -> None:
        items = self.chosen_items()
        if items:
            self.post_message(self.AppendToEditor(items, editor_block(items)))

    # --- the probe -------------------------------------------------------------------
    def action_probe(self) -> None:
        self.post_message(self.ProbeRequested())

    def _probe_status(self, line: str) -> None:
        self.figures.show_probe(None, Text(line, style="dim"))

    def start_probe(self, inputs: ProbeInputs) -> None:
        """Plan the questions in a worker, then ask first (see :meth:`_confirm_probe`)."""
        self._probe_inputs = inputs
        self._probe_status("probe: choosing the questions…")
        self._plan_probe(inputs)

    def _confirm_probe(self, probe: Any) -> None:
        from kimi_compact_tui.tui.screens.confirm import AskScreen

        inputs = self._probe_inputs
        if inputs is None:
            return
        if not probe.questions:
            self._probe_status(
                "probe: no questions: the compacted messages hold nothing the kept ones do not"
            )
            return
        body = (
            f"Send {probe.describe()} to {inputs.provider.describe()}?\n\n"
            f"Each request holds what the agent keeps: the leading system messages, "
            f"{inputs.what} and the kept tail; no compacted message. "
            "Secret-looking strings are masked."
        )

        def done(yes: bool | None) -> None:
            if yes:
                n = len(probe.questions)
                self._probe_status(f"probe: asking {n} question{'' if n == 1 else 's'}…")
                self._ask(probe, inputs.provider)
            else:
                self._probe_status("probe: not sent")

        self.app.push_screen(AskScreen("Probe the summary?", body, yes="Send (y)"), done)

    def show_probe(self, probe: Any) -> None:
        """Show a ProbeReport: its figures beside retention's, and the questions
        not answered right after the missing items."""
        from kimi_compact_tui.job.probe.grade import CORRECT

        self.probe = probe
        self.failed = [a for a in probe.answers if a.grade.verdict != CORRECT]
        inputs = self._probe_inputs
        pins = inputs.pins if inputs is not None else 0
        self.figures.show_probe(probe, label=f"Probe ({pins} pinned)" if pins else "Probe")
        self._fill()
