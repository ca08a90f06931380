"""The compaction run behind ``compact``: load, plan, check, stream the summary
and build (not write) the compacted session, through the compaction job.

:func:`run_compaction` does everything except printing the verdict and
writing, and returns a :class:`CompactionRun` (unpacks as ``session, plan,
result``); :func:`anchored_run` is the same run with ``--anchor``'s block of
lost references added to its draft. The command (:mod:`.`) prints and
writes it.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kimi_compact_tui import samples
from kimi_compact_tui.commands.common import load_and_prepare, provider_config, refuse
from kimi_compact_tui.errors import UserError

if TYPE_CHECKING:
    import asyncio

    from kimi_compact_tui.commands.compact.options import CompactOptions
    from kimi_compact_tui.commands.rounds import Rounds
    from kimi_compact_tui.compaction.plan import CompactionPlan
    from kimi_compact_tui.config import AppConfig
    from kimi_compact_tui.formats.base import Session
    from kimi_compact_tui.job import CompactionJob, Draft, Preparation, Readiness
    from kimi_compact_tui.job.window import Window
    from kimi_compact_tui.providers import EventCallback, ProviderConfig, StreamResult


@dataclass
class CompactionRun:
    """Everything one compaction produced. ``result`` is None for a no-op plan."""

    session: Session
    config: AppConfig
    preparation: Preparation
    provider: ProviderConfig
    result: StreamResult | None
    draft: Draft | None  # set only when the summary may be written
    job: CompactionJob
    # The job's refusals, computed once before the request (the write's too, in place).
    ready: Readiness | None = None
    # --from-summary / --revise: what was asked (None: a compaction).
    rounds: Rounds | None = None

    @property
    def compacted(self) -> Session | None:
        return self.draft.compacted if self.draft is not None else None

    @property
    def plan(self) -> CompactionPlan:
        return self.preparation.plan

    @property
    def status(self) -> str:
        return "noop" if self.result is None else self.result.status

    def __iter__(self) -> Iterator[Any]:  # session, plan, result = run_compaction(opts)
        return iter((self.session, self.plan, self.result))


def run_compaction(
    opts: CompactOptions,
    *,
    on_event: EventCallback | None = None,
    cancel: asyncio.Event | None = None,
    on_start: Callable[[Preparation, ProviderConfig, Window | None], None] | None = None,
    rounds: Rounds | None = None,
) -> CompactionRun:
    """Load, plan, stream the summary and build (not write) the compacted session.

    Raises :class:`UserError` for bad input and the job's first refusal
    (every one computed once, before any request: the request's, with a
    request too large for the model's known context window, in place the
    write's, with ``--output`` a session that is not a file of its own);
    ``on_start`` gets the model's window (None: no model is asked);
    provider trouble is reported in the returned result, never raised.

    ``rounds`` (``--from-summary``, ``--revise``): with feedback, the request
    is the revision of the last summary; without, that summary is the result
    (no request), through the same refusals and draft.
    """
    job, prep = load_for(opts)
    session, config = job.session, job.config
    pcfg = provider_config(config, opts.provider)
    if prep.plan.noop or prep.build_request is None:
        return CompactionRun(session, config, prep, pcfg, None, None, job, rounds=rounds)
    given = rounds is not None and rounds.given_only
    if rounds is not None and not given:
        from kimi_compact_tui.job.revise import revise

        prep = revise(prep, rounds.rounds(), pcfg)
    ready = job.readiness(
        prep,
        pcfg,
        write=opts.in_place,
        allow_split=not opts.in_place or opts.allow_split,
        output=opts.output is not None,
        given=given,
    )
    refuse(ready)
    if on_start is not None:  # the split warning (not in place) and the announcement
        on_start(prep, pcfg, None if given or pcfg.offline else job.window(prep, pcfg))
    if rounds is not None and given:
        result = given_result(rounds, on_event)
    else:
        result = stream(job, prep, pcfg, on_event, cancel, ready)
    draft = None
    if result.writable(allow_truncated=opts.allow_truncated):
        draft = job.draft(prep, result, allow_truncated=opts.allow_truncated)
    return CompactionRun(session, config, prep, pcfg, result, draft, job, ready, rounds)


def load_for(opts: CompactOptions) -> tuple[CompactionJob, Preparation]:
    """The job and its preparation; ``--in-place`` on a bundled sample loads a copy."""
    job, prep = load_and_prepare(opts.session, opts.provider, for_write=opts.in_place)
    path = job.session.path
    if opts.in_place and path is not None and samples.is_sample(path):
        return load_and_prepare(on_a_copy(opts, path).session, opts.provider, for_write=True)
    return job, prep


def given_result(rounds: Rounds, on_event: EventCallback | None) -> StreamResult:
    """``--from-summary`` alone: the summary as it is, as a finished run (no model)."""
    from kimi_compact_tui.job.revise import given_summary
    from kimi_compact_tui.providers import StreamEvent

    result = given_summary(rounds.summaries[0])
    if on_event is not None:
        on_event(StreamEvent("text", result.summary))
    return result


def stream(
    job: CompactionJob,
    prep: Preparation,
    pcfg: ProviderConfig,
    on_event: EventCallback | None,
    cancel: asyncio.Event | None,
    ready: Readiness,
) -> StreamResult:
    """The summary streamed through the job (after the readiness computed before)."""
    import asyncio

    summarize = job.summarize(prep, pcfg, on_event, cancel, ready=ready)
    try:
        return asyncio.run(summarize)
    except BaseException:  # Ctrl+C before the stream started: no "never awaited" warning
        summarize.close()
        raise


def on_a_copy(opts: CompactOptions, sample: Path) -> CompactOptions:
    """``--in-place`` on a bundled sample: the sample is never written (the
    job refuses it), so the run works on a fresh copy, as the TUI does, and
    says so on stderr. The options for the copy."""
    try:
        copy = samples.copy_sample(sample)
    except OSError as exc:
        raise UserError(f"{sample}: cannot copy the sample ({exc.strerror or exc})") from None
    print(
        f"kimi-compact-tui: {sample} is a bundled sample, which never changes: "
        f"compacting a copy of it, {copy}",
        file=sys.stderr,
    )
    return opts.on_session(str(copy))


def anchored_run(run_: CompactionRun, budget: int, allow_truncated: bool) -> CompactionRun:
    """``run_`` with its draft's summary anchored (unchanged when nothing is missing);
    says on stderr what did not fit in ``budget``."""
    from kimi_compact_tui.retention.anchor import Anchored, anchor, without_block

    if run_.draft is None or run_.result is None:
        return run_
    base = without_block(run_.draft.summary)  # a block it holds is replaced, not repeated
    report = run_.preparation.retention(base)
    anchored: Anchored = anchor(report, base, budget)
    note = anchored.note()
    if note:
        print(note, file=sys.stderr)
    if not anchored.block and anchored.text == run_.draft.summary:
        return run_
    draft = run_.job.draft(
        run_.preparation, run_.result, anchored.text, allow_truncated=allow_truncated
    )
    return dataclasses.replace(run_, draft=draft)
