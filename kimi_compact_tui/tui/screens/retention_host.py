"""The retention pane inside a flow screen (the diff, the finished stream).

:class:`RetentionHost` is mixed into those screens. The pane's keys are the
screen's (:data:`~kimi_compact_tui.tui.keys.RETENTION_KEYS`), so they act on
the pane's highlighted row wherever the pane is shown, focused or not:
``space`` pins or unpins it, ``a`` its whole category, the probe key probes the
summary as it would be written, ``i`` and ``e`` take the pinned (else the
highlighted) items to the instructions or the editor. ``space`` and ``a`` are
offered only while the pane lists a missing item. The work is the screen's
:class:`~kimi_compact_tui.tui.retention_controller.RetentionController`; the
pins are the review state's, so the diff, the write dialog and the write use
the summary with the pinned block. Leaving while a probe runs asks first.

The pane's requests dismiss the screen with a typed request the main screen
carries out (:mod:`kimi_compact_tui.tui.flow`: ``JumpToMessage``,
``AddInstructions``, ``OpenEditor``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from textual.app import App
from textual.css.query import NoMatches
from textual.widget import Widget

from kimi_compact_tui.retention import editor_block, instructions_for
from kimi_compact_tui.tui.flow import AddInstructions, JumpToMessage, OpenEditor
from kimi_compact_tui.tui.retention_controller import RetentionController
from kimi_compact_tui.tui.state import ReviewState
from kimi_compact_tui.tui.widgets.retention_pane import RetentionPane

W = TypeVar("W", bound=Widget)

#: The host's actions that need a listed missing item.
ITEM_ACTIONS = ("retention_pin", "retention_pin_all", "retention_instructions", "retention_editor")
PANE_ACTIONS = (*ITEM_ACTIONS, "retention_probe", "retention_instructions", "retention_editor")


class Hosting(Protocol):
    """What the mixin uses of the screen it is mixed into."""

    state: ReviewState
    controller: RetentionController

    @property
    def app(self) -> App[Any]: ...

    def query_one(self, selector: str, expect_type: type[W]) -> W: ...

    def dismiss(self, result: Any = None) -> Any: ...

    def notify(self, message: str, *, markup: bool = ..., timeout: float | None = ...) -> None: ...

    def pane_shown(self) -> RetentionPane | None: ...


class RetentionHost:
    """Mixin for a Screen holding a ``RetentionPane`` with id ``retention-pane``."""

    def pane_shown(self: Hosting) -> RetentionPane | None:
        """The pane, while it is shown (None: not composed, or hidden)."""
        try:
            pane = self.query_one("#retention-pane", RetentionPane)
        except NoMatches:
            return None
        return pane if pane.display else None

    def retention_check(self: Hosting, action: str) -> bool | None:
        """``check_action`` for the pane's keys: hidden while the pane is not
        shown, ``space``/``a`` while it lists no missing item."""
        if action not in PANE_ACTIONS:
            return True
        pane = self.pane_shown()
        if pane is None:
            return False
        if action in ITEM_ACTIONS and not pane.items:
            return False
        return True

    def action_retention_pin(self: Hosting) -> None:
        pane = self.pane_shown()
        item = pane.highlighted_item() if pane is not None else None
        if pane is None or item is None:
            self.notify("no missing item to pin", markup=False, timeout=3)
        elif not pane.pins_apply:
            self.notify("pins apply to the summary to write: this run is not it", markup=False)
        else:
            self.controller.toggle([item])

    def action_retention_pin_all(self: Hosting) -> None:
        pane = self.pane_shown()
        items = pane.category_items() if pane is not None else []
        if pane is None or not items:
            self.notify("no missing item to pin", markup=False, timeout=3)
        elif not pane.pins_apply:
            self.notify("pins apply to the summary to write: this run is not it", markup=False)
        else:
            self.controller.toggle(items)

    def action_retention_probe(self: Hosting) -> None:
        self.controller.probe()

    def _chosen(self: Hosting) -> list[Any]:
        pane = self.pane_shown()
        items = pane.chosen_items() if pane is not None else []
        if not items:
            self.notify("no missing items to use", markup=False, timeout=3)
        return items

    def action_retention_instructions(self: Hosting) -> None:
        items = RetentionHost._chosen(self)
        if items:
            self.dismiss(AddInstructions(instructions_for(items)))

    def action_retention_editor(self: Hosting) -> None:
        items = RetentionHost._chosen(self)
        if not items:
            return
        pinned = self.state.pinned
        block = editor_block(items)
        if pinned is not None and all(item in pinned.items for item in items):
            block = ""  # pinned: the editor opens on the summary with their block already
        self.dismiss(OpenEditor(block))

    def on_retention_pane_jump_to_message(
        self: Hosting, event: RetentionPane.JumpToMessage
    ) -> None:
        event.stop()
        self.dismiss(JumpToMessage(event.number))

    def leave(self: Hosting, then: Callable[[], object]) -> None:
        """Run ``then`` (leaving the screen), asking first while a probe runs."""
        if not self.controller.probing:
            then()
            return
        from kimi_compact_tui.tui.screens.confirm import AskScreen

        def done(ok: bool | None) -> None:
            if ok:
                self.controller.stop_probe()
                then()

        ask = AskScreen(
            "Stop the probe?",
            "The probe is still asking the model: leaving stops it, and its answers "
            "so far are not kept.",
            yes="Stop and leave (y)",
            no="Stay (n)",
        )
        self.app.push_screen(ask, done)
