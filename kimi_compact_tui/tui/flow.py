"""What a flow screen (the stream, the diff) asks the main screen to do next.

A flow screen dismisses with one of these typed requests (or None); the main
screen carries it out. No strings or tuples travel between screens.
"""

from __future__ import annotations

from dataclasses import dataclass

from kimi_compact_tui.tui.runs import RunLink


@dataclass(frozen=True)
class WriteRequested:
    """``w``: write the reviewed summary (the app asks to confirm first)."""


@dataclass(frozen=True)
class RerunRequested:
    """``r``: run the compaction again (asked first when it replaces work)."""


@dataclass(frozen=True)
class ReviseRequested:
    """``f`` then ctrl+s: stream the revision ``link`` (a run's summary and the
    feedback on it, after the earlier rounds of its chain)."""

    link: RunLink


@dataclass(frozen=True)
class JumpToMessage:
    """``enter`` on a retention item: show message ``number`` (1-based)."""

    number: int


@dataclass(frozen=True)
class AddInstructions:
    """``i`` on retention items: add ``text`` to the instructions and run again."""

    text: str


@dataclass(frozen=True)
class OpenEditor:
    """``e`` on retention items: open the summary editor with ``block`` appended."""

    block: str


FlowRequest = (
    WriteRequested | RerunRequested | ReviseRequested | JumpToMessage | AddInstructions | OpenEditor
)
