"""The footer with ``?`` and ``q`` pinned to its right edge.

Textual's footer lays the keys out left to right and cuts what does not fit,
so at 80 columns the last keys (help and quit) were the ones lost. Here the
pinned keys sit in a group docked at the right; the other keys fill the room
left of it and are the ones cut on a narrow terminal (``?`` lists them all).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import HorizontalGroup
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

PINNED_ACTIONS = ("help", "quit")


class KeysFooter(Footer):
    DEFAULT_CSS = """
    KeysFooter #pinned-keys {
        dock: right;
        width: auto;
        height: 1;
        background: $footer-background;
        padding-left: 1;
    }
    """

    def compose(self) -> ComposeResult:
        pinned: list[FooterKey] = []
        for widget in super().compose():
            if isinstance(widget, FooterKey) and widget.action in PINNED_ACTIONS:
                pinned.append(widget)
            else:
                yield widget
        if pinned:
            order = {action: i for i, action in enumerate(PINNED_ACTIONS)}
            pinned.sort(key=lambda key: order[key.action])
            yield HorizontalGroup(*pinned, id="pinned-keys")
