"""Custom compaction instructions (appended to the prompt, as kimi-cli does).

``ctrl+s`` saves and dismisses with the text (an empty text clears them);
``escape`` dismisses with None.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

from kimi_compact_tui.tui import keys


class InstructionsScreen(ModalScreen[str | None]):
    BINDINGS = keys.bindings(keys.INSTRUCTIONS_KEYS)

    DEFAULT_CSS = """
    InstructionsScreen {
        align: center middle;
    }
    InstructionsScreen > Vertical {
        width: 90%;
        max-width: 110;
        height: 70%;
        border: thick $accent;
        background: $panel;
        padding: 0 1;
    }
    InstructionsScreen TextArea {
        height: 1fr;
    }
    InstructionsScreen .hint {
        color: $text-muted;
    }
    """

    def __init__(self, current: str = "") -> None:
        super().__init__()
        self.current = current or ""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text("Custom compaction instructions", style="bold"))
            yield Static(
                Text(
                    "Appended to the compaction prompt; the model must prioritise them. "
                    "ctrl+s saves (empty clears) · escape cancels"
                ),
                classes="hint",
            )
            area = TextArea(self.current, id="instructions", soft_wrap=True)
            area.cursor_blink = False
            yield area

    def on_mount(self) -> None:
        area = self.query_one(TextArea)
        area.focus()
        area.move_cursor(area.document.end)

    def action_save(self) -> None:
        self.dismiss(self.query_one(TextArea).text.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)
