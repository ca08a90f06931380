"""A line-based, virtualized list of session rows for the diff.

One :class:`DiffRow` per message; only the rows on screen are turned into
text (and cached), so 100,000 messages cost a list of small tuples, not a
widget per row. All message text goes through :func:`one_line` and is
rendered as ``Text``, never markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from kimi_compact_tui.model import Message
from kimi_compact_tui.previews import message_preview
from kimi_compact_tui.sanitize import fit_cells, one_line

KIND_REMOVED = "removed"
KIND_KEPT = "kept"
KIND_ADDED = "added"

MARKERS = {KIND_REMOVED: "-", KIND_KEPT: " ", KIND_ADDED: "+"}
STYLES = {
    KIND_REMOVED: Style(color="red"),
    KIND_KEPT: Style(),
    KIND_ADDED: Style(color="green", bold=True),
}


@dataclass(frozen=True, slots=True)
class DiffRow:
    """One message in one column of the diff: ``number`` is 1-based in its session."""

    kind: str
    number: int
    message: Message
    tokens: int = 0


def describe_message(message: Message, width: int = 200) -> str:
    """The one-line preview every view shows (:func:`kimi_compact_tui.previews.message_preview`)."""
    return message_preview(message, width)


#: Below this many cells a row shows the role in 4 cells (``asst``), leaving
#: the preview room to say something (a pane of a three-pane diff at 80 columns).
NARROW_ROW = 40
SHORT_ROLES = {"assistant": "asst", "system": "sys"}


def role_label(role: str, width: int) -> str:
    """The role column: 9 cells, or 4 in a narrow row (``assistant`` → ``asst``)."""
    if width >= NARROW_ROW:
        return fit_cells(one_line(role, 9), 9)
    return fit_cells(SHORT_ROLES.get(role, one_line(role, 4)), 4, ellipsis="")


def format_tokens(n: int) -> str:
    if n >= 10_000:
        return f"{n / 1000:.0f}k"
    if n >= 1000:
        return f"{n / 1000:.1f}k"
    return str(n)


class DiffView(ScrollView, can_focus=True):
    """A scrollable column of :class:`DiffRow`, rendered a line at a time."""

    DEFAULT_CSS = """
    DiffView {
        height: 1fr;
        border: round $panel;
        padding: 0 1;
        overflow-x: hidden;
    }
    DiffView:focus {
        border: round $accent;
    }
    """

    _CACHE_LIMIT = 2048

    def __init__(
        self,
        rows: Sequence[DiffRow] = (),
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._rows: Sequence[DiffRow] = ()
        self._cache: dict[tuple[int, int], Strip] = {}
        self._number_width = 1
        self.set_rows(rows)

    @property
    def rows(self) -> Sequence[DiffRow]:
        return self._rows

    def set_rows(self, rows: Sequence[DiffRow]) -> None:
        self._rows = rows
        self._cache.clear()
        last = rows[-1].number if rows else 1
        self._number_width = max(1, len(str(max(last, len(rows)))))
        self.virtual_size = Size(0, len(rows))
        self.refresh()

    def row_text(self, index: int, width: int) -> Text:
        """The text of row ``index``, exactly ``width`` terminal cells: the
        token figure keeps the last cells whatever the preview holds (CJK and
        emoji count two cells)."""
        row = self._rows[index]
        style = STYLES.get(row.kind, Style())
        tokens = format_tokens(row.tokens)
        head = f"{row.number:>{self._number_width}} {MARKERS.get(row.kind, ' ')} "
        role = role_label(row.message.role or "?", width) + " "
        room = max(1, width - cell_len(head) - cell_len(role) - cell_len(tokens) - 1)
        preview = fit_cells(describe_message(row.message, room), room)
        text = Text(no_wrap=True, overflow="crop", end="")
        text.append(head, style=style)
        text.append(role, style=style + Style(bold=True))
        text.append(preview, style=style if row.kind != KIND_KEPT else Style())
        text.append(" ")
        text.append(tokens, style=Style(dim=True))
        return text

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width or self.size.width
        base = self.rich_style
        if not 0 <= index < len(self._rows):
            return Strip.blank(width, base)
        key = (index, width)
        strip = self._cache.get(key)
        if strip is None:
            text = self.row_text(index, width)
            text.stylize_before(base)
            # Every segment carries a style: Textual's monochrome filter (NO_COLOR)
            # fails on one without.
            segments = [
                Segment(seg.text, base if seg.style is None else seg.style)
                for seg in text.render(self.app.console)
                if seg.text
            ]
            strip = Strip(segments).crop_extend(0, width, base)
            if len(self._cache) >= self._CACHE_LIMIT:
                self._cache.clear()
            self._cache[key] = strip
        return strip.apply_offsets(scroll_x, index)

    def on_resize(self) -> None:
        self._cache.clear()
