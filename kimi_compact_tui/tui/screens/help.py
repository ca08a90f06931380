"""The ``?`` help screen: the basic flow, then every key of every screen
(from the key tables, :data:`kimi_compact_tui.tui.keys.SCREEN_TABLES`).

Text, never markup. The descriptions wrap to the dialog's width (the table's
second column is sized on every resize and its rows grow in height), so a
narrow terminal shows every word instead of cutting the lines.
"""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static
from textual.widgets.data_table import ColumnKey

from kimi_compact_tui.sanitize import visible
from kimi_compact_tui.tui.keys import HELP_KEYS, SCREEN_TABLES, Key, bindings
from kimi_compact_tui.tui.screens.dialog import frame_css

BASIC_FLOW = (
    "1. ↑ ↓ move; b compacts up to the highlighted message.",
    "2. c streams the summary: read it (e edits it).",
    "3. d compares before and after, w writes; u undoes the write.",
)
CELL_PADDING = 1  # DataTable's default, each side of a cell


class HelpScreen(ModalScreen[None]):
    BINDINGS = bindings(HELP_KEYS)

    DEFAULT_CSS = (
        frame_css("HelpScreen", "$accent", width="80", max_width="95%", height="90%", padding="0 1")
        + """
    HelpScreen #help-title {
        text-style: bold;
        padding: 0 1;
    }
    HelpScreen #help-flow {
        padding: 0 1 1 1;
    }
    HelpScreen DataTable {
        height: 1fr;
    }
    HelpScreen #help-foot {
        color: $text-muted;
        padding: 0 1;
    }
    """
    )

    def __init__(self, tables: tuple[tuple[str, tuple[Key, ...]], ...] = SCREEN_TABLES) -> None:
        super().__init__()
        # (key, description, is a section heading)
        self.rows: list[tuple[str, str, bool]] = []
        for title, table in tables:
            self.rows.append(("", title, True))
            self.rows += [(visible(k.help_keys), visible(k.help), False) for k in table]
        self.bindings_list = [(k, d) for k, d, heading in self.rows if not heading]
        self._key_width = max((cell_len(k) for k, _d in self.bindings_list), default=1)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text("How it works"), id="help-title")
            yield Static(Text("\n".join(BASIC_FLOW)), id="help-flow")
            table: DataTable[Any] = DataTable(
                id="help-table",
                cursor_type="none",
                zebra_stripes=True,
                show_cursor=False,
                show_header=False,  # a fixed header would hide one row of every page
            )
            table.add_column(Text("key"), key="key", width=self._key_width)
            table.add_column(Text("what it does"), key="what", width=self._what_width(60))
            self._add_rows(table)
            yield table
            yield Static(
                Text("Every key is also in the command palette (ctrl+p). escape closes."),
                id="help-foot",
            )

    def _add_rows(self, table: DataTable[Any]) -> None:
        for key, description, heading in self.rows:
            if heading:
                table.add_row(Text(""), Text(description, style="bold underline"), height=None)
                continue
            # height None: the row is as tall as its wrapped description.
            table.add_row(Text(key, style="bold"), Text(description), height=None)

    def _what_width(self, inner: int) -> int:
        """The description column's width in a table ``inner`` cells wide."""
        return max(10, inner - self._key_width - 4 * CELL_PADDING - 1)

    def on_resize(self, event: events.Resize) -> None:
        self.call_after_refresh(self._fit_table)

    def on_mount(self) -> None:
        # The table scrolls itself (arrows, PgUp/PgDn): it is taller than the screen.
        self.query_one(DataTable).focus()
        self.call_after_refresh(self._fit_table)

    def _fit_table(self) -> None:
        table = self.query_one("#help-table", DataTable)
        inner = self.query_one(Vertical).scrollable_content_region.width
        width = self._what_width(inner)
        column = table.columns[ColumnKey("what")]
        if inner and column.width != width:
            column.width = width
            column.auto_width = False
            table.clear()  # rows measure their wrapped height when added
            self._add_rows(table)
            table.refresh(layout=True)  # the scroll container takes the table's new height

    def action_close(self) -> None:
        self.dismiss(None)
