"""Kimi Code CLI (``@moonshot-ai/kimi-code`` 2.1) sessions: see :mod:`.plugin`."""

from kimi_compact_tui.formats.kimi_code.plugin import (
    CLOSE_NOTE,
    KimiCodeFormat,
    append_allowed,
    undo_allowed,
    write_refusal,
)

__all__ = ["CLOSE_NOTE", "KimiCodeFormat", "append_allowed", "undo_allowed", "write_refusal"]
