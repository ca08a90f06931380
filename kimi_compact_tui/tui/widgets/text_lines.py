"""A read-only, line-based view of a long text (a transcript, a JSON body).

``TextArea`` takes tens of seconds to load a 100,000-message transcript;
this view (Textual's virtualized ``Log``) loads it in a fraction of a second
and still lets the mouse select text. Lines are shown through
:func:`visible`, never parsed as markup, and are not wrapped (scroll
sideways for long lines).
"""

from __future__ import annotations

from textual.widgets import Log

from kimi_compact_tui.sanitize import visible


class TextLines(Log):
    """Read-only ``text`` shown a line at a time."""

    DEFAULT_CSS = """
    TextLines {
        height: 1fr;
        border: round $panel;
    }
    TextLines:focus {
        border: round $accent;
    }
    """

    def __init__(self, text: str, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(highlight=False, auto_scroll=False, id=id, classes=classes)
        self.source_text = text

    def on_mount(self) -> None:
        self.write_lines(visible(self.source_text, tabs=4).split("\n"), scroll_end=False)

    @property
    def text(self) -> str:
        """The text as shown (controls made visible)."""
        return "\n".join(self.lines)
