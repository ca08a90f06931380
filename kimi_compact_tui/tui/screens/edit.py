"""Edit the summary before it is written.

The summary sits in a ``TextArea``; ``ctrl+s`` saves (the edited text becomes
``state.summary``, so the diff and the write use it) and dismisses with it,
``escape`` dismisses with None and changes nothing (with unsaved changes it
asks first). Control characters in a
model's text are shown as visible symbols here, and saving keeps what is
shown; the screen says so when that happens.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Static, TextArea

from kimi_compact_tui.compaction.contract import check_sections
from kimi_compact_tui.sanitize import visible
from kimi_compact_tui.tui import keys
from kimi_compact_tui.tui.state import ReviewState
from kimi_compact_tui.tui.widgets.footer import KeysFooter


class EditSummaryScreen(Screen[str | None]):
    BINDINGS = keys.bindings(keys.EDIT_KEYS)

    DEFAULT_CSS = """
    EditSummaryScreen #edit-head {
        height: auto;
        padding: 0 1;
    }
    EditSummaryScreen #edit-sections {
        height: auto;
        padding: 0 1;
    }
    EditSummaryScreen TextArea {
        height: 1fr;
    }
    """

    def __init__(
        self,
        state: ReviewState,
        *,
        append: str = "",
        name: str | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id)
        self.state = state
        original = state.summary_to_write  # with the pinned block, when items are pinned
        if original is None:
            result = state.stream_result
            original = result.summary if result is not None else ""
        self.original = original
        # ``append``: a marked block (retention's missing items) added after the text.
        self.appended = bool(append)
        shown_original, shown_block = visible(original, tabs=None), visible(append, tabs=None)
        self.shown = shown_original + shown_block
        # Only control characters shown as symbols alter the text: the appended
        # block is the user's to keep (ctrl+s) or drop (escape).
        self.altered = shown_original != original or shown_block != append

    def compose(self) -> ComposeResult:
        head = Text("Edit the summary", style="bold")
        head.append(" · ctrl+s saves (this text is what gets written) · escape cancels")
        if self.appended:
            head.append(
                "\nthe missing items are appended at the end, marked: "
                "move them into the sections, then ctrl+s",
                style="bold",
            )
        if self.altered:
            head.append(
                "\ncontrol characters in the summary are shown as symbols; saving keeps the symbols",
                style="yellow",
            )
        yield Static(head, id="edit-head")
        area = TextArea(self.shown, id="summary-editor", soft_wrap=True, show_line_numbers=True)
        area.cursor_blink = False
        yield area
        yield Static(self._sections_text(self.shown), id="edit-sections")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def _sections_text(self, text: str) -> Text:
        check = check_sections(text)
        if check.ok:
            return Text(f"✓ {check.describe()}", style="green")
        return Text("⚠ " + check.describe(), style="yellow")

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self.query_one("#edit-sections", Static).update(self._sections_text(event.text_area.text))

    @property
    def text(self) -> str:
        return self.query_one(TextArea).text

    def action_save(self) -> None:
        text = self.text
        if not text.strip():
            self.notify("The summary is empty: nothing saved", severity="warning", markup=False)
            return
        if text == self.shown and not self.altered:
            text = self.original
        self.state.set_summary(text)
        self.dismiss(text)

    def action_cancel(self) -> None:
        if self.text == self.shown:
            self.dismiss(None)
            return
        from kimi_compact_tui.tui.screens.confirm import ask_discard

        ask_discard(self, "summary", "ctrl+s saves it")
