"""Preparing a compaction: a session and a config → the plan, the prompt and
(lazily) the request, with the token figures people see.

:func:`prepare_compaction` is what the compaction job runs for every front
end; the steps themselves are the plain-data ones in :mod:`kimi_compact_tui.compaction`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kimi_compact_tui.compaction.plan import CompactionPlan, make_plan
from kimi_compact_tui.compaction.prompts import PromptSource
from kimi_compact_tui.compaction.request import (
    CompactionRequest,
    build_request,
    estimate_request_tokens,
)
from kimi_compact_tui.compaction.scan import Exchange, scan_messages
from kimi_compact_tui.compaction.tokens import message_tokens
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.formats.base import Session

if TYPE_CHECKING:
    from kimi_compact_tui.retention import RetentionReport
    from kimi_compact_tui.specifics import Specifics

__all__ = ["CompactionPlan", "CompactionRequest", "Preparation", "prepare_compaction"]

# A typical summary size, used for the "after" estimate before a summary exists.
EXPECTED_SUMMARY_TOKENS = 1500


@dataclass
class Preparation:
    """A plan with everything needed to show it. The request is built on first
    use (``request``): drawing the regions of a huge session, or moving its
    boundary, does not pay for the synthetic transcript until it is needed."""

    session: Session
    plan: CompactionPlan
    prompt: PromptSource
    build_request: Callable[[], CompactionRequest] | None
    enabled: bool
    disabled_reason: str | None
    message_tokens: list[int]
    compaction_model: str | None
    custom_instruction: str = ""
    _request: CompactionRequest | None = field(default=None, repr=False)
    # The summed token counts of the request range's text parts, when known.
    _text_counts: tuple[int, int, int] | None = field(default=None, repr=False)
    # The session's tool exchanges (``pairs.tool_exchanges``), when the scan found them.
    exchanges: list[Exchange] | None = field(default=None, repr=False)
    # The extractor's items of the compacted range, made once (:meth:`specifics`).
    _specifics: Callable[[], Specifics] | None = field(default=None, repr=False)

    def specifics(self) -> Specifics:
        """The extractor's items of the compacted range, made on first use and
        then shared: the offline summary, every retention score (the summary,
        an edit, the pins), the anchors and the probe read the same items.
        Safe to call from several worker threads (made once, under a lock)."""
        if self._specifics is None:
            self._specifics = specifics_of(self.session, self.plan)
        return self._specifics()

    def retention(self, summary: str) -> RetentionReport:
        """The retention of ``summary`` on this range, from :meth:`specifics`."""
        from kimi_compact_tui.retention import retention_report

        return retention_report(self.session, self.plan, summary, specifics=self.specifics())

    @property
    def request(self) -> CompactionRequest | None:
        """The exact request (None for a no-op plan)."""
        if self._request is None and self.build_request is not None:
            self._request = self.build_request()
        return self._request

    @property
    def tokens_before(self) -> int:
        return sum(self.message_tokens)

    def tokens_after(self, summary: str | None = None) -> int:
        if self.plan.noop:
            return self.tokens_before
        kept = sum(self.message_tokens[i] for i in self.plan.leading_system_indices)
        kept += sum(self.message_tokens[i] for i in self.plan.preserved_indices)
        if summary is not None:  # the summary message as the format writes it, as the diff counts
            summary_tokens = message_tokens(self.session.format.summary_message(summary))
        else:  # before a summary exists: a typical size, never more than a third of the input
            compacted = sum(self.message_tokens[i] for i in self.plan.compact_indices)
            summary_tokens = min(EXPECTED_SUMMARY_TOKENS, max(64, compacted // 3))
        return kept + summary_tokens

    def request_estimated(self) -> int:
        """The request's estimated input tokens; counted from the messages when
        the request itself has not been built (the same figure, but for
        the few tokens a masked secret changes)."""
        if self._request is not None and self._request.built:
            return self._request.estimated_input_tokens()
        if self.build_request is None:
            return 0
        return estimate_request_tokens(
            self.session.messages,
            self.plan.request_indices,
            self.prompt.text,
            self.custom_instruction,
            self._text_counts,
        )

    def token_figures(self, summary: str | None = None) -> dict[str, int | None]:
        return {
            "recorded": self.session.meta.recorded_tokens,
            "estimated_before": self.tokens_before,
            "estimated_after": self.tokens_after(summary),
            "request_estimated": self.request_estimated(),
        }


def specifics_of(session: Session, plan: CompactionPlan) -> Callable[[], Specifics]:
    """The extractor's items of the compacted range, made once on first call
    (the offline provider's input; the session format's vocabulary)."""
    made: list[Specifics] = []
    lock = threading.Lock()  # two workers asking at once: the second waits for the first

    def get() -> Specifics:
        from kimi_compact_tui.retention import stated_work_dir
        from kimi_compact_tui.specifics import extract

        with lock:
            if not made:
                work_dir = stated_work_dir(session, plan)
                root = work_dir.rstrip("/") + "/" if work_dir else None
                vocabulary = session.format.vocabulary()
                made.append(extract(session.messages, plan.compact_indices, vocabulary, root))
            return made[0]

    return get


def prepare_compaction(
    session: Session,
    config: AppConfig,
    *,
    up_to: int | None = None,
    custom_instruction: str = "",
    prompt_file: str | Path | None = None,
    base_model: str | None = None,
    compaction_model: str | None = None,
    prompt: PromptSource | None = None,
    message_token_list: list[int] | None = None,
) -> Preparation:
    """Plan and build the request for ``session`` under ``config``.

    ``compaction_model`` is the per-session override (it wins over the
    config's); ``base_model`` is the provider's model used when no override
    is set."""
    settings = config.compaction
    if prompt is None:
        prompt = config.prompt(prompt_file)
    plan = make_plan(
        session.messages,
        max_preserved_messages=settings.max_preserved_messages,
        up_to=up_to,
        injected=session.format.tail_bookkeeping,
    )
    model = compaction_model or settings.compaction_model
    items = specifics_of(session, plan)
    builder = None
    if not plan.noop:

        def builder() -> CompactionRequest:
            request = build_request(
                session.messages,
                plan,
                prompt,
                settings.as_spec(),
                compaction_model=model,
                base_model=base_model,
                custom_instruction=custom_instruction,
            )
            request.specifics = items
            return request

    text_counts = exchanges = None
    if message_token_list is not None:
        tokens = message_token_list
    else:  # one pass: tokens, the request range's text counts, the tool exchanges
        scan = scan_messages(session.messages, plan.request_indices.stop)
        tokens, text_counts, exchanges = scan.tokens, scan.text_counts, scan.exchanges
    prep = Preparation(
        session,
        plan,
        prompt,
        builder,
        settings.enabled,
        settings.disabled_reason,
        tokens,
        model,
        custom_instruction,
    )
    prep._text_counts = text_counts
    prep.exchanges = exchanges
    prep._specifics = items
    return prep
