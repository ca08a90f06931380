"""Confirm the write: which file, what copy of the old version is kept, and
how many messages go and stay.

kimi-cli sessions are rotated the way kimi-cli does it (``context.jsonl →
context_N.jsonl``, N one past the highest existing); other files get a
timestamped backup beside them. ``y``/``enter`` confirm, ``n``/``escape``
cancel; the screen dismisses with a bool. When the boundary splits a tool
exchange the dialog names the messages, ``y`` does not write, and only the
separate "write the split history" button (``!``) does.

Two warnings come before ``y``: a compaction that makes the session larger
(both token figures, from the draft's ``grows``), and a file that changed on
disk since it was loaded (the store's fingerprint of the file now against the
loaded one, taken in a thread worker: the write would be refused, and when the
agent only appended turns the app then offers the write on them; ``R`` on the
main screen reloads it).

:class:`AskScreen` is the small yes/no question used before discarding work.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Static
from textual.worker import Worker, WorkerState

from kimi_compact_tui import store
from kimi_compact_tui.errors import UserError
from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.formats.loader import Fingerprint
from kimi_compact_tui.formats.storage import SessionRef
from kimi_compact_tui.job import Draft
from kimi_compact_tui.sanitize import visible
from kimi_compact_tui.store import keep_description
from kimi_compact_tui.tui import keys
from kimi_compact_tui.tui.screens.dialog import dialog_css
from kimi_compact_tui.tui.state import ReviewState


def backup_description(ref: SessionRef | None, session: Session) -> str:
    """One line saying what copy of the old file the write keeps."""
    return keep_description(ref, session.format)


def _format_notes(session: Session) -> list[str]:
    """What the format says a person must know before writing (e.g. close the agent)."""
    return list(session.format.write_notes)


def write_counts(state: ReviewState, draft: Draft | None = None) -> dict[str, int]:
    """before → after message counts, and how many are compacted and kept
    (``draft``: the compacted session, whose length is the after count: some
    agents frame the summary with a message of their own)."""
    prep = state.preparation
    assert prep is not None  # the dialog opens only with a plan
    plan = prep.plan
    before = plan.total
    compacted = len(plan.compact_indices)
    kept = len(plan.leading_system_indices) + len(plan.preserved_indices)
    return {
        "before": before,
        "after": len(draft.compacted.messages) if draft is not None else kept + 1,
        "compacted": compacted,
        "kept": kept,
        "tokens_before": state.tokens_before,
        "tokens_after": state.tokens_after(),
    }


def disk_check(path: SessionRef, loaded: Fingerprint) -> str | None:
    """None when the session file at ``path`` is still what was loaded (the
    store's fingerprint); else one line saying it changed (or cannot be read).
    Runs in a thread worker: it reads the whole file."""
    try:
        now = store.fingerprint(path)
    except UserError as exc:
        return str(exc)
    if now.size != loaded.size:
        return f"changed on disk since it was loaded (its size went from {loaded.size:,} to {now.size:,} bytes)"
    if now.mtime_ns != loaded.mtime_ns or (loaded.sha256 and now.sha256 != loaded.sha256):
        return "changed on disk since it was loaded (another program wrote to it)"
    return None


class AskScreen(ModalScreen[bool]):
    """A yes/no question (``y``/``n``/``escape``); dismisses with a bool."""

    AUTO_FOCUS = None
    BINDINGS = keys.bindings(keys.ASK_KEYS)
    DEFAULT_CSS = dialog_css("AskScreen", "$warning")

    def __init__(
        self, title: str, body: str, *, yes: str = "Yes (y)", no: str = "No (n)", purpose: str = ""
    ) -> None:
        super().__init__()
        self.title_text, self.body, self.yes, self.no = title, body, yes, no
        self.purpose = purpose  # what is being asked for ("quit"), for a caller that asks again

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(visible(self.title_text)), classes="dialog-title", id="ask-title")
            yield Static(Text(visible(self.body)), classes="dialog-body", id="ask-body")
            with Horizontal():
                yield Button(self.yes, id="ask-yes", variant="warning")
                yield Button(self.no, id="ask-no")

    def on_mount(self) -> None:
        for button in self.query(Button):
            button.can_focus = False

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "ask-yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class ProbeAskScreen(AskScreen):
    """The question before a probe is sent: ``y`` sends, ``n`` does not, ``+`` and
    ``-`` dismiss asking for more or fewer questions (:attr:`step`)."""

    BINDINGS = keys.bindings(keys.PROBE_ASK_KEYS)

    def __init__(self, title: str, body: str, *, count: int) -> None:
        plural = "" if count == 1 else "s"
        steps = f"\n\n{count} question{plural} · +: more · -: fewer (asked again first)"
        super().__init__(title, body + steps, yes="Send (y)")
        self.step: str | None = None  # "more" or "fewer" when + or - was pressed

    def action_step(self, step: str) -> None:
        self.step = step
        self.dismiss(False)


class ConfirmWriteScreen(ModalScreen[bool]):
    AUTO_FOCUS = None
    BINDINGS = keys.bindings(keys.CONFIRM_WRITE_KEYS)

    DEFAULT_CSS = dialog_css("ConfirmWriteScreen", "$warning") + """
    ConfirmWriteScreen #confirm-body {
        margin: 1 0 0 0;
    }
    ConfirmWriteScreen #confirm-disk {
        margin: 0 0 1 0;
    }
    """

    def __init__(self, state: ReviewState) -> None:
        super().__init__()
        self.state = state
        self.splits = state.splits
        self.draft = state.draft()
        #: None while the file is being checked, "" when it is unchanged, else why not.
        self.disk_warning: str | None = None

    def body_text(self) -> Text:
        state = self.state
        session = state.session
        path = state.session_ref
        fmt = session.format.label if session is not None else "?"
        text = Text()
        text.append("file     ", style="bold")
        text.append(visible(path.shown()) if path is not None else "(none)")
        text.append(f"  ({fmt})\n")
        text.append("keeps    ", style="bold")
        session = state.session
        if session is not None:
            text.append(visible(backup_description(path, session)))
            text.append("\n")
            for note in _format_notes(session):
                text.append("note     ", style="bold")
                text.append(visible(note) + "\n", style="yellow")
        else:
            text.append("(no session)\n")
        if state.preparation is not None:
            c = write_counts(state, self.draft)
            text.append("messages ", style="bold")
            text.append(f"{c['before']:,} → {c['after']:,}")
            text.append(f"  ({c['compacted']:,} compacted into 1 summary, {c['kept']:,} kept)\n")
            text.append("tokens   ", style="bold")
            text.append(f"~{c['tokens_before']:,} → ~{c['tokens_after']:,}")
            draft = self.draft
            if draft is not None and draft.grows:
                before, after = draft.preparation.tokens_before, draft.tokens_after
                text.append("\n⚠ larger after compaction: ", style="bold red")
                text.append(
                    f"~{before:,} → ~{after:,} tokens (the summary is longer than what it "
                    "replaces); write it only if you mean to",
                    style="red",
                )
        if state.summary_edited:
            text.append("\nthe summary was edited: the edited text is written", style="yellow")
        pins = state.pins_line()  # the one account of the pins, as the stream and diff show
        if pins is not None:
            text.append(f"\n● {pins}", style="bold")
        if state.stream_result is not None and state.stream_result.offline:
            text.append("\noffline — no model wrote this summary", style="bold yellow")
        if self.splits:
            text.append("\n\nthe boundary splits a tool exchange", style="bold red")
            text.append(" (OpenAI-compatible APIs reject such a history):", style="red")
            for split in self.splits:
                text.append("\n  • " + visible(split.describe()))
            text.append(
                "\ny does not write it: press s on the main screen for a safe boundary, "
                "or ! to write the split history anyway",
                style="yellow",
            )
        return text

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                Text("Write the compacted session?"), id="confirm-title", classes="dialog-title"
            )
            yield Static(self.body_text(), id="confirm-body")
            yield Static(self.disk_text(), id="confirm-disk")
            with Horizontal():
                if self.splits:
                    yield Button("Write the split history (!)", id="confirm-split", variant="error")
                else:
                    yield Button("Write (y)", id="confirm-yes", variant="warning")
                yield Button("Cancel (n)", id="confirm-no")

    def on_mount(self) -> None:
        # Keys decide (y/enter, n/escape): no button holds the focus, so enter
        # never presses "Cancel" by accident.
        for button in self.query(Button):
            button.can_focus = False
        path, loaded = self.state.session_ref, self.state.fingerprint
        if path is not None and loaded is not None:
            self.run_worker(
                partial(disk_check, path, loaded),
                thread=True,
                exclusive=True,
                group="disk-check",
                name="disk-check",
                exit_on_error=False,
            )
        else:
            self._show_disk("")

    def disk_text(self) -> Text:
        text = Text("on disk  ", style="bold")
        if self.disk_warning is None:
            text.append("checking the file…", style="dim")
        elif self.disk_warning:
            text.append("⚠ " + visible(self.disk_warning), style="bold red")
            text.append(
                "\n         y will be refused (when the agent only appended turns, it then "
                "offers to write on them): press n, then R to reload the session",
                style="red",
            )
        else:
            text.append("unchanged since it was loaded")
        return text

    def _show_disk(self, warning: str) -> None:
        self.disk_warning = warning
        self.query_one("#confirm-disk", Static).update(self.disk_text())

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.name != "disk-check":
            return
        if event.state == WorkerState.SUCCESS:
            self._show_disk(event.worker.result or "")
        elif event.state == WorkerState.ERROR:
            self._show_disk(f"cannot check the file ({event.worker.error})")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id in ("confirm-yes", "confirm-split"))

    def action_confirm(self) -> None:
        if self.splits:
            self.notify(
                "the boundary splits a tool exchange: press ! to write it anyway, or n",
                severity="warning",
                markup=False,
            )
            return
        self.dismiss(True)

    def action_confirm_split(self) -> None:
        if self.splits:
            self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)


def ask_discard(screen: Screen[Any], what: str, keep: str) -> None:
    """Dismiss ``screen`` with None after asking whether unsaved changes to
    ``what`` may go (``keep``: how to keep them instead)."""

    def done(discard: bool | None) -> None:
        if discard:
            screen.dismiss(None)

    ask = AskScreen(
        "Discard your changes?",
        f"The edited {what} is not saved ({keep}).",
        yes="Discard (y)",
        no="Keep editing (n)",
    )
    screen.app.push_screen(ask, done)
