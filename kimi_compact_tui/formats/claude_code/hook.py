"""Claude Code's compaction hook, as the gate takes it (checked with Claude
Code 2.1.197; docs/hooks.md says how).

``PreCompact`` in ``settings.json`` (the user's in ``$CLAUDE_CONFIG_DIR``,
else ``~/.claude``; a project's in ``.claude/settings.json``). The matcher is
the trigger (``auto`` or ``manual``). Exit status 2 blocks the compaction, and
the hook's stderr is shown to the user. The context size it last sent is the
last assistant record's usage (input + cache creation + cache read).

Standard library only: the hook loads it before every compaction.
"""

from __future__ import annotations

from typing import Any

from kimi_compact_tui.agenthook import EXIT_2, JSON_HOOKS, AgentHook

USAGE_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def last_usage(record: dict[str, Any]) -> int | None:
    """The context size an assistant record's usage says (None for any other record)."""
    message = record.get("message")
    usage = message.get("usage") if isinstance(message, dict) else None
    if record.get("type") != "assistant" or not isinstance(usage, dict):
        return None
    return sum(int(usage.get(k) or 0) for k in USAGE_KEYS)


HOOK = AgentHook(
    "claude-code",
    "Claude Code",
    "PreCompact",
    EXIT_2,
    JSON_HOOKS,
    "CLAUDE_CONFIG_DIR",
    ".claude",
    "settings.json",
    ".claude/settings.json",
    usage_mark=b'"usage"',
    usage_of=last_usage,
)
