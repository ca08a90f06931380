"""The retention pane: what the summary keeps of the compacted range, and what it loses.

The per-category figures come first, then the missing items. The pane only
posts messages; the app decides what they do:

* ``enter`` on a missing item posts :class:`RetentionPane.JumpToMessage`
  with the item's first (1-based) message number;
* ``space`` marks or unmarks the highlighted item;
* ``i`` posts :class:`RetentionPane.AddToInstructions` with the marked items
  (else the highlighted one) and the instruction text for a re-run;
* ``e`` posts :class:`RetentionPane.AppendToEditor` with them as a clearly
  marked block for the summary editor.

A summary that loses a user request, an instruction or an open task is flagged
critical: a ``!`` on the category's line and on each such item, and a
``CRITICAL`` line under the title (readable without colour).

Item text comes from the session: it is shown as ``Text`` through
:func:`visible`, never parsed as markup.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import Worker, WorkerState

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

MARK_ON = "● "
MARK_OFF = "  "
CRITICAL_MARK = "! "


#: The label column; narrower (labels cut with …) when the row is narrower.
LABEL_CELLS = 15
ROW_CELLS = LABEL_CELLS + 1 + 9 + 5  # " label", "kept/total", "pct%"


def figures_text(report: RetentionReport | None, width: int | None = None) -> Text:
    """One line per category: label, kept/total, percent, and how many only
    the kept tail holds; 0/0 shows a dash, never 100%. In a row narrower than
    :data:`ROW_CELLS` (``width``) the labels are cut, so the figures stay on
    their line (a three-pane diff at 80 columns)."""
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
        tail = sum(1 for _, where in c.kept if where == KEPT_IN_TAIL)
        note = f"  {tail} in kept tail" if tail else ""
        if note and (width is None or width >= ROW_CELLS + len(note)):
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


class RetentionFigures(Static):
    """The figures of one report, laid out for the width they are drawn at
    (labels cut in a narrow pane, see :func:`figures_text`)."""

    def __init__(self, report: RetentionReport | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.report = report
        self.note: Text | None = None  # shown instead while a report is computed

    def show(self, report: RetentionReport | None, note: Text | None = None) -> None:
        self.report, self.note = report, note
        self.refresh(layout=True)

    def render(self) -> Text:
        if self.note is not None:
            return self.note
        return figures_text(self.report, self.content_region.width or None)


class RetentionPane(Vertical, can_focus=False):
    """Per-category figures, then the missing items of one report."""

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

    BINDINGS = [
        Binding("space", "toggle_mark", "Mark"),
        Binding("i", "add_to_instructions", "Add to instructions"),
        Binding("e", "append_to_editor", "Append to editor"),
    ]

    class Scored(Message):
        """A report computed by :meth:`RetentionPane.score` is shown."""

        def __init__(self, report: RetentionReport) -> None:
            super().__init__()
            self.report = report

    class JumpToMessage(Message):
        """Show message ``number`` (1-based) in the message list."""

        def __init__(self, number: int, item: Item) -> None:
            super().__init__()
            self.number = number
            self.item = item

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
        self.marked: set[int] = set()
        self.critical: set[int] = set()  # indices of the items flagged critical

    def compose(self) -> ComposeResult:
        yield RetentionFigures(self.report, id="retention-figures")
        yield OptionList(id="retention-missing")
        yield Static(
            Text("enter: go to message · space: mark · i: add to instructions · e: to editor"),
            id="retention-hint",
        )

    def on_mount(self) -> None:
        self._fill()

    @property
    def option_list(self) -> OptionList:
        return self.query_one("#retention-missing", OptionList)

    def show(self, report: RetentionReport | None) -> None:
        """Show another report (marks are cleared)."""
        self.report = report
        self.marked.clear()
        self._show_figures()
        self._fill()

    def _show_figures(self) -> None:
        self.query_one(RetentionFigures).show(self.report)

    def score(self, session: Any, plan: Any, summary: str) -> None:
        """Compute the report in a worker thread (a 10,000-message range takes
        about half a second), then show it and post :class:`Scored`."""
        note = Text("retention: scoring the summary…", style="dim")
        self.query_one(RetentionFigures).show(None, note)
        self._score(session, plan, summary)

    @work(thread=True, exclusive=True, group="retention", name="retention")
    def _score(self, session: Any, plan: Any, summary: str) -> RetentionReport:
        """The report (reads its arguments only); the UI thread shows it."""
        return retention_report(session, plan, summary)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.name == "retention" and event.state == WorkerState.SUCCESS:
            event.stop()
            report = event.worker.result
            assert isinstance(report, RetentionReport)
            self.show(report)
            self.post_message(self.Scored(report))

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
            return
        options.add_options(
            [
                Option(item_prompt(item, i in self.marked, i in self.critical), id=str(i))
                for i, item in enumerate(self.items)
            ]
        )
        if highlighted is not None and highlighted < len(self.items):
            options.highlighted = highlighted
        else:
            options.highlighted = 0

    def _current(self) -> int | None:
        index = self.option_list.highlighted
        if index is None or not self.items or index >= len(self.items):
            return None
        return index

    def chosen_items(self) -> list[Item]:
        """The marked items in report order, else the highlighted one."""
        if self.marked:
            return [self.items[i] for i in sorted(self.marked)]
        current = self._current()
        return [] if current is None else [self.items[current]]

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        index = event.option_index
        if 0 <= index < len(self.items) and self.items[index].messages:
            item = self.items[index]
            self.post_message(self.JumpToMessage(item.messages[0] + 1, item))

    def action_toggle_mark(self) -> None:
        current = self._current()
        if current is None:
            return
        self.marked.symmetric_difference_update({current})
        self.option_list.replace_option_prompt_at_index(
            current,
            item_prompt(self.items[current], current in self.marked, current in self.critical),
        )

    def action_add_to_instructions(self) -> None:
        items = self.chosen_items()
        if items:
            self.post_message(self.AddToInstructions(items, instructions_for(items)))

    def action_append_to_editor(self) -> None:
        items = self.chosen_items()
        if items:
            self.post_message(self.AppendToEditor(items, editor_block(items)))
