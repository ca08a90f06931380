"""Kimi Code has no compaction hook the gate can install (said, not guessed)."""

from __future__ import annotations

from kimi_compact_tui.agenthook import NoHook

HOOK = NoHook(
    "kimi-code", "kimi-code has no compaction hook; `history` still lists its compactions"
)
