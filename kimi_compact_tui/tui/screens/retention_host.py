"""The retention pane inside a flow screen (the diff, the finished stream).

:class:`RetentionHost` is mixed into those screens: ``i`` and ``e`` act on the
pane's selected missing items from anywhere on the screen, and the pane's
messages dismiss the screen with a typed request the main screen carries out
(:mod:`kimi_compact_tui.tui.flow`: ``JumpToMessage``, ``AddInstructions``,
``OpenEditor``).
"""

from __future__ import annotations

from typing import Any, cast

from kimi_compact_tui.tui.flow import AddInstructions, JumpToMessage, OpenEditor
from kimi_compact_tui.tui.widgets.retention_pane import RetentionPane


class RetentionHost:
    """Mixin for a Screen holding a ``RetentionPane`` with id ``retention-pane``."""

    candidate: int | None = None  # the number of the candidate the scored report belongs to

    def retention_pane(self) -> RetentionPane:
        pane: RetentionPane = self.query_one(  # type: ignore[attr-defined]
            "#retention-pane", RetentionPane
        )
        return pane

    def score_retention(self, state: Any, summary: str) -> None:
        prep = state.preparation
        if state.session is None or prep is None or prep.plan.noop:
            return
        pane = self.retention_pane()
        pane.display = True
        pane.score(state.session, prep.plan, summary)

    def on_retention_pane_scored(self, event: RetentionPane.Scored) -> None:
        self.state.runs.set_retention(self.candidate, event.report)  # type: ignore[attr-defined]

    def on_retention_pane_jump_to_message(self, event: RetentionPane.JumpToMessage) -> None:
        event.stop()
        self.dismiss(JumpToMessage(event.number))  # type: ignore[attr-defined]

    def on_retention_pane_add_to_instructions(self, event: RetentionPane.AddToInstructions) -> None:
        event.stop()
        self.dismiss(AddInstructions(event.text))  # type: ignore[attr-defined]

    def on_retention_pane_append_to_editor(self, event: RetentionPane.AppendToEditor) -> None:
        event.stop()
        self.dismiss(OpenEditor(event.block))  # type: ignore[attr-defined]

    def _pane_ready(self) -> RetentionPane | None:
        panes = self.query("#retention-pane")  # type: ignore[attr-defined]
        pane = panes.first() if panes else None
        if pane is None or not pane.display or not pane.items:
            self.notify("no missing items to use", markup=False, timeout=3)  # type: ignore
            return None
        return cast(RetentionPane, pane)

    def action_retention_instructions(self) -> None:
        pane = self._pane_ready()
        if pane is not None:
            pane.action_add_to_instructions()

    def action_retention_editor(self) -> None:
        pane = self._pane_ready()
        if pane is not None:
            pane.action_append_to_editor()
