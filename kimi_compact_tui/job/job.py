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
  one rule for the summary's output tokens (``StreamResult.output_tokens``),
  and the one place the summary to write is masked (``secrets.mask_secrets``:
  every front end writes a masked summary; :meth:`CompactionJob.summarize`
  masks each run's summary too, so what a front end shows is what is written);
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

from kimi_compact_tui.compaction.pairs import ToolSplit, find_splits, safe_boundaries
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
from kimi_compact_tui.job.window import Window, output_room, window_of
from kimi_compact_tui.providers import (
    EventCallback,
    ProviderConfig,
    StreamFunction,
    StreamResult,
    require_key,
    require_model,
    stream_summary,
)
from kimi_compact_tui.secrets import mask_secrets
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


def masked_result(result: StreamResult) -> StreamResult:
    """``result`` with its summary masked (``secrets.mask_secrets``): what a
    front end shows once a run ends is the text that will be written (the
    offline summary quotes requests verbatim; a model may echo a secret). The
    usage the provider reported is kept: it is the run's (a masked secret
    changes the output tokens by a few)."""
    text = mask_secrets(result.summary)
    if text == result.summary:
        return result
    return dataclasses.replace(result, summary=text)


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
        output: bool = False,
        given: bool = False,
    ) -> Readiness:
        """Every refusal, computed once, before any request (typed values the
        front ends render): with ``request``, what cannot be summarized (a
        no-op, a disabled config and, given the ``provider``, a remote provider
        with no model, or with no key when it needs one); with ``write``, what
        cannot then be written over the session (its format's refusal, a
        bundled sample, a read-only file or folder, no fingerprint, and unless
        ``allow_split`` a split tool exchange); with ``output``, a session
        that cannot be written to a new file (``compact --output`` of rows in a
        database). ``given``: the summary is given as it is (no model call), so
        the prompt and the provider are not checked, and custom instructions
        are refused (nothing would read them)."""
        found: list[Refusal | None] = []
        if request:
            found.extend(self._request_refusals(prep, None if given else provider, given=given))
        if write:
            found.extend(self._write_refusals(prep, allow_split=allow_split))
        if output and not prep.plan.noop:
            found.append(refusals.not_a_file(self.session))
        return refusals.readiness(found)

    def run_readiness(self, prep: Preparation, provider: ProviderConfig) -> Readiness:
        """Everything a front end that runs a compaction for a summary it may
        then write (the TUI's stream screen) checks before the request, in one
        call: the request's refusals and, for a job loaded for a write, the
        write's (a split is the write dialog's to refuse, with its override).
        A first refusal with ``nothing_to_do`` (a no-op, compaction not
        enabled) is a state to show, not an error. Pass the result to
        :meth:`summarize`. (A revision adds its own refusal first:
        ``job.revise.origin_refusal``.)"""
        return self.readiness(prep, provider, write=self.fingerprint is not None)

    def write_readiness(
        self, prep: Preparation, *, allow_split: bool = False, on_disk: bool = False
    ) -> Readiness:
        """What a front end that asks before it writes (the TUI's write dialog)
        shows: the write's refusals (the format's, a bundled sample, a
        read-only file or folder, no fingerprint, and unless ``allow_split`` a
        split tool exchange, which ``Refusal.can_force`` marks as one the user
        may override) and, with ``on_disk``, a change on disk since the load
        (``CHANGED_ON_DISK``: reads the whole session, so off the UI thread).
        ``Readiness.forced`` is what is left once the user chose to go ahead."""
        ready = self.readiness(prep, request=False, write=True, allow_split=allow_split)
        if not on_disk:
            return ready
        changed = self.changed_on_disk()
        return ready if changed is None else Readiness((*ready.refusals, changed))

    def regrown(self, prep: Preparation) -> tuple[CompactionJob, Preparation] | None:
        """The same compaction on the session as it is now, when it changed
        since the load only by turns appended after the loaded ones (the agent
        went on while the summary was made): the summary still holds for the
        compacted range, and the new turns join the kept tail (the range is
        made explicit: ``up_to`` is the old boundary). None when it did not
        change, or changed otherwise (then the summary no longer holds)."""
        if prep.plan.noop or self.changed_on_disk() is None:
            return None
        try:
            grown = CompactionJob.load(
                str(self.session.ref),
                self.config,
                prompt_file=self.prompt_file,
                base_model=self.base_model,
            )
        except UserError:
            return None
        old, new = self.session.messages, grown.session.messages
        if len(new) <= len(old) or any(a.data != b.data for a, b in zip(old, new, strict=False)):
            return None
        again = grown.prepare(
            up_to=prep.plan.boundary,
            custom_instruction=prep.custom_instruction,
            compaction_model=prep.compaction_model,
            prompt=prep.prompt,
        )
        if again.plan.noop or again.plan.compact_indices != prep.plan.compact_indices:
            return None
        return grown, again

    def changed_on_disk(self) -> Refusal | None:
        """The session changed since it was loaded (its fingerprint now against
        the loaded one), as a refusal; None when it is unchanged or was not
        loaded for a write. Reads the whole session: a front end that asks
        before it writes calls it off its UI thread. The store's commit checks
        it again, inside the write."""
        from kimi_compact_tui.store import fingerprint

        loaded, ref = self.fingerprint, self.session.ref
        if loaded is None or ref is None:
            return None
        try:
            now = fingerprint(ref)
        except UserError as exc:
            return Refusal(RefusalKind.CHANGED_ON_DISK, str(exc))
        same = now.size == loaded.size and now.mtime_ns == loaded.mtime_ns
        if same and (not loaded.sha256 or now.sha256 == loaded.sha256):
            return None
        return refusals.changed_on_disk(self.session.ref, loaded.size, now.size)

    def _request_refusals(
        self, prep: Preparation, provider: ProviderConfig | None, *, given: bool = False
    ) -> list[Refusal]:
        if prep.plan.noop or prep.build_request is None:
            return [refusals.nothing_to_compact(prep.plan.noop)]
        found = []
        if not prep.enabled:
            found.append(refusals.disabled(prep.disabled_reason))
        if given:
            if prep.custom_instruction.strip():
                found.append(refusals.given_with_instructions())
            return found
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
        if not provider.offline and not found:
            found.extend(r for r in [self.window_refusal(prep, provider)] if r is not None)
        return found

    def window(self, prep: Preparation, provider: ProviderConfig | None) -> Window:
        """The context window of the model ``prep``'s request goes to (``job/window.py``)."""
        model = prep.compaction_model or (provider.model if provider is not None else None)
        model = model or self.base_model
        return window_of(self.config, provider, model)

    def output_room(self) -> int:
        """The room kept for the summary in the window."""
        overrides = self.config.compaction.settings_overrides
        return output_room(overrides.get("max_tokens") or overrides.get("max_completion_tokens"))

    def window_refusal(self, prep: Preparation, provider: ProviderConfig) -> Refusal | None:
        """The request does not fit the model's known context window (None:
        it fits, or the window is unknown, which the front ends say)."""
        window = self.window(prep, provider)
        if window.tokens is None or prep.plan.noop:
            return None
        need, room = prep.request_estimated(), self.output_room()
        if need + room <= window.tokens:
            return None
        fits = self.fitting_up_to(prep, window.tokens - room)
        return refusals.too_large(self.session.ref, need, room, window.source, window.tokens, fits)

    def fitting_up_to(self, prep: Preparation, budget: int) -> int | None:
        """The largest ``--up-to`` whose request is within ``budget`` tokens
        and splits no tool exchange, below ``prep``'s boundary; None when none is."""
        plan = prep.plan
        low, high = plan.leading + 1, plan.boundary - 1
        best = None

        def cost(n: int) -> int:
            smaller = self.prepare(
                up_to=n,
                custom_instruction=prep.custom_instruction,
                compaction_model=prep.compaction_model,
                prompt=prep.prompt,
            )
            return smaller.request_estimated() if smaller.build_request else budget + 1

        while low <= high:  # the request grows with the boundary
            mid = (low + high) // 2
            if cost(mid) <= budget:
                best, low = mid, mid + 1
            else:
                high = mid - 1
        if best is None:
            return None
        safe = safe_boundaries(self.session.messages, prep.exchanges)
        for n in range(best, plan.leading, -1):
            if safe[n]:
                return n
        return None

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
        return masked_result(await stream(provider, request, on_event, cancel))

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
        given = result.summary if summary is None else summary
        edited = given != result.summary
        text = mask_secrets(given)  # what is written holds no secret in clear
        tokens = draft_output_tokens(result, edited or text != given)
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
