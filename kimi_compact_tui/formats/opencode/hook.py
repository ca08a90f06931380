"""opencode has no compaction hook the gate can install (said, not guessed)."""

from __future__ import annotations

from kimi_compact_tui.agenthook import NoHook

HOOK = NoHook(
    "opencode",
    "opencode has no compaction hook a command can use: its plugin hook "
    "experimental.session.compacting can change the compaction prompt but not stop it, "
    "and needs a JavaScript plugin; `history` still lists its compactions",
)
