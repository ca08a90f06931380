"""Claude Code (``@anthropic-ai/claude-code`` 2.1) transcripts: see :mod:`.plugin`
and, for what the files hold, :mod:`.records`; :mod:`.hook` is its compaction
hook's facts. The names below load with their module when first asked for, so
the hook loads the facts alone."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kimi_compact_tui.formats.claude_code.plugin import CLOSE_NOTE, FORMAT, ClaudeCodeFormat
    from kimi_compact_tui.formats.claude_code.state import ClaudeState

__all__ = ["CLOSE_NOTE", "FORMAT", "ClaudeCodeFormat", "ClaudeState"]
_WHERE = {"CLOSE_NOTE": "plugin", "FORMAT": "plugin", "ClaudeCodeFormat": "plugin",
          "ClaudeState": "state"}  # fmt: skip


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{where}"), name)
