"""The retention pane inside a flow screen (the diff, the finished stream).

:class:`RetentionHost` is mixed into those screens: ``i`` and ``e`` act on the
pane's selected missing items from anywhere on the screen, and the pane's
messages dismiss the screen with a typed request the main screen carries out
(:mod:`kimi_compact_tui.tui.flow`: ``JumpToMessage``, ``AddInstructions``,
``OpenEditor``).

The pane's pins go to the review state (``ReviewState.set_pins``), so the
diff, the write dialog and the write use the summary with the pinned block;
a host that shows that summary redraws it in :meth:`RetentionHost.pins_changed`.
``P`` in the pane probes the summary as it would be written: refused in one
line for the offline provider (it cannot answer) or when the job would refuse
a request, else the pane asks first and runs it (:meth:`RetentionPane.start_probe`).
"""

from __future__ import annotations

from typing import Any, cast

from kimi_compact_tui.tui.flow import AddInstructions, JumpToMessage, OpenEditor
from kimi_compact_tui.tui.widgets.retention_pane import ProbeInputs, RetentionPane

OFFLINE_PROBE = (
    "the offline provider cannot answer questions: probing needs a model "
    "(--provider KIND with --model, or a provider block in the config)"
)


def probe_refusal(state: Any) -> str | None:
    """Why the summary under review cannot be probed now (one line), or None."""
    from kimi_compact_tui.job import RefusalKind

    prep, job = state.preparation, state.job
    if job is None or prep is None:
        return "no session is loaded"
    if prep.plan.noop:
        return "nothing to probe: nothing is compacted"
    if state.summary_to_write is None:
        return "no summary to probe yet: press c to compact first"
    if state.offline:
        return OFFLINE_PROBE
    wanted = (RefusalKind.NO_MODEL, RefusalKind.NO_KEY)
    first = job.readiness(prep, state.provider).of(*wanted).first
    return None if first is None else f"not probed: {first}"


def probe_inputs(state: Any) -> ProbeInputs:
    """What the probe's workers need, taken from ``state`` on the UI thread."""
    prep, job = state.preparation, state.job
    pinned = state.pinned
    n = len(pinned.items) if pinned is not None else 0
    what = "the summary" + (f" with its {n} pinned item{'' if n == 1 else 's'}" if n else "")
    return ProbeInputs(
        session=job.session,
        plan=prep.plan,
        summary=state.summary_to_write,
        compaction_cfg=job.config.compaction.as_spec(),
        model=prep.compaction_model,
        base_model=state.base_model,
        provider=state.provider,
        what=what,
        pins=n,
    )


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
        state = self.state  # type: ignore[attr-defined]
        state.runs.set_retention(self.candidate, event.report)
        pinned = state.pinned
        if pinned is not None:  # pinned earlier on this summary: shown pinned again
            self.retention_pane().show_pins(pinned)

    def on_retention_pane_pins_changed(self, event: RetentionPane.PinsChanged) -> None:
        event.stop()
        state = self.state  # type: ignore[attr-defined]
        state.set_pins(event.pinned)
        if event.pinned is not None and state.pinned is None:
            self.notify(  # type: ignore[attr-defined]
                "pins apply to the summary to write: this run's summary is not it",
                markup=False,
                timeout=4,
            )
        self.pins_changed()

    def pins_changed(self) -> None:
        """The summary to write changed with the pins (a host showing it redraws)."""

    def on_retention_pane_probe_requested(self, event: RetentionPane.ProbeRequested) -> None:
        event.stop()
        state = self.state  # type: ignore[attr-defined]
        why = probe_refusal(state)
        if why is not None:
            self.notify(why, markup=False, severity="warning", timeout=5)  # type: ignore
            return
        self.retention_pane().start_probe(probe_inputs(state))

    def on_retention_pane_jump_to_message(self, event: RetentionPane.JumpToMessage) -> None:
        event.stop()
        self.dismiss(JumpToMessage(event.number))  # type: ignore[attr-defined]

    def on_retention_pane_add_to_instructions(self, event: RetentionPane.AddToInstructions) -> None:
        event.stop()
        self.dismiss(AddInstructions(event.text))  # type: ignore[attr-defined]

    def on_retention_pane_append_to_editor(self, event: RetentionPane.AppendToEditor) -> None:
        event.stop()
        pinned = self.state.pinned  # type: ignore[attr-defined]
        block = event.block
        if pinned is not None and all(item in pinned.items for item in event.items):
            block = ""  # pinned: the editor opens on the summary with their block already
        self.dismiss(OpenEditor(block))  # type: ignore[attr-defined]

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
