"""A modal box around one text area (the custom instructions, the feedback on a
summary): its frame, its look, the area focused with the cursor at its end, and
``escape`` dismissing with None. Subclasses compose the title, the hints and the
area, and say what ``ctrl+s`` does."""

from __future__ import annotations

from textual.screen import ModalScreen
from textual.widgets import TextArea

from kimi_compact_tui.tui.screens.dialog import frame_css


class TextBoxScreen(ModalScreen[str | None]):
    DEFAULT_CSS = frame_css("TextBoxScreen", "$accent", height="70%", padding="0 1") + """
    TextBoxScreen TextArea {
        height: 1fr;
    }
    TextBoxScreen .hint {
        color: $text-muted;
    }
    """

    @staticmethod
    def text_area(text: str, area_id: str) -> TextArea:
        area = TextArea(text, id=area_id, soft_wrap=True)
        area.cursor_blink = False
        return area

    def on_mount(self) -> None:
        area = self.query_one(TextArea)
        area.focus()
        area.move_cursor(area.document.end)

    def action_cancel(self) -> None:
        self.dismiss(None)
