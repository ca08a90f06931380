"""The review state shared by every TUI screen (plain Python, no Textual).

A :class:`ReviewState` holds the session, config, provider, the user's choices
and the engine's :class:`Preparation`, plus the last stream result and the
summary (possibly edited). Screens change it only through its methods; the
store calls (write, undo, restore points) go through it alone. Per-message
token estimates are computed once per load, so replanning stays cheap.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kimi_compact_tui import store
from kimi_compact_tui.compaction import (
    Preparation,
    PromptSource,
    prepare_compaction,
)
from kimi_compact_tui.compaction.job import CompactionJob, Draft
from kimi_compact_tui.compaction.pairs import ToolSplit, find_splits, nearest_safe_up_to
from kimi_compact_tui.compaction.prompts import edited_prompt, resolve_prompt
from kimi_compact_tui.compaction.tokens import message_tokens
from kimi_compact_tui.config import AppConfig, _get_compaction_config, load_config
from kimi_compact_tui.errors import UserError
from kimi_compact_tui.fsutil import gc_paused
from kimi_compact_tui.model import Session
from kimi_compact_tui.providers import ProviderConfig, StreamResult, provider_config_from
from kimi_compact_tui.tui import undo as undo_rules
from kimi_compact_tui.tui.loading import LoadedSession, file_fingerprint, read_session
from kimi_compact_tui.tui.undo import RestoreOffer


@dataclass
class ReviewState:
    config: AppConfig = field(default_factory=AppConfig)
    provider: ProviderConfig | None = None
    session_path: Path | None = None
    session: Session | None = None
    fingerprint: Any = None
    up_to: int | None = None  # 1-based explicit boundary, None = default preserved tail
    custom_instruction: str = ""
    compaction_model: str | None = None  # per-session override
    prompt_file: str | None = None
    preparation: Preparation | None = None
    message_tokens: list[int] = field(default_factory=list)
    stream_result: StreamResult | None = None  # the last run
    summary: str | None = None  # the summary to write (edited or as streamed)
    summary_edited: bool = False
    _prompt: PromptSource | None = None
    # safe_boundaries() of the session (tool_exchanges is ~0.5 s at 100k messages):
    # computed off the UI thread after a load, None until then.
    safe: list[bool] | None = None
    _splits: tuple[Any, int, list[ToolSplit]] | None = None

    # --- construction -------------------------------------------------------------
    @classmethod
    def create(
        cls,
        *,
        config_path: str | Path | None = None,
        provider: str | None = None,
        model: str | None = None,
        base_url: str | None = None,
        prompt_file: str | None = None,
    ) -> ReviewState:
        """Load the config and provider (raises UserError with one line)."""
        config = load_config(config_path)
        prov = provider_config_from(
            config.provider, provider=provider, model=model, base_url=base_url
        )
        # An explicit --model is the request model, over any configured compaction_model.
        return cls(config=config, provider=prov, prompt_file=prompt_file, compaction_model=model)

    # --- loading ------------------------------------------------------------------
    def load(self, path: str | Path) -> Session:
        """Load ``path`` (a file or kimi-cli session folder), reset choices and plan.
        Raises :class:`UserError` with the CLI's one-line text."""
        session = self.adopt(read_session(path))
        self.freeze_loaded()
        return session

    def adopt(self, loaded: LoadedSession, *, up_to: int | None = None) -> Session:
        """Make ``loaded`` the session under review (UI thread); ``up_to`` is an
        explicit 1-based boundary (a bad one raises UserError, the session stays)."""
        self.set_session(loaded.session, loaded.path, loaded.fingerprint, loaded.tokens)
        if up_to is not None:
            self.set_boundary(up_to - 1)
        return loaded.session

    @staticmethod
    def freeze_loaded() -> None:
        """The loaded messages live as long as the session and hold no cycles: keep
        them out of every later garbage-collector pass (100k messages are
        ~700k objects, 0.3 s per full pass otherwise). Objects frozen by an
        earlier load go back to the collector first, so nothing stays frozen
        that has become garbage since; the app unfreezes everything on exit."""
        gc.unfreeze()
        gc.freeze()

    def set_session(
        self,
        session: Session,
        path: Path | None,
        fingerprint: Any = None,
        tokens: list[int] | None = None,
    ) -> None:
        self.session = session
        self.session_path = path
        if tokens is None:
            with gc_paused():
                tokens = [message_tokens(m) for m in session.messages]
        self.message_tokens = tokens
        self.safe = None
        self._splits = None
        if fingerprint is None and path is not None:
            fingerprint = file_fingerprint(path)
        self.fingerprint = fingerprint
        self.up_to = None
        self.clear_result()
        self.replan()

    def reload(self) -> Session:
        """Reload the current file (after a write or an undo), keeping the choices
        that still make sense (custom instructions, model override)."""
        if self.session_path is None:
            raise ValueError("no session loaded")
        return self.load(self.session_path)

    # --- planning -----------------------------------------------------------------
    @property
    def prompt(self) -> PromptSource:
        if self._prompt is None:
            cfg = _get_compaction_config(self.config.raw)
            self._prompt = resolve_prompt(
                cfg, prompt_file=self.prompt_file, base_dir=self.config.base_dir
            )
        return self._prompt

    @property
    def base_model(self) -> str | None:
        return self.provider.model if self.provider is not None else None

    def replan(self) -> Preparation | None:
        """Recompute the preparation from the current choices."""
        if self.session is None:
            self.preparation = None
            return None
        self.preparation = prepare_compaction(
            self.session,
            self.config,
            up_to=self.up_to,
            custom_instruction=self.custom_instruction,
            base_model=self.base_model,
            compaction_model=self.compaction_model,
            prompt=self.prompt,
            message_token_list=self.message_tokens,
        )
        return self.preparation

    def set_boundary(self, index: int | None) -> None:
        """Compact messages up to and including ``index`` (0-based); None = default tail."""
        up_to = None if index is None else index + 1
        if up_to == self.up_to:
            return
        previous, self.up_to = self.up_to, up_to
        try:
            self.replan()
        except Exception:
            self.up_to = previous
            self.replan()
            raise
        self.clear_result()

    def set_custom_instruction(self, text: str) -> None:
        if text != self.custom_instruction:
            self.custom_instruction = text
            self.clear_result()
            self.replan()

    def set_prompt_text(self, text: str | None) -> None:
        """Use an edited copy of the prompt (None: back to the configured one)."""
        self._prompt = None if text is None else edited_prompt(text)
        self.clear_result()
        self.replan()

    def set_compaction_model(self, model: str | None) -> None:
        model = (model or "").strip() or None
        if model != self.compaction_model:
            self.compaction_model = model
            self.clear_result()
            self.replan()

    # --- results ------------------------------------------------------------------
    def clear_result(self) -> None:
        self.stream_result = None
        self.summary = None
        self.summary_edited = False

    def set_result(self, result: Any) -> None:
        """Store a provider StreamResult; only a complete, non-empty summary
        becomes the one to write (truncated, failed and cancelled runs leave None)."""
        self.stream_result = result
        complete = (
            result is not None
            and result.status == "complete"
            and bool(result.summary.strip())
            and result.writable()
        )
        self.summary = result.summary if complete else None
        self.summary_edited = False

    def set_summary(self, text: str) -> None:
        self.summary = text
        self.summary_edited = True

    # --- writing (the compaction job, as the CLI) -----------------------------------
    def job(self) -> CompactionJob:
        """The compaction job for the loaded session (the same steps as the CLI)."""
        assert self.session is not None
        return CompactionJob(
            self.session,
            self.config,
            self.fingerprint,
            prompt_file=self.prompt_file,
            base_model=self.base_model,
        )

    def draft(self) -> Draft | None:
        """The job's draft of the reviewed summary (None when there is nothing
        writable): the one build the diff, the confirm dialog and the write use."""
        prep, summary = self.preparation, self.summary
        if self.session is None or prep is None or summary is None or prep.plan.noop:
            return None
        try:
            return self.job().draft(prep, self.stream_result, summary)
        except UserError:
            return None

    def compacted_session(self) -> Session | None:
        """The session a write would produce (None without a writable summary)."""
        draft = self.draft()
        return draft.compacted if draft is not None else None

    def write(self, *, allow_split: bool = False) -> str:
        """Write the reviewed summary through the compaction job (the file must
        still be the one loaded; a history that splits a tool exchange is
        written only with ``allow_split``); return the one-line report.
        Raises UserError with the CLI's text."""
        if not self.writable or self.session is None or self.preparation is None:
            raise UserError("nothing to write: compact first (c) and let the summary complete")
        job = self.job()
        draft = job.draft(self.preparation, self.stream_result, self.summary)
        return job.commit(draft, self.provider, allow_split=allow_split).describe()

    # --- undo and restore points (the only calls into the store's restore) -------
    def undo_offer(self) -> RestoreOffer:
        """What ``u`` offers: the copy kept by this tool's newest write, or why
        there is nothing of ours to undo (see :mod:`kimi_compact_tui.tui.undo`)."""
        if self.session_path is None:
            raise UserError("no session loaded")
        return undo_rules.undo_offer(self.session_path)

    def restore_points(self) -> list[Any]:
        """Every restore point beside the session, newest first, each labelled
        with its origin (this tool's audit log, or kimi-cli's own rotation)."""
        if self.session_path is None:
            raise UserError("no session loaded")
        return store.restore_points(self.session_path)

    def restore_offer(self, point: Any) -> RestoreOffer:
        """The offer for a restore point picked from :meth:`restore_points`."""
        if self.session_path is None:
            raise UserError("no session loaded")
        return undo_rules.point_offer(self.session_path, point)

    def restore(self, offer: RestoreOffer, *, force: bool = False) -> str:
        """Carry out a confirmed offer (refused when the live file changed since
        this tool wrote it, unless ``force``); return the one-line report."""
        return undo_rules.run_restore(offer, force=force)

    def undo(self, *, force: bool = False) -> str:
        """Undo this tool's newest write (the offer of :meth:`undo_offer`)."""
        return self.restore(self.undo_offer(), force=force)

    # --- derived ------------------------------------------------------------------
    @property
    def enabled(self) -> bool:
        return self.preparation is not None and self.preparation.enabled

    @property
    def disabled_reason(self) -> str | None:
        return self.preparation.disabled_reason if self.preparation is not None else None

    @property
    def noop(self) -> str | None:
        return self.preparation.plan.noop if self.preparation is not None else None

    @property
    def can_compact(self) -> bool:
        return self.enabled and self.preparation is not None and not self.preparation.plan.noop

    @property
    def writable(self) -> bool:
        """A complete (not truncated, failed or cancelled) summary exists to write."""
        result = self.stream_result
        if not self.can_compact or result is None or self.summary is None:
            return False
        return bool(result.writable() and self.summary.strip())

    @property
    def has_work(self) -> bool:
        """A summary (streamed or edited) exists that a replan would discard."""
        return self.summary is not None or self.summary_edited

    @property
    def splits(self) -> list[ToolSplit]:
        """The tool exchanges the current plan would split (none when nothing
        compacts). Uses :attr:`safe` when known, so an unsplit boundary costs
        nothing; a split one is described once per boundary."""
        if not self.can_compact or self.session is None or self.preparation is None:
            return []
        plan = self.preparation.plan
        if self.safe is not None and len(self.safe) > plan.boundary and self.safe[plan.boundary]:
            return []
        cached = self._splits
        if cached is not None and cached[0] is self.session and cached[1] == plan.boundary:
            return cached[2]
        found = find_splits(self.session.messages, plan)
        self._splits = (self.session, plan.boundary, found)
        return found

    @property
    def known_splits(self) -> list[ToolSplit]:
        """:attr:`splits`, but empty while :attr:`safe` is not known yet (for the
        status line and the keys, which must not stall the UI thread)."""
        return self.splits if self.safe is not None else []

    def set_safe(self, session: Session, safe: list[bool]) -> None:
        """Adopt ``safe_boundaries(session.messages)`` computed in a worker."""
        if session is self.session:
            self.safe = safe

    def safe_up_to(self) -> int | None:
        """The nearest explicit boundary (1-based) that splits no tool exchange."""
        prep = self.preparation
        if self.session is None or prep is None or prep.plan.noop:
            return None
        return nearest_safe_up_to(self.session.messages, prep.plan.boundary, prep.plan.leading)

    def move_to_safe_boundary(self) -> int:
        """Move the boundary to :meth:`safe_up_to`; return it (UserError when none)."""
        up_to = self.safe_up_to()
        if up_to is None:
            raise UserError("no boundary nearby keeps every tool call with its results")
        self.set_boundary(up_to - 1)
        return up_to

    @property
    def tokens_before(self) -> int:
        return sum(self.message_tokens)

    def tokens_after(self) -> int:
        """The estimated tokens of the session that would be written: the one
        figure the status line, the diff and the confirm dialog show. With a
        summary it is the kept messages plus the summary message as written
        (``message_tokens`` of the format's own summary message, as the diff
        counts it); before one, the engine's typical-summary estimate."""
        prep = self.preparation
        if prep is None:
            return self.tokens_before
        return prep.tokens_after(self.summary)

    @property
    def offline(self) -> bool:
        return self.provider is None or self.provider.offline

    def compaction_model_suggestions(self) -> list[str]:
        out: list[str] = []
        for name in (
            self.compaction_model,
            self.preparation.compaction_model if self.preparation else None,
            self.base_model,
            (self.config.raw.get("compaction") or {}).get("compaction_model"),
        ):
            if name and name not in out:
                out.append(name)
        return out
