"""The session format interface: what a format plugin owns.

A format recognises its files, resolves a folder to its session file, lists
the sessions it can find on this machine, parses and dumps losslessly, knows
the summary message it writes and how a compaction is written back (its write
policy) and undone. Nothing outside ``formats/`` knows a format's name or file
names: the rest of the code asks the registry (``formats.registry``).

Adding a format: one module with a class implementing :class:`SessionFormat`
and one line in ``formats/registry.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from kimi_compact_tui.compaction.plan import CompactionPlan
    from kimi_compact_tui.model import Message, Session

# How a compaction is written back:
#   "rotate": the current file is kept as the next free rotation name (kimi-cli's
#             context_N.jsonl) and the new file replaces it atomically;
#   "backup": the current file is copied to a timestamped backup, then replaced;
#   "append": records are appended to a journal; earlier bytes never change.
WritePolicy = Literal["rotate", "backup", "append"]


@dataclass
class SessionInfo:
    """One session found on this machine, for the picker."""

    path: Path  # what load_session takes (a file or a folder)
    format: str  # the format's name
    title: str | None = None  # first user message, or the agent's title
    work_dir: str | None = None
    updated: float | None = None  # seconds since the epoch
    message_count: int | None = None
    session_id: str | None = None
    error: str | None = None  # set when the session cannot be parsed


@dataclass
class WriteOp:
    """What a compaction writes, as the format's policy says.

    ``data`` is the whole new file for "rotate" and "backup", and the bytes to
    append for "append". ``notes`` are lines the confirm dialog must show
    (for example: close the agent first)."""

    policy: WritePolicy
    data: bytes
    notes: list[str] = field(default_factory=list)


class SessionFormat(Protocol):
    name: str  # registry key and Session.format, e.g. "kimi"
    label: str  # for people, e.g. "kimi-cli context.jsonl"
    write_policy: WritePolicy
    # Lines a person must read before a write (e.g. "close the agent first").
    write_notes: tuple[str, ...]

    def recognise(self, path: Path, head: bytes) -> bool:
        """True when ``path`` (its first 64 KiB in ``head``) is this format."""

    def resolve_folder(self, folder: Path) -> Path | None:
        """The session file this format finds in ``folder``, or None."""

    def discover(self, env: Mapping[str, str], home: Path) -> list[SessionInfo]:
        """The sessions of this format on this machine (may be empty)."""

    def parse(self, data: bytes, path: Path) -> Session:
        """Parse a file's bytes; raise SessionFormatError with one line."""

    def dump(self, session: Session) -> bytes:
        """The bytes of ``session``; a session loaded and not changed dumps
        to the bytes it was read from."""

    def summary_message(self, summary: str) -> Message:
        """The summary user message this format writes."""

    def compacted_session(
        self,
        session: Session,
        plan: CompactionPlan,
        summary: str,
        output_tokens: int | None,
    ) -> Session:
        """The session after the compaction (leading system messages, the
        summary message, the kept messages), with this format's usage record."""

    def write_op(self, session: Session, compacted: Session, context: Mapping[str, Any]) -> WriteOp:
        """What to write for ``compacted`` over the loaded ``session``."""
