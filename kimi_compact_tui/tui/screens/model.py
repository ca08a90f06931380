"""Choose the compaction model (the per-session ``compaction_model`` override).

An ``Input`` with the current override; ``enter`` dismisses with its text
(an empty string clears the override), a suggestion can be picked from the
list, ``escape`` dismisses with None.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from kimi_compact_tui.sanitize import one_line
from kimi_compact_tui.tui import keys
from kimi_compact_tui.tui.screens.dialog import frame_css


class ModelScreen(ModalScreen[str | None]):
    BINDINGS = keys.bindings(keys.MODEL_KEYS)

    DEFAULT_CSS = (
        frame_css("ModelScreen", "$accent", width="80", max_width="95%", padding="0 1") + """
    ModelScreen OptionList {
        height: auto;
        max-height: 10;
    }
    ModelScreen .hint {
        color: $text-muted;
    }
    """
    )

    def __init__(self, current: str | None = None, suggestions: list[str] | None = None) -> None:
        super().__init__()
        self.current = current or ""
        self.suggestions = [s for s in (suggestions or []) if s]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text("Compaction model for this session", style="bold"))
            yield Static(
                Text("enter sets it · an empty name clears the override · escape cancels"),
                classes="hint",
            )
            yield Input(self.current, placeholder="model name (empty = no override)", id="model")
            if self.suggestions:
                yield Static(Text("suggestions"), classes="hint")
                yield OptionList(
                    *[
                        Option(Text(one_line(s, 100)), id=str(i))
                        for i, s in enumerate(self.suggestions)
                    ],
                    id="suggestions",
                )

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip())

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        index = int(event.option.id or 0)
        self.dismiss(self.suggestions[index])

    def action_cancel(self) -> None:
        self.dismiss(None)
