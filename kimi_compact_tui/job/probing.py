"""The probe through the job: the one path every front end takes to ask a
model what the agent will still know after a compaction.

A front end holds a loaded :class:`~kimi_compact_tui.job.CompactionJob`, its
:class:`~kimi_compact_tui.job.Preparation` (the plan), the summary *as it
would be written* (with any pinned block) and a provider config. It then:

1. ``probe_readiness(job, prep, summary, provider)`` → a
   :class:`~kimi_compact_tui.job.Readiness`: the refusals, typed, before
   anything is sent, in this order: nothing compacted
   (``NOTHING_TO_COMPACT``), no or an empty summary (``NO_SUMMARY``), the
   offline provider (``OFFLINE_PROBE``: it cannot answer), a remote provider
   with no model or no key (``NO_MODEL``, ``NO_KEY``). Cheap: call it on the
   UI thread to say why ``P`` does nothing.
2. ``plan_probe_for(job, prep, summary, provider, limit=…)`` → a
   :class:`~kimi_compact_tui.job.probe.ProbePlan` (the questions and one
   request body per question, with their estimated size, before any is
   sent) or the first :class:`~kimi_compact_tui.job.Refusal`. It reads the
   specifics of the compacted range: run it off the UI thread.
3. ``await ask(plan, provider)`` (or :func:`run_probe` from synchronous
   code, such as a worker thread, with ``stopped=`` to cancel it) → the
   :class:`~kimi_compact_tui.job.probe.ProbeReport`; a request that fails is
   an ``error`` verdict in the report, never raised.

:func:`probe_summary` does 2 and 3 in one call for a front end that has nothing to
say in between but the announcement (``on_plan``), as ``probe`` on the
command line does. A front end renders a refusal (``str(refusal)`` is its
one line; ``refusal.kind`` tells which) and never words one of its own.

The request settings are the configuration's own
(``AppConfig.compaction``), the model the preparation's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kimi_compact_tui.job import refusals
from kimi_compact_tui.job.refusals import Readiness, Refusal, RefusalKind

if TYPE_CHECKING:
    from kimi_compact_tui.job.job import CompactionJob
    from kimi_compact_tui.job.prepare import Preparation
    from kimi_compact_tui.job.probe import AskFunction, ProbePlan, ProbeReport
    from kimi_compact_tui.providers import ProviderConfig


def probe_readiness(
    job: CompactionJob,
    prep: Preparation | None,
    summary: str | None,
    provider: ProviderConfig,
) -> Readiness:
    """Every refusal of a probe of ``summary`` (as it would be written) on
    ``prep``'s range with ``provider``, before anything is sent (see the
    module docstring for the kinds and their order)."""
    if prep is None or prep.plan.noop or prep.build_request is None:
        noop = prep.plan.noop if prep is not None else None
        return Readiness((_nothing_to_probe(noop),))
    empty = refusals.no_summary(summary)
    if empty is not None:
        return Readiness((empty,))
    if provider.offline:
        return Readiness((refusals.offline_probe(),))
    wanted = (RefusalKind.NO_MODEL, RefusalKind.NO_KEY)
    return job.readiness(prep, provider).of(*wanted)


def _nothing_to_probe(noop: str | None) -> Refusal:
    why = f" ({noop})" if noop else ""
    return Refusal(RefusalKind.NOTHING_TO_COMPACT, f"nothing to probe: nothing is compacted{why}")


def plan_probe_for(
    job: CompactionJob,
    prep: Preparation | None,
    summary: str | None,
    provider: ProviderConfig,
    *,
    limit: int | None = None,
) -> ProbePlan | Refusal:
    """The questions (at most ``limit``; None: the engine's default) and
    their request bodies for a probe of ``summary``, or the first refusal of
    :func:`probe_readiness`. Nothing is sent."""
    from kimi_compact_tui.job.probe import DEFAULT_QUESTIONS, plan_probe

    refused = probe_readiness(job, prep, summary, provider).first
    if refused is not None:
        return refused
    assert prep is not None and summary is not None  # the readiness refused them
    session, plan = job.session, prep.plan
    return plan_probe(
        session,
        plan,
        summary,
        prep.specifics(),
        job.config.compaction.as_spec(),
        model=prep.compaction_model,
        base_model=job.base_model,
        limit=DEFAULT_QUESTIONS if limit is None else limit,
    )


#: Seconds between two looks at whether a probe was stopped (:func:`run_probe`).
STOP_POLL = 0.1


class ProbeStopped(Exception):
    """The probe was stopped by its front end: nothing more is sent."""


def run_probe(
    plan: ProbePlan,
    provider: ProviderConfig,
    send: AskFunction | None = None,
    *,
    stopped: Callable[[], bool] | None = None,
) -> ProbeReport:
    """Ask every question of ``plan`` (from synchronous code, e.g. a worker
    thread) and grade the answers. Once ``stopped()`` is true, the request
    under way is cancelled, none is sent after it, and :class:`ProbeStopped`
    is raised (a thread cannot be interrupted, so it is asked)."""
    import asyncio

    from kimi_compact_tui.job.probe import ask

    if stopped is None:
        if send is None:
            return asyncio.run(ask(plan, provider))
        return asyncio.run(ask(plan, provider, send))
    return asyncio.run(_ask_until_stopped(plan, provider, send, stopped))


async def _ask_until_stopped(
    plan: ProbePlan,
    provider: ProviderConfig,
    send: AskFunction | None,
    stopped: Callable[[], bool],
) -> ProbeReport:
    import asyncio

    from kimi_compact_tui.job.probe import ask
    from kimi_compact_tui.providers import StreamResult, stream_summary

    cancel = asyncio.Event()

    async def watch() -> None:
        while not stopped():
            await asyncio.sleep(STOP_POLL)
        cancel.set()

    async def cancellable(config: ProviderConfig, body: dict[str, Any]) -> StreamResult:
        if cancel.is_set() or stopped():
            raise ProbeStopped
        if send is not None:
            return await send(config, body)
        return await stream_summary(config, body, None, cancel)

    watcher = asyncio.create_task(watch())
    try:
        report = await ask(plan, provider, cancellable)
    finally:
        watcher.cancel()
    if cancel.is_set():
        raise ProbeStopped
    return report


def probe_summary(
    job: CompactionJob,
    prep: Preparation | None,
    summary: str | None,
    provider: ProviderConfig,
    *,
    limit: int | None = None,
    on_plan: Callable[[ProbePlan], None] | None = None,
    send: AskFunction | None = None,
) -> ProbeReport | Refusal:
    """The whole probe: :func:`plan_probe_for`, then (after ``on_plan``, the
    front end's announcement of what will be sent) every question asked and
    graded. Returns the report, or the refusal with nothing sent."""
    planned = plan_probe_for(job, prep, summary, provider, limit=limit)
    if isinstance(planned, Refusal):
        return planned
    if on_plan is not None:
        on_plan(planned)
    return run_probe(planned, provider, send)
