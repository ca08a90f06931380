"""The compaction stream: the summary arrives live, then is checked.

The run goes through the compaction job, as ``compact`` does: its
``readiness`` (computed once, before any request) refuses a no-op, a disabled
config, an empty prompt, a provider missing its model or key, and a session
that cannot then be written (its format's refusal, a read-only file or folder). The request is built and the provider runs in a
thread worker with its own event loop (never on the UI's loop), given all it
needs as arguments: the job, the preparation, the provider and a
:class:`~kimi_compact_tui.tui.stream_buffer.StreamBuffer` (it touches no
widget and no state). A timer on the UI thread shows the buffer every ~50 ms,
so 10,000 tiny chunks never freeze the screen. The worker returns the
StreamResult; the UI thread stores it on the state. ``escape`` cancels a running
stream (and closes the screen once it has ended). A run that is not complete
(truncated, failed, cancelled) says so and leaves nothing to write. A complete
summary is checked against the six-section contract (a warning, not a block).
A finished run (complete or truncated) is kept as a candidate and its retention
pane is shown below (its keys are this screen's: ``space``/``a`` pin, the
probe key probes, ``i``/``e`` take missing items to the instructions /
editor). The summary shown once the run ends is the one ``w`` writes: the
state's :attr:`~ReviewState.summary_to_write` (with any pinned block), redrawn
on each change of the review; a run that is not the summary under review
(truncated, or of another range) shows its own text and takes no pins.

Leaving the screen keeps the finished summary: opened again, the screen shows
it; ``r`` runs again (asking first). ``w`` asks the app to write once the run is
complete (a :class:`~kimi_compact_tui.tui.flow.WriteRequested`); ``m`` toggles
raw text / Markdown.

``f`` (once a summary is finished) opens the feedback box (asking first when
the summary is an edit: the revision replaces it; pins hold on the revision);
sent, the screen asks for a revision (a :class:`~kimi_compact_tui.tui.flow.ReviseRequested`
with the chain of rounds), which a new stream screen runs: the same request
for the range, then each earlier summary and feedback, then this summary (as
the reviewer has it, perhaps edited) and the feedback. Before any request it
is refused when the session changed on disk or the boundary moved since the
revised run was made (:meth:`ReviewState.revision_refusal`), then by the job's
readiness as for any run. Its request is built in the worker
(:func:`~kimi_compact_tui.job.revise.revise`: for the offline provider it reads
the range's specifics). The revision is kept as a candidate linked to its
parent.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from kimi_compact_tui.compaction.figures import RunFigures
from kimi_compact_tui.job import CompactionJob, Preparation, Readiness
from kimi_compact_tui.job.revise import RevisionOrigin, RevisionRound, revise
from kimi_compact_tui.providers import (
    OFFLINE_NOTICE,
    ProviderConfig,
    StreamFunction,
    StreamResult,
    stream_summary,
)
from kimi_compact_tui.sanitize import one_line, visible
from kimi_compact_tui.tui import keys
from kimi_compact_tui.tui.flow import (
    FlowRequest,
    RerunRequested,
    ReviseRequested,
    WriteRequested,
)
from kimi_compact_tui.tui.retention_controller import RetentionController
from kimi_compact_tui.tui.runs import RunKey, RunLink
from kimi_compact_tui.tui.screens.retention_host import RetentionHost
from kimi_compact_tui.tui.state import ReviewState
from kimi_compact_tui.tui.stream_buffer import RunControl, StreamBuffer, buffer_events
from kimi_compact_tui.tui.widgets.footer import KeysFooter
from kimi_compact_tui.tui.widgets.retention_pane import RetentionPane
from kimi_compact_tui.tui.widgets.stream_view import StreamView, outcome_lines
from kimi_compact_tui.wording import noop_line

FLUSH_INTERVAL = 0.05
OFFLINE_BANNER = "offline — no model wrote this summary"


@dataclass(frozen=True)
class Ran:
    """What the stream worker returns: the run, and for a revision how many of
    its oldest rounds were left out to fit the model's context."""

    result: StreamResult
    dropped_rounds: int = 0


def dropped_line(dropped: int) -> str:
    """What a revision says when its oldest rounds did not fit the request."""
    rounds = "round was" if dropped == 1 else "rounds were"
    return (
        f"the {dropped} oldest feedback {rounds} left out to fit the model's context "
        "(the latest summary and feedback are always sent)"
    )


def provider_of(state: ReviewState) -> ProviderConfig:
    """The provider config held by ``state`` (offline when none is set)."""
    return state.provider if state.provider is not None else ProviderConfig()


class StreamScreen(RetentionHost, Screen[FlowRequest | None]):
    """Stream the summary for ``state``'s request; dismiss with a flow request or None."""

    BINDINGS = keys.bindings(keys.STREAM_KEYS)

    DEFAULT_CSS = """
    StreamScreen {
        layout: vertical;
    }
    StreamScreen #stream-head {
        height: auto;
        padding: 0 1;
    }
    StreamScreen #stream-title {
        text-style: bold;
    }
    StreamScreen #stream-offline {
        background: $warning 30%;
        color: $text;
        text-style: bold;
        padding: 0 1;
        display: none;
    }
    StreamScreen.offline #stream-offline {
        display: block;
    }
    StreamScreen #stream-status, StreamScreen #stream-note {
        color: $text-muted;
    }
    StreamScreen #stream-outcome {
        height: auto;
        padding: 0 1;
    }
    /* A short terminal (80x24): once the run has ended, the retention pane gets
       the room its missing items and failed probe questions need. */
    StreamScreen.short.finished #stream-note {
        display: none;
    }
    StreamScreen.short.finished #stream-outcome {
        max-height: 2;
    }
    StreamScreen.short.finished #stream-view {
        height: 1fr;
        min-height: 4;
    }
    StreamScreen.short.finished #retention-pane {
        height: 2fr;
    }
    """

    #: Below this many rows the finished screen gives the retention pane more room.
    SHORT_ROWS = 40

    def __init__(
        self,
        state: ReviewState,
        *,
        stream_fn: StreamFunction | None = None,
        clock: Callable[[], float] | None = time.monotonic,
        show_timing: bool = True,
        run: bool | None = None,
        revision: RunLink | None = None,
        name: str | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id)
        self.state = state
        # Run unless a finished summary is kept (then it is shown: r runs again).
        self.run_now = state.summary is None if run is None else run
        #: The revision this screen streams (None: a compaction run).
        self.revision = revision
        if revision is not None:
            self.run_now = True
        self.origin: RevisionOrigin | None = None  # what the run is made on
        self.provider = provider_of(state)
        self._stream_fn: StreamFunction = stream_fn or stream_summary
        self._clock = clock
        self.show_timing = show_timing and clock is not None
        self.control = RunControl()
        self.cancelling = False
        self.run_key: RunKey | None = None
        self.result: StreamResult | None = None
        self.refused: str | None = None  # why the run was not started
        self.dropped_rounds = 0  # a revision's oldest rounds left out to fit
        self.running = False
        self._started: float | None = None
        self._ended: float | None = None
        self._timer: Timer | None = None
        self.candidate: int | None = None  # the number this screen's run was kept as
        self.controller = RetentionController(self, state)
        self._unwatch: Callable[[], None] | None = None

    # --- the review ---------------------------------------------------------------
    def under_review(self) -> bool:
        """This screen's run is the summary under review (the one ``w`` writes)."""
        result = self.result
        return (
            result is not None
            and result is self.state.stream_result
            and (self.state.summary is not None)
        )

    def subject(self) -> str | None:
        """What the retention pane scores: the summary under review when this run
        is it (an edit included), else this run's own text."""
        if self.under_review():
            return self.state.summary
        return self.result.summary if self.result is not None else None

    def review_changed(self) -> None:
        """The state changed: the summary shown is the one ``w`` writes (with the
        pinned block while items are pinned), and it is scored."""
        if not self.is_attached or self.result is None:
            return
        if self.under_review():
            text = self.state.summary_to_write
            if text is not None:
                self.view.show_written(text)
        if self.retention_pane_shown:
            self.controller.score(self.subject())
        self.refresh_bindings()

    @property
    def retention_pane_shown(self) -> bool:
        return self.query_one(RetentionPane).display

    def show_retention(self) -> None:
        self.add_class("finished")
        pane = self.query_one(RetentionPane)
        pane.display = True
        pane.redraw()  # its subject is this run now (scored already, or scored next)
        self.controller.score(self.subject())
        self.refresh_bindings()

    def footer_priority(self) -> tuple[str, ...]:
        """Once the run has ended, the keys that act on it first: write, the
        pane's pin and probe, feedback (at 80 columns the rest is in ?)."""
        if self.running:
            return ("cancel_or_close",)
        return ("write", "retention_pin", "retention_probe", "feedback", "rerun")

    def compose(self) -> ComposeResult:
        with Vertical(id="stream-head"):
            yield Static(self._title(), id="stream-title")
            yield Static(Text(OFFLINE_BANNER), id="stream-offline")
            yield Static(Text("waiting for the provider…"), id="stream-status")
            yield Static(Text(""), id="stream-note")
        yield StreamView(id="stream-view")
        yield Static(Text(""), id="stream-outcome")
        yield RetentionPane(
            self.state, subject=self.subject, probe_key=keys.PROBE_KEY, id="retention-pane"
        )
        yield KeysFooter()

    def _title(self) -> Text:
        prep = self.state.preparation
        text = Text("Compacting ", style="bold")
        if self.revision is not None:
            text = Text(f"Revising #{self.revision.parent}", style="bold")
            text.append(f" (round {len(self.revision.rounds)}) · ")
        if prep is not None and not prep.plan.noop:
            n = len(prep.plan.compact_indices)
            text.append(f"{n:,} message{'' if n == 1 else 's'}")
            model = prep.compaction_model or self.provider.model
            if model and not self.provider.offline:
                text.append(" with ")
                text.append(one_line(str(model), 80), style="bold cyan")
        text.append(" · ")
        text.append(one_line(self.provider.describe(), 100))
        configured = prep.compaction_model if prep is not None else None
        if self.provider.offline and configured:  # no model runs: not the configured one either
            text.append(f" · {one_line(str(configured), 60)} is not used", style="dim")
        return text

    @property
    def view(self) -> StreamView:
        return self.query_one(StreamView)

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.height < self.SHORT_ROWS, "short")

    def on_mount(self) -> None:
        self.set_class(self.app.size.height < self.SHORT_ROWS, "short")
        self._view = self.query_one(StreamView)
        self.show_timing = self.show_timing and getattr(self.app, "show_timing", True)
        self.query_one(RetentionPane).display = False
        self._unwatch = self.state.watch(self.review_changed)
        if self.provider.offline:
            self.add_class("offline")
        prep = self.state.preparation
        reason = None
        if prep is None:
            reason = "no session is loaded"
        elif not prep.enabled:
            reason = prep.disabled_reason or "compaction is disabled"
        elif prep.plan.noop or prep.build_request is None:
            reason = prep.plan.noop or "nothing to compact"
        if reason is not None:
            self._set_status(Text(noop_line(reason), style="bold yellow"))
            self._show_outcome([("press escape to go back", "")])
            return
        if not self.run_now and self.state.stream_result is not None:
            self._show_kept(self.state.stream_result)
            return
        job = self.state.job
        assert job is not None and prep is not None
        if self.revision is not None:
            # A revision is for the range and the bytes its summary was made on.
            refusal = self.state.revision_refusal(self.revision)
            if refusal is not None:
                self._not_started(str(refusal))
                return
        # The job's refusals, once, before any request (as in the CLI); a
        # revision's are its run's (the same plan, config and provider).
        ready = job.readiness(prep, self.provider, write=job.fingerprint is not None)
        if ready.first is not None:
            self._not_started(str(ready.first))
            return
        self.run_key = self.state.run_key()
        self.origin = self.state.origin()
        self.running = True
        self._started = self._now()
        self._timer = self.set_interval(FLUSH_INTERVAL, self._tick)
        rounds = self.revision.rounds if self.revision is not None else None
        self._run(
            job,
            prep,
            self.provider,
            self._view.buffer,
            self.control,
            self._stream_fn,
            ready,
            rounds,
        )

    def _not_started(self, why: str) -> None:
        self.refused = why
        self._set_status(Text(f"not started: {visible(why)}", style="bold red"))
        self._show_outcome([("nothing was sent · escape: back", "")])

    # --- the worker ---------------------------------------------------------------
    @work(
        thread=True, exclusive=True, group="compaction-stream", name="stream", description="stream"
    )
    async def _run(
        self,
        job: CompactionJob,
        prep: Preparation,
        provider: ProviderConfig,
        buffer: StreamBuffer,
        control: RunControl,
        stream_fn: StreamFunction,
        ready: Readiness,
        rounds: tuple[RevisionRound, ...] | None = None,
    ) -> Ran:
        """Build the request (with ``rounds``: the revision's, from the
        compaction request) and stream it through the job, in this thread's
        own event loop; reads only its arguments. A cancellation propagates."""
        cancel = control.attach()
        dropped = 0
        try:
            if rounds is not None:  # the offline provider reads the range's specifics here
                prep = revise(prep, rounds, provider)
                dropped = prep.request.dropped_rounds if prep.request is not None else 0
            events = buffer_events(buffer)
            result = await job.summarize(prep, provider, events, cancel, stream_fn, ready=ready)
            return Ran(result, dropped)
        except Exception as exc:  # a provider must not take the app down
            failed = StreamResult(
                status="failed",
                summary=buffer.text,
                error=f"{type(exc).__name__}: {exc}",
                provider=provider.kind,
            )
            return Ran(failed, dropped)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.name != "stream":
            return
        if event.state == WorkerState.SUCCESS:
            ran = event.worker.result
            assert isinstance(ran, Ran)
            self.dropped_rounds = ran.dropped_rounds
            self._done(ran.result)
        elif event.state in (WorkerState.CANCELLED, WorkerState.ERROR):
            error = event.worker.error
            failed = error is not None and not isinstance(error, asyncio.CancelledError)
            self._done(
                StreamResult(
                    status="failed" if failed else "cancelled",
                    summary=self._view.text,
                    error=f"{type(error).__name__}: {error}" if failed else "cancelled",
                    provider=self.provider.kind,
                )
            )

    def on_unmount(self) -> None:
        """Leaving (or the app closing) stops a run still going in its thread."""
        self.cancelling = True
        self.control.stop()
        if self._unwatch is not None:
            self._unwatch()

    def _done(self, result: StreamResult) -> None:
        if self.result is not None:
            return
        self.result = result
        self.running = False
        self._view.buffer.note = ""
        self._ended = self._now()
        if self._timer is not None:
            self._timer.stop()
        self.candidate = self.state.finish_run(
            result, self.run_key, link=self.revision, origin=self.origin
        )
        self.refresh_bindings()
        complete = result.status == "complete" and bool(result.summary.strip())
        shown = self.state.summary_to_write if self.under_review() else result.summary
        self.view.finish(shown if complete else None, render=complete)
        if self.candidate is not None:
            self.show_retention()
        if result.offline or self.provider.offline:
            self.add_class("offline")
        self._update_status()
        lines = outcome_lines(result)
        if result.offline:
            lines.append((OFFLINE_NOTICE, "italic"))
        if self.dropped_rounds:
            lines.append((dropped_line(self.dropped_rounds), "yellow"))
        lines.append(("escape or enter: back", "dim"))
        self._show_outcome(lines)

    def _show_kept(self, result: StreamResult) -> None:
        """Show the summary kept from an earlier run (or the user's edit)."""
        self.result = result
        summary = self.state.summary_to_write or result.summary  # with any pinned block
        self.view.push_text(summary)
        self.view.finish(summary)
        self.candidate = self.state.runs.number_of(result)
        self.show_retention()
        if result.offline or self.provider.offline:
            self.add_class("offline")
        self._update_status()
        edited = self.state.summary_edited  # an edit's figure: the estimate, no time
        shown = StreamResult(status="complete", summary=summary) if edited else result
        lines = outcome_lines(shown)
        if self.state.summary_edited:
            lines.append(("the summary shown is your edit", "yellow"))
        lines.append(("kept from the last run · r: run again (replaces it) · w: write", "bold"))
        lines.append(("escape or enter: back", "dim"))
        self._show_outcome(lines)

    # --- display ------------------------------------------------------------------
    def _now(self) -> float | None:
        return self._clock() if self._clock is not None else None

    def _tick(self) -> None:
        self.view.flush()
        self._update_status()

    def _set_status(self, text: Text) -> None:
        self.query_one("#stream-status", Static).update(text)

    def _show_outcome(self, lines: list[tuple[str, str]]) -> None:
        text = Text()
        for i, (line, style) in enumerate(lines):
            if i:
                text.append("\n")
            text.append(visible(line), style=style)
        self.query_one("#stream-outcome", Static).update(text)

    def _elapsed(self) -> float | None:
        if self._started is None:
            return None
        now = self._ended if self._ended is not None else self._now()
        return max(0.0, (now or 0.0) - self._started)

    def figures(self) -> RunFigures:
        """What the status line shows: while streaming, the estimate of the text
        so far and this screen's clock; once ended, the run's own figures
        (:meth:`StreamResult.figures`, as the candidates list shows them)."""
        result = self.result
        if result is None:
            return RunFigures(self.view.buffer.taken_tokens, True, self._elapsed())
        if self.state.summary_edited and self.state.stream_result is result:
            return RunFigures.of(self.state.summary or "", None)
        figures = result.figures()
        if figures.seconds is None:  # a run this screen ended itself (cancelled, failed)
            figures = RunFigures(figures.tokens, figures.estimated, self._elapsed())
        return figures

    def status_text(self) -> Text:
        view = self.view
        chars = view.text_chars
        if self.result is None:
            label = "cancelling…" if self.cancelling else "streaming…"
        else:
            label = self.result.status
        text = Text(f"{label} · {chars:,} characters · ")
        text.append(self.figures().describe(timing=self.show_timing))
        if view.reasoning_chars:
            text.append(f" · reasoning {view.reasoning_chars:,} characters")
        return text

    def _update_status(self) -> None:
        self._set_status(self.status_text())
        note = self._view.buffer.note
        self.query_one("#stream-note", Static).update(Text(one_line(note, 200)))

    # --- actions ------------------------------------------------------------------
    def action_cancel_or_close(self) -> None:
        if not self.running:
            self.leave(lambda: self.dismiss(None))
            return
        if not self.cancelling:
            self.cancelling = True
            self.control.cancel()
            self._view.buffer.note = "cancelling…"
            self._update_status()
            return
        # A second escape: stop waiting for the provider.
        self.control.stop()
        self._done(StreamResult(status="cancelled", summary=self._view.text, error="cancelled"))

    def action_close(self) -> None:
        if not self.running:
            self.leave(lambda: self.dismiss(None))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``w`` is offered once there is a summary to write: greyed while the
        run goes, left out of the footer after a run that left nothing to
        write (cancelled, failed, truncated); pressed anyway, it says why."""
        if action == "write" and not self.state.writable:
            return None if self.running else False
        if action == "feedback" and self.feedback_refusal() is not None:
            return None if self.running else False
        return self.retention_check(action)

    def on_key(self, event: events.Key) -> None:
        key = keys.key_for(keys.STREAM_KEYS, event.key)
        if key is None or key.action not in ("write", "feedback"):
            return
        if self.check_action(key.action, ()) is not True:
            event.stop()
            event.prevent_default()
            if key.action == "write":
                self.action_write()
            else:
                self.action_feedback()

    def action_write(self) -> None:
        if self.running:
            self.notify("still streaming: w works once the summary is complete", markup=False)
        elif not self.state.writable:
            why = self.state.write_refusal() or "the run did not complete"
            self.notify(f"nothing to write: {why} (r: run again)", markup=False)
        else:
            self.dismiss(WriteRequested())

    def action_toggle_markdown(self) -> None:
        if not self.view.toggle_markdown():
            self.notify("no finished summary to render yet", markup=False, timeout=3)

    def action_rerun(self) -> None:
        if self.running:
            self.notify("already running: escape cancels", markup=False, timeout=3)
            return
        # A revision runs again as the same revision: the same rounds, sent again.
        again: FlowRequest = (
            RerunRequested() if self.revision is None else ReviseRequested(self.revision)
        )
        if not self.state.has_work:
            self.dismiss(again)
            return
        from kimi_compact_tui.tui.screens.confirm import AskScreen

        edited = " and your edit" if self.state.summary_edited else ""
        ask = AskScreen("Run again?", f"A new run replaces the summary{edited}.", yes="Run (y)")

        def done(ok: bool | None) -> None:
            if ok:
                self.dismiss(again)

        self.app.push_screen(ask, done)

    # --- feedback: a revision of this summary -------------------------------------
    def revised_number(self) -> int | None:
        """The candidate this screen's summary was kept as (None: not kept)."""
        return self.state.runs.number_of(self.result)

    def _reviewed_summary(self) -> tuple[str, bool]:
        """The summary feedback is on, as the reviewer has it (an edit when the
        state holds one for this run), and whether it is an edit."""
        result = self.result
        assert result is not None
        state = self.state
        if self.under_review():
            written = state.summary_to_write or result.summary  # with its pinned block
            return written, state.summary_edited
        return result.summary, False

    def feedback_refusal(self) -> str | None:
        """Why ``f`` cannot give feedback now, or None."""
        if self.running:
            return "still streaming: feedback works once the summary is finished"
        result = self.result
        if result is None or result.status != "complete" or not result.summary.strip():
            return "no finished summary to give feedback on (r: run again)"
        if self.revised_number() is None:
            return "this summary is not a kept run: compact again (r)"
        return None

    def action_feedback(self) -> None:
        why = self.feedback_refusal()
        if why is not None:
            self.notify(why, markup=False, timeout=4)
            return
        number = self.revised_number()
        assert number is not None
        summary, edited = self._reviewed_summary()
        from kimi_compact_tui.tui.screens.feedback import ask_feedback

        link = self.state.runs.links.get(number)
        rounds = len(link.rounds) if link is not None else 0

        def send(feedback: str) -> None:
            self.dismiss(ReviseRequested(self.state.revision_link(number, summary, feedback)))

        ask_feedback(
            self, number, summary, send, rounds=rounds, edited=edited, offline=self.provider.offline
        )
