"""Reading a session for the TUI, safe in a worker thread (plain Python, no Textual).

:func:`read_session` parses, fingerprints and estimates a session without
touching any state; :meth:`ReviewState.adopt` then makes it the session under
review on the UI thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kimi_compact_tui import store
from kimi_compact_tui.compaction.tokens import message_tokens
from kimi_compact_tui.errors import UserError
from kimi_compact_tui.formats import resolve_session_path
from kimi_compact_tui.fsutil import gc_paused
from kimi_compact_tui.model import Session


@dataclass(frozen=True)
class LoadedSession:
    """A session read (in a worker thread) and ready to be adopted by the state
    on the UI thread: the parsed session, its fingerprint and token estimates."""

    session: Session
    path: Path
    fingerprint: Any
    tokens: list[int]


def read_session(path: str | Path) -> LoadedSession:
    """Resolve, parse and fingerprint ``path`` (no state is touched: safe in a
    worker thread). Raises :class:`UserError` with the CLI's one-line text."""
    resolved = resolve_session_path(path)
    # The fingerprint comes from the very bytes parsed: any later change shows
    # as a conflict at write time instead of being overwritten.
    session, fingerprint = store.load_fingerprinted(resolved)
    with gc_paused():
        tokens = [message_tokens(m) for m in session.messages]
    return LoadedSession(session, resolved, fingerprint, tokens)


def file_fingerprint(path: Path) -> Any:
    """The store's fingerprint of ``path`` (None if it cannot be read:
    the write then refuses, as it cannot check for a conflict)."""
    try:
        return store.fingerprint(path)
    except UserError:
        return None
