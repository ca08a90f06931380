"""The compaction run behind ``compact``: load, plan, check, stream the summary
and build (not write) the compacted session, through the compaction job.

:func:`run_compaction` does everything except printing the verdict and
writing, and returns a :class:`CompactionRun` (unpacks as ``session, plan,
result``); :func:`anchored_run` is the same run with ``--anchor``'s block of
lost references added to its draft. The command (:mod:`.`) prints and
writes it.
"""

from __future__ import annotations

import argparse
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

    from kimi_compact_tui.commands.rounds import Rounds
    from kimi_compact_tui.compaction.plan import CompactionPlan
    from kimi_compact_tui.config import AppConfig
    from kimi_compact_tui.formats.base import Session
    from kimi_compact_tui.job import CompactionJob, Draft, Preparation, Readiness
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

    def __iter__(self) -> Iterator[Any]:  # session, plan, result = run_compaction(args)
        return iter((self.session, self.plan, self.result))


def run_compaction(
    args: argparse.Namespace,
    *,
    on_event: EventCallback | None = None,
    cancel: asyncio.Event | None = None,
    allow_truncated: bool | None = None,
    on_start: Callable[[Preparation, ProviderConfig], None] | None = None,
    rounds: Rounds | None = None,
) -> CompactionRun:
    """Load, plan, stream the summary and build (not write) the compacted session.

    ``args`` needs ``session``, ``up_to``, ``config``, ``prompt_file`` and may
    have ``instructions``, ``provider``, ``model``, ``base_url`` and
    ``allow_truncated``. Raises :class:`UserError` for bad input; provider
    trouble is reported in the returned result, never raised.

    ``rounds`` (``--from-summary``, ``--revise``): with feedback, the request
    is the revision of the last summary; without, that summary is the result
    (no request), through the same refusals and draft.
    """
    import asyncio

    from kimi_compact_tui.job import Readiness, RefusalKind
    from kimi_compact_tui.job.revise import given_summary, revise
    from kimi_compact_tui.providers import StreamEvent

    in_place = bool(getattr(args, "in_place", False))
    job, prep = load_and_prepare(args, for_write=in_place)
    if in_place and job.session.path is not None and samples.is_sample(job.session.path):
        job, prep = load_and_prepare(on_a_copy(args, job.session.path), for_write=True)
    session, config = job.session, job.config
    pcfg = provider_config(config, args)
    if prep.plan.noop or prep.build_request is None:
        return CompactionRun(session, config, prep, pcfg, None, None, job, rounds=rounds)
    # Every refusal before any request, once: the request's, and in place the
    # write's (the format's, a read-only file, a split unless --allow-split).
    allow_split = not in_place or bool(getattr(args, "allow_split", False))
    if rounds is not None and rounds.given_only:  # no model: no provider or prompt to check
        ready = job.readiness(prep, None, write=in_place, allow_split=allow_split)
        ready = Readiness(
            tuple(r for r in ready.refusals if r.kind is not RefusalKind.EMPTY_PROMPT)
        )
        refuse(ready)
        if on_start is not None:
            on_start(prep, pcfg)
        result = given_summary(rounds.summaries[0])
        if on_event is not None:
            on_event(StreamEvent("text", result.summary))
        given = job.draft(prep, result)
        return CompactionRun(session, config, prep, pcfg, result, given, job, ready, rounds)
    if rounds is not None:
        prep = revise(prep, rounds.rounds(), pcfg)
    ready = job.readiness(prep, pcfg, write=in_place, allow_split=allow_split)
    refuse(ready)
    if on_start is not None:  # the split warning (not in place) and the announcement
        on_start(prep, pcfg)
    stream = job.summarize(prep, pcfg, on_event, cancel, ready=ready)
    try:
        result = asyncio.run(stream)
    except BaseException:  # Ctrl+C before the stream started: no "never awaited" warning
        stream.close()
        raise
    if allow_truncated is None:
        allow_truncated = bool(getattr(args, "allow_truncated", False))
    draft = None
    if result.writable(allow_truncated=allow_truncated):
        draft = job.draft(prep, result, allow_truncated=allow_truncated)
    return CompactionRun(session, config, prep, pcfg, result, draft, job, ready, rounds)


def on_a_copy(args: argparse.Namespace, sample: Path) -> argparse.Namespace:
    """``--in-place`` on a bundled sample: the sample is never written (the
    job refuses it), so the run works on a fresh copy, as the TUI does, and
    says so on stderr. ``args`` for the copy."""
    try:
        copy = samples.copy_sample(sample)
    except OSError as exc:
        raise UserError(f"{sample}: cannot copy the sample ({exc.strerror or exc})") from None
    print(
        f"kimi-compact-tui: {sample} is a bundled sample, which never changes: "
        f"compacting a copy of it, {copy}",
        file=sys.stderr,
    )
    return argparse.Namespace(**{**vars(args), "session": str(copy)})


def anchored_run(run_: CompactionRun, budget: int, allow_truncated: bool) -> CompactionRun:
    """``run_`` with its draft's summary anchored (unchanged when nothing is missing);
    says on stderr what did not fit in ``budget``."""
    from kimi_compact_tui.retention import retention_report
    from kimi_compact_tui.retention.anchor import Anchored, anchor, without_block

    if run_.draft is None or run_.result is None:
        return run_
    base = without_block(run_.draft.summary)  # a block it holds is replaced, not repeated
    report = retention_report(run_.session, run_.plan, base)
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
