"""Gemini CLI sessions (``~/.gemini/tmp/<project>/chats/session-*.jsonl``);
:mod:`.hook` is its compaction hook's facts. The names below load with their
module when first asked for, so the hook loads the facts alone."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kimi_compact_tui.formats.gemini_cli.plugin import FORMAT, GeminiCliFormat

__all__ = ["FORMAT", "GeminiCliFormat"]
_WHERE = {"FORMAT": "plugin", "GeminiCliFormat": "plugin"}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{where}"), name)
