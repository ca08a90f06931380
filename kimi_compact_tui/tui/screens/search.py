"""``/`` search: a one-line prompt, and the case-insensitive message search."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from kimi_compact_tui.model import Message
from kimi_compact_tui.tui import keys


def message_search_text(message: Message) -> str:
    """Everything searchable in a message: text, think, tool-call names and arguments."""
    pieces: list[str] = list(message.text_parts())
    for part in message.parts():
        if isinstance(part, dict) and part.get("type") == "think":
            pieces.append(str(part.get("think") or ""))
    for call in message.tool_calls:
        fn = call.get("function") if isinstance(call, dict) else None
        if isinstance(fn, dict):
            pieces.append(str(fn.get("name") or ""))
            pieces.append(str(fn.get("arguments") or ""))
    return "\n".join(pieces)


def find_message(
    messages: Sequence[Message], query: str, start: int, forward: bool = True
) -> int | None:
    """The next message after ``start`` (wrapping) whose text contains ``query``,
    case-insensitively; None when no message does."""
    n = len(messages)
    if not query or n == 0:
        return None
    needle = query.casefold()
    step = 1 if forward else -1
    for k in range(1, n + 1):
        i = (start + step * k) % n
        if needle in message_search_text(messages[i]).casefold():
            return i
    return None


class SearchScreen(ModalScreen[str | None]):
    """Ask for a search text; dismiss with it (or None on escape)."""

    DEFAULT_CSS = """
    SearchScreen { align: center bottom; background: $background 30%; }
    SearchScreen > Vertical {
        width: 100%; height: auto; padding: 0 1; background: $panel; border-top: tall $accent;
    }
    """
    BINDINGS = keys.bindings(keys.SEARCH_KEYS)

    def __init__(self, initial: str = "") -> None:
        super().__init__()
        self.initial = initial

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Search messages (case-insensitive; n / N for next / previous)")
            yield Input(value=self.initial, placeholder="text to find", id="search-input")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
