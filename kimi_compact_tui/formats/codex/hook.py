"""Codex's compaction hook, as the gate takes it (checked with Codex 0.171.0;
docs/hooks.md says how).

``PreCompact`` in ``$CODEX_HOME/hooks.json`` (else ``~/.codex``; a project's
in ``.codex/hooks.json``), the same shape as Claude Code's. It runs only once
trusted (:mod:`.trust`). Exit 2 does not block; ``{"continue": false,
"stopReason": ...}`` on stdout does. The context size it last sent is the
last ``token_count`` event's ``last_token_usage.total_tokens``.

Standard library only: the hook loads it before every compaction.
"""

from __future__ import annotations

from typing import Any

from kimi_compact_tui.agenthook import CONTINUE_FALSE, JSON_HOOKS, AgentHook
from kimi_compact_tui.formats.codex.trust import TRUST


def last_usage(record: dict[str, Any]) -> int | None:
    """The context size a ``token_count`` event says (None for any other record)."""
    payload = record.get("payload")
    if not isinstance(payload, dict) or payload.get("type") != "token_count":
        return None
    info = payload.get("info")
    last = info.get("last_token_usage") if isinstance(info, dict) else None
    if isinstance(last, dict) and isinstance(last.get("total_tokens"), int):
        return int(last["total_tokens"])
    return None


HOOK = AgentHook(
    "codex",
    "Codex",
    "PreCompact",
    CONTINUE_FALSE,
    JSON_HOOKS,
    "CODEX_HOME",
    ".codex",
    "hooks.json",
    ".codex/hooks.json",
    trust=TRUST,
    usage_mark=b'"token_count"',
    usage_of=last_usage,
)
