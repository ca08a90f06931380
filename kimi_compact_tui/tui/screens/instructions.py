"""Custom compaction instructions (appended to the prompt, as kimi-cli does).

``ctrl+s`` saves and dismisses with the text (an empty text clears them);
``escape`` dismisses with None.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static, TextArea

from kimi_compact_tui.tui import keys
from kimi_compact_tui.tui.screens.text_box import TextBoxScreen
from kimi_compact_tui.tui.widgets.footer import KeysFooter


class InstructionsScreen(TextBoxScreen):
    BINDINGS = keys.bindings(keys.INSTRUCTIONS_KEYS)

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
            yield self.text_area(self.current, "instructions")
        yield KeysFooter()  # the box's own keys, not the screen beneath's

    def action_save(self) -> None:
        self.dismiss(self.query_one(TextArea).text.strip())
