"""The retention pane: what the summary keeps of the compacted range, and what it loses.

The per-category figures come first, then the missing items, then the items
the summary states wrongly (misstated: its words and what the session says),
then the probe's questions not answered right. The pane keeps no copy of the review: it renders
the :class:`~kimi_compact_tui.tui.state.ReviewState` it is given, each time the
state says it changed (:meth:`ReviewState.watch`): the report of its subject
(the summary under review, or on the stream screen a run that is not it), the
pins (item keys, marked ``●``), the summary with its pinned block and that
text's figures, and the probe of the summary as written with its state.

Its keys are its host screen's (``space``, ``a``, the probe key, ``i``,
``e``): they act on the highlighted row wherever the pane is shown, focused
or not, and the hint under the list says so. ``enter`` on a row posts
:class:`RetentionPane.JumpToMessage`. The work (scores, pins, the probe) is
the host's controller's (:mod:`kimi_compact_tui.tui.retention_controller`).

A summary that loses a user request, an instruction or an open task is flagged
critical: a ``!`` on the category's line and on each such item, and a
``CRITICAL`` line under the title. Item text comes from the session: shown as
``Text`` through :func:`visible`, never parsed as markup.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import OptionList, Static

from kimi_compact_tui.retention import Item, RetentionReport
from kimi_compact_tui.retention.report import Misstated
from kimi_compact_tui.tui.state import ReviewState, item_key
from kimi_compact_tui.tui.widgets.retention_text import figures_text, listed, probe_failures

HINT_ITEMS = (
    "space: pin the highlighted item · a: all of its kind · {probe}: probe · "
    "enter: its message · i / e: to instructions / editor"
)
HINT_NONE = "{probe}: probe what the agent will know with this summary"


class RetentionFigures(Static):
    """The figures, laid out for the width they are drawn at (see :func:`figures_text`)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.shown: Callable[[int | None], Text] = lambda _width: figures_text(None)

    def show(self, text_at: Callable[[int | None], Text]) -> None:
        self.shown = text_at
        self.refresh(layout=True)

    def render(self) -> Text:
        return self.shown(self.content_region.width or None)


class RetentionPane(Vertical, can_focus=False):
    """Per-category figures, then the missing items of the pane's subject (then
    the questions a probe did not see answered right)."""

    DEFAULT_CSS = """
    RetentionPane {
        height: 1fr;
        border: round $panel;
    }
    RetentionPane > #retention-figures {
        height: auto;
        max-height: 50%;
        padding: 0 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    RetentionPane > #retention-missing {
        height: 1fr;
        min-height: 3;
        border: none;
    }
    RetentionPane.-nothing-listed > #retention-figures {
        height: 1fr;
        max-height: 100%;
    }
    RetentionPane.-nothing-listed > #retention-missing {
        height: 1;
        min-height: 1;
    }
    RetentionPane > #retention-hint {
        height: 1;
        color: $text-muted;
        padding: 0 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    class JumpToMessage(Message):
        """Show message ``number`` (1-based) in the message list."""

        def __init__(self, number: int, item: Item | None) -> None:
            super().__init__()
            self.number = number
            self.item = item  # None for a probe's question

    def __init__(
        self,
        state: ReviewState,
        *,
        subject: Callable[[], str | None] | None = None,
        probe_key: str = "Q",
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.state = state
        #: The summary the pane scores (default: the summary under review).
        self.subject: Callable[[], str | None] = subject or (lambda: state.summary)
        self.probe_key = probe_key
        self.items: list[Item] = []  # the rows shown, as drawn from the state
        self.wrong: list[Misstated] = []  # the items stated wrongly, after the missing
        self.failed: list[Any] = []  # the probe's answers not right, after those
        self._drawn: tuple[Any, ...] | None = None
        self._stop: Callable[[], None] | None = None

    def compose(self) -> ComposeResult:
        yield RetentionFigures(id="retention-figures")
        yield OptionList(id="retention-missing")
        yield Static(Text(""), id="retention-hint")

    def on_mount(self) -> None:
        self.border_title = "retention"
        self._stop = self.state.watch(self.redraw)
        self.redraw()

    def on_unmount(self) -> None:
        if self._stop is not None:
            self._stop()

    @property
    def option_list(self) -> OptionList:
        return self.query_one("#retention-missing", OptionList)

    # --- what the state holds for the subject ---------------------------------------
    @property
    def report(self) -> RetentionReport | None:
        return self.state.scored(self.subject())

    @property
    def pins_apply(self) -> bool:
        """The subject is the summary under review (pins are of that one only)."""
        subject = self.subject()
        return subject is not None and subject == self.state.summary

    def probed_text(self) -> str | None:
        """The text a probe from this pane asks about: the summary as written."""
        return self.state.summary_to_write if self.pins_apply else None

    @property
    def probe(self) -> Any:
        return self.state.probe_of(self.probed_text())

    # --- drawing --------------------------------------------------------------------
    def redraw(self) -> None:
        if not self.is_attached:
            return
        state, report, subject = self.state, self.report, self.subject()
        pinned = state.pinned if self.pins_apply else None
        pins_line = None
        if self.pins_apply:
            pins_line = pinned.line() if pinned is not None else state.pins_line()
        probe, text = self.probe, self.probed_text()
        note = state.probe_notes.get(text) if text is not None else None
        label = f"Probe ({len(pinned.items)} pinned)" if pinned is not None else "Probe"
        if report is None:
            what = "scoring the summary…" if subject else "no summary to score yet"
            self.query_one(RetentionFigures).show(
                lambda _w: Text(f"retention: {what}", style="dim")
            )
        else:
            shown = pinned.report if pinned is not None and pinned.scored else report
            probe_note = Text(note, style="dim") if note else None

            def text_at(width: int | None) -> Text:
                return figures_text(
                    shown,
                    width,
                    pins_line=pins_line,
                    probe=probe if note is None else None,
                    probe_note=probe_note,
                    probe_label=label,
                )

            self.query_one(RetentionFigures).show(text_at)
        self.items = report.missing_items() if report is not None else []
        self.wrong = report.misstated_items() if report is not None else []
        self.failed = [] if probe is None or note else probe_failures(probe)
        # nothing to list: the figures take the room (one row says so)
        self.set_class(not self.items and not self.wrong and not self.failed, "-nothing-listed")
        self._fill(report)

    def _fill(self, report: RetentionReport | None) -> None:
        pinned = {i for i, item in enumerate(self.items) if self.state.is_pinned(item)}
        if not self.pins_apply:
            pinned = set()
        flagged = report.critical_missing() if report is not None else []
        critical = {i for i, item in enumerate(self.items) if item in flagged}
        wrong_flagged = report.critical_misstated() if report is not None else []
        drawn = (
            tuple(item_key(i) for i in self.items),
            tuple((item_key(m.item), m.stated, m.statement) for m in self.wrong),
            frozenset(pinned),
            frozenset(critical),
            tuple(id(a) for a in self.failed),
            report is None,
        )
        probe = self.probe_key
        hint = HINT_ITEMS if self.items else HINT_NONE
        self.query_one("#retention-hint", Static).update(Text(hint.format(probe=probe)))
        if drawn == self._drawn:
            return
        self._drawn = drawn
        options = self.option_list
        highlighted = options.highlighted
        options.clear_options()
        options.add_options(
            listed(self.items, pinned, critical, self.wrong, wrong_flagged, self.failed, report)
        )
        if highlighted is not None and highlighted < options.option_count:
            options.highlighted = highlighted
        elif self.items:
            options.highlighted = 0

    # --- what the host's keys act on -------------------------------------------------
    def highlighted_item(self) -> Item | None:
        index = self.option_list.highlighted
        if index is None or not self.items or index >= len(self.items):
            return None
        return self.items[index]

    def category_items(self) -> list[Item]:
        """Every missing item of the highlighted one's category."""
        current = self.highlighted_item()
        if current is None:
            return []
        return [item for item in self.items if item.category == current.category]

    def chosen_items(self) -> list[Item]:
        """The pinned items in report order, else the highlighted one."""
        pinned = [item for item in self.items if self.pins_apply and self.state.is_pinned(item)]
        if pinned:
            return pinned
        current = self.highlighted_item()
        return [] if current is None else [current]

    def _wrong_at(self, index: int) -> Misstated | None:
        """The misstated item listed at option ``index``, or None."""
        first = max(len(self.items), 1) + 1  # after the items (or the placeholder) and the head
        if self.wrong and first <= index < first + len(self.wrong):
            return self.wrong[index - first]
        return None

    def _answer_at(self, index: int) -> Any:
        """The failed question listed at option ``index``, or None."""
        first = max(len(self.items), 1) + 1  # after the items (or the placeholder) and the head
        if self.wrong:
            first += len(self.wrong) + 1
        if self.failed and first <= index < first + len(self.failed):
            return self.failed[index - first]
        return None

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        index = event.option_index
        if 0 <= index < len(self.items) and self.items[index].messages:
            item = self.items[index]
            self.post_message(self.JumpToMessage(item.messages[0] + 1, item))
            return
        wrong = self._wrong_at(index)
        if wrong is not None and wrong.item.messages:
            self.post_message(self.JumpToMessage(wrong.item.messages[0] + 1, wrong.item))
            return
        answer = self._answer_at(index)
        if answer is not None and answer.question.messages:
            self.post_message(self.JumpToMessage(answer.question.messages[0] + 1, None))
