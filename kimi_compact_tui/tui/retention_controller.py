"""The retention pane's work, for the screen that shows it: scores, pins and the probe.

A :class:`RetentionController` belongs to a host screen (the diff, the finished
stream). Its work runs in the screen's async workers: each awaits one plain
function in a thread (given what it needs, taken on the UI thread; it reads
nothing else) and gives the result to the review state on the UI thread. The
pane only renders what the state holds, so nothing here is a widget and no
result is dispatched by a worker's name. Leaving the screen cancels its
workers; a probe's request under way is then cancelled too.

- :meth:`RetentionController.score`: the retention of a summary, once per text;
  then the figures of the summary with its pins (:attr:`ReviewState.pinned`).
- :meth:`RetentionController.toggle`: pin or unpin items (the state's pins are
  item keys; they hold for the write at once, their figures follow).
- :meth:`RetentionController.probe`: refused in one line when it cannot run
  (:func:`probe_refusal`), else the questions are planned, the reviewer is
  asked first (how many requests, their size; ``+``/``-`` ask more or fewer),
  the questions are sent and graded, and the report is kept by the text
  probed (per candidate and pins).

Every call into the job's probe goes through :func:`job_probe`, which takes
the job's own entry (:mod:`kimi_compact_tui.job.probing`): the CLI's path.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from kimi_compact_tui.job.probing import ProbeStopped
from kimi_compact_tui.job.refusals import OFFLINE_PROBE_LINE, Refusal
from kimi_compact_tui.retention import Item
from kimi_compact_tui.tui.state import ReviewState

if TYPE_CHECKING:
    from textual.app import App
    from textual.worker import Worker

    from kimi_compact_tui.job.job import CompactionJob
    from kimi_compact_tui.job.prepare import Preparation
    from kimi_compact_tui.providers import ProviderConfig

#: The job's line for a probe with the offline provider (the one wording: job/refusals.py).
OFFLINE_PROBE = OFFLINE_PROBE_LINE
#: The question counts ``+`` and ``-`` step through before a probe is sent.
PROBE_COUNTS = (3, 5, 10, 15, 20)


class Host(Protocol):
    """What a controller needs of its screen (a Textual Screen is one)."""

    @property
    def app(self) -> App[Any]: ...

    def run_worker(self, work: Any, *, group: str, exclusive: bool, exit_on_error: bool) -> Any: ...

    def notify(self, message: str, *, markup: bool, severity: Any, timeout: float) -> None: ...


@dataclass(frozen=True)
class ProbeInputs:
    """What probing needs, taken on the UI thread (the thread reads nothing else)."""

    job: CompactionJob
    preparation: Preparation
    summary: str  # as it would be written (with any pinned block)
    provider: ProviderConfig
    what: str  # what is probed, for people ("the summary", "… with 2 pinned items")
    pins: int = 0  # how many pinned items the summary carries
    limit: int | None = None


def probe_refusal(state: ReviewState) -> str | None:
    """Why the summary under review cannot be probed now (one line), or None: the
    job's probe refusals (:func:`kimi_compact_tui.job.probing.probe_readiness`),
    as the CLI's ``probe`` gives them."""
    from kimi_compact_tui.job.probing import probe_readiness
    from kimi_compact_tui.providers import ProviderConfig

    if state.job is None:
        return "no session is loaded"
    provider = state.provider if state.provider is not None else ProviderConfig()
    first = probe_readiness(state.job, state.preparation, state.summary_to_write, provider).first
    return None if first is None else str(first)


def probe_inputs(state: ReviewState, limit: int | None = None) -> ProbeInputs:
    """What the probe needs, taken from ``state`` on the UI thread."""
    from kimi_compact_tui.providers import ProviderConfig

    prep, job, summary = state.preparation, state.job, state.summary_to_write
    assert prep is not None and job is not None and summary is not None
    pinned = state.pinned
    n = len(pinned.items) if pinned is not None else 0
    what = "the summary" + (f" with its {n} pinned item{'' if n == 1 else 's'}" if n else "")
    provider = state.provider if state.provider is not None else ProviderConfig()
    return ProbeInputs(job, prep, summary, provider, what, pins=n, limit=limit)


def job_probe(inputs: ProbeInputs, questions: Any = None, stopped: Any = None) -> Any:
    """The one call into the job's probe (:mod:`kimi_compact_tui.job.probing`).
    Without ``questions``: plan them (a ProbePlan, or the job's Refusal; no
    request). With them: send each, grade the answers (a ProbeReport); once
    ``stopped()`` is true the request under way is cancelled and
    :class:`ProbeStopped` raised."""
    from kimi_compact_tui.job.probing import plan_probe_for, run_probe

    if questions is None:
        job, prep = inputs.job, inputs.preparation
        return plan_probe_for(job, prep, inputs.summary, inputs.provider, limit=inputs.limit)
    return run_probe(questions, inputs.provider, stopped=stopped or (lambda: False))


class RetentionController:
    """The retention work of one host screen over the review ``state``."""

    def __init__(self, host: Host, state: ReviewState) -> None:
        self.host = host
        self.state = state
        self._probe: Worker[None] | None = None
        self._scoring: dict[str, str] = {}  # group → the text its worker scores

    # --- scores ------------------------------------------------------------------------
    def score(self, text: str | None) -> None:
        """Score ``text`` (a summary) unless it is scored; then its pins' figures."""
        state, prep = self.state, self.state.preparation
        if text is None or state.job is None or prep is None or prep.plan.noop:
            return
        if state.scored(text) is not None:
            self.score_pins()
            return
        self._score_in("retention", prep, text)

    def score_pins(self) -> None:
        """Score the summary with its pinned block, when it is not scored yet."""
        state, prep, pinned = self.state, self.state.preparation, self.state.pinned
        if pinned is None or pinned.scored or state.job is None or prep is None:
            return
        self._score_in("pins", prep, pinned.text)

    def _score_in(self, group: str, prep: Preparation, text: str) -> None:
        """Score ``text`` in ``group``'s worker (a newer text replaces an older one)."""
        if self._scoring.get(group) == text:
            return  # under way
        self._scoring[group] = text
        self._run(partial(self._score, group, prep, text), group)

    async def _score(self, group: str, prep: Preparation, text: str) -> None:
        try:  # the range's items are made once per preparation and shared
            report = await asyncio.to_thread(prep.retention, text)
        finally:
            if self._scoring.get(group) == text:
                del self._scoring[group]
        self.state.set_score(text, report)
        self.score_pins()

    def toggle(self, items: Iterable[Item]) -> None:
        """Pin ``items`` (or unpin them, all pinned already): held for the write at once."""
        self.state.toggle_pins(items)
        self.score_pins()

    # --- the probe ---------------------------------------------------------------------
    @property
    def probing(self) -> bool:
        """A probe is planning, asking or waiting for its answers."""
        return self._probe is not None and self._probe.is_running

    def probe(self) -> None:
        why = probe_refusal(self.state)
        if why is not None:
            self.host.notify(why, markup=False, severity="warning", timeout=5)
            return
        self._probe = self._run(self._probing, "probe")

    async def _probing(self) -> None:
        from kimi_compact_tui.job.probe import DEFAULT_QUESTIONS
        from kimi_compact_tui.tui.screens.confirm import ProbeAskScreen

        state = self.state
        count = state.probe_count or DEFAULT_QUESTIONS
        while True:
            inputs = probe_inputs(state, count)
            text = inputs.summary
            state.set_probe_note(text, "probe: choosing the questions…")
            try:
                questions = await asyncio.to_thread(job_probe, inputs)
            except Exception as exc:  # shown in the pane, never a traceback
                state.set_probe_note(text, f"probe: failed: {type(exc).__name__}: {exc}")
                return
            if isinstance(questions, Refusal):  # the job's own line, as the CLI says it
                state.set_probe_note(text, f"probe: {questions}")
                return
            if not questions.questions:
                why = "the compacted messages hold nothing the kept ones do not"
                state.set_probe_note(text, f"probe: no questions: {why}")
                return
            body = (
                f"Send {questions.describe()} to {inputs.provider.describe()}?\n\n"
                f"Each request holds what the agent keeps: the leading system messages, "
                f"{inputs.what} and the kept tail; no compacted message. "
                "Secret-looking strings are masked."
            )
            ask = ProbeAskScreen("Probe the summary?", body, count=len(questions.questions))
            answer = await self.host.app.push_screen_wait(ask)
            if ask.step is None:
                break
            count = step_count(len(questions.questions), ask.step == "more")
            state.probe_count = count
        if answer is not True:
            state.set_probe_note(text, "probe: not sent")
            return
        n = len(questions.questions)
        state.set_probe_note(text, f"probe: asking {n} question{'' if n == 1 else 's'}…")
        stop = threading.Event()
        try:
            report = await asyncio.to_thread(job_probe, inputs, questions, stop.is_set)
        except asyncio.CancelledError:
            stop.set()
            state.probe_notes.pop(text, None)
            raise
        except ProbeStopped:
            state.set_probe_note(text, None)
            return
        except Exception as exc:  # shown in the pane, never a traceback
            state.set_probe_note(text, f"probe: failed: {type(exc).__name__}: {exc}")
            return
        state.set_probe(text, report)

    def stop_probe(self) -> None:
        if self._probe is not None:
            self._probe.cancel()

    def _run(self, work: Any, group: str) -> Any:
        return self.host.run_worker(work, group=group, exclusive=True, exit_on_error=False)


def step_count(count: int, more: bool) -> int:
    """The next question count up (``more``) or down from ``count``."""
    if more:
        return next((c for c in PROBE_COUNTS if c > count), PROBE_COUNTS[-1])
    return next((c for c in reversed(PROBE_COUNTS) if c < count), PROBE_COUNTS[0])
