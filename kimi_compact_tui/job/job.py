"""The compaction job: load → prepare → summarize → draft → commit.

One job serves every front end (``compact``, the TUI and the spec facade),
so the rules exist once:

- :meth:`CompactionJob.load` is the one load path (a file, folder or id → the
  session and the fingerprint of the very bytes parsed);
- :meth:`CompactionJob.prepare` plans the regions and (lazily) the request;
- :meth:`CompactionJob.readiness` computes, before any request, every refusal
  (:mod:`.refusals`, typed values the front ends render): what cannot be
  summarized (a no-op, a disabled config, a provider missing its model or
  key) and, for a summary to be written over the session, what cannot be
  written (the format's refusal, a bundled sample, a read-only file or
  folder, a split tool exchange);
- :meth:`CompactionJob.summarize` streams the summary from a provider;
- :meth:`CompactionJob.draft` turns a finished run (or an edited text) into a
  :class:`Draft`: the one rule for "writable" (``StreamResult.write_refusal``),
  the one place the compacted session is built (by the session's format), the
  one rule for the summary's output tokens (``StreamResult.output_tokens``);
- :meth:`CompactionJob.commit` writes a draft through the store, after the
  same write refusals (the readiness the front end computed before the
  request, or computed now), with the same audit record whichever front end
  asked.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kimi_compact_tui.compaction.pairs import ToolSplit, find_splits
from kimi_compact_tui.compaction.plan import CompactionPlan
from kimi_compact_tui.compaction.prompts import PromptSource
from kimi_compact_tui.compaction.tokens import message_tokens
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.errors import ConfigError, UserError
from kimi_compact_tui.formats.base import Session
from kimi_compact_tui.formats.loader import Fingerprint, load
from kimi_compact_tui.formats.storage import SessionRef
from kimi_compact_tui.fsutil import gc_paused
from kimi_compact_tui.job import refusals
from kimi_compact_tui.job.prepare import Preparation, prepare_compaction
from kimi_compact_tui.job.refusals import Readiness, Refusal, RefusalKind
from kimi_compact_tui.providers import (
    EventCallback,
    ProviderConfig,
    StreamFunction,
    StreamResult,
    require_key,
    require_model,
    stream_summary,
)
from kimi_compact_tui.store import ApplyResult, Provenance, apply_compaction

if TYPE_CHECKING:
    import asyncio

#: ``StreamResult.provider`` of a summary that no model wrote now (a file, an
#: edit by hand): its audit record names no provider, model or prompt.
GIVEN = "given"
GIVEN_DETAIL = "summary given as it is: no model call"


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
    def tokens_before(self) -> int:
        """The session's estimated tokens before the compaction."""
        return self.preparation.tokens_before

    @property
    def grows(self) -> bool:
        """True when the compacted session would be larger than the original."""
        return self.tokens_after > self.preparation.tokens_before

    def growth_warning(self) -> str | None:
        """One line when the compaction makes the session larger (both
        figures), else None: shown before it is written, by every front end."""
        if not self.grows:
            return None
        return (
            f"this compaction makes the session larger, not smaller: "
            f"~{self.tokens_before:,} → ~{self.tokens_after:,} tokens"
        )


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
        cls,
        path: str | Path | SessionRef,
        config: AppConfig,
        *,
        for_write: bool = True,
        **kw: Any,
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

    def readiness(
        self,
        prep: Preparation,
        provider: ProviderConfig | None = None,
        *,
        request: bool = True,
        write: bool = False,
        allow_split: bool = True,
    ) -> Readiness:
        """Every refusal, computed once, before any request (typed values the
        front ends render): with ``request``, what cannot be summarized (a
        no-op, a disabled config and, given the ``provider``, a remote provider
        with no model, or with no key when it needs one); with ``write``, what
        cannot then be written over the session (its format's refusal, a
        bundled sample, a read-only file or folder, no fingerprint, and unless
        ``allow_split`` a split tool exchange)."""
        found: list[Refusal | None] = []
        if request:
            found.extend(self._request_refusals(prep, provider))
        if write:
            found.extend(self._write_refusals(prep, allow_split=allow_split))
        return refusals.readiness(found)

    def _request_refusals(
        self, prep: Preparation, provider: ProviderConfig | None
    ) -> list[Refusal]:
        if prep.plan.noop or prep.build_request is None:
            return [refusals.nothing_to_compact(prep.plan.noop)]
        found = []
        if not prep.enabled:
            found.append(refusals.disabled(prep.disabled_reason))
        empty = refusals.empty_prompt(prep.prompt)
        if empty is not None:
            found.append(empty)
        if provider is None:
            return found
        try:
            require_model(provider, prep.compaction_model)
        except ConfigError as exc:
            found.append(Refusal(RefusalKind.NO_MODEL, str(exc)))
        try:
            require_key(provider)
        except ConfigError as exc:
            found.append(Refusal(RefusalKind.NO_KEY, str(exc)))
        return found

    def _write_refusals(self, prep: Preparation, *, allow_split: bool) -> list[Refusal | None]:
        session = self.session
        sample = refusals.sample_refusal(session.path)
        found: list[Refusal | None] = [refusals.format_refusal(session), sample]
        if sample is None:  # a sample's copy is what is written: no need to say more
            found.append(refusals.read_only_refusal(session))
        if self.fingerprint is None:
            found.append(refusals.not_loaded_for_write(session.ref))
        found.append(refusals.plan_refusal(session, prep.plan))
        if not allow_split:
            splits = find_splits(session.messages, prep.plan, prep.exchanges)
            found.append(refusals.split_refusal(session.ref, splits, session, prep.plan))
        return found

    def check_ready(self, prep: Preparation, provider: ProviderConfig) -> None:
        """Raise the first refusal of :meth:`readiness` for a request (for a
        caller that only needs yes or no; a front end renders the readiness)."""
        self.readiness(prep, provider).raise_first()

    async def summarize(
        self,
        prep: Preparation,
        provider: ProviderConfig,
        on_event: EventCallback | None = None,
        cancel: asyncio.Event | None = None,
        stream: StreamFunction = stream_summary,
        *,
        ready: Readiness | None = None,
    ) -> StreamResult:
        """Stream the summary of ``prep``'s request from ``provider``, after
        its readiness (``ready``: the one the front end computed and showed;
        else computed here). Provider trouble is in the result, never raised.
        ``stream``: the provider call (tests give a scripted one)."""
        (ready if ready is not None else self.readiness(prep, provider)).raise_first()
        request = prep.request
        assert request is not None  # the readiness refused a no-op
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
        self,
        draft: Draft,
        provider: ProviderConfig | None,
        *,
        allow_split: bool = False,
        ready: Readiness | None = None,
    ) -> ApplyResult:
        """Write ``draft`` through the store; returns its ApplyResult. Refused
        by the write refusals of :meth:`readiness` (``ready``: the readiness
        computed before the request, with ``write``; else computed now)."""
        if ready is None:
            ready = self.readiness(
                draft.preparation, request=False, write=True, allow_split=allow_split
            )
        ready.raise_first()
        if self.fingerprint is None:  # a readiness computed without the write's refusals
            raise refusals.not_loaded_for_write(self.session.ref).error()
        prep = draft.preparation
        if draft.result.provider == GIVEN:
            provenance = Provenance(provider_detail=GIVEN_DETAIL)
        else:
            provenance = provenance_of(
                prep.prompt, provider, draft.model or self.base_model, draft.result.usage
            )
            built = prep._request  # a revision's request is always built (job/revise.py)
            if built is not None and built.is_revision:
                revision = (len(built.revisions), built.dropped_rounds)
                provenance = dataclasses.replace(provenance, revision=revision)
        return apply_compaction(
            self.session,
            draft.compacted,
            loaded_fingerprint=self.fingerprint,
            summary=draft.summary,
            plan=prep.plan,
            provenance=provenance,
        )
