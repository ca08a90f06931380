"""The retention screen: the retention pane on a screen of its own (after a
stream, or from the diff). Its messages bubble to the app unchanged; ``escape``
closes it."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import OptionList, Static

from kimi_compact_tui.retention import RetentionReport
from kimi_compact_tui.tui.widgets.footer import KeysFooter
from kimi_compact_tui.tui.widgets.retention_pane import RetentionPane


class RetentionScreen(Screen[None]):
    BINDINGS = [Binding("escape", "close", "Close")]

    DEFAULT_CSS = """
    RetentionScreen > #retention-title {
        padding: 0 1;
    }
    """

    def __init__(self, report: RetentionReport | None, title: str = "Retention") -> None:
        super().__init__()
        self.report = report
        self.title_text = title

    def compose(self) -> ComposeResult:
        yield Static(Text(self.title_text, style="bold"), id="retention-title")
        yield RetentionPane(self.report, id="retention-pane")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one("#retention-missing", OptionList).focus()

    def action_close(self) -> None:
        self.dismiss(None)
