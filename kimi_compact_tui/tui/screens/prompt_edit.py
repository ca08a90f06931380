"""Edit the compaction prompt for this review: a copy held in the review state,
never the bundled file nor kimi-cli's. ``ctrl+s`` dismisses with the text,
``ctrl+r`` with ``""`` (back to the configured prompt), ``escape`` with None
(asking first when there are unsaved changes)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Static, TextArea

from kimi_compact_tui.sanitize import visible
from kimi_compact_tui.tui import keys
from kimi_compact_tui.tui.widgets.footer import KeysFooter


class EditPromptScreen(Screen[str | None]):
    BINDINGS = keys.bindings(keys.PROMPT_KEYS)
    DEFAULT_CSS = """
    EditPromptScreen #prompt-head { height: auto; padding: 0 1; }
    EditPromptScreen TextArea { height: 1fr; }
    """

    def __init__(self, text: str, where: str) -> None:
        super().__init__()
        self.original = text
        self.where = where

    def compose(self) -> ComposeResult:
        head = Text("Edit the prompt for this review", style="bold")
        head.append(f" · now: {visible(self.where)}\n")
        head.append(
            "ctrl+s uses this text (a copy: no prompt file is changed) · ctrl+r goes back to the "
            "configured prompt · escape cancels; then c runs with it"
        )
        yield Static(head, id="prompt-head")
        area = TextArea(self.original, id="prompt-editor", soft_wrap=True, show_line_numbers=True)
        area.cursor_blink = False
        yield area
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    @property
    def text(self) -> str:
        return self.query_one(TextArea).text

    def action_save(self) -> None:
        if not self.text.strip():
            self.notify("The prompt is empty: nothing changed", severity="warning", markup=False)
            return
        self.dismiss(self.text)

    def action_reset(self) -> None:
        self.dismiss("")

    def action_cancel(self) -> None:
        if self.text == self.original:
            self.dismiss(None)
            return
        from kimi_compact_tui.tui.screens.confirm import ask_discard

        ask_discard(self, "prompt", "ctrl+s uses it")
