"""Confirm the write: which file, what copy of the old version is kept, and
how many messages go and stay.

kimi-cli sessions are rotated the way kimi-cli does it (``context.jsonl →
context_N.jsonl``, N one past the highest existing); other files get a
timestamped backup beside them. ``y``/``enter`` confirm, ``n``/``escape``
cancel; the screen dismisses with a bool.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from kimi_compact_tui.store import keep_description
from kimi_compact_tui.tui.sanitize import visible


def backup_description(path: Path | None, session: Any) -> str:
    """One line saying what copy of the old file the write keeps."""
    from kimi_compact_tui.formats.registry import format_of

    return keep_description(path, format_of(session).write_policy)


def _format_notes(session: Any) -> list[str]:
    """What the format says a person must know before writing (e.g. close the agent)."""
    from kimi_compact_tui.formats.registry import format_of

    fmt = format_of(session)
    return list(getattr(fmt, "write_notes", ()))


def write_counts(state: Any) -> dict[str, int]:
    """before → after message counts, and how many are compacted and kept."""
    prep = state.preparation
    plan = prep.plan
    before = plan.total
    compacted = len(plan.compact_indices)
    kept = len(plan.leading_system_indices) + len(plan.preserved_indices)
    return {
        "before": before,
        "after": kept + 1,
        "compacted": compacted,
        "kept": kept,
        "tokens_before": prep.tokens_before,
        "tokens_after": prep.tokens_after(getattr(state, "summary", None)),
    }


class ConfirmWriteScreen(ModalScreen[bool]):
    AUTO_FOCUS = None
    BINDINGS = [
        Binding("y,enter", "confirm", "Write"),
        Binding("n,escape", "cancel", "Cancel"),
    ]

    DEFAULT_CSS = """
    ConfirmWriteScreen {
        align: center middle;
    }
    ConfirmWriteScreen > Vertical {
        width: 90%;
        max-width: 110;
        height: auto;
        border: thick $warning;
        background: $panel;
        padding: 1 2;
    }
    ConfirmWriteScreen #confirm-title {
        text-style: bold;
    }
    ConfirmWriteScreen #confirm-body {
        margin: 1 0;
    }
    ConfirmWriteScreen Horizontal {
        height: auto;
    }
    ConfirmWriteScreen Button {
        margin-right: 2;
    }
    """

    def __init__(self, state: Any) -> None:
        super().__init__()
        self.state = state

    def body_text(self) -> Text:
        state = self.state
        path = getattr(state, "session_path", None)
        if path is None and getattr(state, "session", None) is not None:
            path = state.session.path
        fmt = state.session.format if getattr(state, "session", None) is not None else "?"
        text = Text()
        text.append("file     ", style="bold")
        text.append(visible(str(path)) if path is not None else "(none)")
        text.append(f"  ({fmt})\n")
        text.append("keeps    ", style="bold")
        session = getattr(state, "session", None)
        if session is not None:
            text.append(visible(backup_description(Path(path) if path else None, session)))
            text.append("\n")
            for note in _format_notes(session):
                text.append("note     ", style="bold")
                text.append(visible(note) + "\n", style="yellow")
        else:
            text.append("(no session)\n")
        if getattr(state, "preparation", None) is not None:
            c = write_counts(state)
            text.append("messages ", style="bold")
            text.append(f"{c['before']:,} → {c['after']:,}")
            text.append(f"  ({c['compacted']:,} compacted into 1 summary, {c['kept']:,} kept)\n")
            text.append("tokens   ", style="bold")
            text.append(f"~{c['tokens_before']:,} → ~{c['tokens_after']:,}")
        if getattr(state, "summary_edited", False):
            text.append("\nthe summary was edited: the edited text is written", style="yellow")
        result = getattr(state, "stream_result", None)
        if result is not None and getattr(result, "offline", False):
            text.append("\noffline — no model wrote this summary", style="bold yellow")
        return text

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text("Write the compacted session?"), id="confirm-title")
            yield Static(self.body_text(), id="confirm-body")
            with Horizontal():
                yield Button("Write (y)", id="confirm-yes", variant="warning")
                yield Button("Cancel (n)", id="confirm-no")

    def on_mount(self) -> None:
        # Keys decide (y/enter, n/escape): no button holds the focus, so enter
        # never presses "Cancel" by accident.
        for button in self.query(Button):
            button.can_focus = False

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "confirm-yes")

    def action_confirm(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)
