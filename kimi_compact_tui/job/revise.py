"""Talking to the summarizer: a summary revised by feedback, or written as given.

- :func:`revise` turns a preparation into the preparation of its revision: the
  same plan and checks, and as request the compaction request for the same
  range, unchanged, followed by each round's summary (the assistant) and
  feedback (the user) (:func:`~kimi_compact_tui.compaction.request.revision_request`).
  A provider with no model (the offline one) is sent the same request: it
  keeps the last round's summary and applies only what a rule can ("keep
  X": X verbatim; "add the failing test name": the items
  :func:`named_items` finds), saying which feedback it could not follow
  (:mod:`kimi_compact_tui.providers.offline.revision`).
- Sent to a model, the revision request is masked whole
  (:func:`masked_request`: the transcript, each round's summary and
  feedback), by the one masker (:mod:`kimi_compact_tui.secrets`).
- :func:`given_summary` is a finished run for a summary that no model wrote
  now (a file, an edit by hand): it is drafted, checked and written like any
  other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from kimi_compact_tui.compaction.plan import CompactionPlan
from kimi_compact_tui.compaction.request import (
    REVISION_INPUT_BUDGET,
    CompactionRequest,
    RevisionRound,
    revision_request,
)
from kimi_compact_tui.errors import UserError
from kimi_compact_tui.formats.loader import Fingerprint
from kimi_compact_tui.job.job import GIVEN
from kimi_compact_tui.job.prepare import Preparation
from kimi_compact_tui.job.refusals import Refusal, revision_range_refusal
from kimi_compact_tui.providers import ProviderConfig, StreamResult
from kimi_compact_tui.providers.offline.revision import named_items
from kimi_compact_tui.retention import instructions_for
from kimi_compact_tui.secrets import mask_secrets
from kimi_compact_tui.specifics import Item, Specifics
from kimi_compact_tui.store.fingerprint import fingerprint

#: The room a context size leaves for the revised summary (as Ollama's
#: ``num_ctx`` estimate does).
ANSWER_ROOM = 4096

__all__ = [
    "ANSWER_ROOM",
    "GIVEN",
    "RevisionOrigin",
    "RevisionRound",
    "origin_refusal",
    "feedback_as_instruction",
    "named_items",
    "given_summary",
    "masked_request",
    "revise",
    "revision_budget",
]


def revision_budget(provider: ProviderConfig | None) -> int:
    """The most a revision request may hold (estimated input tokens): the
    provider's stated context size less room for the answer, else
    :data:`REVISION_INPUT_BUDGET`."""
    if provider is not None and provider.num_ctx:
        return max(1, provider.num_ctx - ANSWER_ROOM)
    return REVISION_INPUT_BUDGET


def feedback_as_instruction(
    instruction: str, rounds: Sequence[RevisionRound], specifics: Specifics | None = None
) -> str:
    """The custom instruction with every round's feedback after it, in order,
    and with ``specifics`` the lines of the items each names
    (:func:`named_items`): feedback given as instructions, for a summarizer
    that writes a summary from the messages (not used for a revision: the
    offline provider keeps the given summary, :mod:`..providers.offline.revision`)."""
    pieces = [instruction.strip(), *(r.feedback.strip() for r in rounds)]
    if specifics is not None:
        named: list[Item] = []
        for r in rounds:
            named += [i for i in named_items(r.feedback, specifics) if i not in named]
        pieces.append(instructions_for(named))
    return "\n".join(p for p in pieces if p)


def revise(
    prep: Preparation,
    rounds: Sequence[RevisionRound],
    provider: ProviderConfig | None = None,
    *,
    budget: int | None = None,
) -> Preparation:
    """The preparation of the revision of ``prep``'s summary by ``rounds``
    (the last round: the summary being revised now and its feedback). The
    plan, the prompt and the refusals are ``prep``'s; a no-op stays one."""
    base = prep.request
    if base is None:
        return prep
    limit = budget if budget is not None else revision_budget(provider)
    request = revision_request(base, rounds, budget=limit)
    if provider is None or not provider.offline:
        request = masked_request(request)
    return replace(prep, build_request=lambda: request, _request=request)


def _masked_content(content: Any) -> Any:
    if isinstance(content, str):
        return mask_secrets(content)
    if isinstance(content, list):
        return [
            (
                {**part, "text": mask_secrets(part["text"])}
                if isinstance(part, dict) and isinstance(part.get("text"), str)
                else part
            )
            for part in content
        ]
    return content


def masked_request(request: CompactionRequest) -> CompactionRequest:
    """``request`` with every message's text masked (the body rebuilt from
    them): what a revision sends to a model holds no secret in clear."""
    messages = [{**m, "content": _masked_content(m.get("content"))} for m in request.messages]
    if messages == request.messages:
        return request
    return request.with_messages(messages)


def given_summary(text: str) -> StreamResult:
    """A finished run for a summary no model wrote now (read from a file, or
    edited by hand): complete, with no model, no usage and no timings."""
    return StreamResult(status="complete", summary=text, provider=GIVEN, attempts=0)


def _span(plan: CompactionPlan) -> tuple[int, int]:
    """The compacted messages, 1-based, first and last."""
    return plan.leading + 1, plan.boundary


@dataclass(frozen=True)
class RevisionOrigin:
    """What a summary was made on: the plan's range and the fingerprint of
    the session's bytes then (None: a session not loaded for a write)."""

    leading: int
    boundary: int
    total: int
    fingerprint: Fingerprint | None

    @classmethod
    def of(cls, prep: Preparation, loaded: Fingerprint | None) -> RevisionOrigin:
        plan = prep.plan
        return cls(plan.leading, plan.boundary, plan.total, loaded)

    def same_range(self, plan: CompactionPlan) -> bool:
        return (self.leading, self.boundary, self.total) == (
            plan.leading,
            plan.boundary,
            plan.total,
        )


def origin_refusal(
    origin: RevisionOrigin,
    prep: Preparation,
    loaded: Fingerprint | None,
    *,
    on_disk: bool = True,
) -> Refusal | None:
    """Why a summary made on ``origin`` may not be revised for ``prep`` (the
    range now, ``loaded`` the fingerprint of the session as loaded now), or
    None: the session was reloaded with other bytes, or (``on_disk``) the file
    no longer holds the bytes loaded, or the boundary moved. Checked before any
    request (the TUI's guard; on the command line the range is the one the
    command names)."""
    path = prep.session.ref  # a file, or one session of a database (DB#KEY)
    then = (origin.leading + 1, origin.boundary)
    if origin.fingerprint is not None and loaded is not None and origin.fingerprint != loaded:
        return revision_range_refusal(path, then, None)
    if on_disk and loaded is not None and path is not None:
        try:
            now = fingerprint(path)
        except UserError:
            now = None
        if now != loaded:
            return revision_range_refusal(path, then, None)
    if not origin.same_range(prep.plan):
        return revision_range_refusal(path, then, _span(prep.plan))
    return None
