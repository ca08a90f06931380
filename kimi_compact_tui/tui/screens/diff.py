"""The diff: the session now, beside the session that would be written.

Left, every message of the current session (removed ones marked ``-``);
right, the compacted session (the summary message marked ``+``). Both are
line-based :class:`DiffView` lists, so 100,000 messages stay fast; the diff
itself (``kimi_compact_tui.diff.diff_sessions``) runs in a thread worker
that returns it; the UI thread shows it. Below, the summary exactly as it
will be written (raw text; ``m`` shows it rendered as Markdown): the state's
:attr:`~ReviewState.summary_to_write`, with the pinned block when items are
pinned. The screen keeps no copy of it: on each change of the review it
builds the diff again when the summary to write is not the one shown (a pin
or an unpin here). The retention pane beside the lists takes this screen's
keys (``space``, ``a``, the probe key, ``i``, ``e``), focused or not; the
rebuild never covers it, so the focus stays where it is. ``w`` writes from
here (the app asks to confirm first).
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from kimi_compact_tui.diff import ADDED, KEPT, REMOVED, SessionDiff, diff_sessions
from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.tui import keys
from kimi_compact_tui.tui.flow import FlowRequest, WriteRequested
from kimi_compact_tui.tui.retention_controller import RetentionController
from kimi_compact_tui.tui.screens.retention_host import RetentionHost
from kimi_compact_tui.tui.state import ReviewState
from kimi_compact_tui.tui.widgets.diff_view import DiffRow, DiffView
from kimi_compact_tui.tui.widgets.footer import KeysFooter
from kimi_compact_tui.tui.widgets.retention_pane import RetentionPane
from kimi_compact_tui.tui.widgets.stream_view import SummaryPane
from kimi_compact_tui.wording import count, noop_line


def compacted_session_of(state: ReviewState) -> Session | None:
    """The session that would be written for ``state`` (None without a summary
    or with nothing to compact): the state's own build, the one the write uses."""
    return state.compacted_session()


def why_no_diff(state: ReviewState) -> str | None:
    prep = state.preparation
    if state.session is None or prep is None:
        return "no session is loaded"
    if prep.plan.noop:
        return noop_line(prep.plan.noop)
    return keys.no_summary(state, " to write")


def split_rows(diff: SessionDiff) -> tuple[list[DiffRow], list[DiffRow]]:
    """The before column (kept + removed) and the after column (kept + added)."""
    before: list[DiffRow] = []
    after: list[DiffRow] = []
    for row in diff.rows:
        if row.before_index is not None:
            before.append(DiffRow(row.kind, row.before_index + 1, row.message, row.tokens))
        if row.after_index is not None:
            after.append(DiffRow(row.kind, row.after_index + 1, row.message, row.tokens))
    return before, after


def diff_header(diff: SessionDiff, *, edited: bool = False, pinned: int = 0) -> Text:
    """Two lines, each cut with an ellipsis rather than wrapped: the message and
    token figures before and after, then the counts and what is saved."""
    saved = diff.tokens_before - diff.tokens_after
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append("before ", style="bold")
    text.append(f"{count(diff.before_count, 'message')}, ~{diff.tokens_before:,} tokens")
    text.append("  →  ")
    text.append("after ", style="bold")
    text.append(f"{count(diff.after_count, 'message')}, ~{diff.tokens_after:,} tokens")
    text.append("\n")
    text.append(f"{diff.counts[KEPT]:,} kept", style="bold")
    text.append(" · ")
    text.append(f"{diff.counts[REMOVED]:,} removed", style="bold red")
    text.append(" · ")
    text.append(f"{diff.counts[ADDED]:,} added (the summary)", style="bold green")
    if saved > 0 and diff.tokens_before:
        text.append(f" · ~{saved:,} saved ({saved * 100 // diff.tokens_before}%)", style="green")
    if edited:
        text.append(" · summary edited", style="yellow")
    if pinned:
        text.append(f" · ● {pinned} pinned", style="bold")
    return text


class DiffScreen(RetentionHost, Screen[FlowRequest | None]):
    """Old session beside the compacted one; the summary below as written.
    Dismisses with a :class:`WriteRequested` when ``w`` asks for the write
    (or a retention request), else None."""

    BINDINGS = keys.bindings(keys.DIFF_KEYS)

    DEFAULT_CSS = """
    DiffScreen #diff-head {
        height: auto;
        padding: 0 1;
    }
    DiffScreen #diff-reason {
        padding: 1 2;
        color: $warning;
        text-style: bold;
    }
    DiffScreen #diff-columns {
        height: 1fr;
    }
    DiffScreen #diff-lists {
        width: 2fr;
    }
    DiffScreen #diff-lists > Vertical {
        width: 1fr;
    }
    DiffScreen #retention-pane {
        width: 1fr;
    }
    DiffScreen .column-title {
        padding: 0 1;
        text-style: bold;
        color: $text-muted;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    DiffScreen #summary-pane {
        height: 40%;
    }
    DiffScreen.no-summary-pane #summary-pane {
        display: none;
    }
    """

    def __init__(
        self, state: ReviewState, *, name: str | None = None, id: str | None = None
    ) -> None:
        super().__init__(name=name, id=id)
        self.state = state
        self.reason = why_no_diff(state)
        self.diff: SessionDiff | None = None
        self.built_for: str | None = None  # the summary to write the shown diff was built for
        self.controller = RetentionController(self, state)
        self._unwatch: Callable[[], None] | None = None

    def compose(self) -> ComposeResult:
        yield Static(Text("Diff", style="bold"), id="diff-head")
        if self.reason is not None:
            yield Static(Text(self.reason), id="diff-reason")
            yield KeysFooter()
            return
        with Horizontal(id="diff-columns"):
            # Only the two lists wait for a diff: the pane beside them is never
            # covered, so a pin there keeps the focus where it is.
            with Horizontal(id="diff-lists"):
                with Vertical():
                    yield Static(Text("now"), classes="column-title", id="before-title")
                    yield DiffView(id="before")
                with Vertical():
                    yield Static(Text("after the write"), classes="column-title", id="after-title")
                    yield DiffView(id="after")
            yield RetentionPane(self.state, probe_key=keys.PROBE_KEY, id="retention-pane")
        yield SummaryPane(
            self.state.summary_to_write or "", prefix="diff-summary", id="summary-pane"
        )
        yield KeysFooter()

    def on_mount(self) -> None:
        if self.reason is None:
            self.query_one("#diff-lists").loading = True
            session = self.state.session
            draft = self.state.draft()  # built here, on the UI thread: the one the write uses
            tokens = self.state.message_tokens
            if session is None or draft is None:
                self._failed("no compacted session to compare")
                return
            self.built_for = self.state.summary_to_write
            self._compute(session, draft.compacted, tokens)
            self.controller.score(self.state.summary)
            self._unwatch = self.state.watch(self.review_changed)

    def on_unmount(self) -> None:
        if self._unwatch is not None:
            self._unwatch()

    def review_changed(self) -> None:
        """The state changed: when the summary to write is another (a pin, an
        unpin), the summary pane and the diff again; the pane's pins scored."""
        if not self.is_attached or self.reason is not None:
            return
        self.controller.score(self.state.summary)
        self.refresh_bindings()
        text = self.state.summary_to_write
        session, draft = self.state.session, self.state.draft()
        if text == self.built_for or session is None or draft is None:
            return
        self.built_for = text
        self.query_one(SummaryPane).set_summary(text or "")
        self.query_one("#diff-lists").loading = True
        self._compute(session, draft.compacted, self.state.message_tokens)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.retention_check(action)

    @work(
        thread=True,
        exclusive=True,
        group="diff",
        name="diff",
        description="diff",
        exit_on_error=False,
    )
    def _compute(
        self, before: Session, after: Session, tokens: list[int]
    ) -> tuple[SessionDiff, list[DiffRow], list[DiffRow]] | str:
        """The diff and its two columns, or the error line (reads its arguments only)."""
        try:
            known: list[int] | None = tokens
            if not tokens or len(tokens) != len(before.messages):
                known = None
            diff = diff_sessions(before, after, before_tokens=known)
            return (diff, *split_rows(diff))
        except Exception as exc:  # shown, never a traceback
            return f"{type(exc).__name__}: {exc}"

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.name != "diff" or event.state != WorkerState.SUCCESS:
            return
        result = event.worker.result
        if isinstance(result, tuple):
            self._show(*result)
        else:
            self._failed(str(result))

    def _failed(self, message: str) -> None:
        self.query_one("#diff-lists").loading = False
        self.query_one("#diff-head", Static).update(Text(f"cannot build the diff: {message}"))

    def _show(self, diff: SessionDiff, before: list[DiffRow], after: list[DiffRow]) -> None:
        first = self.diff is None
        self.diff = diff
        self.query_one("#diff-lists").loading = False
        edited = self.state.summary_edited
        pinned = self.state.pinned
        n = len(pinned.items) if pinned is not None else 0
        self.query_one("#diff-head", Static).update(diff_header(diff, edited=edited, pinned=n))
        self.query_one("#before", DiffView).set_rows(before)
        self.query_one("#after", DiffView).set_rows(after)
        self.query_one("#before-title", Static).update(
            Text(f"now — {count(diff.before_count, 'message')}")
        )
        self.query_one("#after-title", Static).update(
            Text(f"after the write — {count(diff.after_count, 'message')}")
        )
        if first:  # built again after a pin: the focus stays in the pane
            self.query_one("#before", DiffView).focus()

    def action_close(self) -> None:
        self.leave(lambda: self.dismiss(None))

    def action_toggle_summary(self) -> None:
        self.toggle_class("no-summary-pane")

    def action_toggle_markdown(self) -> None:
        if self.reason is None:
            self.query_one(SummaryPane).toggle()

    def action_write(self) -> None:
        if self.reason is not None or not self.state.writable:
            why = self.reason or f"nothing to write: {self.state.write_refusal()}"
            self.notify(why, markup=False, timeout=4)
            return
        self.dismiss(WriteRequested())
