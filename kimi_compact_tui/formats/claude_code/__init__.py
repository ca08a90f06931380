"""Claude Code (``@anthropic-ai/claude-code`` 2.1) transcripts: see :mod:`.plugin`
and, for what the files hold, :mod:`.records`."""

from kimi_compact_tui.formats.claude_code.plugin import CLOSE_NOTE, FORMAT, ClaudeCodeFormat
from kimi_compact_tui.formats.claude_code.state import ClaudeState

__all__ = ["CLOSE_NOTE", "FORMAT", "ClaudeCodeFormat", "ClaudeState"]
