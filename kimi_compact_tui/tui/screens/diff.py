"""The diff: the session now, beside the session that would be written.

Left, every message of the current session (removed ones marked ``-``);
right, the compacted session (the summary message marked ``+``). Both are
line-based :class:`DiffView` lists, so 100,000 messages stay fast; the diff
itself (``kimi_compact_tui.diff.diff_sessions``) runs in a worker thread.
Below, the summary that will be written, rendered as Markdown once.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from kimi_compact_tui.compaction import build_compacted_session
from kimi_compact_tui.diff import ADDED, KEPT, REMOVED, SessionDiff, diff_sessions
from kimi_compact_tui.model import Session
from kimi_compact_tui.tui.widgets.diff_view import DiffRow, DiffView
from kimi_compact_tui.tui.widgets.stream_view import SummaryMarkdown


def output_tokens_of(state: Any) -> int | None:
    """The provider's output token count for the summary (None when edited or unknown)."""
    if getattr(state, "summary_edited", False):
        return None
    result = getattr(state, "stream_result", None)
    usage = getattr(result, "usage", None) or {}
    value = usage.get("completion_tokens") or usage.get("output_tokens")
    return value if isinstance(value, int) else None


def compacted_session_of(state: Any) -> Session | None:
    """The session that would be written for ``state`` (None without a summary
    or with nothing to compact)."""
    maker = getattr(state, "compacted_session", None)
    if callable(maker):
        return maker()
    prep = getattr(state, "preparation", None)
    summary = getattr(state, "summary", None)
    if prep is None or summary is None or prep.plan.noop:
        return None
    return build_compacted_session(
        prep.session, prep.plan, summary, output_tokens=output_tokens_of(state)
    )


def why_no_diff(state: Any) -> str | None:
    prep = getattr(state, "preparation", None)
    if getattr(state, "session", None) is None or prep is None:
        return "no session is loaded"
    if prep.plan.noop:
        return f"nothing to compact: {prep.plan.noop}"
    if getattr(state, "summary", None) is None:
        result = getattr(state, "stream_result", None)
        if result is not None and getattr(result, "status", "") != "complete":
            return f"the last run was {result.status}: there is no summary to write (press c)"
        return "no summary yet: press c to compact first"
    return None


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


def diff_header(diff: SessionDiff, *, edited: bool = False) -> Text:
    saved = diff.tokens_before - diff.tokens_after
    text = Text()
    text.append("before ", style="bold")
    text.append(f"{diff.before_count:,} messages, ~{diff.tokens_before:,} tokens")
    text.append("  →  ")
    text.append("after ", style="bold")
    text.append(f"{diff.after_count:,} messages, ~{diff.tokens_after:,} tokens")
    if saved > 0 and diff.tokens_before:
        text.append(f"  (~{saved:,} saved, {saved * 100 // diff.tokens_before}%)", style="green")
    text.append("\n")
    text.append(f"{diff.counts[KEPT]:,} kept", style="bold")
    text.append(" · ")
    text.append(f"{diff.counts[REMOVED]:,} removed", style="bold red")
    text.append(" · ")
    text.append(f"{diff.counts[ADDED]:,} added (the summary)", style="bold green")
    if edited:
        text.append(" · summary edited", style="yellow")
    return text


class DiffScreen(Screen[None]):
    """Old session beside the compacted one; the summary below as Markdown."""

    BINDINGS = [
        Binding("escape,q", "close", "Back"),
        Binding("s", "toggle_summary", "Summary pane"),
    ]

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
    DiffScreen #diff-columns > Vertical {
        width: 1fr;
    }
    DiffScreen .column-title {
        padding: 0 1;
        text-style: bold;
        color: $text-muted;
    }
    DiffScreen #summary-pane {
        height: 40%;
        border: round $success;
    }
    DiffScreen.no-summary-pane #summary-pane {
        display: none;
    }
    """

    def __init__(self, state: Any, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(name=name, id=id)
        self.state = state
        self.reason = why_no_diff(state)
        self.diff: SessionDiff | None = None
        self.summary: str | None = getattr(state, "summary", None)

    def compose(self) -> ComposeResult:
        yield Static(Text("Diff", style="bold"), id="diff-head")
        if self.reason is not None:
            yield Static(Text(self.reason), id="diff-reason")
            yield Footer()
            return
        with Horizontal(id="diff-columns"):
            with Vertical():
                yield Static(Text("now"), classes="column-title", id="before-title")
                yield DiffView(id="before")
            with Vertical():
                yield Static(Text("after the write"), classes="column-title", id="after-title")
                yield DiffView(id="after")
        with VerticalScroll(id="summary-pane") as pane:
            pane.border_title = "summary as it will be written"
            yield SummaryMarkdown(self.summary or "", id="diff-summary")
        yield Footer()

    def on_mount(self) -> None:
        if self.reason is None:
            self.query_one("#diff-columns").loading = True
            self._compute()

    @work(thread=True, exclusive=True, group="diff", exit_on_error=False)
    def _compute(self) -> None:
        try:
            before = self.state.session
            after = compacted_session_of(self.state)
            if after is None:
                raise ValueError("no compacted session to compare")
            known = getattr(self.state, "message_tokens", None)
            if not known or len(known) != len(before.messages):
                known = None
            diff = diff_sessions(before, after, before_tokens=known)
            columns = split_rows(diff)
        except Exception as exc:  # shown, never a traceback
            self.app.call_from_thread(self._failed, f"{type(exc).__name__}: {exc}")
            return
        self.app.call_from_thread(self._show, diff, *columns)

    def _failed(self, message: str) -> None:
        self.query_one("#diff-columns").loading = False
        self.query_one("#diff-head", Static).update(Text(f"cannot build the diff: {message}"))

    def _show(self, diff: SessionDiff, before: list[DiffRow], after: list[DiffRow]) -> None:
        self.diff = diff
        self.query_one("#diff-columns").loading = False
        edited = bool(getattr(self.state, "summary_edited", False))
        self.query_one("#diff-head", Static).update(diff_header(diff, edited=edited))
        self.query_one("#before", DiffView).set_rows(before)
        self.query_one("#after", DiffView).set_rows(after)
        self.query_one("#before-title", Static).update(
            Text(f"now — {diff.before_count:,} messages")
        )
        self.query_one("#after-title", Static).update(
            Text(f"after the write — {diff.after_count:,} messages")
        )
        self.query_one("#before", DiffView).focus()

    def action_close(self) -> None:
        self.dismiss(None)

    def action_toggle_summary(self) -> None:
        self.toggle_class("no-summary-pane")
