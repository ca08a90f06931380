"""The compaction job: load → prepare → summarize → draft → commit.

One job serves every front end (``compact``, the TUI and the spec facade),
so the rules exist once:

- :meth:`CompactionJob.load` is the one load path (a file, folder or id → the
  session and the fingerprint of the very bytes parsed);
- :meth:`CompactionJob.prepare` plans the regions and (lazily) the request;
- :meth:`CompactionJob.check_ready` refuses, before any request, what cannot
  be summarized (a no-op, a disabled config, a provider missing its model or key);
- :meth:`CompactionJob.summarize` streams the summary from a provider;
- :meth:`CompactionJob.draft` turns a finished run (or an edited text) into a
  :class:`Draft`: the one rule for "writable" (``StreamResult.write_refusal``),
  the one place the compacted session is built (by the session's format), the
  one rule for the summary's output tokens (``StreamResult.output_tokens``);
- :meth:`CompactionJob.commit` writes a draft through the store, refusing a
  history that splits a tool call from its result unless allowed, with the
  same audit record whichever front end asked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kimi_compact_tui.compaction.pairs import ToolSplit, find_splits, nearest_safe_up_to
from kimi_compact_tui.compaction.plan import CompactionPlan
from kimi_compact_tui.compaction.prompts import PromptSource
from kimi_compact_tui.compaction.tokens import message_tokens
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.errors import ApplyError, UserError
from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.formats.loader import Fingerprint, load
from kimi_compact_tui.fsutil import gc_paused
from kimi_compact_tui.job.prepare import Preparation, prepare_compaction
from kimi_compact_tui.providers import (
    EventCallback,
    ProviderConfig,
    StreamResult,
    require_key,
    require_model,
    stream_summary,
)
from kimi_compact_tui.store import ApplyResult, Provenance, apply_compaction

#: A provider call: ``(provider, request, on_event, cancel) -> StreamResult``.
StreamFunction = Callable[
    [ProviderConfig, Any, EventCallback | None, asyncio.Event | None], Awaitable[StreamResult]
]


def provenance_of(
    prompt: PromptSource | None,
    provider: ProviderConfig | None,
    model: str | None,
    usage: dict[str, Any] | None,
) -> Provenance:
    """The audit record's account of where a summary came from (the store
    scrubs credentials from what it records)."""
    return Provenance(
        prompt=prompt,
        provider=provider.kind if provider is not None else None,
        provider_detail=provider.describe() if provider is not None else None,
        model=model,
        usage=usage,
    )


def build_compacted_session(
    session: Session, plan: CompactionPlan, summary: str, *, output_tokens: int | None = None
) -> Session:
    """The session after the compaction, as the session's format writes it
    (its summary message shape and its state for the write)."""
    return session.format.compacted_session(session, plan, summary, output_tokens)


def draft_output_tokens(result: StreamResult | None, edited: bool) -> int | None:
    """The summary's output tokens as the provider reported them; None when
    not reported, or when the text was edited (the figure no longer
    describes it; the format then estimates)."""
    if edited or result is None:
        return None
    return result.output_tokens


def writable_reason(
    result: StreamResult | None, summary: str | None, *, allow_truncated: bool = False
) -> str | None:
    """None when ``summary`` (after the run ``result``) may be written; else why not."""
    if result is None:
        return "no summary yet: compact first"
    return result.write_refusal(summary, allow_truncated)


def split_refusal(
    path: Any, splits: list[ToolSplit], session: Session, plan: CompactionPlan
) -> str:
    """The one line refusing to write a split history (CLI and TUI alike)."""
    safe = nearest_safe_up_to(session.messages, plan.boundary, plan.leading)
    hint = f"; the nearest boundary that keeps them together is --up-to {safe}" if safe else ""
    return (
        f"{path}: not written: the boundary splits a tool call from its result "
        f"({'; '.join(s.describe() for s in splits[:3])}{' ...' if len(splits) > 3 else ''}), "
        f"and the agent could not continue such a history{hint} (or allow the split explicitly)"
    )


@dataclass
class Draft:
    """A summary ready to review and write, and the session it makes."""

    summary: str
    compacted: Session
    preparation: Preparation
    result: StreamResult
    edited: bool
    output_tokens: int | None
    splits: list[ToolSplit] = field(default_factory=list)

    @property
    def model(self) -> str | None:
        return self.result.model or self.preparation.compaction_model

    @property
    def tokens_after(self) -> int:
        return self.preparation.tokens_after(self.summary)

    @property
    def grows(self) -> bool:
        """True when the compacted session would be larger than the original."""
        return self.tokens_after > self.preparation.tokens_before


@dataclass
class CompactionJob:
    """One session under review: what was loaded, and the steps on it."""

    session: Session
    config: AppConfig
    fingerprint: Fingerprint | None = None  # of the loaded bytes (None: not writable)
    prompt_file: str | Path | None = None
    base_model: str | None = None
    # Each message's token estimate, computed once (the first prepare) and reused.
    message_tokens: list[int] | None = None

    @classmethod
    def load(
        cls, path: str | Path, config: AppConfig, *, for_write: bool = True, **kw: Any
    ) -> CompactionJob:
        """The one load path for every front end: resolve ``path`` (a file, a
        session folder or a session id), parse it and fingerprint the very bytes
        parsed (``for_write``; a job loaded only to look cannot commit).
        Raises SessionFormatError (a UserError) with one line."""
        loaded = load(path, hashed=for_write)
        return cls(loaded.session, config, loaded.fingerprint if for_write else None, **kw)

    @property
    def path(self) -> Path | None:
        return self.session.path

    def count_tokens(self) -> list[int]:
        """Each message's token estimate, computed once and kept."""
        if self.message_tokens is None:
            with gc_paused():
                self.message_tokens = [message_tokens(m) for m in self.session.messages]
        return self.message_tokens

    def prepare(
        self,
        *,
        up_to: int | None = None,
        custom_instruction: str = "",
        compaction_model: str | None = None,
        prompt: PromptSource | None = None,
    ) -> Preparation:
        prep = prepare_compaction(
            self.session,
            self.config,
            up_to=up_to,
            custom_instruction=custom_instruction,
            prompt_file=self.prompt_file,
            base_model=self.base_model,
            compaction_model=compaction_model,
            prompt=prompt,
            message_token_list=self.message_tokens,
        )
        self.message_tokens = prep.message_tokens
        return prep

    def check_ready(self, prep: Preparation, provider: ProviderConfig) -> None:
        """Refuse, before any request, what cannot be summarized: a no-op, a
        disabled config, a remote provider with no model or with no key when it
        needs one (config errors)."""
        if prep.plan.noop or prep.build_request is None:
            raise UserError(f"nothing to compact: {prep.plan.noop}")
        if not prep.enabled:
            raise UserError(f"compaction is not enabled: {prep.disabled_reason}")
        require_model(provider, prep.compaction_model)
        require_key(provider)

    async def summarize(
        self,
        prep: Preparation,
        provider: ProviderConfig,
        on_event: EventCallback | None = None,
        cancel: asyncio.Event | None = None,
        stream: StreamFunction = stream_summary,
    ) -> StreamResult:
        """Stream the summary of ``prep``'s request from ``provider``, after
        :meth:`check_ready`. Provider trouble is in the result, never raised.
        ``stream``: the provider call (tests give a scripted one)."""
        self.check_ready(prep, provider)
        request = prep.request
        assert request is not None  # check_ready refused a no-op
        return await stream(provider, request, on_event, cancel)

    def draft(
        self,
        prep: Preparation,
        result: StreamResult | None,
        summary: str | None = None,
        *,
        allow_truncated: bool = False,
    ) -> Draft:
        """The draft of ``result`` (``summary``: an edited text in its place).
        Raises UserError when it may not be written."""
        why = writable_reason(result, summary, allow_truncated=allow_truncated)
        if why is not None or result is None:
            raise UserError(f"{self.session.ref}: not written: {why}")
        text = result.summary if summary is None else summary
        edited = text != result.summary
        tokens = draft_output_tokens(result, edited)
        compacted = build_compacted_session(self.session, prep.plan, text, output_tokens=tokens)
        splits = find_splits(self.session.messages, prep.plan)
        return Draft(text, compacted, prep, result, edited, tokens, splits)

    def write_refusal(self) -> str | None:
        """Why this session cannot be written back at all (its format says), or None."""
        return self.session.format.write_refusal(self.session)

    def commit(
        self, draft: Draft, provider: ProviderConfig | None, *, allow_split: bool = False
    ) -> ApplyResult:
        """Write ``draft`` through the store; returns its ApplyResult."""
        why = self.write_refusal()
        if why is not None:
            raise ApplyError(f"{self.session.ref}: not written: {why}")
        if self.fingerprint is None:
            raise ApplyError(f"{self.session.ref}: not written: the loaded file has no fingerprint")
        if draft.splits and not allow_split:
            raise UserError(
                split_refusal(self.session.path, draft.splits, self.session, draft.preparation.plan)
            )
        prep = draft.preparation
        provenance = provenance_of(
            prep.prompt, provider, draft.model or self.base_model, draft.result.usage
        )
        return apply_compaction(
            self.session,
            draft.compacted,
            loaded_fingerprint=self.fingerprint,
            summary=draft.summary,
            plan=prep.plan,
            provenance=provenance,
        )
