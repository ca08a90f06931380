"""The footer with ``?`` and ``q`` pinned to its right edge.

Textual's footer lays the keys out left to right and cuts what does not fit,
so at 80 columns the last keys (help and quit) were the ones lost. Here the
pinned keys sit in a group docked at the right; the other keys fill the room
left of it. A key that does not fit whole is left out, never cut mid-word
(``d Di``), and the keys that fit keep their full labels (``/ Search``, not
``/``); ``?`` lists them all.

The room goes first to the keys that matter now: a screen may say which
(``footer_priority()``, a sequence of actions: on the main screen, once a
summary exists, ``w``, ``d`` and ``e``), then to the other keys that can run,
then to the greyed ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.containers import HorizontalGroup
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

PINNED_ACTIONS = ("help", "quit")


def key_cells(key: FooterKey, compact: bool = True) -> int:
    """The cells a key takes in the footer: ``k desc`` and one cell of margin
    (compact), or `` k desc `` (padded); the palette's key adds its border and
    padding."""
    text = cell_len(key.key_display) + (1 + cell_len(key.description) if key.description else 0)
    cells = text + (1 if compact else 2)
    if key.has_class("-command-palette"):
        cells += 1 if compact else 2
    return cells


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

    _laid_out_for = 0  # the width the keys were last chosen for
    #: The actions of the keys the last layout left out (no room for them whole).
    left_out: frozenset[str] = frozenset()

    def compose(self) -> ComposeResult:
        pinned: list[FooterKey] = []
        others = []
        docked = 0  # the palette's key, docked right by Footer itself
        for widget in super().compose():
            if isinstance(widget, FooterKey) and widget.has_class("-command-palette"):
                docked += key_cells(widget, self.compact)
                yield widget
            elif isinstance(widget, FooterKey) and widget.action in PINNED_ACTIONS:
                pinned.append(widget)
            else:
                others.append(widget)
        others = self._by_priority(others)
        width = self.size.width or self.app.size.width
        self._laid_out_for = width
        room = width - docked - sum(key_cells(k, self.compact) for k in pinned)
        room -= 1 if pinned else 0
        full = False
        left_out: set[str] = set()
        for widget in others:
            if isinstance(widget, FooterKey):
                cells = key_cells(widget, self.compact)
                full = full or cells > room
                if full:
                    left_out.add(widget.action)
                    continue  # this key and those after it: in ? (help)
                room -= cells
            yield widget
        self.left_out = frozenset(left_out)
        if pinned:
            order = {action: i for i, action in enumerate(PINNED_ACTIONS)}
            pinned.sort(key=lambda key: order[key.action])
            yield HorizontalGroup(*pinned, id="pinned-keys")

    def _by_priority(self, widgets: list[Any]) -> list[Any]:
        """The keys the screen names first (in its order), then the keys that can
        run, then the greyed ones; otherwise in the table's order."""
        wanted = getattr(self.screen, "footer_priority", None)
        first: Sequence[str] = wanted() if callable(wanted) else ()
        rank = {action: i for i, action in enumerate(first)}

        def order(pair: tuple[int, Any]) -> tuple[int, int, int]:
            index, widget = pair
            if not isinstance(widget, FooterKey):
                return (2, 0, index)
            if widget.action in rank and not widget.disabled:
                return (0, rank[widget.action], index)
            return (1 if not widget.disabled else 2, 0, index)

        return [w for _i, w in sorted(enumerate(widgets), key=order)]

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self._laid_out_for and self._bindings_ready:
            self.call_after_refresh(self.recompose)
