"""Gemini CLI sessions (``~/.gemini/tmp/<project>/chats/session-*.jsonl``)."""

from kimi_compact_tui.formats.gemini_cli.plugin import FORMAT, GeminiCliFormat

__all__ = ["FORMAT", "GeminiCliFormat"]
