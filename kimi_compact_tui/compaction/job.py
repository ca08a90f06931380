"""The compaction job: load → prepare → summarize → draft → commit.

One job serves every front end (``compact``, the TUI and the spec facade),
so the rules exist once:

- :meth:`CompactionJob.prepare` plans the regions and (lazily) the request;
- :meth:`CompactionJob.summarize` streams the summary from a provider;
- :meth:`CompactionJob.draft` turns a finished run (or an edited text) into
  a :class:`Draft`: the one rule for "writable" (:func:`writable_reason`),
  the one place the compacted session is built, the one rule for the
  summary's output tokens (:func:`draft_output_tokens`);
- :meth:`CompactionJob.commit` writes a draft through the store, refusing a
  history that splits a tool call from its result unless allowed, with the
  same audit record whichever front end asked.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kimi_compact_tui.compaction import Preparation, prepare_compaction
from kimi_compact_tui.compaction.pairs import ToolSplit, find_splits, nearest_safe_up_to
from kimi_compact_tui.compaction.summary import build_compacted_session
from kimi_compact_tui.config import AppConfig
from kimi_compact_tui.errors import ApplyError, UserError
from kimi_compact_tui.model import Session


def draft_output_tokens(usage: dict[str, Any] | None, edited: bool) -> int | None:
    """The summary's output tokens as the provider reported them; None when
    not reported, or when the text was edited (the figure no longer
    describes it; the format then estimates)."""
    if edited or not isinstance(usage, dict):
        return None
    for key in ("completion_tokens", "output_tokens", "eval_count"):
        value = usage.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return None


def writable_reason(
    result: Any, summary: str | None, *, allow_truncated: bool = False
) -> str | None:
    """None when ``summary`` from ``result`` may be written; else why not."""
    if result is None:
        return "no summary yet: compact first"
    status = getattr(result, "status", None)
    if status == "truncated" and not allow_truncated:
        return "the summary was truncated at the model's output limit"
    if status not in ("complete", "truncated"):
        why = getattr(result, "error", None)
        return f"the summary is {status}" + (f" ({why})" if why else "")
    if not summary or not summary.strip():
        return "the summary is empty"
    return None


def split_refusal(path: Any, splits: list[ToolSplit], session: Session, plan: Any) -> str:
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
    result: Any  # the provider run (StreamResult) it came from
    edited: bool
    output_tokens: int | None
    splits: list[ToolSplit] = field(default_factory=list)

    @property
    def model(self) -> str | None:
        return getattr(self.result, "model", None) or self.preparation.compaction_model

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
    fingerprint: Any = None  # store.Fingerprint of the loaded bytes (None: not writable)
    prompt_file: str | Path | None = None
    base_model: str | None = None

    @classmethod
    def load(cls, path: str | Path, config: AppConfig, **kw: Any) -> CompactionJob:
        from kimi_compact_tui.store import load_fingerprinted

        session, fp = load_fingerprinted(path)
        return cls(session, config, fp, **kw)

    def prepare(
        self,
        *,
        up_to: int | None = None,
        custom_instruction: str = "",
        compaction_model: str | None = None,
        **kw: Any,
    ) -> Preparation:
        return prepare_compaction(
            self.session,
            self.config,
            up_to=up_to,
            custom_instruction=custom_instruction,
            prompt_file=self.prompt_file,
            base_model=self.base_model,
            compaction_model=compaction_model,
            **kw,
        )

    async def summarize(
        self,
        prep: Preparation,
        provider: Any,
        on_event: Any = None,
        cancel: asyncio.Event | None = None,
    ) -> Any:
        """Stream the summary of ``prep``'s request from ``provider`` (a
        ProviderConfig). Provider trouble is in the result, never raised."""
        from kimi_compact_tui.providers import stream_summary

        self.check_ready(prep, provider)
        return await stream_summary(provider, prep.request, on_event, cancel)

    def check_ready(self, prep: Preparation, provider: Any) -> None:
        """Refuse, before any request, what cannot be summarized: a no-op, a
        disabled config, a remote provider with no model or with no key when it
        needs one (config errors)."""
        from kimi_compact_tui.providers import require_key, require_model

        if prep.plan.noop or prep.build_request is None:
            raise UserError(f"nothing to compact: {prep.plan.noop}")
        if not prep.enabled:
            raise UserError(f"compaction is not enabled: {prep.disabled_reason}")
        require_model(provider, prep.compaction_model)
        require_key(provider)

    def draft(
        self,
        prep: Preparation,
        result: Any,
        summary: str | None = None,
        *,
        allow_truncated: bool = False,
    ) -> Draft:
        """The draft of ``result`` (``summary``: an edited text in its place).
        Raises UserError when it may not be written."""
        edited = summary is not None and summary != getattr(result, "summary", None)
        text = summary if summary is not None else getattr(result, "summary", "")
        why = writable_reason(result, text, allow_truncated=allow_truncated)
        if why is not None:
            raise UserError(f"{self.session.path}: not written: {why}")
        tokens = draft_output_tokens(getattr(result, "usage", None), edited)
        compacted = build_compacted_session(self.session, prep.plan, text, output_tokens=tokens)
        splits = find_splits(self.session.messages, prep.plan)
        return Draft(text, compacted, prep, result, edited, tokens, splits)

    def write_refusal(self) -> str | None:
        """Why this session cannot be written back at all (its format says), or None."""
        from kimi_compact_tui.formats.registry import format_of

        refuse = getattr(format_of(self.session), "write_refusal", None)
        return refuse(self.session) if refuse is not None else None

    def commit(self, draft: Draft, provider: Any, *, allow_split: bool = False) -> Any:
        """Write ``draft`` through the store; returns its ApplyResult."""
        from kimi_compact_tui.store import apply_compaction

        why = self.write_refusal()
        if why is not None:
            raise ApplyError(f"{self.session.path}: not written: {why}")
        if self.fingerprint is None:
            raise ApplyError(
                f"{self.session.path}: not written: the loaded file has no fingerprint"
            )
        if draft.splits and not allow_split:
            raise UserError(
                split_refusal(self.session.path, draft.splits, self.session, draft.preparation.plan)
            )
        prep = draft.preparation
        return apply_compaction(
            self.session,
            draft.compacted,
            loaded_fingerprint=self.fingerprint,
            summary=draft.summary,
            plan=prep.plan,
            prompt=prep.prompt,
            provider=provider,
            model=draft.model or self.base_model,
            usage=getattr(draft.result, "usage", None),
        )
