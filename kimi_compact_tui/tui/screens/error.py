"""A dialog for one error, in the same words as the CLI (shown as text, never markup)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from kimi_compact_tui.sanitize import visible


class ErrorDialog(ModalScreen[None]):
    BINDINGS = [Binding("escape,enter,q", "close", "Close")]

    DEFAULT_CSS = """
    ErrorDialog {
        align: center middle;
    }
    ErrorDialog > Vertical {
        width: 80%;
        max-width: 100;
        height: auto;
        border: thick $error;
        background: $panel;
        padding: 1 2;
    }
    ErrorDialog #error-title {
        text-style: bold;
        color: $error;
    }
    ErrorDialog #error-message {
        margin: 1 0;
    }
    ErrorDialog Button {
        width: auto;
    }
    """

    def __init__(self, message: str, *, title: str = "Error") -> None:
        super().__init__()
        self.message = message
        self.title_text = title

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(visible(self.title_text)), id="error-title")
            yield Static(Text(visible(self.message)), id="error-message")
            yield Button("OK", id="error-ok", variant="error")

    def on_mount(self) -> None:
        self.query_one(Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)
