"""The ledger: the compactions a session's file records, the agent's own and
those written by this tool in the agent's shape.

Each agent's reader is ``formats/<agent>/ledger.py`` (``compactions(session)``),
listed in :data:`READERS` by format name and loaded when asked for. A reader
gives, per compaction, what the file says (when, the trigger, the token figures,
the summary) and, when the agent kept them on disk, the messages the agent had
before it (``before``: what it replaced, then what it kept) so a front end can
judge that summary with the same retention report as a review. Telling ours
from the agent's is the store's business (its audit log), not the reader's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kimi_compact_tui.formats.context import loaded, table
from kimi_compact_tui.model import Message

if TYPE_CHECKING:
    from kimi_compact_tui.formats.base import Session


@dataclass
class Compaction:
    """One compaction recorded in a session's file."""

    time: str | None  # as the file records it (ISO 8601, UTC)
    trigger: str | None  # "auto", "manual", or None when the file does not say
    summary: str | None  # the summary's text as the agent resumes it
    tokens_before: int | None = None  # the context before it, as the agent counted it
    tokens_after: int | None = None  # after it, as the agent counted it
    offset: int | None = None  # where its records start in the file (append formats)
    source: str | None = None  # the file that keeps what it replaced, when another (a rotation)
    # The messages the agent resumed before it (still on disk), or None when gone:
    before: list[Message] | None = None
    # Those of ``before`` it carried over verbatim (Codex's user messages, a tail):
    kept_messages: list[Message] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def replaced(self) -> int | None:
        """How many messages the summary replaced (None when they are gone)."""
        return None if self.before is None else len(self.before) - len(self.kept_messages)


#: Each format's ledger reader: ``formats/<agent>/ledger.py``.
READERS: dict[str, str] = {
    "claude-code": "kimi_compact_tui.formats.claude_code.ledger",
    "codex": "kimi_compact_tui.formats.codex.ledger",
    "opencode": "kimi_compact_tui.formats.opencode.ledger",
    "kimi": "kimi_compact_tui.formats.kimi_cli.ledger",
    "kimi-code": "kimi_compact_tui.formats.kimi_code.ledger",
    "gemini-cli": "kimi_compact_tui.formats.gemini_cli.ledger",
}


def compactions(session: Any) -> list[Compaction] | None:
    """The compactions ``session``'s file records, oldest first; None when its
    format has no ledger reader."""
    reader = loaded(READERS, session.format.name, "compactions")
    if reader is None:
        return None
    found: list[Compaction] = reader(session)
    return found


def parts_text(content: Any) -> str:
    """The texts of a record's list of content parts, joined ("" when it is no list)."""
    if isinstance(content, list):
        return "".join(str(table(p).get("text") or "") for p in content)
    return ""


def text_of(messages: Sequence[Message]) -> str:
    return "\n".join(t for m in messages for t in m.text_parts())


#: Each format's repair: ``formats/<agent>/repair.py`` (``repaired(session, compaction,
#: summary) -> bytes``: the whole file with that compaction's summary message replaced
#: in the agent's own shape, every other byte unchanged).
REPAIRERS: dict[str, str] = {
    "claude-code": "kimi_compact_tui.formats.claude_code.repair",
    "codex": "kimi_compact_tui.formats.codex.repair",
}


def repairer_of(name: str) -> Any:
    return loaded(REPAIRERS, name, "repaired")


def parse_bytes(fmt: object, data: bytes, path: Path | None) -> Session:
    """``data`` read as the file-based format ``fmt`` reads a session file (the
    part of a journal before a compaction, an older rotation)."""
    from kimi_compact_tui.formats.base import FileFormat

    if not isinstance(fmt, FileFormat) or path is None:
        raise TypeError("only a session that is a file of bytes is read back from bytes")
    return fmt.parse(data, path)
