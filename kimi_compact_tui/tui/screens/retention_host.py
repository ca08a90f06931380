"""The retention pane inside a flow screen (the diff, the finished stream).

:class:`RetentionHost` is mixed into those screens: ``i`` and ``e`` act on the
pane's selected missing items from anywhere on the screen, and the pane's
messages dismiss the screen with a request the main screen carries out
(``("jump", number)``, ``("instruct", text)``, ``("editor", block)``).
"""

from __future__ import annotations

from typing import Any

from textual.binding import Binding

from kimi_compact_tui.tui.review_extras import set_retention
from kimi_compact_tui.tui.widgets.retention_pane import RetentionPane

RETENTION_BINDINGS = [
    Binding("i", "retention_instructions", "Missing → instructions"),
    Binding("e", "retention_editor", "Missing → editor"),
]


class RetentionHost:
    """Mixin for a Screen holding a ``RetentionPane`` with id ``retention-pane``."""

    candidate: Any = None  # the candidate the scored report belongs to

    def retention_pane(self) -> RetentionPane:
        return self.query_one("#retention-pane", RetentionPane)  # type: ignore[attr-defined]

    def score_retention(self, state: Any, summary: str) -> None:
        prep = state.preparation
        if state.session is None or prep is None or prep.plan.noop:
            return
        pane = self.retention_pane()
        pane.display = True
        pane.score(state.session, prep.plan, summary)

    def on_retention_pane_scored(self, event: RetentionPane.Scored) -> None:
        set_retention(self.state, self.candidate, event.report)  # type: ignore[attr-defined]

    def on_retention_pane_jump_to_message(self, event: RetentionPane.JumpToMessage) -> None:
        event.stop()
        self.dismiss(("jump", event.number))  # type: ignore[attr-defined]

    def on_retention_pane_add_to_instructions(self, event: RetentionPane.AddToInstructions) -> None:
        event.stop()
        self.dismiss(("instruct", event.text))  # type: ignore[attr-defined]

    def on_retention_pane_append_to_editor(self, event: RetentionPane.AppendToEditor) -> None:
        event.stop()
        self.dismiss(("editor", event.block))  # type: ignore[attr-defined]

    def _pane_ready(self) -> RetentionPane | None:
        panes = self.query("#retention-pane")  # type: ignore[attr-defined]
        pane = panes.first() if panes else None
        if pane is None or not pane.display or not pane.items:
            self.notify("no missing items to use", markup=False, timeout=3)  # type: ignore
            return None
        return pane

    def action_retention_instructions(self) -> None:
        pane = self._pane_ready()
        if pane is not None:
            pane.action_add_to_instructions()

    def action_retention_editor(self) -> None:
        pane = self._pane_ready()
        if pane is not None:
            pane.action_append_to_editor()
