"""Gemini CLI sessions (``~/.gemini/tmp/<project>/chats/session-*.jsonl``)."""

from kimi_compact_tui.formats.gemini_cli.plugin import GeminiCliFormat

__all__ = ["GeminiCliFormat"]
