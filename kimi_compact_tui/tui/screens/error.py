"""A dialog for one error, in the same words as the CLI (shown as text, never markup).

With ``reload`` (a write refused because the file changed on disk) it offers
``R``: the dialog dismisses with ``"reload"`` and the app reloads the session.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from kimi_compact_tui.sanitize import visible
from kimi_compact_tui.tui import keys
from kimi_compact_tui.tui.screens.dialog import dialog_css

RELOAD = "reload"


class ErrorDialog(ModalScreen[str | None]):
    BINDINGS = keys.bindings(keys.ERROR_KEYS)

    DEFAULT_CSS = dialog_css("ErrorDialog", "$error", width="80%", max_width="100") + """
    ErrorDialog #error-title {
        color: $error;
    }
    ErrorDialog Button {
        width: auto;
    }
    """

    def __init__(self, message: str, *, title: str = "Error", reload: bool = False) -> None:
        super().__init__()
        self.message = message
        self.title_text = title
        self.reload = reload

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(visible(self.title_text)), id="error-title", classes="dialog-title")
            yield Static(Text(visible(self.message)), id="error-message", classes="dialog-body")
            with Horizontal():
                yield Button("OK", id="error-ok", variant="error")
                if self.reload:
                    yield Button("Reload the session (R)", id="error-reload", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#error-ok", Button).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.reload if action == RELOAD else True

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(RELOAD if event.button.id == "error-reload" else None)

    def action_reload(self) -> None:
        self.dismiss(RELOAD)

    def action_close(self) -> None:
        self.dismiss(None)
