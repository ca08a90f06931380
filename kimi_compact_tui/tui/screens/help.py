"""The ``?`` help screen: every key and what it does (text, never markup)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from kimi_compact_tui.tui.sanitize import visible


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark,f1", "close", "Close")]

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
    }
    HelpScreen > Vertical {
        width: 80;
        max-width: 95%;
        height: auto;
        max-height: 90%;
        border: thick $accent;
        background: $panel;
        padding: 0 1;
    }
    HelpScreen #help-title {
        text-style: bold;
        padding: 0 1;
    }
    HelpScreen DataTable {
        height: auto;
        max-height: 30;
    }
    HelpScreen #help-foot {
        color: $text-muted;
        padding: 0 1;
    }
    """

    def __init__(self, bindings: list[tuple[str, str]]) -> None:
        super().__init__()
        self.bindings_list = list(bindings)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text("Keys"), id="help-title")
            table: DataTable = DataTable(
                id="help-table", cursor_type="row", zebra_stripes=True, show_cursor=False
            )
            table.add_column(Text("key"), key="key")
            table.add_column(Text("what it does"), key="what")
            for key, description in self.bindings_list:
                table.add_row(Text(visible(key), style="bold"), Text(visible(description)))
            yield table
            yield Static(
                Text("Every key is also in the command palette (ctrl+p). escape closes."),
                id="help-foot",
            )

    def action_close(self) -> None:
        self.dismiss(None)
