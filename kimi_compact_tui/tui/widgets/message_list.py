"""A virtualized, line-based message list: one row per message.

Nothing is computed per row up front: a row (number, role, markers, one-line
preview, tokens) is built only when it is on screen, and a small cache keeps
the rows recently drawn. Opening 100,000 messages costs one ``virtual_size``
update. Every piece of session text goes through :mod:`..sanitize` and is
drawn as plain segments: never parsed as markup, never a control byte.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message as TextualMessage
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from kimi_compact_tui.compaction.plan import (
    REGION_AFTER,
    REGION_COMPACT,
    REGION_KEPT,
    REGION_LEADING,
    REGION_TAIL,
)
from kimi_compact_tui.model import Message
from kimi_compact_tui.previews import message_preview as engine_preview
from kimi_compact_tui.sanitize import fit_cells, one_line
from kimi_compact_tui.tui import keys

REGIONS = (REGION_LEADING, REGION_COMPACT, REGION_TAIL, REGION_AFTER, REGION_KEPT)
MARK_THINK = "θ"
MARK_MEDIA = "▣"
MARK_CALL = "ƒ"
MARK_RESULT = "↩"
PREVIEW_CHARS = 240
#: Each region's mark, the first cell of its rows and the legend's: a shape of
#: its own, so the regions are told apart without colour (NO_COLOR).
REGION_MARKS = {
    REGION_LEADING: "┃",
    REGION_COMPACT: "░",
    REGION_TAIL: "▌",
    REGION_AFTER: "╎",
    REGION_KEPT: "│",
}
CURSOR_MARK = "▶"  # the highlighted row, visible without colour


def region_mark(region: str) -> str:
    """The one-cell mark of ``region`` (rows and legend)."""
    return REGION_MARKS.get(region, REGION_MARKS[REGION_KEPT])


def message_markers(message: Message) -> str:
    """Four cells: think, media, tool call, tool result (a space when absent)."""
    return (
        (MARK_THINK if message.has_think() else " ")
        + (MARK_MEDIA if message.media_types() else " ")
        + (MARK_CALL if message.tool_calls else " ")
        + (MARK_RESULT if message.is_tool_result() else " ")
    )


def message_preview(message: Message, width: int = PREVIEW_CHARS) -> str:
    """The one-line preview every view shows (:func:`kimi_compact_tui.previews.message_preview`)."""
    return engine_preview(message, width)


class MessageList(ScrollView, can_focus=True):
    """The session as rows; ``cursor`` is the highlighted message (0-based)."""

    COMPONENT_CLASSES = {
        "message-list--cursor",
        "message-list--number",
        "message-list--tokens",
        "message-list--markers",
        *(f"message-list--{r}" for r in REGIONS),
    }

    BINDINGS = keys.bindings(keys.LIST_KEYS)

    DEFAULT_CSS = """
    MessageList { overflow-x: hidden; }
    MessageList > .message-list--cursor { background: $accent 40%; text-style: bold; }
    MessageList:focus > .message-list--cursor { background: $accent 70%; }
    MessageList > .message-list--number { color: $text-muted; }
    MessageList > .message-list--tokens { color: $text-muted; }
    MessageList > .message-list--markers { color: $warning; }
    MessageList > .message-list--leading_system { color: $primary-lighten-2; }
    MessageList > .message-list--compact { color: $warning; }
    MessageList > .message-list--preserved_tail { color: $success; }
    MessageList > .message-list--after_boundary { color: $secondary-lighten-2; }
    MessageList > .message-list--kept { color: $text-muted; }
    """

    cursor: reactive[int] = reactive(0, always_update=True, init=False)

    class Highlighted(TextualMessage):
        """The highlighted message changed."""

        def __init__(self, message_list: MessageList, index: int) -> None:
            super().__init__()
            self.message_list = message_list
            self.index = index

        @property
        def control(self) -> MessageList:
            return self.message_list

    class Selected(TextualMessage):
        """Enter (or a double click) on a message."""

        def __init__(self, message_list: MessageList, index: int) -> None:
            super().__init__()
            self.message_list = message_list
            self.index = index

    def __init__(self, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(name=name, id=id)
        self._messages: Sequence[Message] = ()
        self._tokens: Sequence[int] = ()
        self._region_of: Callable[[int], str] = lambda i: REGION_KEPT
        self._cache: LRUCache[tuple[object, ...], Strip] = LRUCache(512)
        self._text_cache: LRUCache[int, tuple[str, str]] = LRUCache(2048)
        self._number_width = 1
        self.loading_note = ""

    # --- data ---------------------------------------------------------------------
    def show_loading(self, note: str | None) -> None:
        """Empty the list and show ``note`` (a still line) while a file loads;
        None removes the note."""
        self.loading_note = note or ""
        if note:
            self.set_messages((), ())
        self.refresh()

    def set_messages(
        self,
        messages: Sequence[Message],
        tokens: Sequence[int],
        region_of: Callable[[int], str] | None = None,
    ) -> None:
        self._messages = messages
        self._tokens = tokens
        self._region_of = region_of or (lambda i: REGION_KEPT)
        self._number_width = len(str(max(1, len(messages))))
        self._cache.clear()
        self._text_cache.clear()
        self.virtual_size = Size(self.row_width, len(messages))
        self.set_reactive(MessageList.cursor, min(self.cursor, max(0, len(messages) - 1)))
        self.refresh()
        if messages:
            self._scroll_cursor_visible()
            self.post_message(self.Highlighted(self, self.cursor))

    def set_regions(self, region_of: Callable[[int], str]) -> None:
        """New plan: recolour rows without touching the text cache."""
        self._region_of = region_of
        self._cache.clear()
        self.refresh()

    @property
    def message_count(self) -> int:
        return len(self._messages)

    def region_at(self, index: int) -> str:
        return self._region_of(index)

    # --- cursor -------------------------------------------------------------------
    def validate_cursor(self, value: int) -> int:
        return max(0, min(value, len(self._messages) - 1)) if self._messages else 0

    def watch_cursor(self, old: int, new: int) -> None:
        self._cache.clear()
        self.refresh()
        self._scroll_cursor_visible()
        if self._messages:
            self.post_message(self.Highlighted(self, new))

    def _scroll_cursor_visible(self) -> None:
        self.scroll_to_region(
            Region(0, self.cursor, max(1, self.row_width), 1),
            animate=False,
            force=True,
            immediate=True,
        )

    @property
    def _page(self) -> int:
        return max(1, self.scrollable_content_region.height - 1)

    def action_cursor_up(self) -> None:
        self.cursor -= 1

    def action_cursor_down(self) -> None:
        self.cursor += 1

    def action_page_up(self) -> None:
        self.cursor -= self._page

    def action_page_down(self) -> None:
        self.cursor += self._page

    def action_first(self) -> None:
        self.cursor = 0

    def action_last(self) -> None:
        self.cursor = len(self._messages) - 1

    def move_to(self, index: int) -> None:
        self.cursor = index

    def on_click(self, event: events.Click) -> None:
        index = int(self.scroll_offset.y) + event.y
        if 0 <= index < len(self._messages):
            if index == self.cursor and event.chain >= 2:
                self.post_message(self.Selected(self, index))
            self.cursor = index

    def on_resize(self, event: events.Resize) -> None:
        self._cache.clear()
        self.virtual_size = Size(self.row_width, len(self._messages))

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()

    # --- rendering ----------------------------------------------------------------
    def _row_text(self, index: int) -> tuple[str, str]:
        cached = self._text_cache.get(index)
        if cached is None:
            message = self._messages[index]
            cached = (message_markers(message), message_preview(message))
            self._text_cache[index] = cached
        return cached

    def row_plain(self, index: int, width: int = 100) -> str:
        """The row's text without styles (tests and search use it)."""
        return "".join(seg.text for seg in self._row_segments(index, width, Style()))

    @property
    def row_width(self) -> int:
        """The cells a row may use: the widget minus its vertical scrollbar."""
        return self.scrollable_content_region.width or self.size.width

    def _row_segments(
        self, index: int, width: int, base: Style, *, cursor: bool = False
    ) -> list[Segment]:
        """One row, exactly ``width`` cells: the token figure is always the
        last cells, whatever the preview holds (CJK and emoji count two)."""
        message = self._messages[index]
        region = self._region_of(index)
        markers, preview = self._row_text(index)
        lead = region_mark(region) + (CURSOR_MARK if cursor else " ")
        number = f"{index + 1:>{self._number_width}} "
        role = fit_cells(one_line(str(message.role), 9), 9) + " "
        markers = fit_cells(markers, 4) + " "
        tokens = f" {self._tokens[index] if index < len(self._tokens) else 0:>7,}"
        head = cell_len(lead) + cell_len(number) + cell_len(role) + cell_len(markers)
        room = max(0, width - head - cell_len(tokens))
        get = self.get_component_rich_style if self.is_attached else (lambda *_a, **_k: Style())
        region_style = base + get(f"message-list--{region}")
        return [
            Segment(lead, region_style),
            Segment(number, base + get("message-list--number")),
            Segment(role, region_style + Style(bold=True)),
            Segment(markers, base + get("message-list--markers")),
            Segment(fit_cells(preview, room), region_style),
            Segment(tokens, base + get("message-list--tokens")),
        ]

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.row_width
        base = self.rich_style
        if index >= len(self._messages) or index < 0:
            if index == 0 and self.loading_note:
                # A still line, not an animation: repainting a spinner 20 times a
                # second would compete with the loading thread for the GIL.
                note = fit_cells(f" {self.loading_note}", width)
                return Strip([Segment(note, base + Style(italic=True))], width)
            return Strip.blank(width, base)
        cursor = index == self.cursor
        key = (index, width, cursor)
        strip = self._cache.get(key)
        if strip is None:
            style = base
            if cursor:
                style = base + self.get_component_rich_style("message-list--cursor")
                if self.app.no_color:  # no colour to show it: reverse video
                    style += Style(reverse=True)
            segments = self._row_segments(index, width, style, cursor=cursor)
            strip = Strip(segments, sum(cell_len(s.text) for s in segments))
            strip = strip.crop_extend(0, width, style)
            self._cache[key] = strip
        return strip.apply_offsets(scroll_x, index)
