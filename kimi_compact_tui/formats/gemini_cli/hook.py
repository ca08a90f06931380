"""Gemini CLI's compaction hook, as the gate takes it (checked with Gemini CLI
0.61.0; docs/hooks.md says how).

``PreCompress`` in ``settings.json`` (``$GEMINI_CLI_HOME/.gemini``, else
``~/.gemini``, or a project's ``.gemini``), the same shape as Claude Code's;
advisory only: the compaction cannot be stopped.

Standard library only: the hook loads it before every compaction.
"""

from __future__ import annotations

from kimi_compact_tui.agenthook import JSON_HOOKS, AgentHook

HOOK = AgentHook(
    "gemini-cli",
    "Gemini CLI",
    "PreCompress",
    None,
    JSON_HOOKS,
    "GEMINI_CLI_HOME",
    ".gemini",
    "settings.json",
    ".gemini/settings.json",
    env_sub=".gemini",
)
