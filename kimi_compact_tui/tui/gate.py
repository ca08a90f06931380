"""The gate as the TUI sees it: the pending reviews, as plain data, and letting
an agent's next compaction through once.

The layer rules keep ``tui`` from importing ``hooks`` (the gate's state lives
there, beside the hook the agents run). The command line (``commands/tui.py``,
which may import it) hands the app a :class:`Gate` of two plain functions; the
picker and the main screen read the pending reviews and allow through it only.
Without one (an app built in a test, ``serve``), nothing is pending.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kimi_compact_tui.formats.base import SessionInfo


@dataclass(frozen=True)
class Held:
    """One pending review: an agent's compaction the gate held."""

    agent: str  # the gate's name of the agent ("claude-code")
    session: str  # the agent's session id
    transcript: str | None  # the file the agent named, where it names one
    trigger: str | None  # "auto" or "manual"
    blocks: int = 1  # how many times it was held

    def line(self) -> str:
        """``PENDING REVIEW (auto, held 2 times)``, as ``list`` says it."""
        times = f"held {self.blocks} time{'s' if self.blocks != 1 else ''}"
        what = ", ".join(x for x in (self.trigger, times) if x)
        return f"PENDING REVIEW ({what})"


@dataclass(frozen=True)
class Gate:
    """What the app may do with the gate: read the pending reviews, and let the
    agent's next compaction of one session through once (returns a line saying so)."""

    pending: Callable[[], list[Held]] = field(default=lambda: [])
    allow: Callable[[Held], str] | None = None


def _real(path: str) -> str:
    try:
        return os.path.realpath(os.path.expanduser(path))
    except (OSError, ValueError):
        return path


def held_for(info: SessionInfo, pending: Sequence[Held]) -> Held | None:
    """The pending review of the session ``info`` describes: by its transcript's
    path, or (an agent whose hook names no file) by its id naming the session or
    one of its folders."""
    return held_at(str(info.path), info.session_id, pending)


def held_at(path: str, session_id: str | None, pending: Sequence[Held]) -> Held | None:
    """The same for the session at ``path`` (its id ``session_id``, where known)."""
    if not pending:
        return None
    target = _real(path)
    parts = target.split(os.sep)
    for held in pending:
        if held.transcript:
            if _real(held.transcript) == target:
                return held
        elif held.session and (held.session == session_id or held.session in parts):
            return held
    return None
