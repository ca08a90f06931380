"""Candidate bookkeeping for a review (issue 12, items 5 and 6), beside ReviewState.

Every finished run (complete or truncated) is kept as a
:class:`~kimi_compact_tui.retention.Candidate` together with its StreamResult
and the plan it summarised. Choosing one hands its result back to the state
through :meth:`ReviewState.set_result`, so the job's draft (diff, confirm,
write) uses it. The extras live on the state object (adapter: ``tui/state.py``
is the lead's; see :func:`extras_of`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kimi_compact_tui.compaction.contract import check_sections
from kimi_compact_tui.errors import UserError
from kimi_compact_tui.retention import Candidate, CandidateSet, RetentionReport

FINISHED = ("complete", "truncated")


@dataclass
class ReviewExtras:
    candidates: CandidateSet = field(default_factory=CandidateSet)
    results: dict[int, Any] = field(default_factory=dict)  # candidate number -> StreamResult
    plans: dict[int, tuple[int, int]] = field(default_factory=dict)  # number -> plan key


def extras_of(state: Any) -> ReviewExtras:
    """The extras of ``state`` (created on first use)."""
    extras = state.__dict__.get("_review_extras")
    if extras is None:
        extras = state.__dict__["_review_extras"] = ReviewExtras()
    return extras


def _plan_key(state: Any) -> tuple[int, int] | None:
    prep = state.preparation
    if state.session is None or prep is None or prep.plan.noop:
        return None
    return (id(state.session), prep.plan.boundary)


def output_tokens_of(result: Any) -> int:
    usage = result.usage or {}
    for key in ("completion_tokens", "output_tokens"):
        if isinstance(usage.get(key), int):
            return usage[key]
    return (len(result.summary) + 3) // 4


def record_run(state: Any, result: Any, seconds: float | None = None) -> Candidate | None:
    """Keep a finished run as a candidate (None for failed or cancelled runs)."""
    if result is None or result.status not in FINISHED or not result.summary.strip():
        return None
    extras = extras_of(state)
    prompt = state.prompt
    prep = state.preparation
    check = check_sections(result.summary)
    candidate = extras.candidates.add(
        result.summary,
        provider=result.provider or "unknown",
        model=result.model or (prep.compaction_model if prep is not None else None),
        prompt_source=prompt.source,
        prompt_path=prompt.path,
        prompt_sha256=prompt.sha256,
        custom_instructions=state.custom_instruction,
        output_tokens=output_tokens_of(result),
        seconds=result.total_time if result.total_time is not None else seconds,
        contract_ok=check.ok,
        contract_warnings=tuple(check.warnings()),
    )
    extras.results[candidate.number] = result
    key = _plan_key(state)
    if key is not None:
        extras.plans[candidate.number] = key
    return candidate


def set_retention(state: Any, candidate: Candidate | None, report: RetentionReport) -> None:
    if candidate is not None:
        candidate.retention = report


def choose_candidate(state: Any, number: int) -> Candidate:
    """Make candidate ``number`` the summary to edit and write (UserError when it
    summarised another range or was truncated)."""
    extras = extras_of(state)
    candidate = extras.candidates.get(number)
    if extras.plans.get(number) != _plan_key(state):
        raise UserError(f"candidate #{number} summarised another range: compact again (c)")
    result = extras.results[number]
    if not result.writable():
        raise UserError(f"candidate #{number} is {result.status}: it cannot be written")
    extras.candidates.choose(number)
    state.set_result(result)
    return candidate
