"""Codex CLI (``@openai/codex`` 0.171) rollouts: see :mod:`.plugin` and :mod:`.rollout`."""

from kimi_compact_tui.formats.codex.plugin import CLOSE_NOTE, FORMAT, CodexFormat, write_refusal
from kimi_compact_tui.formats.codex.state import CodexState

__all__ = ["CLOSE_NOTE", "FORMAT", "CodexFormat", "CodexState", "write_refusal"]
