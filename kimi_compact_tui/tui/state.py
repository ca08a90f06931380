"""The review state shared by every TUI screen (plain Python, no Textual).

A :class:`ReviewState` holds the session being reviewed, the config, the
provider, the user's choices (explicit boundary, custom instructions,
compaction model override) and the current :class:`Preparation` from the
engine, plus the last stream result and the summary text (possibly edited).
The TUI never builds a request itself: :meth:`ReviewState.replan` calls
:func:`prepare_compaction`. Per-message token estimates are computed once
per load, so replanning a 100,000-message session is cheap.
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
from kimi_compact_tui.compaction.job import CompactionJob
from kimi_compact_tui.compaction.prompts import resolve_prompt
from kimi_compact_tui.compaction.tokens import message_tokens
from kimi_compact_tui.config import AppConfig, _get_compaction_config, load_config
from kimi_compact_tui.errors import UserError
from kimi_compact_tui.formats import resolve_session_path
from kimi_compact_tui.fsutil import gc_paused
from kimi_compact_tui.model import Session
from kimi_compact_tui.providers import ProviderConfig, StreamResult, provider_config_from


def _fingerprint(path: Path) -> Any:
    """The apply module's fingerprint of ``path`` (None if it cannot be read:
    the write then refuses, as it cannot check for a conflict)."""
    try:
        return store.fingerprint(path)
    except UserError:
        return None


def default_provider(raw: dict | None = None, **overrides: Any) -> ProviderConfig:
    """The provider config from the config's ``provider:`` block and flags
    (offline when nothing is configured)."""
    return provider_config_from(raw, **overrides)


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
        prov = default_provider(config.provider, provider=provider, model=model, base_url=base_url)
        # An explicit --model is the request model, over any configured compaction_model.
        return cls(config=config, provider=prov, prompt_file=prompt_file, compaction_model=model)

    # --- loading ------------------------------------------------------------------
    def load(self, path: str | Path) -> Session:
        """Load ``path`` (a file or kimi-cli session folder), reset choices and plan.
        Raises :class:`UserError` with the CLI's one-line text."""
        resolved = resolve_session_path(path)
        # The fingerprint comes from the very bytes parsed: any later change shows
        # as a conflict at write time instead of being overwritten.
        session, fingerprint = store.load_fingerprinted(resolved)
        self.set_session(session, resolved, fingerprint)
        # The loaded messages live as long as the session and hold no cycles: keep
        # them out of every later garbage-collector pass (100k messages are
        # ~700k objects, 0.3 s per full pass otherwise). Objects frozen by an
        # earlier load go back to the collector first, so nothing stays frozen
        # that has become garbage since; the app unfreezes everything on exit.
        gc.unfreeze()
        gc.freeze()
        return session

    def set_session(self, session: Session, path: Path | None, fingerprint: Any = None) -> None:
        self.session = session
        self.session_path = path
        with gc_paused():
            self.message_tokens = [message_tokens(m) for m in session.messages]
        if fingerprint is None and path is not None:
            fingerprint = _fingerprint(path)
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
        """Store a provider StreamResult; its summary becomes the one to write."""
        self.stream_result = result
        self.summary = result.summary if result is not None else None
        self.summary_edited = False

    def set_summary(self, text: str) -> None:
        self.summary = text
        self.summary_edited = True

    # --- writing (the safe apply module) -------------------------------------------
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

    def write(self, *, allow_split: bool = False) -> str:
        """Write the reviewed summary into the session file via the apply module
        (checks the file is still the one loaded); return its one-line report.
        Raises UserError with the CLI's text."""
        if not self.writable or self.session is None or self.preparation is None:
            raise UserError("nothing to write: compact first (c) and let the summary complete")
        if self.fingerprint is None:
            raise UserError(f"{self.session_path}: not written: the loaded file has no fingerprint")
        job = self.job()
        draft = job.draft(self.preparation, self.stream_result, self.summary)
        done = job.commit(draft, self.provider, allow_split=allow_split)
        return done.describe()

    def undo(self) -> str:
        """Restore the state before the last write; return the apply module's report."""
        if self.session_path is None:
            raise UserError("no session loaded")
        return store.restore(self.session_path).describe()

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
