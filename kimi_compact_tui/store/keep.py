"""What a write keeps of the current session, for people (the confirm dialog)."""

from __future__ import annotations

from kimi_compact_tui.formats.base import SessionFormat
from kimi_compact_tui.formats.storage import SessionRef


def keep_description(where: SessionRef | None, fmt: SessionFormat) -> str:
    """One line saying what copy of the current session a write keeps."""
    if where is None:
        return "the session has no file: nothing can be written"
    return fmt.storage.keep_description(where)
